#include "thaw/merged/tiered_requests.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "thaw/common/log.h"
#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/server/broker.h"
#include "thaw/merged/tiering.h"
#include "thaw/metrics/metrics.h"
#include "thaw/metrics/record_counts.h"

namespace thaw::merged {

namespace msg = kafka::msg;

namespace {

// The upstream's bounds of a tiered partition as a Fetch answer gave them,
// and how far the table's end is past the upstream's log start (negative: a
// range retention deleted before the archive took it).
void NoteUpstreamPosition(metrics::Metrics& m, const std::string& topic, int32_t partition, int64_t upstream_start,
                          int64_t upstream_end, const std::optional<kafka::server::PartitionOffsets>& table) {
  if (upstream_start < 0 || upstream_end < 0) return;
  metrics::Labels labels{{"topic", topic}, {"partition", std::to_string(partition)}, {"tier", "upstream"}};
  m.Gauge("thaw_log_start_offset", "The lowest offset a tier holds, per topic and partition", labels)
      .Set(static_cast<double>(upstream_start));
  m.Gauge("thaw_end_offset", "One past the highest offset a tier holds (its high watermark)", labels)
      .Set(static_cast<double>(upstream_end));
  if (table) {
    m.Gauge("thaw_tiered_archive_margin_records",
            "The table's end minus the upstream's log start: how far the archive is ahead of retention (negative: "
            "offsets neither tier holds)",
            {{"topic", topic}, {"partition", std::to_string(partition)}})
        .Set(static_cast<double>(table->high_watermark - upstream_start));
  }
}

using kafka::ErrorCode;
using kafka::server::PartitionOffsets;
using kafka::server::TopicLog;

constexpr int64_t kEarliest = -2, kLatest = -1;

// The client's request, sent with its own header; the response decoded.
template <typename Req, typename Resp>
asio::awaitable<Result<Resp>> Forward(kafka::client::Connection& up, const msg::RequestHeader& header,
                                      const Req& req) {
  const int16_t v = header.request_api_version;
  kafka::WireWriter body;
  req.Write(body, v);
  const std::string frame =
      kafka::client::EncodeRequestFrame(header, msg::RequestHeaderVersion(Req::kApiKey, v), body.data());
  CO_RETURN_NOT_OK(co_await up.WriteFrame(frame));
  std::string reply;
  CO_RETURN_NOT_OK(co_await up.ReadFrame(&reply));
  kafka::WireReader in(reply);
  msg::ResponseHeader rh;
  CO_RETURN_NOT_OK(rh.Read(in, msg::ResponseHeaderVersion(Req::kApiKey, v)));
  if (rh.correlation_id != header.correlation_id) {
    co_return Status::IOError("{}: response correlation id {} for request {}", up.address(), rh.correlation_id,
                              header.correlation_id);
  }
  Resp resp;
  if (Status st = resp.Read(in, v); !st.ok()) {
    co_return Status::IOError("{}: {} v{} response does not decode: {}", up.address(), Req::kName, v, st.message());
  }
  co_return resp;
}

template <typename Resp>
std::string Encode(const Resp& resp, int16_t version) {
  kafka::WireWriter w;
  resp.Write(w, version);
  return std::move(w).Take();
}

// A Fetch response's body with the table's batches by reference (sent in
// place by the proxy: ProxyConnection::WriteClientPieces).
std::unique_ptr<kafka::WireWriter> EncodeBody(const msg::FetchResponse& resp, int16_t version) {
  auto w = std::make_unique<kafka::WireWriter>();
  resp.Write(*w, version);
  return w;
}

struct Refused {
  std::shared_ptr<TopicLog> log;
  const msg::FetchRequest::FetchPartition* request;
  msg::FetchResponse::PartitionData* out;
  std::optional<PartitionOffsets> table;
  int64_t upstream_start = -1, upstream_end = -1;
  bool bounds_known = false;
  int16_t bounds_error = 0;  // the upstream's ListOffsets error, when it had one
};

// What a refused partition is told when the upstream would not give its
// bounds: never OFFSET_OUT_OF_RANGE, which makes the client reset (to the
// beginning or the end) though the table may hold the offset. A new leader
// refuses ListOffsets LATEST for a moment after an election, a follower
// refuses it altogether: both are retriable, as the client learns from these.
int16_t RetriableBoundsError(int16_t listoffsets_error) {
  switch (static_cast<ErrorCode>(listoffsets_error)) {
    case ErrorCode::kUnknownTopicOrPartition:
    case ErrorCode::kLeaderNotAvailable:
    case ErrorCode::kNotLeaderOrFollower:
    case ErrorCode::kFencedLeaderEpoch:
    case ErrorCode::kUnknownLeaderEpoch:
    case ErrorCode::kTopicAuthorizationFailed:
      return listoffsets_error;
    default:
      return static_cast<int16_t>(ErrorCode::kLeaderNotAvailable);
  }
}

// The upstream's bound (`timestamp` kEarliest or kLatest) of each refused
// partition, asked on the client's connection with its client id.
asio::awaitable<Status> AskBounds(kafka::client::Connection& up, const msg::RequestHeader& header, int8_t isolation,
                                  int16_t version, std::vector<Refused>& refused) {
  for (const int64_t ts : {kEarliest, kLatest}) {
    msg::ListOffsetsRequest req;
    req.replica_id = -1;
    req.isolation_level = isolation;
    for (const Refused& r : refused) {
      const std::string& name = r.log->name();
      auto it = std::find_if(req.topics.begin(), req.topics.end(), [&](const auto& t) { return t.name == name; });
      if (it == req.topics.end()) {
        req.topics.emplace_back().name = name;
        it = std::prev(req.topics.end());
      }
      auto& p = it->partitions.emplace_back();
      p.partition_index = r.out->partition_index;
      p.current_leader_epoch = r.request->current_leader_epoch;
      p.timestamp = ts;
    }
    CO_ASSIGN_OR_RAISE(auto resp, (co_await up.Call<msg::ListOffsetsRequest, msg::ListOffsetsResponse>(
                                      req, version, header.client_id)));
    for (Refused& r : refused) {
      for (const auto& t : resp.topics) {
        if (t.name != r.log->name()) continue;
        for (const auto& p : t.partitions) {
          if (p.partition_index != r.out->partition_index) continue;
          if (p.error_code != 0 || p.offset < 0) {
            r.bounds_known = false;
            if (r.bounds_error == 0) r.bounds_error = p.error_code;
            r.upstream_start = -2;  // marks "unknown" for the kLatest pass too
            continue;
          }
          if (ts == kEarliest) {
            r.upstream_start = p.offset;
            r.bounds_known = true;
          } else if (r.upstream_start != -2) {
            r.upstream_end = p.offset;
          }
        }
      }
    }
  }
  for (Refused& r : refused) r.bounds_known = r.bounds_known && r.upstream_start >= 0 && r.upstream_end >= 0;
  co_return Status::OK();
}

// A view's ListOffsets answer, the table's alone: earliest (and KIP-1005's
// earliest-local, KIP-1023's earliest-pending-upload) its first offset,
// latest its end, max-timestamp and by-time from its records.
void AnswerFromTable(TopicLog& log, int64_t timestamp, msg::ListOffsetsResponse::ListOffsetsPartitionResponse& out) {
  out.leader_epoch = -1;
  out.timestamp = -1;
  out.offset = -1;
  auto o = log.Offsets(out.partition_index);
  if (!o.ok()) {
    out.error_code = static_cast<int16_t>(kafka::ToKafkaError(o.status()));
    return;
  }
  if (timestamp == kEarliest || timestamp == -4 || timestamp == -5) {
    out.offset = o->log_start;
    return;
  }
  if (timestamp == kLatest) {
    out.offset = o->high_watermark;
    return;
  }
  auto found = timestamp == -3 ? log.MaxTimestamp(out.partition_index) : log.OffsetForTime(out.partition_index, timestamp);
  if (!found.ok()) {
    out.error_code = static_cast<int16_t>(kafka::ToKafkaError(found.status()));
    return;
  }
  if (*found) {
    out.offset = (*found)->first;
    out.timestamp = (*found)->second;
  }
}

// A consumer reading the table sequentially is refused on every fetch: the
// partitions whose fetch offset lies below the upstream's log start as this
// connection last learnt it start decoding now, while the upstream is asked.
// Only a hint (TopicLog::ReadAhead), given on the pool (a new snapshot's
// first look at a partition plans it, which must not hold up the io
// thread): the upstream's answer still decides.
void StartLikelyColdReads(const TierContext& tc, const msg::FetchRequest& req, const UpstreamBounds& bounds) {
  struct Hint {
    std::shared_ptr<TopicLog> log;
    int32_t partition;
    int64_t offset, max_bytes;
  };
  std::vector<Hint> hints;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& t : req.topics) {
    auto log = tc.tables->Find(t.topic);
    if (!log) continue;
    for (const auto& p : t.partitions) {
      const UpstreamBounds::Entry* e = bounds.Fresh(t.topic, p.partition, now);
      if (e && p.fetch_offset < e->start && p.partition_max_bytes > 0) {
        hints.push_back({log, p.partition, p.fetch_offset, p.partition_max_bytes});
      }
    }
  }
  if (hints.empty()) return;
  asio::post(*tc.pool, [hints = std::move(hints)]() {
    for (const Hint& h : hints) h.log->ReadAhead(h.partition, h.offset, h.max_bytes);
  });
}

}  // namespace

