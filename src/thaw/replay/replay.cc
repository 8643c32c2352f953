#include "thaw/replay/replay.h"

#include "thaw/replay/replay_metrics.h"

#include <chrono>
#include <random>
#include <thread>

#include <fmt/chrono.h>
#include <nlohmann/json.hpp>

#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/table_scan.h"

namespace thaw::replay {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

std::string Checkpoint::ToJson() const {
  json j;
  j["job"] = job;
  j["table"] = table;
  j["topic"] = topic;
  j["snapshot_id"] = snapshot_id;
  j["range"] = range;
  json offs = json::object();
  for (const auto& [p, o] : next_offsets) offs[std::to_string(p)] = o;
  j["next_offsets"] = offs;
  j["records"] = records;
  j["complete"] = complete;
  j["updated_ms"] = updated_ms;
  return j.dump();
}

Result<Checkpoint> Checkpoint::FromJson(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Corrupt("checkpoint is not a JSON object");
  try {
    Checkpoint c;
    c.job = j.at("job").get<std::string>();
    c.table = j.at("table").get<std::string>();
    c.topic = j.at("topic").get<std::string>();
    c.snapshot_id = j.at("snapshot_id").get<int64_t>();
    c.range = j.value("range", std::string());
    for (const auto& [p, o] : j.at("next_offsets").items()) c.next_offsets[std::stoi(p)] = o.get<int64_t>();
    c.records = j.value("records", int64_t{0});
    c.complete = j.value("complete", false);
    c.updated_ms = j.value("updated_ms", int64_t{0});
    return c;
  } catch (const std::exception& e) {
    return Status::Corrupt("checkpoint JSON: {}", e.what());
  }
}

Result<std::optional<Checkpoint>> LoadCheckpoint(const KafkaConfig& kafka, const std::string& checkpoint_topic,
                                                 const std::string& job, int timeout_ms) {
  ASSIGN_OR_RAISE(auto recs, ReadWholeTopic(kafka, checkpoint_topic, timeout_ms));
  std::optional<Checkpoint> last;
  for (const auto& r : recs) {
    if (!r.key || *r.key != job) continue;
    if (!r.value) {  // tombstone: the job was deleted
      last.reset();
      continue;
    }
    auto c = Checkpoint::FromJson(*r.value);
    if (!c.ok()) {
      return c.status().WithContext(fmt::format("job '{}' in topic '{}' offset {}", job, checkpoint_topic, r.offset));
    }
    last = std::move(*c);
  }
  return last;
}

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t RecordBytes(const records::RecordBatch& b, const records::Record& r) {
  int64_t n = (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0);
  for (const auto& h : b.HeadersOf(r)) n += h.key.size() + (h.value ? h.value->size() : 0);
  return n;
}

// "0-2,5"
std::string PartitionList(const std::set<int32_t>& parts) {
  std::string out;
  for (auto it = parts.begin(); it != parts.end();) {
    int32_t lo = *it, hi = *it;
    for (++it; it != parts.end() && *it == hi + 1; ++it) hi = *it;
    out += (out.empty() ? "" : ",") + (lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi));
  }
  return out.empty() ? "none" : out;
}

std::string IsoMs(int64_t ms) {
  const auto tp = std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(ms));
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(tp));
}

// A data file's Kafka partition (when it holds one) and offset bounds, from
// its partition values and column metrics.
struct FileBounds {
  std::optional<int32_t> partition;
  std::optional<std::pair<int64_t, int64_t>> offsets;
  int64_t records = 0;
};

// The live data files of the reader's snapshot with their bounds (manifests
// only; no data read). Empty for a table without an offset column.
Result<std::vector<FileBounds>> PlanFileBounds(const std::shared_ptr<const iceberg::Table>& table,
                                               const records::RecordReader& reader) {
  std::vector<FileBounds> out;
  const auto& layout = reader.layout();
  if (!layout.offset || !reader.snapshot()) return out;
  const int32_t off_id = layout.offset->field_id();
  const int32_t part_id = layout.partition ? layout.partition->field_id() : -1;
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(table->io, &table->metadata, reader.snapshot(), {}));
  scan.KeepMetricsFor({off_id, part_id});
  ASSIGN_OR_RAISE(auto tasks, scan.PlanFiles());
  for (const auto& t : tasks) {
    const auto& f = *t.file;
    auto bound = [&](int32_t id) -> std::optional<std::pair<int64_t, int64_t>> {
      auto l = f.lower_bounds.find(id), h = f.upper_bounds.find(id);
      if (l == f.lower_bounds.end() || h == f.upper_bounds.end()) return std::nullopt;
      auto lv = iceberg::DecodeIntegerBound(l->second), hv = iceberg::DecodeIntegerBound(h->second);
      if (!lv || !hv) return std::nullopt;
      return std::make_pair(*lv, *hv);
    };
    FileBounds b;
    b.records = f.record_count;
    b.offsets = bound(off_id);
    if (part_id < 0) b.partition = 0;
    if (!b.partition) {
      if (const auto* spec = table->metadata.SpecById(f.spec_id)) {
        for (size_t i = 0; i < spec->fields.size() && i < f.partition.size(); ++i) {
          if (spec->fields[i].source_id() == part_id &&
              spec->fields[i].transform.kind == iceberg::TransformKind::kIdentity &&
              f.partition[i].kind == iceberg::Datum::kInt) {
            b.partition = static_cast<int32_t>(f.partition[i].i);
          }
        }
      }
      if (auto pb = bound(part_id); !b.partition && pb && pb->first == pb->second) {
        b.partition = static_cast<int32_t>(pb->first);
      }
    }
    out.push_back(b);
  }
  return out;
}

