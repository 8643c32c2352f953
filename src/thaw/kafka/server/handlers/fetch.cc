// Fetch: record batches v2 from the served topics' logs (TopicLog::Fetch;
// `thaw serve`'s encodes and caches them), sessionless.
//
//   - Every requested partition is in the response (sessionless fetches must
//     list them all), in request order; topics by name (v4-12) or id (v13+).
//   - max_bytes / partition_max_bytes as KIP-74: the first batch of the first
//     partition with data is always whole, even if bigger; after it, a
//     partition gets only the whole batches that fit what is left.
//   - At the end of the log (no data anywhere), the request waits up to
//     max_wait_ms, re-checking the tables for a new snapshot every
//     Broker::end_of_log_poll, and answers as soon as min_bytes are there.
//   - Session ids: the response's is always 0 (no KIP-227 session), which
//     keeps Java on full fetches; a request for an existing session gets
//     FETCH_SESSION_ID_NOT_FOUND.
//   - With ACLs, a topic the principal may not READ gets
//     TOPIC_AUTHORIZATION_FAILED on each of its partitions, served or not (an
//     unknown topic id stays UNKNOWN_TOPIC_ID: it names nothing to check).
#include <algorithm>
#include <chrono>

#include "thaw/kafka/server/handlers/authorize.h"
#include "thaw/kafka/server/handlers/handlers.h"
#include "thaw/kafka/server/topic_log.h"
#include "thaw/metrics/metrics.h"
#include "thaw/metrics/record_counts.h"