const UpstreamBounds::Entry* UpstreamBounds::Fresh(const std::string& topic, int32_t partition,
                                                   std::chrono::steady_clock::time_point now) const {
  auto it = entries_.find({topic, partition});
  if (it == entries_.end() || now - it->second.at > kMaxAge) return nullptr;
  return &it->second;
}

void UpstreamBounds::Put(const std::string& topic, int32_t partition, int64_t start, int64_t end,
                         std::chrono::steady_clock::time_point now) {
  if (entries_.size() >= kMaxEntries && !entries_.count({topic, partition})) entries_.clear();
  entries_[{topic, partition}] = Entry{start, end, now};
}

bool LostRanges::Confirmed(const std::string& topic, int32_t partition, int64_t from,
                           std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  if (seen_.size() > 10000) seen_.clear();
  auto [it, fresh] = seen_.try_emplace({topic, partition, from}, now);
  return !fresh && now - it->second >= kConfirmAfter;
}

void LostRanges::Report(const std::string& topic, int32_t partition, int64_t from, int64_t to, int64_t table_start,
                        int64_t table_end, int64_t upstream_start) {
  {
    std::lock_guard lock(mu_);
    if (!logged_.emplace(topic, partition, from).second) return;
  }
  log::Warn(
      "{}-{}: offsets {}..{} are in neither tier (the table holds {}..{}, the upstream starts at {}: the archive "
      "fell behind retention); consumers skip them",
      topic, partition, from, to - 1, table_start, table_end - 1, upstream_start);
}

