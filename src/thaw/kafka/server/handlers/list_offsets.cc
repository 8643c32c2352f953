// ListOffsets (earliest, latest, by timestamp, max timestamp) and
// OffsetForLeaderEpoch, through the served topic's log (TopicLog).
#include "thaw/kafka/server/handlers/handlers.h"
#include "thaw/kafka/server/topic_log.h"

namespace thaw::kafka::server {

namespace {

constexpr int64_t kLatest = -1, kEarliest = -2, kMaxTimestamp = -3, kEarliestLocal = -4, kLatestTiered = -5;

// The error for a partition outside the topic, or a leader epoch the client
// holds that is not this broker's (KIP-320 fencing; -1 = not checked).
ErrorCode CheckPartition(const TopicLog* t, int32_t partition, int32_t current_leader_epoch) {
  if (!t || partition < 0 || partition >= t->partition_count()) return ErrorCode::kUnknownTopicOrPartition;
  return t->CheckLeaderEpoch(partition, current_leader_epoch);
}

void Answer(msg::ListOffsetsResponse::ListOffsetsPartitionResponse* out, TopicLog& t, int64_t timestamp) {
  auto fail = [&](const Status& st) {
    log::Warn("ListOffsets {}-{}: {}", t.name(), out->partition_index, st.message());
    out->error_code = static_cast<int16_t>(ToKafkaError(st));
  };
  out->timestamp = -1;
  out->offset = -1;
  out->leader_epoch = t.LeaderEpoch(out->partition_index);
  if (timestamp == kLatest || timestamp == kEarliest || timestamp == kEarliestLocal) {
    auto offsets = t.Offsets(out->partition_index);
    if (!offsets.ok()) return fail(offsets.status());
    out->offset = timestamp == kLatest ? offsets->high_watermark : offsets->log_start;
    if (timestamp != kLatest) out->leader_epoch = t.LeaderEpochAt(out->partition_index, out->offset);
    return;
  }
  if (timestamp == kLatestTiered) return;  // nothing tiered: -1, as Kafka without tiered storage
  std::optional<OffsetAndTime> found;
  if (timestamp == kMaxTimestamp) {
    auto r = t.MaxTimestamp(out->partition_index);
    if (!r.ok()) return fail(r.status());
    found = *r;
  } else if (timestamp >= 0) {
    auto r = t.OffsetForTime(out->partition_index, timestamp);
    if (!r.ok()) return fail(r.status());
    found = *r;
  } else {
    out->error_code = static_cast<int16_t>(ErrorCode::kInvalidRequest);
    return;
  }
  if (found) {
    out->offset = found->first;
    out->timestamp = found->second;
    out->leader_epoch = t.LeaderEpochAt(out->partition_index, found->first);
  }
}

}  // namespace

asio::awaitable<msg::ListOffsetsResponse> HandleListOffsets(RequestContext& ctx, const msg::ListOffsetsRequest& req) {
  const TopicLogs& logs = *ctx.broker.topics;
  co_return co_await RunBlocking(*ctx.broker.blocking, [&req, &logs]() {
    msg::ListOffsetsResponse resp;
    for (const auto& topic : req.topics) {
      msg::ListOffsetsResponse::ListOffsetsTopicResponse rt;
      rt.name = topic.name;
      auto t = logs.Find(topic.name);
      for (const auto& p : topic.partitions) {
        msg::ListOffsetsResponse::ListOffsetsPartitionResponse rp;
        rp.partition_index = p.partition_index;
        const ErrorCode error = CheckPartition(t.get(), p.partition_index, p.current_leader_epoch);
        if (error != ErrorCode::kNone) {
          rp.error_code = static_cast<int16_t>(error);
        } else {
          Answer(&rp, *t, p.timestamp);
        }
        rt.partitions.push_back(std::move(rp));
      }
      resp.topics.push_back(std::move(rt));
    }
    return resp;
  });
}

// The served topic's leader epochs (leader_epochs.h): the latest ends at the
// high watermark, an older one where the next begins (a consumer past it has
// seen rows a snapshot removed and goes back there); an epoch above the
// latest, or -1, is UNDEFINED (-1, -1), as Kafka answers.
asio::awaitable<msg::OffsetForLeaderEpochResponse> HandleOffsetForLeaderEpoch(
    RequestContext& ctx, const msg::OffsetForLeaderEpochRequest& req) {
  const TopicLogs& logs = *ctx.broker.topics;
  co_return co_await RunBlocking(*ctx.broker.blocking, [&req, &logs]() {
    msg::OffsetForLeaderEpochResponse resp;
    for (const auto& topic : req.topics) {
      msg::OffsetForLeaderEpochResponse::OffsetForLeaderTopicResult rt;
      rt.topic = topic.topic;
      auto t = logs.Find(topic.topic);
      for (const auto& p : topic.partitions) {
        msg::OffsetForLeaderEpochResponse::EpochEndOffset r;
        r.partition = p.partition;
        const ErrorCode error = CheckPartition(t.get(), p.partition, p.current_leader_epoch);
        if (error != ErrorCode::kNone) {
          r.error_code = static_cast<int16_t>(error);
        } else if (auto end = t->EndOffsetForEpoch(p.partition, p.leader_epoch); !end.ok()) {
          r.error_code = static_cast<int16_t>(ToKafkaError(end.status()));
        } else {
          r.leader_epoch = end->first;
          r.end_offset = end->second;
        }
        rt.partitions.push_back(std::move(r));
      }
      resp.topics.push_back(std::move(rt));
    }
    return resp;
  });
}

}  // namespace thaw::kafka::server