// What the table (at the snapshot `read` selects) holds, for an error about
// a range: its partitions, offsets per partition and timestamps, from the
// data files' column metrics (no data is read).
Result<std::string> DescribeExtent(const std::shared_ptr<const iceberg::Table>& table,
                                   const records::ReadOptions& read, std::set<int32_t>* partitions_out) {
  records::ReadOptions all = read;
  all.partitions.reset();
  all.from_offset.reset();
  all.to_offset.reset();
  all.from_time_ms.reset();
  all.to_time_ms.reset();
  all.start_offsets.clear();
  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, all));
  const auto parts = reader->partitions();
  *partitions_out = std::set<int32_t>(parts.begin(), parts.end());
  if (!reader->snapshot()) return fmt::format("table {} has no snapshot (no records)", table->name);
  if (parts.empty()) {
    return fmt::format("table {} has no records at snapshot {}", table->name, reader->snapshot()->snapshot_id);
  }
  std::string out = fmt::format("table {} at snapshot {} has partitions {}", table->name,
                                reader->snapshot()->snapshot_id, PartitionList(*partitions_out));
  if (reader->layout().offset) {
    // Offsets per partition where a file holds one partition (identity
    // partitioned, or metrics lo == hi); otherwise across partitions.
    ASSIGN_OR_RAISE(auto files, PlanFileBounds(table, *reader));
    std::map<int32_t, std::pair<int64_t, int64_t>> per;
    std::optional<std::pair<int64_t, int64_t>> mixed;
    bool unknown = false;
    auto widen = [](std::optional<std::pair<int64_t, int64_t>>& r, int64_t lo, int64_t hi) {
      r = r ? std::make_pair(std::min(r->first, lo), std::max(r->second, hi)) : std::make_pair(lo, hi);
    };
    for (const auto& fb : files) {
      const auto& off = fb.offsets;
      if (!off) {
        unknown = true;
        continue;
      }
      const auto& part = fb.partition;
      if (part) {
        std::optional<std::pair<int64_t, int64_t>> r;
        if (auto it = per.find(*part); it != per.end()) r = it->second;
        widen(r, off->first, off->second);
        per[*part] = *r;
      } else {
        widen(mixed, off->first, off->second);
      }
    }
    std::string offs;
    if (!mixed && !unknown) {
      for (const auto& [p, r] : per) {
        if (!partitions_out->count(p)) continue;
        offs += fmt::format("{}partition {}: {}..{}", offs.empty() ? "" : ", ", p, r.first, r.second);
      }
    } else if (!unknown) {
      std::optional<std::pair<int64_t, int64_t>> r = mixed;
      for (const auto& [p, pr] : per) widen(r, pr.first, pr.second);
      if (r) offs = fmt::format("{}..{} across partitions", r->first, r->second);
    }
    if (!offs.empty()) out += fmt::format("; offsets {}", offs);
  }
  if (auto ts = reader->planned_timestamp_range_ms()) {
    out += fmt::format("; timestamps {} .. {} ({} .. {} ms)", IsoMs(ts->first), IsoMs(ts->second), ts->first,
                       ts->second);
  }
  return out;
}

// The records a read will yield, for the progress bar: per planned file, its
// record count scaled by the share of its offset range the range keeps (and
// none for partitions not asked), capped by the reader's own plan (which
// time ranges prune). `exact` when no file was cut, nothing is deleted and
// nothing else filters.
std::pair<int64_t, bool> EstimateRecords(const std::shared_ptr<const iceberg::Table>& table,
                                         const records::RecordReader& reader, const records::ReadOptions& read,
                                         bool filtered) {
  const int64_t planned = reader.planned_records();
  bool exact = !filtered && reader.scan_stats().delete_files == 0 && !read.from_time_ms && !read.to_time_ms;
  auto files = PlanFileBounds(table, reader);
  if (!files.ok() || files->empty()) {
    return {planned, exact && !read.from_offset && !read.to_offset && read.start_offsets.empty()};
  }
  double est = 0;
  for (const auto& f : *files) {
    if (read.partitions && f.partition && !read.partitions->count(*f.partition)) continue;
    if (read.partitions && !f.partition) exact = false;
    if (!f.offsets || f.offsets->second < f.offsets->first) {
      est += f.records;
      exact = exact && !read.from_offset && !read.to_offset && read.start_offsets.empty();
      continue;
    }
    int64_t lo = f.offsets->first, hi = f.offsets->second;  // inclusive
    int64_t keep_lo = lo, keep_hi = hi;
    if (read.from_offset) keep_lo = std::max(keep_lo, *read.from_offset);
    if (read.to_offset) keep_hi = std::min(keep_hi, *read.to_offset - 1);
    if (f.partition) {
      if (auto it = read.start_offsets.find(*f.partition); it != read.start_offsets.end()) {
        keep_lo = std::max(keep_lo, it->second);
      }
    } else if (!read.start_offsets.empty()) {
      exact = false;
    }
    if (keep_hi < keep_lo) continue;
    if (keep_lo != lo || keep_hi != hi) exact = false;
    est += static_cast<double>(f.records) * static_cast<double>(keep_hi - keep_lo + 1) / static_cast<double>(hi - lo + 1);
  }
  const int64_t n = std::min<int64_t>(planned, static_cast<int64_t>(est + 0.5));
  return {n, exact && n == static_cast<int64_t>(est + 0.5)};
}