namespace thaw::kafka::server {

namespace {

using Clock = std::chrono::steady_clock;
using Partition = msg::FetchResponse::PartitionData;

struct Slot {
  std::shared_ptr<TopicLog> topic;  // null: unknown topic
  const msg::FetchRequest::FetchPartition* request;
  Partition* out;
};

// One pass over every partition: fills each one's offsets, error and
// records. Returns the bytes of records returned.
int64_t FetchOnce(std::vector<Slot>& slots, int32_t max_bytes) {
  int64_t budget = max_bytes <= 0 ? INT32_MAX : max_bytes;
  int64_t total = 0;
  bool have_first = false;
  // Every partition but the first starts decoding now, in the background,
  // while this thread fills the first.
  for (size_t i = 1; i < slots.size(); ++i) {
    if (slots[i].topic) slots[i].topic->ReadAhead(slots[i].request->partition, slots[i].request->fetch_offset,
                                                     slots[i].request->partition_max_bytes);
  }
  for (Slot& s : slots) {
    Partition& out = *s.out;
    out.records = std::string();
    out.records_shared.clear();
    if (!s.topic) continue;  // error set when the slot was made
    const int32_t p = s.request->partition;
    if (p < 0 || p >= s.topic->partition_count()) {
      out.error_code = static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
      continue;
    }
    // KIP-320: a consumer naming an older epoch learns of the new one (and
    // validates its position) before it is told anything about offsets.
    if (ErrorCode fenced = s.topic->CheckLeaderEpoch(p, s.request->current_leader_epoch); fenced != ErrorCode::kNone) {
      out.error_code = static_cast<int16_t>(fenced);
      continue;
    }
    int64_t limit = std::min<int64_t>(s.request->partition_max_bytes, budget);
    if (have_first && limit <= 0) {
      // Nothing more fits: offsets only.
      auto offsets = s.topic->Offsets(p);
      if (offsets.ok()) {
        out.error_code = 0;
        out.high_watermark = offsets->high_watermark;
        out.last_stable_offset = offsets->last_stable();
        out.log_start_offset = offsets->log_start;
      } else {
        out.error_code = static_cast<int16_t>(ToKafkaError(offsets.status()));
      }
      continue;
    }
    auto r = s.topic->Fetch(p, s.request->fetch_offset, std::max<int64_t>(limit, 1));
    if (!r.ok()) {
      log::Warn("Fetch {}-{} at offset {}: {}", s.topic->name(), p, s.request->fetch_offset, r.status().message());
      out.error_code = static_cast<int16_t>(ToKafkaError(r.status()));
      continue;
    }
    out.error_code = static_cast<int16_t>(r->error);
    out.high_watermark = r->offsets.high_watermark;
    out.last_stable_offset = r->offsets.last_stable();
    out.log_start_offset = r->offsets.log_start;
    // The batches go out by reference, from the cache to the socket.
    std::vector<std::shared_ptr<const std::string>> records;
    int64_t used = 0, count = 0;
    for (const auto& batch : r->batches) {
      const int64_t size = static_cast<int64_t>(batch->size());
      // KIP-74: the first batch of the response is always whole; after it
      // only whole batches that fit.
      if (have_first && used + size > limit) break;
      if (!have_first && used > 0 && used + size > limit) break;
      records.push_back(batch);
      used += size;
      count += metrics::BatchRecordCount(*batch);
      have_first = true;
    }
    if (used > 0) {
      if (metrics::Metrics* m = metrics::Global()) m->AddRecords("served", s.topic->name(), p, count, used, "table");
    }
    out.records_shared = std::move(records);
    total += used;
    budget -= used;
  }
  return total;
}

}  // namespace

asio::awaitable<msg::FetchResponse> HandleFetch(RequestContext& ctx, const msg::FetchRequest& req) {
  msg::FetchResponse resp;
  resp.session_id = 0;
  if (req.session_id != 0) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kFetchSessionIdNotFound);
    co_return resp;
  }
  const TopicLogs& logs = *ctx.broker.topics;
  const bool by_id = ctx.api_version >= 13;
  std::vector<Slot> slots;
  // Both vectors are reserved to their final sizes, so the slots' pointers
  // into the response stay valid.
  resp.responses.reserve(req.topics.size());
  for (const auto& topic : req.topics) {
    auto& rt = resp.responses.emplace_back();
    rt.topic = topic.topic;
    rt.topic_id = topic.topic_id;
    auto served = by_id ? logs.FindById(topic.topic_id) : logs.Find(topic.topic);
    ErrorCode error = ErrorCode::kNone;
    if (!by_id || served) {
      if (!Authorized(ctx, AclOperation::kRead, AclResourceType::kTopic, by_id ? served->name() : topic.topic)) {
        error = ErrorCode::kTopicAuthorizationFailed;
        served = nullptr;
      }
    }
    if (error == ErrorCode::kNone && !served) {
      error = by_id ? ErrorCode::kUnknownTopicId : ErrorCode::kUnknownTopicOrPartition;
    }
    rt.partitions.reserve(topic.partitions.size());
    for (const auto& p : topic.partitions) {
      auto& out = rt.partitions.emplace_back();
      out.partition_index = p.partition;
      out.high_watermark = -1;
      out.last_stable_offset = -1;
      out.log_start_offset = -1;
      out.preferred_read_replica = -1;
      out.error_code = static_cast<int16_t>(error);
      slots.push_back({served, &p, &out});
    }
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(0, req.max_wait_ms));
  const int64_t min_bytes = std::max(1, req.min_bytes);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (bool first = true;; first = false) {
    if (!first) {
      // At the end of the log: has a table grown? Refresh the topics asked for.
      co_await RunBlocking(*ctx.broker.blocking, [&slots]() {
        std::vector<TopicLog*> seen;
        for (const Slot& s : slots) {
          if (!s.topic || std::find(seen.begin(), seen.end(), s.topic.get()) != seen.end()) continue;
          seen.push_back(s.topic.get());
          if (Status st = s.topic->RefreshIfChanged(); !st.ok()) log::Warn("{}", st.message());
        }
        return 0;
      });
    }
    const auto read_start = Clock::now();
    const int64_t bytes = co_await RunBlocking(*ctx.broker.blocking, [&]() { return FetchOnce(slots, req.max_bytes); });
    if (metrics::Metrics* m = metrics::Global(); m && bytes > 0) {
      m->Seconds("thaw_fetch_latency_seconds", metrics::kFetchLatencyHelp, {{"tier", "table"}})
          .Observe(std::chrono::duration<double>(Clock::now() - read_start).count());
    }
    bool any_error = false;
    for (const Slot& s : slots) any_error |= s.out->error_code != 0;
    const auto now = Clock::now();
    if (bytes >= min_bytes || any_error || now >= deadline || ctx.broker.stopping) break;
    timer.expires_after(std::min<Clock::duration>(deadline - now, ctx.broker.end_of_log_poll));
    asio::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return resp;
}

}  // namespace thaw::kafka::server