bool NamesTieredTopic(const TierContext& tc, const msg::FetchRequest& req) {
  for (const auto& t : req.topics) {
    if (tc.tables->Find(t.topic)) return true;
  }
  return tc.views && NamesView(*tc.views, req);
}

bool NamesTieredTopic(const TierContext& tc, const msg::ListOffsetsRequest& req) {
  for (const auto& t : req.topics) {
    if (tc.tables->Find(t.name)) return true;
  }
  return tc.views && NamesView(*tc.views, req);
}

asio::awaitable<Result<std::unique_ptr<kafka::WireWriter>>> TieredFetch(const TierContext& tc,
                                                                        kafka::client::Connection& up,
                                                                        const msg::RequestHeader& header,
                                                                        const msg::FetchRequest& req,
                                                                        int16_t list_offsets_version,
                                                                        UpstreamBounds* bounds) {
  const int16_t version = header.request_api_version;
  // prefer=table: partitions whose fetch offset the table holds go upstream
  // with partition_max_bytes 0 (the upstream still decides whether this
  // connection may read them; it returns at most one batch) and without a
  // wait, and are answered from the table.
  msg::FetchRequest forwarded = req;
  // Views (`:cold_suffix`): their partitions go as probes of the base topic.
  ProbePlan views_plan;
  if (tc.views) views_plan = PrepareFetch(*tc.views, forwarded);
  std::vector<std::pair<std::string, int32_t>> preferred;
  if (!tc.prefer_table.empty()) {
    std::vector<std::tuple<std::shared_ptr<TopicLog>, msg::FetchRequest::FetchPartition*>> candidates;
    for (auto& t : forwarded.topics) {
      if (!tc.prefer_table.count(t.topic)) continue;
      auto log = tc.tables->Find(t.topic);
      if (!log) continue;
      for (auto& p : t.partitions) candidates.emplace_back(log, &p);
    }
    if (!candidates.empty()) {
      co_await kafka::server::RunBlocking(*tc.pool, [&]() {
        for (auto& [log, p] : candidates) {
          auto o = log->Offsets(p->partition);
          if (o.ok() && p->fetch_offset >= o->log_start && p->fetch_offset < o->high_watermark) {
            p->partition_max_bytes = 0;
            preferred.emplace_back(log->name(), p->partition);
          }
        }
        return 0;
      });
      if (!preferred.empty()) forwarded.max_wait_ms = 0;
    }
  }
  auto is_preferred = [&](const std::string& topic, int32_t partition) {
    return std::find(preferred.begin(), preferred.end(), std::make_pair(topic, partition)) != preferred.end();
  };
  if (bounds) StartLikelyColdReads(tc, req, *bounds);
  const auto forwarded_at = std::chrono::steady_clock::now();
  CO_ASSIGN_OR_RAISE(auto resp, (co_await Forward<msg::FetchRequest, msg::FetchResponse>(up, header, forwarded)));
  const double upstream_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - forwarded_at).count();
  if (resp.error_code != 0) co_return EncodeBody(resp, version);
  MoveProbeAnswers(views_plan, resp);

  // The tiered partitions of the answer: refused ones, and served ones whose
  // log start becomes the merged one; and the views' partitions, which the
  // upstream let this connection read (its probe was answered or out of range).
  std::vector<Refused> refused, preferred_reads, view_reads;
  std::vector<std::pair<std::shared_ptr<TopicLog>, msg::FetchResponse::PartitionData*>> served;
  int64_t used = 0;
  for (auto& t : resp.responses) {
    for (auto& p : t.partitions) used += p.records ? static_cast<int64_t>(p.records->size()) : 0;
    const std::string* view_base = tc.views ? tc.views->BaseOf(t.topic) : nullptr;
    auto log = tc.tables->Find(view_base ? *view_base : t.topic);
    if (!log) continue;
    const msg::FetchRequest::FetchTopic* rt = nullptr;
    for (const auto& candidate : req.topics) {
      if (candidate.topic == t.topic) rt = &candidate;
    }
    for (auto& p : t.partitions) {
      const msg::FetchRequest::FetchPartition* rp = nullptr;
      if (rt) {
        for (const auto& c : rt->partitions) {
          if (c.partition == p.partition_index) rp = &c;
        }
      }
      if (view_base) {
        if (rp && (p.error_code == 0 || p.error_code == static_cast<int16_t>(ErrorCode::kOffsetOutOfRange))) {
          Refused r{log, rp, &p, std::nullopt};
          r.upstream_start = INT64_MAX;  // the view is the table alone
          r.bounds_known = true;
          view_reads.push_back(std::move(r));
        } else {
          p.high_watermark = p.last_stable_offset = p.log_start_offset = -1;
        }
      } else if (p.error_code == 0 && rp && is_preferred(t.topic, p.partition_index)) {
        // Answered from the table: what the upstream returned goes.
        used -= p.records ? static_cast<int64_t>(p.records->size()) : 0;
        Refused r{log, rp, &p, std::nullopt};
        r.upstream_start = INT64_MAX;  // nothing to cut: the table serves all it holds
        r.upstream_end = p.high_watermark;
        r.bounds_known = true;
        preferred_reads.push_back(std::move(r));
      } else if (p.error_code == static_cast<int16_t>(ErrorCode::kOffsetOutOfRange) && rp) {
        refused.push_back({log, rp, &p, std::nullopt});
      } else if (p.error_code == 0) {
        served.emplace_back(log, &p);
      }
    }
  }
  if (metrics::Metrics* m = metrics::Global()) {
    bool any = false;
    for (auto& [log, p] : served) {
      if (!p->records || p->records->empty()) continue;
      any = true;
      m->AddRecords("served", log->name(), p->partition_index, metrics::RecordsInBatches(*p->records),
                    static_cast<int64_t>(p->records->size()), "upstream");
    }
    if (any) {
      m->Seconds("thaw_fetch_latency_seconds",
                 metrics::kFetchLatencyHelp,
                 {{"tier", "upstream"}})
          .Observe(upstream_seconds);
    }
  }
  if (refused.empty() && served.empty() && preferred_reads.empty() && view_reads.empty()) {
    co_return EncodeBody(resp, version);
  }

  // The table's offsets (an in-memory plan; a pool thread all the same).
  std::vector<std::optional<PartitionOffsets>> served_tables(served.size());
  co_await kafka::server::RunBlocking(*tc.pool, [&]() {
    for (size_t i = 0; i < served.size(); ++i) {
      if (auto o = served[i].first->Offsets(served[i].second->partition_index); o.ok()) served_tables[i] = *o;
    }
    for (Refused& r : refused) {
      if (auto o = r.log->Offsets(r.out->partition_index); o.ok()) r.table = *o;
    }
    for (Refused& r : preferred_reads) {
      if (auto o = r.log->Offsets(r.out->partition_index); o.ok()) r.table = *o;
    }
    for (Refused& r : view_reads) {
      if (auto o = r.log->Offsets(r.out->partition_index); o.ok()) r.table = *o;
    }
    return 0;
  });
  for (size_t i = 0; i < served.size(); ++i) {
    if (metrics::Metrics* m = metrics::Global()) {
      NoteUpstreamPosition(*m, served[i].first->name(), served[i].second->partition_index,
                           served[i].second->log_start_offset, served[i].second->high_watermark, served_tables[i]);
    }
    served[i].second->log_start_offset = MergedLogStart(served[i].second->log_start_offset, served_tables[i]);
  }
  std::vector<Refused*> from_table, skip;
  for (Refused& r : preferred_reads) {
    r.out->log_start_offset = MergedLogStart(r.out->log_start_offset, r.table);
    from_table.push_back(&r);
  }
  bool views_at_end = !view_reads.empty();  // every view partition is at its table's end
  for (Refused& r : view_reads) {
    // The view's log is the table's: its bounds, its out-of-range.
    auto& out = *r.out;
    out.records = std::string();
    out.aborted_transactions = std::vector<msg::FetchResponse::AbortedTransaction>();
    if (!r.table) {
      out.error_code = static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
      views_at_end = false;
      continue;
    }
    out.high_watermark = out.last_stable_offset = r.table->high_watermark;
    out.log_start_offset = r.table->log_start;
    const int64_t at = r.request->fetch_offset;
    if (at < r.table->log_start || at > r.table->high_watermark) {
      out.error_code = static_cast<int16_t>(ErrorCode::kOffsetOutOfRange);
      views_at_end = false;
      continue;
    }
    out.error_code = 0;
    if (at < r.table->high_watermark) {
      views_at_end = false;
      from_table.push_back(&r);
    }
  }
  if (!refused.empty()) {
    // Bounds this connection learnt less than a second ago do for a fetch
    // below their log start that the table holds; the rest are asked.
    const auto now = std::chrono::steady_clock::now();
    std::vector<Refused> ask;
    std::vector<size_t> asked;
    for (size_t i = 0; i < refused.size(); ++i) {
      Refused& r = refused[i];
      const UpstreamBounds::Entry* e =
          bounds ? bounds->Fresh(r.log->name(), r.out->partition_index, now) : nullptr;
      const int64_t at = r.request->fetch_offset;
      if (e && at < e->start && r.table && at >= r.table->log_start && at < r.table->high_watermark) {
        r.upstream_start = e->start;
        r.upstream_end = e->end;
        r.bounds_known = true;
      } else {
        ask.push_back(r);
        asked.push_back(i);
      }
    }
    if (!ask.empty()) {
      CO_RETURN_NOT_OK(co_await AskBounds(up, header, req.isolation_level, list_offsets_version, ask));
      for (size_t j = 0; j < ask.size(); ++j) {
        refused[asked[j]] = ask[j];
        if (bounds && ask[j].bounds_known) {
          bounds->Put(ask[j].log->name(), ask[j].out->partition_index, ask[j].upstream_start, ask[j].upstream_end,
                      now);
        }
      }
    }
  }
  for (Refused& r : refused) {
    if (!r.bounds_known) {
      // The upstream would not say where its log starts: a retriable error,
      // never the out-of-range that resets the client.
      r.out->error_code = RetriableBoundsError(r.bounds_error);
      r.out->records = std::string();
      r.out->high_watermark = -1;
      r.out->last_stable_offset = -1;
      r.out->log_start_offset = -1;
      continue;
    }
    TierBounds b{r.upstream_start, r.upstream_end, r.table};
    auto& out = *r.out;
    out.high_watermark = r.upstream_end;
    out.last_stable_offset = r.upstream_end;
    out.log_start_offset = MergedLogStart(r.upstream_start, r.table);
    switch (RouteRefusedFetch(r.request->fetch_offset, b)) {
      case Route::kTable:
        from_table.push_back(&r);
        break;
      case Route::kSkipToUpstream:
        skip.push_back(&r);
        break;
      case Route::kRetry:
        out.error_code = 0;
        out.records = std::string();
        break;
      case Route::kOutOfRange:
        break;
    }
  }

  // A range the table does not hold may be in a snapshot this server has not
  // loaded yet (the archive commits, and a retention or DeleteRecords that
  // follows it moves the broker's log start within the refresh interval):
  // load the table's newest snapshot before calling the range lost.
  // (RefreshIfChanged shares one reload among concurrent callers and checks
  // the catalog at most every min_check_interval.)
  if (!skip.empty()) {
    co_await kafka::server::RunBlocking(*tc.pool, [&]() {
      std::set<TopicLog*> refreshed;
      for (Refused* r : skip) {
        if (refreshed.insert(r->log.get()).second) {
          if (Status st = r->log->RefreshIfChanged(); !st.ok()) {
            log::Warn("{}: checking for a newer snapshot before skipping a range: {}", r->log->name(),
                      st.message());
          }
        }
        if (auto o = r->log->Offsets(r->out->partition_index); o.ok()) r->table = *o;
      }
      return 0;
    });
    std::vector<Refused*> still;
    bool unconfirmed = false;
    const auto now = std::chrono::steady_clock::now();
    for (Refused* r : skip) {
      r->out->log_start_offset = MergedLogStart(r->upstream_start, r->table);
      const Route route = RouteRefusedFetch(r->request->fetch_offset, {r->upstream_start, r->upstream_end, r->table});
      if (route == Route::kTable) {
        from_table.push_back(r);
      } else if (route == Route::kSkipToUpstream) {
        const int64_t table_end = r->table ? r->table->high_watermark : 0;
        if (tc.lost->Confirmed(r->log->name(), r->out->partition_index, table_end, now)) {
          still.push_back(r);
        } else {
          // Not yet: an empty answer, and the client asks again.
          r->out->error_code = 0;
          r->out->records = std::string();
          unconfirmed = true;
        }
      }
    }
    skip = std::move(still);
    if (unconfirmed && from_table.empty() && skip.empty()) {
      // Nothing else to send: wait a little as a broker would, so that the
      // client does not spin while the table catches up.
      asio::steady_timer wait(co_await asio::this_coro::executor);
      wait.expires_after(std::chrono::milliseconds(std::clamp(req.max_wait_ms, 0, 250)));
      asio::error_code ignored;
      co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
  }

  // Cold reads, in request order, within what is left of max_bytes.
  if (!from_table.empty()) {
    const int64_t max_bytes = req.max_bytes <= 0 ? INT32_MAX : req.max_bytes;
    const auto cold_at = std::chrono::steady_clock::now();
    co_await kafka::server::RunBlocking(*tc.pool, [&]() {
      // Every partition but the first starts decoding now, in the
      // background, while this thread fills the first (as serve's Fetch).
      for (size_t i = 1; i < from_table.size(); ++i) {
        from_table[i]->log->ReadAhead(from_table[i]->out->partition_index, from_table[i]->request->fetch_offset,
                                      from_table[i]->request->partition_max_bytes);
      }
      for (Refused* r : from_table) {
        auto& out = *r->out;
        const bool first_whole = used == 0;
        const int64_t limit = std::min<int64_t>(r->request->partition_max_bytes, max_bytes - used);
        out.error_code = 0;
        out.aborted_transactions = std::vector<msg::FetchResponse::AbortedTransaction>();
        out.records = std::string();
        out.records_shared.clear();
        if (limit <= 0 && !first_whole) continue;
        auto fetched = r->log->Fetch(out.partition_index, r->request->fetch_offset, std::max<int64_t>(limit, 1));
        if (!fetched.ok()) {
          log::Warn("Fetch {}-{} at offset {} from the table: {}", r->log->name(), out.partition_index,
                    r->request->fetch_offset, fetched.status().message());
          out.error_code = static_cast<int16_t>(kafka::ToKafkaError(fetched.status()));
          continue;
        }
        const int64_t added = AppendColdBatches(fetched->batches, r->upstream_start, std::max<int64_t>(limit, 0),
                                                first_whole, &out.records_shared);
        used += added;
        if (metrics::Metrics* m = metrics::Global(); m && added > 0) {
          int64_t records = 0;
          for (const auto& b : out.records_shared) records += metrics::RecordsInBatches(*b);
          m->AddRecords("served", r->log->name(), out.partition_index, records, added,
                        "table");
        }
      }
      return 0;
    });
    if (metrics::Metrics* m = metrics::Global()) {
      m->Seconds("thaw_fetch_latency_seconds",
                 metrics::kFetchLatencyHelp,
                 {{"tier", "table"}})
          .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - cold_at).count());
    }
  }

  // A range neither tier holds: the upstream's records from its log start.
  if (!skip.empty()) {
    msg::FetchRequest again;
    again.replica_id = -1;
    again.max_wait_ms = 0;
    again.min_bytes = 0;
    again.max_bytes = req.max_bytes;
    again.isolation_level = req.isolation_level;
    again.session_id = 0;
    again.session_epoch = -1;
    again.rack_id = req.rack_id;
    for (Refused* r : skip) {
      const int64_t table_end = r->table ? r->table->high_watermark : 0;
      const int64_t table_start = r->table ? r->table->log_start : 0;
      tc.lost->Report(r->log->name(), r->out->partition_index, std::max(r->request->fetch_offset, table_end),
                      r->upstream_start, table_start, table_end, r->upstream_start);
      auto it = std::find_if(again.topics.begin(), again.topics.end(),
                             [&](const auto& t) { return t.topic == r->log->name(); });
      if (it == again.topics.end()) {
        again.topics.emplace_back().topic = r->log->name();
        it = std::prev(again.topics.end());
      }
      auto p = *r->request;
      p.fetch_offset = r->upstream_start;
      it->partitions.push_back(p);
    }
    msg::RequestHeader h = header;
    h.correlation_id = header.correlation_id ^ 0x40000000;  // not the client's: checked on the way back
    CO_ASSIGN_OR_RAISE(auto more, (co_await Forward<msg::FetchRequest, msg::FetchResponse>(up, h, again)));
    for (Refused* r : skip) {
      for (auto& t : more.responses) {
        if (t.topic != r->log->name()) continue;
        for (auto& p : t.partitions) {
          if (p.partition_index != r->out->partition_index) continue;
          const int64_t merged_start = r->out->log_start_offset;
          *r->out = std::move(p);
          r->out->log_start_offset = MergedLogStart(r->out->log_start_offset, r->table);
          if (r->out->log_start_offset < 0) r->out->log_start_offset = merged_start;
        }
      }
    }
  }
  if (views_plan.only_views && views_at_end && req.max_wait_ms > 0) {
    // Views alone, all at their end: wait as a broker would (up to
    // max_wait_ms, at most 5 s), so that the client does not spin.
    asio::steady_timer wait(co_await asio::this_coro::executor);
    wait.expires_after(std::chrono::milliseconds(std::min(req.max_wait_ms, 5000)));
    asio::error_code ignored;
    co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  co_return EncodeBody(resp, version);
}