// The range checked against the table before anything touches Kafka: asked
// partitions the table does not have, and a range that selects nothing, are
// errors naming the table's extent (warnings with --allow-empty). Reads
// `reader` up to its first record (into `batch`, *pending = true) to know
// the range is not empty. Returns false if there is nothing to replay.
Result<bool> CheckRange(const std::shared_ptr<const iceberg::Table>& table, const ReplayOptions& o,
                        records::RecordReader& reader, records::RecordBatch* batch, bool* pending,
                        std::vector<std::string>* warnings) {
  *pending = false;
  while (true) {
    ASSIGN_OR_RAISE(bool more, reader.Next(batch));
    if (!more) break;
    if (!batch->records.empty()) {
      *pending = true;
      break;
    }
  }
  std::set<int32_t> missing;
  if (o.asked_partitions) {
    const auto got = reader.partitions();
    for (int32_t p : *o.asked_partitions) {
      if (!std::binary_search(got.begin(), got.end(), p)) missing.insert(p);
    }
  }
  if (missing.empty() && *pending) return true;
  std::set<int32_t> table_parts;
  ASSIGN_OR_RAISE(std::string extent, DescribeExtent(table, o.read, &table_parts));
  std::set<int32_t> unknown;
  for (int32_t p : missing) {
    if (!table_parts.count(p)) unknown.insert(p);
  }
  const std::string hint = o.allow_empty ? "" : "; ask for what the table holds, or pass --allow-empty";
  if (!unknown.empty()) {
    std::string msg = fmt::format("--partitions: partition{} {} not in the table ({})", unknown.size() > 1 ? "s" : "",
                                  PartitionList(unknown), extent);
    // --follow waits for appends, which may bring the partition.
    if (!o.allow_empty && !o.follow) return Status::Invalid("{}{}", msg, hint);
    warnings->push_back(o.follow ? msg + "; following until it appears" : msg);
  }
  if (*pending || o.follow) return true;
  const bool ranged = o.range_given;
  // Without range flags (a table without records, or a --where that implies
  // an empty range) this is a warning: nothing is created or sent, exit 0.
  const std::string msg =
      !o.range_description.empty() ? fmt::format("the range ({}) selects no records: {}", o.range_description, extent)
                                   : fmt::format("nothing to replay: {}", extent);
  if (ranged && !o.allow_empty) return Status::Invalid("{}{}", msg, hint);
  warnings->push_back(msg);
  return false;
}

}  // namespace

Result<ReplayPlan> PlanReplay(std::shared_ptr<const iceberg::Table> table, const ReplayOptions& o) {
  ReplayPlan plan;
  {
    // The same checks as a replay, so --dry-run tells of a bad range.
    ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, o.read));
    records::RecordBatch batch;
    bool pending = false;
    RETURN_NOT_OK(CheckRange(table, o, *reader, &batch, &pending, &plan.warnings).status());
  }
  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, o.read));
  plan.table = table->name;
  if (const auto* snap = reader->snapshot()) plan.snapshot_id = snap->snapshot_id;
  plan.layout = reader->layout().name;
  for (int32_t p : reader->partitions()) plan.partitions.push_back(p);
  plan.range = o.range_description;
  plan.data_files = reader->planned_files();
  plan.data_files_skipped = reader->scan_stats().data_files_skipped;
  plan.delete_files = reader->scan_stats().delete_files;
  plan.records_at_most = reader->planned_records();
  plan.topic = o.topic;
  plan.brokers = o.kafka.brokers;
  plan.partitioner = o.partitioner == Partitioner::kSame ? "same" : o.partitioner == Partitioner::kKey ? "key" : "random";
  return plan;
}

std::string FormatPlan(const ReplayPlan& p) {
  std::string out;
  for (const auto& w : p.warnings) out += fmt::format("warning     {}\n", w);
  out += fmt::format("table       {}\n", p.table);
  out += fmt::format("snapshot    {}\n", p.snapshot_id ? std::to_string(*p.snapshot_id) : std::string("none (empty table)"));
  out += fmt::format("layout      {}\n", p.layout);
  std::string parts;
  for (int32_t part : p.partitions) parts += (parts.empty() ? "" : ",") + std::to_string(part);
  out += fmt::format("partitions  {}\n", parts.empty() ? "none" : parts);
  out += fmt::format("range       {}\n", p.range.empty() ? "all" : p.range);
  out += fmt::format("files       {} data files planned ({} skipped by pruning), {} delete files\n", p.data_files,
                     p.data_files_skipped, p.delete_files);
  out += fmt::format("records     at most {} (planned files' record counts, before range and deletes)\n",
                     p.records_at_most);
  out += fmt::format("target      topic {} on {} (partitioner {})\n", p.topic, p.brokers, p.partitioner);
  return out;
}

