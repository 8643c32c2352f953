// The two requests the tiered proxy answers across both tiers, on a client's
// own upstream connection (nothing else in flight on it):
//
//   Fetch        forwarded first (sessionless); each tiered partition the
//                upstream refused with OFFSET_OUT_OF_RANGE is routed by
//                tiering.h on the upstream's log start and high watermark,
//                asked on the same connection: the table's batches below the
//                log start, or, for a range neither tier holds, the upstream's
//                records from its log start (the consumer skips ahead, as
//                after compaction; the loss is logged once). Tiered
//                partitions report the merged log start. One response,
//                within max_bytes and partition_max_bytes (KIP-74).
//                With `:prefer=table`, a partition whose fetch offset the
//                table holds is forwarded with partition_max_bytes 0 (the
//                upstream still decides whether the connection may read it)
//                and answered from the table.
//   ListOffsets  forwarded; for tiered partitions earliest is the merged log
//                start and a timestamp finds the first offset at or after it
//                across both tiers; latest and max-timestamp stay the
//                upstream's.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "thaw/common/status.h"
#include "thaw/kafka/client/connection.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/server/topic_log.h"

namespace thaw::merged {

// Logs each lost range (offsets neither tier holds) once.
class LostRanges {
 public:
  void Report(const std::string& topic, int32_t partition, int64_t from, int64_t to, int64_t table_start,
              int64_t table_end, int64_t upstream_start);

 private:
  std::mutex mu_;
  std::set<std::tuple<std::string, int32_t, int64_t>> logged_;
};

struct TierContext {
  kafka::server::TopicLogs* tables = nullptr;  // tiered topics, by their upstream name
  asio::thread_pool* pool = nullptr;           // blocking table reads
  LostRanges* lost = nullptr;
  // Topics whose offsets both tiers hold are read from the table
  // (`:prefer=table`).
  std::set<std::string> prefer_table;
};

// Whether a request names a tiered topic.
bool NamesTieredTopic(const TierContext& tc, const kafka::msg::FetchRequest& req);
bool NamesTieredTopic(const TierContext& tc, const kafka::msg::ListOffsetsRequest& req);

// Both return the response body to send with the client's correlation id;
// an error means the upstream connection failed (the pair is closed).
// `list_offsets_version` is a ListOffsets version the upstream takes (for
// Fetch's own bound requests).
asio::awaitable<Result<std::string>> TieredFetch(const TierContext& tc, kafka::client::Connection& upstream,
                                                 const kafka::msg::RequestHeader& header,
                                                 const kafka::msg::FetchRequest& req, int16_t list_offsets_version);
asio::awaitable<Result<std::string>> TieredListOffsets(const TierContext& tc, kafka::client::Connection& upstream,
                                                       const kafka::msg::RequestHeader& header,
                                                       const kafka::msg::ListOffsetsRequest& req);

}  // namespace thaw::merged
