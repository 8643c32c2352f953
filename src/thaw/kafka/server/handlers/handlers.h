// The handler of each API `thaw serve` answers, as typed coroutines over the
// generated messages. dispatch.cc lists them with their version ranges.
#pragma once

#include <asio.hpp>

#include "thaw/common/log.h"
#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/protocol/record_batch.h"
#include "thaw/kafka/server/broker.h"
#include "thaw/kafka/server/dispatch.h"

namespace thaw::kafka::server {

#define THAW_HANDLER(Name) \
  asio::awaitable<msg::Name##Response> Handle##Name(RequestContext& ctx, const msg::Name##Request& req);

// cluster.cc, metadata.cc
THAW_HANDLER(ApiVersions)
THAW_HANDLER(Metadata)
THAW_HANDLER(DescribeCluster)
THAW_HANDLER(DescribeConfigs)
THAW_HANDLER(FindCoordinator)
// list_offsets.cc, fetch.cc
THAW_HANDLER(ListOffsets)
THAW_HANDLER(OffsetForLeaderEpoch)
THAW_HANDLER(Fetch)
// groups.cc
THAW_HANDLER(JoinGroup)
THAW_HANDLER(SyncGroup)
THAW_HANDLER(Heartbeat)
THAW_HANDLER(LeaveGroup)
THAW_HANDLER(OffsetCommit)
THAW_HANDLER(OffsetFetch)
THAW_HANDLER(DescribeGroups)
THAW_HANDLER(ListGroups)
THAW_HANDLER(DeleteGroups)
// read_only.cc
THAW_HANDLER(Produce)
THAW_HANDLER(CreateTopics)
THAW_HANDLER(DeleteTopics)
THAW_HANDLER(DeleteRecords)
THAW_HANDLER(CreatePartitions)
THAW_HANDLER(AlterConfigs)
THAW_HANDLER(IncrementalAlterConfigs)
THAW_HANDLER(InitProducerId)
THAW_HANDLER(SaslHandshake)
THAW_HANDLER(SaslAuthenticate)

#undef THAW_HANDLER

}  // namespace thaw::kafka::server
