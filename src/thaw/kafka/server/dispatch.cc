#include "thaw/kafka/server/dispatch.h"

#include <algorithm>
#include <array>

#include "thaw/kafka/server/handlers/handlers.h"

namespace thaw::kafka::server {

namespace {

#define THAW_API(Name, key, min, max) \
  ApiHandler { key, min, max, &Typed<msg::Name##Request, msg::Name##Response, &Handle##Name> }

// Every API served, with the versions served. The ranges are Kafka 4.1's
// (kafka-clients' specs) except where noted; ../shared/reference/
// kafka-protocol.md §1 has the client quirks behind them.
const std::array kHandlers = {
    // Produce: refused (read-only), but advertised from v0 as Kafka 4 does:
    // librdkafka <= 2.10 turns off compression unless Produce v0 is listed.
    // Requests below v3 (message format v0/v1) close the connection, as in
    // Kafka 4. v13 would name topics by id only.
    THAW_API(Produce, 0, 0, 12),
    // v4: the first with record batches v2; up to what the Java 4.x client sends.
    THAW_API(Fetch, 1, 4, 18),
    THAW_API(ListOffsets, 2, 1, 10),
    // v0 stays: kafka-python 2.x probes with it.
    THAW_API(Metadata, 3, 0, 13),
    // v10 names topics by id only; v9 keeps names.
    THAW_API(OffsetCommit, 8, 2, 9),
    THAW_API(OffsetFetch, 9, 1, 9),
    // v0 stays: librdkafka 2.0.2 turns on its group coordinator (and LZ4)
    // only if FindCoordinator v0 is listed.
    THAW_API(FindCoordinator, 10, 0, 6),
    THAW_API(JoinGroup, 11, 0, 9),
    THAW_API(Heartbeat, 12, 0, 4),
    THAW_API(LeaveGroup, 13, 0, 5),
    THAW_API(SyncGroup, 14, 0, 5),
    THAW_API(DescribeGroups, 15, 0, 5),
    THAW_API(ListGroups, 16, 0, 5),
    THAW_API(SaslHandshake, 17, 0, 1),
    THAW_API(ApiVersions, 18, 0, 4),
    THAW_API(CreateTopics, 19, 2, 7),
    THAW_API(DeleteTopics, 20, 1, 6),
    THAW_API(DeleteRecords, 21, 0, 2),
    THAW_API(InitProducerId, 22, 0, 5),
    THAW_API(OffsetForLeaderEpoch, 23, 2, 4),
    THAW_API(DescribeConfigs, 32, 1, 4),
    THAW_API(AlterConfigs, 33, 0, 2),
    THAW_API(SaslAuthenticate, 36, 0, 2),
    THAW_API(CreatePartitions, 37, 0, 3),
    THAW_API(DeleteGroups, 42, 0, 2),
    THAW_API(IncrementalAlterConfigs, 44, 0, 1),
    THAW_API(DescribeCluster, 60, 0, 1),
};

#undef THAW_API

}  // namespace

std::span<const ApiHandler> ApiHandlers() { return kHandlers; }

const ApiHandler* FindApiHandler(int16_t key) {
  for (const ApiHandler& h : kHandlers) {
    if (h.key == key) return &h;
  }
  return nullptr;
}

}  // namespace thaw::kafka::server
