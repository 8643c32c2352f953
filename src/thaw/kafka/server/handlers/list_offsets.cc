// ListOffsets (earliest, latest, by timestamp, max timestamp) and
// OffsetForLeaderEpoch, through the served topic's log (TopicLog). With
// ACLs both need DESCRIBE on the topic (as Kafka asks of a consumer):
// TOPIC_AUTHORIZATION_FAILED for each partition of a topic without it,
// served or not.
#include <vector>

#include "thaw/kafka/server/handlers/authorize.h"
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

// Whether the principal may DESCRIBE each topic, in request order.
template <typename Topics, typename NameOf>
std::vector<bool> Describable(const RequestContext& ctx, const Topics& topics, NameOf name_of) {
  std::vector<bool> out;
  out.reserve(topics.size());
  for (const auto& t : topics)
    out.push_back(Authorized(ctx, AclOperation::kDescribe, AclResourceType::kTopic, name_of(t)));
  return out;
}

}  // namespace

asio::awaitable<msg::ListOffsetsResponse> HandleListOffsets(RequestContext& ctx, const msg::ListOffsetsRequest& req) {
  const TopicLogs& logs = *ctx.broker.topics;
  const std::vector<bool> allowed =
      Describable(ctx, req.topics, [](const auto& t) -> const std::string& { return t.name; });
  co_return co_await RunBlocking(*ctx.broker.blocking, [&req, &logs, &allowed]() {
    msg::ListOffsetsResponse resp;
    for (size_t i = 0; i < req.topics.size(); ++i) {
      const auto& topic = req.topics[i];
      msg::ListOffsetsResponse::ListOffsetsTopicResponse rt;
      rt.name = topic.name;
      auto t = allowed[i] ? logs.Find(topic.name) : nullptr;
      for (const auto& p : topic.partitions) {
        msg::ListOffsetsResponse::ListOffsetsPartitionResponse rp;
        rp.partition_index = p.partition_index;
        const ErrorCode error = allowed[i] ? CheckPartition(t.get(), p.partition_index, p.current_leader_epoch)
                                           : ErrorCode::kTopicAuthorizationFailed;
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
  const std::vector<bool> allowed =
      Describable(ctx, req.topics, [](const auto& t) -> const std::string& { return t.topic; });
  co_return co_await RunBlocking(*ctx.broker.blocking, [&req, &logs, &allowed]() {
    msg::OffsetForLeaderEpochResponse resp;
    for (size_t i = 0; i < req.topics.size(); ++i) {
      const auto& topic = req.topics[i];
      msg::OffsetForLeaderEpochResponse::OffsetForLeaderTopicResult rt;
      rt.topic = topic.topic;
      auto t = allowed[i] ? logs.Find(topic.topic) : nullptr;
      for (const auto& p : topic.partitions) {
        msg::OffsetForLeaderEpochResponse::EpochEndOffset r;
        r.partition = p.partition;
        const ErrorCode error = allowed[i] ? CheckPartition(t.get(), p.partition, p.current_leader_epoch)
                                           : ErrorCode::kTopicAuthorizationFailed;
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