namespace {

constexpr std::string_view kSafeToRerun =
    "nothing of an unfinished transaction is visible to read_committed consumers; the job is safe to rerun and "
    "resumes from its last committed checkpoint";
constexpr std::string_view kSafeToRerunAtLeastOnce =
    "the job is safe to rerun and resumes from its last checkpoint (records sent after it may arrive twice)";

// The checkpoint topic must outlive broker failures: replicated where the
// cluster allows, compacted (one live value per job).
Status EnsureCheckpointTopic(KafkaProducer& producer, const std::string& topic, int timeout_ms) {
  auto ct = producer.DescribeTopic(topic, timeout_ms);
  if (ct.ok()) return Status::OK();
  if (ct.status().code() != StatusCode::kNotFound) return ct.status();
  ASSIGN_OR_RAISE(int32_t brokers, producer.BrokerCount(timeout_ms));
  const int32_t rf = std::max(1, std::min(3, brokers));
  std::map<std::string, std::string> configs = {{"cleanup.policy", "compact"},
                                                {"min.insync.replicas", rf >= 3 ? "2" : "1"}};
  return producer.CreateTopic(topic, 1, rf, configs, timeout_ms);
}

Result<ReplaySummary> RunReplayImpl(std::shared_ptr<const iceberg::Table> table, const ReplayOptions& o,
                                    const std::function<void(const Progress&)>& on_progress) {
  const auto t0 = Clock::now();
  ReplaySummary sum;
  sum.table = table->name;
  sum.topic = o.topic;
  records::ReadOptions read = o.read;
  auto note = [&](const std::string& msg) {
    if (o.report) o.report(msg);
  };
  auto stopping_early = [&] { return o.stop && o.stop->load(); };
  // --verify against the job's range at the snapshot it replayed.
  auto verify_at = [&](int64_t snapshot_id) -> Result<VerifyResult> {
    ReplayOptions vo = o;
    vo.read.snapshot = {};
    vo.read.snapshot.snapshot_id = snapshot_id;
    return VerifyReplay(table, table->name, vo, -1);
  };

  // 0. The range, checked against the table before anything touches Kafka.
  records::RecordBatch batch;
  bool pending_batch = false;  // `batch` holds the first records of `first_reader`, not yet produced
  ASSIGN_OR_RAISE(auto first_reader, records::RecordReader::Make(table, read));
  {
    ASSIGN_OR_RAISE(bool any, CheckRange(table, o, *first_reader, &batch, &pending_batch, &sum.warnings));
    for (const auto& w : sum.warnings) note("warning: " + w);
    if (!any) {
      // --allow-empty (or a table without records): nothing created, nothing sent.
      const auto* s0 = first_reader->snapshot();
      sum.snapshot_id = s0 ? s0->snapshot_id : 0;
      sum.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      return sum;
    }
  }

  // 1. The producer. With --exactly-once it fences any earlier instance of
  // the job (InitTransactions) *before* the checkpoint is read, so a commit
  // the coordinator accepted but whose markers had not yet reached the
  // checkpoint partition is seen (read_committed waits for it).
  const std::string txn_id = o.exactly_once ? "thaw-replay-" + (o.job.empty() ? o.topic : o.job) : "";
  std::unique_ptr<KafkaProducer> producer;
  auto open_producer = [&]() -> Status {
    producer.reset();
    ASSIGN_OR_RAISE(producer, KafkaProducer::Make(o.kafka, txn_id, o.topic));
    if (o.exactly_once) RETURN_NOT_OK(producer->InitTransactions(o.timeout_ms));
    return Status::OK();
  };
  RETURN_NOT_OK(open_producer());

  // 2. Resume a job: pin its snapshot and continue after its last offsets.
  std::optional<Checkpoint> cp;
  if (!o.job.empty()) {
    ASSIGN_OR_RAISE(cp, LoadCheckpoint(o.kafka, o.checkpoint_topic, o.job, o.timeout_ms));
    if (cp) {
      if (cp->table != table->name || cp->topic != o.topic || cp->range != o.range_description) {
        return Status::Invalid("job '{}' was started as table {} -> topic {} (range: {}); this run asks for {} -> {} "
                               "(range: {}): rerun with the same settings, or use a new --job name",
                               o.job, cp->table, cp->topic, cp->range.empty() ? "all" : cp->range, table->name, o.topic,
                               o.range_description.empty() ? "all" : o.range_description);
      }
      if (cp->complete) {
        sum.already_complete = true;
        sum.snapshot_id = cp->snapshot_id;
        sum.next_offsets = cp->next_offsets;
        // the same command plus --verify checks a finished job
        if (o.verify) {
          ASSIGN_OR_RAISE(sum.verify, verify_at(cp->snapshot_id));
        }
        return sum;
      }
      read.snapshot = {};
      read.snapshot.snapshot_id = cp->snapshot_id;
      read.start_offsets = cp->next_offsets;
      sum.resumed = true;
      // The job's own snapshot and positions: a new reader.
      pending_batch = false;
      ASSIGN_OR_RAISE(first_reader, records::RecordReader::Make(table, read));
    }
  }

  const auto* snap = first_reader->snapshot();
  sum.snapshot_id = snap ? snap->snapshot_id : 0;

  // 3. The target topic: created to keep everything, or checked to keep
  // what is sent, before anything is produced.
  const auto partitions = first_reader->partitions();
  const int32_t needed = partitions.empty() ? 1 : partitions.back() + 1;
  auto topic = producer->DescribeTopic(o.topic, o.timeout_ms);
  bool created = false;
  if (!topic.ok() && topic.status().code() == StatusCode::kNotFound && o.create_topic) {
    // Everything that can be checked before the topic exists is, so that a
    // refusal leaves nothing behind.
    const int32_t create_parts = o.target_partitions.value_or(needed);
    if (o.partitioner == Partitioner::kSame && needed > create_parts) {
      return Status::Invalid("--target-partitions {} is too few: the source has partition {} and --partitioner same "
                             "maps partition p to p; give --target-partitions {} or more, or use --partitioner key "
                             "(topic '{}' was not created)", create_parts, needed - 1, needed, o.topic);
    }
    {
      ASSIGN_OR_RAISE(auto planned_limits, TopicLimits::FromConfigs(CreatedTopicConfigs(o.topic_configs)));
      PlannedRecords planned;
      planned.timestamp_range_ms = first_reader->planned_timestamp_range_ms();
      planned.bytes = first_reader->planned_file_bytes();
      planned.target_partitions = create_parts;
      std::vector<std::string> ignored;  // warnings come from the check of the created topic below
      Status st = CheckTopic(o.topic, planned_limits, planned, o.timestamps, o.force, NowMs(), &ignored);
      if (!st.ok()) return st.WithContext(fmt::format("--topic-config (topic '{}' was not created)", o.topic));
    }
    RETURN_NOT_OK(producer->CreateTopic(o.topic, create_parts, o.replication_factor,
                                        CreatedTopicConfigs(o.topic_configs), o.timeout_ms));
    created = true;
    for (int i = 0; i < 50 && !stopping_early(); ++i) {  // metadata propagates asynchronously
      topic = producer->DescribeTopic(o.topic, o.timeout_ms);
      if (topic.ok() && topic->partitions > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  // A check that fails after --create-topic made the topic deletes it again
  // (nothing was produced to it).
  auto undo_create = [&](Status st) -> Status {
    if (created && !st.ok()) {
      Status del = producer->DeleteTopic(o.topic, o.timeout_ms);
      if (del.ok()) return st.WithContext(fmt::format("topic '{}' was created and deleted again", o.topic));
      return st.WithContext(fmt::format("topic '{}' was created and could not be deleted again: {}", o.topic,
                                        del.message()));
    }
    return st;
  };
  if (!topic.ok()) return undo_create(topic.status());
  const int32_t target_parts = topic->partitions;
  if (o.partitioner == Partitioner::kSame && needed > target_parts) {
    return Status::Invalid("topic '{}' has {} partitions but the source has partition {}: --partitioner same maps "
                           "partition p to p; add partitions to the topic (at least {}), replay into a new topic with "
                           "--create-topic, or use --partitioner key",
                           o.topic, target_parts, needed - 1, needed);
  }
  auto topic_configs = producer->DescribeTopicConfigs(o.topic, o.timeout_ms);
  // A topic just created may not be known yet to the broker answering
  // DescribeConfigs (in a cluster, metadata reaches brokers one by one).
  for (int i = 0; created && !topic_configs.ok() && topic_configs.status().code() == StatusCode::kIOError && i < 50 &&
                  !stopping_early();
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    topic_configs = producer->DescribeTopicConfigs(o.topic, o.timeout_ms);
  }
  if (!topic_configs.ok()) return undo_create(topic_configs.status());
  auto limits = TopicLimits::FromConfigs(*topic_configs);
  if (!limits.ok()) return undo_create(limits.status().WithContext(fmt::format("topic '{}'", o.topic)));
  {
    PlannedRecords planned;
    planned.timestamp_range_ms = first_reader->planned_timestamp_range_ms();
    planned.bytes = first_reader->planned_file_bytes();
    planned.target_partitions = target_parts;
    std::vector<std::string> forced;
    RETURN_NOT_OK(undo_create(CheckTopic(o.topic, *limits, planned, o.timestamps, o.force, NowMs(), &forced)));
    for (const auto& w : forced) note("warning (--force): " + w);
    sum.warnings.insert(sum.warnings.end(), forced.begin(), forced.end());
  }
  if (!o.job.empty()) RETURN_NOT_OK(undo_create(EnsureCheckpointTopic(*producer, o.checkpoint_topic, o.timeout_ms)));
  // A producer the brokers refused (no producer id: the principal may WRITE
  // no topic) fails here, before anything is sent.
  RETURN_NOT_OK(undo_create(producer->FatalError()));

  // 4. Produce. `state` is what has been sent; `committed` what the last
  // checkpoint made durable. Work that is not proven durable is redone from
  // `committed` (abort + resend; at-least-once: resend).
  Checkpoint state = cp.value_or(Checkpoint{});
  // A new job starts where the range does per partition (--from-offset
  // latest: each partition's end); its first checkpoint pins those positions.
  if (!cp) state.next_offsets = read.start_offsets;
  state.job = o.job;
  state.table = table->name;
  state.topic = o.topic;
  state.snapshot_id = sum.snapshot_id;
  state.range = o.range_description;
  Checkpoint committed = state;
  const int64_t records_at_start = state.records;
  if (o.exactly_once) RETURN_NOT_OK(producer->BeginTransaction());

  const int64_t interval_ms =
      o.checkpoint_interval_ms > 0 ? o.checkpoint_interval_ms
                                   : std::clamp<int64_t>(producer->transaction_timeout_ms() / 4, 100, 10000);
  auto since_commit = Clock::now();
  int64_t since_checkpoint = 0, bytes_since_checkpoint = 0;
  auto start_window = [&] {  // after a checkpoint, or going back to one
    since_checkpoint = 0;
    bytes_since_checkpoint = 0;
    since_commit = Clock::now();
  };

  // The job's thaw-replay/JOB tag follows its checkpoints (ReplayOptions::protect).
  std::optional<int64_t> tagged;
  auto tagged_at = Clock::now();
  bool protect_failed = false;
  auto protect_job = [&](bool complete, bool last) {
    if (!o.protect || o.job.empty() || protect_failed) return;
    const std::optional<int64_t> want =
        complete || committed.snapshot_id == 0 ? std::nullopt : std::optional<int64_t>(committed.snapshot_id);
    const bool leftover = complete && !tagged;  // a tag an earlier run of the job may have left
    if (want == tagged && !leftover) return;
    if (tagged && want && !last && Clock::now() - tagged_at < std::chrono::seconds(60)) return;
    Status st = o.protect(want);
    if (!st.ok()) {
      protect_failed = true;
      note(fmt::format("warning: cannot keep the table's tag thaw-replay/{} at the job's snapshot ({}); `thaw "
                       "maintain` will not know what this job still has to replay",
                       o.job, st.message()));
      return;
    }
    tagged = want;
    tagged_at = Clock::now();
  };

  auto replay_metrics = ReplayMetrics::Make(table->name, o.topic);
  // Writes the checkpoint: in the open transaction (exactly-once), or after
  // every earlier record is proven written (at-least-once).
  // `reopen`: begin the next transaction (exactly-once) after committing.
  auto checkpoint = [&](bool complete, bool reopen = true) -> Status {
    state.complete = complete;
    state.updated_ms = NowMs();
    if (o.exactly_once) {
      if (!o.job.empty()) RETURN_NOT_OK(producer->ProduceRaw(o.checkpoint_topic, 0, o.job, state.ToJson()));
      RETURN_NOT_OK(producer->CommitTransaction(o.timeout_ms));
      committed = state;
      if (!complete && reopen) RETURN_NOT_OK(producer->BeginTransaction());
    } else {
      RETURN_NOT_OK(producer->Flush(o.timeout_ms));
      if (!o.job.empty()) {
        RETURN_NOT_OK(producer->ProduceRaw(o.checkpoint_topic, 0, o.job, state.ToJson()));
        RETURN_NOT_OK(producer->Flush(o.timeout_ms));
      }
      committed = state;
    }
    start_window();
    protect_job(complete, !reopen);
    if (replay_metrics) replay_metrics->Checkpointed(state.next_offsets);
    return Status::OK();
  };
  auto checkpoint_due = [&] {
    return since_checkpoint >= o.checkpoint_every || bytes_since_checkpoint >= o.checkpoint_bytes ||
           Clock::now() - since_commit >= std::chrono::milliseconds(interval_ms);
  };
  // Work not proven durable: abort (or settle) and go back to `committed`.
  auto redo = [&](const Status& cause) -> Status {
    if (cause.code() != StatusCode::kAborted) return cause;
    if (sum.redone >= o.max_redo) {
      return Status::IOError("{} (gave up after redoing the work {} times)", cause.message(), sum.redone);
    }
    ++sum.redone;
    note(fmt::format("redoing from the last checkpoint: {}", cause.message()));
    if (o.exactly_once) {
      Status st = producer->AbortTransaction(o.timeout_ms);
      if (!st.ok() || !producer->FatalError().ok()) RETURN_NOT_OK(open_producer());
      RETURN_NOT_OK(producer->BeginTransaction());
    } else {
      (void)producer->Flush(o.timeout_ms);  // let what is in flight settle; it is resent anyway
      producer->ResetDeliveryStatus();
      if (!producer->FatalError().ok()) RETURN_NOT_OK(open_producer());
    }
    state = committed;
    pending_batch = false;
    start_window();
    return Status::OK();
  };

  const std::string source_topic = table->metadata.Property("thaw.source.topic");
  std::vector<ExtraHeader> extra;
  std::mt19937 rng(std::random_device{}());
  const records::RecordReader* pending_reader = first_reader.get();
  Progress progress;
  progress.estimated_records = first_reader->planned_records();
  if (o.estimate_progress_total) {
    auto [n, exact] = EstimateRecords(table, *first_reader, read, o.filter || !o.exclude.empty());
    progress.estimated_records = n;
    progress.estimate_exact = exact;
  }
  auto last_report = Clock::now();
  const double bytes_per_sec = o.rate_mb_per_s * 1e6;
  int64_t rate_bytes = 0;
  const auto rate_t0 = Clock::now();
  auto stopping = [&] { return o.stop && o.stop->load(); };
  auto report_progress = [&] {
    if (!on_progress || Clock::now() - last_report < std::chrono::milliseconds(500)) return;
    progress.records = state.records - records_at_start;
    progress.bytes = sum.bytes;
    progress.skipped = sum.filtered + sum.excluded;
    progress.next_offsets = state.next_offsets;
    progress.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    on_progress(progress);
    last_report = Clock::now();
  };
  const bool now_timestamps = o.timestamps == TimestampMode::kNow;

  // Produces everything `r` yields; returns false if stopped by a signal.
  auto produce_all = [&](records::RecordReader& r) -> Result<bool> {
    const std::string snapshot_text = std::to_string(r.snapshot() ? r.snapshot()->snapshot_id : 0);
    while (true) {
      if (stopping()) return false;
      if (pending_batch && &r == pending_reader) {
        pending_batch = false;  // the records CheckRange read first
      } else {
        ASSIGN_OR_RAISE(bool more, r.Next(&batch));
        if (!more) return true;
      }
      const int64_t now_ms = NowMs();  // for the topic's time bounds; a batch is produced in moments
      for (const auto& rec : batch.records) {
        if (!o.exclude.empty() && o.exclude.count({rec.partition, rec.offset})) {
          ++sum.excluded;
          state.next_offsets[rec.partition] = rec.offset + 1;
          continue;
        }
        if (o.filter && !o.filter(batch, rec)) {
          ++sum.filtered;
          state.next_offsets[rec.partition] = rec.offset + 1;
          continue;
        }
        int32_t target = rec.partition;
        if (o.partitioner == Partitioner::kKey) {
          target = rec.key ? JavaKeyPartition(*rec.key, target_parts) : static_cast<int32_t>(rng() % target_parts);
        } else if (o.partitioner == Partitioner::kRandom) {
          target = static_cast<int32_t>(rng() % target_parts);
        } else if (target >= target_parts) {
          return Status::Invalid("topic '{}' has {} partitions but the table now has partition {}: add partitions "
                                 "or use --partitioner key", o.topic, target_parts, target);
        }
        const int64_t bytes = RecordBytes(batch, rec);
        const int64_t sent_ts = now_timestamps ? -1 : rec.timestamp_ms;
        RETURN_NOT_OK(CheckRecord(o.topic, *limits, sent_ts, bytes, !rec.key, o.force, now_ms, rec.partition,
                                  rec.offset));
        extra.clear();
        if (o.link_headers) {
          extra.push_back({"thaw.source.table", table->name});
          // The row's own source topic (e.g. the Connect sink's topic column), else the table's.
          if (rec.topic) {
            extra.push_back({"thaw.source.topic", std::string(*rec.topic)});
          } else if (!source_topic.empty()) {
            extra.push_back({"thaw.source.topic", source_topic});
          }
          extra.push_back({"thaw.source.partition", std::to_string(rec.partition)});
          extra.push_back({"thaw.source.offset", std::to_string(rec.offset)});
          extra.push_back({"thaw.source.snapshot", snapshot_text});
        }
        if (now_timestamps && rec.timestamp_ms >= 0) {
          extra.push_back({"thaw.source.timestamp", std::to_string(rec.timestamp_ms)});
        }
        RETURN_NOT_OK(producer->Produce(o.topic, target, rec, sent_ts, batch.HeadersOf(rec), extra, rec.partition,
                                        rec.offset));
        state.next_offsets[rec.partition] = rec.offset + 1;
        ++state.records;
        if (replay_metrics) replay_metrics->Produced(target, bytes);
        sum.bytes += bytes;
        rate_bytes += bytes;
        bytes_since_checkpoint += bytes;
        ++since_checkpoint;
        if (bytes_per_sec > 0) {
          // Wait in short slices: a slow --rate must not hold a transaction
          // open past its timeout, nor ignore Ctrl-C.
          while (true) {
            const double due = rate_bytes / bytes_per_sec;
            const double now = std::chrono::duration<double>(Clock::now() - rate_t0).count();
            if (due <= now || stopping()) break;
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.1, due - now)));
            producer->Poll(0);
            RETURN_NOT_OK(producer->DeliveryStatus());
            if (checkpoint_due()) RETURN_NOT_OK(checkpoint(false));
            report_progress();
          }
        }
        if (checkpoint_due()) {
          RETURN_NOT_OK(producer->DeliveryStatus());
          RETURN_NOT_OK(checkpoint(false));
        }
      }
      producer->Poll(0);
      RETURN_NOT_OK(producer->DeliveryStatus());
      report_progress();
    }
  };

  // Replays one segment (the range, or one followed snapshot's appends) and
  // ends it with a checkpoint, redoing from the last checkpoint whatever was
  // not proven durable. `make` opens a reader from given start offsets.
  // Returns false if stopped by a signal.
  using MakeReader = std::function<Result<std::unique_ptr<records::RecordReader>>(const std::map<int32_t, int64_t>&)>;
  auto run_segment = [&](const MakeReader& make, const std::function<void()>& on_done, bool final) -> Result<bool> {
    while (true) {
      Status st;
      auto r = make(state.next_offsets);
      if (!r.ok()) return r.status();
      if (replay_metrics) replay_metrics->TableEnds(*(*r)->plan());
      auto produced = produce_all(**r);
      if (produced.ok()) {
        const bool finished = *produced;
        if (finished && on_done) on_done();
        st = checkpoint(finished && final);
        if (st.ok()) {
          const auto ds = (*r)->duplicate_stats();
          sum.duplicate_offsets += ds.duplicates;
          sum.duplicates_differing += ds.differing;
          return finished;
        }
      } else {
        st = produced.status();
      }
      RETURN_NOT_OK(redo(st));
    }
  };

  bool stopped = false;
  {
    bool first_use = true;
    ASSIGN_OR_RAISE(bool finished, run_segment(
        [&](const std::map<int32_t, int64_t>& start) -> Result<std::unique_ptr<records::RecordReader>> {
          if (first_use && start == read.start_offsets) {
            first_use = false;
            return std::move(first_reader);
          }
          first_use = false;
          records::ReadOptions ro = read;
          ro.start_offsets = start;
          return records::RecordReader::Make(table, ro);
        },
        nullptr, !o.follow));
    stopped = !finished;
  }

  // --follow: replay what later snapshots append, snapshot by snapshot.
  while (!stopped && o.follow && o.reload) {
    for (int waited = 0; waited < o.poll_interval_ms && !stopping(); waited += 100) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      producer->Poll(0);
    }
    if (stopping()) break;
    ASSIGN_OR_RAISE(auto latest, o.reload());
    // The branch being followed (--ref), main by default.
    iceberg::SnapshotSelector followed;
    followed.ref = o.read.snapshot.ref;
    auto head = iceberg::SelectSnapshot(latest->metadata, followed);
    if (!head.ok()) return head.status().WithContext(fmt::format("table {}: --follow", table->name));
    const iceberg::Snapshot* current = *head;
    if (!current || current->snapshot_id == state.snapshot_id) continue;
    // New snapshots: from the head back to the last replayed one (0: the
    // table had none when the job started, so back to the first).
    const iceberg::Snapshot* last = table->metadata.SnapshotById(state.snapshot_id);  // as of the last poll
    const int64_t last_seq = last ? last->sequence_number : 0;
    const bool last_gone = latest->metadata.SnapshotById(state.snapshot_id) == nullptr;
    // True when every sequence number in (last_seq, seq) belongs to a snapshot
    // still in the metadata: no commit between them was expired.
    auto none_expired_before = [&](int64_t seq) {
      std::set<int64_t> present;
      for (const auto& snap : latest->metadata.snapshots) present.insert(snap->sequence_number);
      for (int64_t n = last_seq + 1; n < seq; ++n) {
        if (!present.count(n)) return false;
      }
      return true;
    };
    std::vector<const iceberg::Snapshot*> chain;
    for (const iceberg::Snapshot* s = current;;) {
      chain.push_back(s);
      if (s->parent_snapshot_id && *s->parent_snapshot_id == state.snapshot_id) break;
      const iceberg::Snapshot* parent =
          s->parent_snapshot_id ? latest->metadata.SnapshotById(*s->parent_snapshot_id) : nullptr;
      if (parent) {
        s = parent;
        continue;
      }
      // The walk ends at `s` without reaching the last replayed snapshot. Fine
      // if `s` is its child whose parent link expiry removed (pyiceberg clears
      // it), or the table's first snapshot when the job started on no snapshot:
      // then no commit between them is missing.
      if (!s->parent_snapshot_id && (last_gone || state.snapshot_id == 0) && s->sequence_number > last_seq &&
          none_expired_before(s->sequence_number)) {
        break;
      }
      // v1 tables have no sequence numbers to tell.
      if (!s->parent_snapshot_id && state.snapshot_id == 0 && latest->metadata.format_version == 1) break;
      if (s->sequence_number <= last_seq) {
        return Status::NotFound("table {}: snapshot {} (last replayed) is no longer an ancestor of snapshot {} "
                               "(history rolled back or rewritten): --follow stops; start a new --job to replay the "
                               "table as it is now", table->name, state.snapshot_id, current->snapshot_id);
      }
      return Status::NotFound(
          "table {}: snapshots committed after {} (the last replayed) and before {} have expired before --follow "
          "replayed them (or history was rewritten): what they appended cannot be found, so the job cannot continue "
          "without loss. Replay that gap with a new job over the table as it is now (`--job {} --status` shows "
          "where this one stopped), and expire snapshots only after followers have passed them",
          table->name, state.snapshot_id, s->snapshot_id, o.job.empty() ? "NAME" : o.job);
    }
    std::set<int64_t> appends;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const std::string op = (*it)->operation();
      if (op == "append" || op.empty()) {
        appends.insert((*it)->snapshot_id);
      } else if (op == "overwrite") {
        // Upserts (Flink upsert sinks, MERGE, the Connect sink's upsert
        // mode) and copy-on-write deletes: the records it adds past the
        // job's position are replayed; rows it rewrote at or below the
        // position were replayed before and are not sent again.
        appends.insert((*it)->snapshot_id);
        note(fmt::format("snapshot {} (overwrite): its records past the job's position are replayed; rows it "
                         "rewrote or deleted at or below the position were replayed before and are not sent again "
                         "(Kafka cannot retract them)",
                         (*it)->snapshot_id));
      } else if (op == "replace") {
        // Compaction: the same rows in new files; the appends that wrote
        // them are read from their own manifests instead.
      } else {
        note(fmt::format("snapshot {} ({}) is not replayed: only appended records are followed; rows it "
                         "rewrote or deleted were replayed before and Kafka cannot retract them",
                         (*it)->snapshot_id, op));
      }
    }
    const int64_t current_id = current->snapshot_id;
    auto advance = [&] { state.snapshot_id = current_id; };
    if (!appends.empty()) {
      ASSIGN_OR_RAISE(bool finished, run_segment(
          [&](const std::map<int32_t, int64_t>& start) -> Result<std::unique_ptr<records::RecordReader>> {
            records::ReadOptions inc = o.read;
            inc.snapshot = {};
            inc.snapshot.snapshot_id = current_id;
            inc.start_offsets = start;
            inc.only_added_in = appends;
            return records::RecordReader::Make(latest, inc);
          },
          advance, false));
      if (!finished) {
        stopped = true;
        break;
      }
    } else {
      advance();
      Status st = checkpoint(false);
      if (!st.ok()) {
        RETURN_NOT_OK(redo(st));
        continue;
      }
    }
    table = latest;
    sum.snapshot_id = current_id;
    sum.snapshots_followed += static_cast<int64_t>(chain.size());
  }
  if (stopped || o.follow) {
    // Stopped by a signal, or following: the job stays open for a rerun.
    Status st = checkpoint(false, /*reopen=*/false);
    if (!st.ok()) {
      if (o.exactly_once) (void)producer->AbortTransaction(o.timeout_ms);
      return st;
    }
  }
  RETURN_NOT_OK(producer->Flush(o.timeout_ms));
  sum.records = state.records - records_at_start;
  sum.next_offsets = state.next_offsets;
  sum.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (o.verify && !stopped && !o.follow) {
    ASSIGN_OR_RAISE(sum.verify, verify_at(sum.snapshot_id));
  }
  return sum;
}

}  // namespace

// RunReplayImpl, with what a rerun does added to errors met while producing.
Result<ReplaySummary> RunReplay(std::shared_ptr<const iceberg::Table> table, const ReplayOptions& o,
                                const std::function<void(const Progress&)>& on_progress) {
  auto r = RunReplayImpl(std::move(table), o, on_progress);
  if (r.ok() || r.status().code() == StatusCode::kInvalidArgument || r.status().code() == StatusCode::kNotFound) {
    return r;
  }
  if (o.job.empty()) {
    return Status(r.status().code(),
                  r.status().message() + (o.exactly_once ? "; nothing of an unfinished transaction is visible to "
                                                           "read_committed consumers, but without --job a rerun "
                                                           "starts over"
                                                         : ""));
  }
  return Status(r.status().code(), r.status().message() + "; " +
                                       std::string(o.exactly_once ? kSafeToRerun : kSafeToRerunAtLeastOnce));
}

}  // namespace thaw::replay