asio::awaitable<Result<std::string>> TieredListOffsets(const TierContext& tc, kafka::client::Connection& up,
                                                       const msg::RequestHeader& header,
                                                       const msg::ListOffsetsRequest& req) {
  const int16_t version = header.request_api_version;
  msg::ListOffsetsRequest forwarded = req;
  ProbePlan views_plan;
  if (tc.views) views_plan = PrepareListOffsets(*tc.views, forwarded);
  CO_ASSIGN_OR_RAISE(auto resp,
                     (co_await Forward<msg::ListOffsetsRequest, msg::ListOffsetsResponse>(up, header, forwarded)));
  MoveProbeAnswers(views_plan, resp);
  struct Slot {
    std::shared_ptr<TopicLog> log;
    int64_t timestamp;
    msg::ListOffsetsResponse::ListOffsetsPartitionResponse* out;
    bool view;
  };
  std::vector<Slot> slots;
  for (auto& t : resp.topics) {
    const std::string* view_base = tc.views ? tc.views->BaseOf(t.name) : nullptr;
    auto log = tc.tables->Find(view_base ? *view_base : t.name);
    if (!log) continue;
    for (auto& p : t.partitions) {
      if (p.error_code != 0) continue;  // the upstream's refusal (ACLs, leadership) stands
      for (const auto& rt : req.topics) {
        if (rt.name != t.name) continue;
        for (const auto& rp : rt.partitions) {
          if (rp.partition_index == p.partition_index) slots.push_back({log, rp.timestamp, &p, view_base != nullptr});
        }
      }
    }
  }
  if (slots.empty()) co_return Encode(resp, version);
  co_await kafka::server::RunBlocking(*tc.pool, [&]() {
    for (Slot& s : slots) {
      auto& out = *s.out;
      if (s.view) {
        AnswerFromTable(*s.log, s.timestamp, out);
        continue;
      }
      if (s.timestamp == kEarliest) {
        auto o = s.log->Offsets(out.partition_index);
        if (!o.ok()) continue;
        const int64_t merged = MergedLogStart(out.offset, *o);
        if (merged != out.offset) {
          out.offset = merged;
          out.timestamp = -1;
          out.leader_epoch = -1;
        }
      } else if (s.timestamp >= 0) {
        auto found = s.log->OffsetForTime(out.partition_index, s.timestamp);
        if (!found.ok()) {
          log::Warn("ListOffsets {}-{} by time in the table: {}", s.log->name(), out.partition_index,
                    found.status().message());
          continue;
        }
        if (*found && (out.offset < 0 || (*found)->first < out.offset)) {
          out.offset = (*found)->first;
          out.timestamp = (*found)->second;
          out.leader_epoch = -1;
        }
      }
    }
    return 0;
  });
  co_return Encode(resp, version);
}

}  // namespace thaw::merged
