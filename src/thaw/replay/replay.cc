#include "thaw/replay/replay.h"

#include <chrono>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

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

}  // namespace

Result<std::string> DescribePlan(std::shared_ptr<const storage::Table> table, const ReplayOptions& o) {
  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, o.read));
  std::string out;
  const auto* snap = reader->snapshot();
  out += fmt::format("table       {}\n", table->name);
  out += fmt::format("snapshot    {}\n", snap ? std::to_string(snap->snapshot_id) : std::string("none (empty table)"));
  out += fmt::format("layout      {}\n", reader->layout().name);
  std::string parts;
  for (int32_t p : reader->partitions()) parts += (parts.empty() ? "" : ",") + std::to_string(p);
  out += fmt::format("partitions  {}\n", parts.empty() ? "none" : parts);
  out += fmt::format("range       {}\n", o.range_description.empty() ? "all" : o.range_description);
  out += fmt::format("files       {} data files planned ({} skipped by pruning), {} delete files\n",
                     reader->planned_files(), reader->scan_stats().data_files_skipped,
                     reader->scan_stats().delete_files);
  out += fmt::format("records     at most {} (planned files' record counts, before range and deletes)\n",
                     reader->planned_records());
  out += fmt::format("target      topic {} on {} (partitioner {})\n", o.topic, o.kafka.brokers,
                     o.partitioner == Partitioner::kSame ? "same" : o.partitioner == Partitioner::kKey ? "key" : "random");
  return out;
}

Result<ReplaySummary> RunReplay(std::shared_ptr<const storage::Table> table, const ReplayOptions& o,
                                const std::function<void(const Progress&)>& on_progress) {
  const auto t0 = Clock::now();
  ReplaySummary sum;
  sum.table = table->name;
  sum.topic = o.topic;
  records::ReadOptions read = o.read;

  // 1. Resume a job: pin its snapshot and continue after its last offsets.
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
        return sum;
      }
      read.snapshot = {};
      read.snapshot.snapshot_id = cp->snapshot_id;
      read.start_offsets = cp->next_offsets;
      sum.resumed = true;
    }
  }

  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, read));
  const auto* snap = reader->snapshot();
  sum.snapshot_id = snap ? snap->snapshot_id : 0;

  // 2. The target topic.
  std::string txn_id = o.exactly_once ? "thaw-replay-" + (o.job.empty() ? o.topic : o.job) : "";
  ASSIGN_OR_RAISE(auto producer, KafkaProducer::Make(o.kafka, txn_id));
  const auto partitions = reader->partitions();
  const int32_t needed = partitions.empty() ? 1 : partitions.back() + 1;
  auto topic = producer->DescribeTopic(o.topic, o.timeout_ms);
  if (!topic.ok() && topic.status().code() == StatusCode::kNotFound && o.create_topic) {
    RETURN_NOT_OK(producer->CreateTopic(o.topic, o.target_partitions.value_or(needed), {}, o.timeout_ms));
    for (int i = 0; i < 50; ++i) {  // metadata propagates asynchronously
      topic = producer->DescribeTopic(o.topic, o.timeout_ms);
      if (topic.ok() && topic->partitions > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (!topic.ok()) return topic.status();
  const int32_t target_parts = topic->partitions;
  if (o.partitioner == Partitioner::kSame && needed > target_parts) {
    return Status::Invalid("topic '{}' has {} partitions but the source has partition {}: --partitioner same maps "
                           "partition p to p; add partitions to the topic (at least {}), replay into a new topic with "
                           "--create-topic, or use --partitioner key",
                           o.topic, target_parts, needed - 1, needed);
  }
  if (!o.job.empty()) {
    auto ct = producer->DescribeTopic(o.checkpoint_topic, o.timeout_ms);
    if (!ct.ok() && ct.status().code() == StatusCode::kNotFound) {
      RETURN_NOT_OK(producer->CreateTopic(o.checkpoint_topic, 1, {{"cleanup.policy", "compact"}}, o.timeout_ms));
    } else if (!ct.ok()) {
      return ct.status();
    }
  }

  // 3. Produce.
  Checkpoint state = cp.value_or(Checkpoint{});
  state.job = o.job;
  state.table = table->name;
  state.topic = o.topic;
  state.snapshot_id = sum.snapshot_id;
  state.range = o.range_description;
  if (o.exactly_once) {
    RETURN_NOT_OK(producer->InitTransactions(o.timeout_ms));
    RETURN_NOT_OK(producer->BeginTransaction());
  }
  // Writes the checkpoint: in the open transaction (exactly-once), or after
  // every earlier record is acknowledged (at-least-once).
  auto checkpoint = [&](bool complete) -> Status {
    state.complete = complete;
    state.updated_ms = NowMs();
    if (o.exactly_once) {
      if (!o.job.empty()) RETURN_NOT_OK(producer->ProduceRaw(o.checkpoint_topic, 0, o.job, state.ToJson()));
      RETURN_NOT_OK(producer->CommitTransaction(o.timeout_ms));
      if (!complete) RETURN_NOT_OK(producer->BeginTransaction());
      return Status::OK();
    }
    RETURN_NOT_OK(producer->Flush(o.timeout_ms));
    if (o.job.empty()) return Status::OK();
    RETURN_NOT_OK(producer->ProduceRaw(o.checkpoint_topic, 0, o.job, state.ToJson()));
    return producer->Flush(o.timeout_ms);
  };

  const std::string source_topic = table->metadata.Property("thaw.source.topic");
  std::vector<ExtraHeader> extra;
  std::mt19937 rng(std::random_device{}());
  records::RecordBatch batch;
  Progress progress;
  progress.estimated_records = reader->planned_records();
  int64_t since_checkpoint = 0;
  auto last_report = Clock::now();
  const double bytes_per_sec = o.rate_mb_per_s * 1e6;
  const bool checkpoints = !o.job.empty() || o.exactly_once;
  auto stopping = [&] { return o.stop && o.stop->load(); };

  // Produces everything `r` yields; returns false if stopped by a signal.
  auto produce_all = [&](records::RecordReader& r) -> Result<bool> {
    const std::string snapshot_text = std::to_string(r.snapshot() ? r.snapshot()->snapshot_id : 0);
    while (true) {
      if (stopping()) return false;
      ASSIGN_OR_RAISE(bool more, r.Next(&batch));
      if (!more) return true;
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
        extra.clear();
        if (o.link_headers) {
          extra.push_back({"thaw.source.table", table->name});
          if (!source_topic.empty()) extra.push_back({"thaw.source.topic", source_topic});
          extra.push_back({"thaw.source.partition", std::to_string(rec.partition)});
          extra.push_back({"thaw.source.offset", std::to_string(rec.offset)});
          extra.push_back({"thaw.source.snapshot", snapshot_text});
        }
        RETURN_NOT_OK(producer->Produce(o.topic, target, rec, batch.HeadersOf(rec), extra, rec.partition, rec.offset));
        state.next_offsets[rec.partition] = rec.offset + 1;
        ++state.records;
        ++sum.records;
        sum.bytes += RecordBytes(batch, rec);
        ++since_checkpoint;
        if (bytes_per_sec > 0) {
          const double due = sum.bytes / bytes_per_sec;
          const double now = std::chrono::duration<double>(Clock::now() - t0).count();
          if (due > now) std::this_thread::sleep_for(std::chrono::duration<double>(due - now));
        }
      }
      producer->Poll(0);
      RETURN_NOT_OK(producer->DeliveryStatus());
      if (checkpoints && since_checkpoint >= o.checkpoint_every) {
        RETURN_NOT_OK(checkpoint(false));
        since_checkpoint = 0;
      }
      if (on_progress && Clock::now() - last_report > std::chrono::milliseconds(500)) {
        progress.records = sum.records;
        progress.bytes = sum.bytes;
        progress.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        on_progress(progress);
        last_report = Clock::now();
      }
    }
  };

  ASSIGN_OR_RAISE(bool finished, produce_all(*reader));

  // --follow: replay what later snapshots append, snapshot by snapshot.
  bool progressed = true;  // the range itself, then each replayed snapshot
  while (finished && o.follow && o.reload) {
    if (progressed) {
      // Commit what was replayed before waiting; idle polls write nothing.
      RETURN_NOT_OK(checkpoint(false));
      since_checkpoint = 0;
      progressed = false;
    }
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
      for (const auto& snap : latest->metadata.snapshots) present.insert(snap.sequence_number);
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
        return Status::Invalid("table {}: snapshot {} (last replayed) is no longer an ancestor of snapshot {} "
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
      } else if (op == "replace") {
        // Compaction: the same rows in new files; the appends that wrote
        // them are read from their own manifests instead.
      } else if (o.report) {
        o.report(fmt::format("snapshot {} ({}) is not replayed: only appended records are followed; rows it "
                             "rewrote or deleted were replayed before and Kafka cannot retract them",
                             (*it)->snapshot_id, op));
      }
    }
    if (!appends.empty()) {
      records::ReadOptions inc = o.read;
      inc.snapshot = {};
      inc.snapshot.snapshot_id = current->snapshot_id;
      inc.start_offsets = state.next_offsets;
      inc.only_added_in = appends;
      ASSIGN_OR_RAISE(auto r, records::RecordReader::Make(latest, inc));
      ASSIGN_OR_RAISE(finished, produce_all(*r));
      if (!finished) break;
    }
    table = latest;
    state.snapshot_id = current->snapshot_id;
    sum.snapshot_id = current->snapshot_id;
    sum.snapshots_followed += static_cast<int64_t>(chain.size());
    progressed = true;
  }
  if (!finished || o.follow) {
    // Stopped by a signal, or following: the job stays open for a rerun.
    RETURN_NOT_OK(checkpoint(false));
    RETURN_NOT_OK(producer->Flush(o.timeout_ms));
    sum.next_offsets = state.next_offsets;
    sum.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return sum;
  }
  RETURN_NOT_OK(checkpoint(true));
  RETURN_NOT_OK(producer->Flush(o.timeout_ms));
  if (producer->acked_records() < sum.records) {
    return Status::IOError("{} of {} records were not acknowledged by '{}'", sum.records - producer->acked_records(),
                           sum.records, o.kafka.brokers);
  }
  sum.next_offsets = state.next_offsets;
  sum.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return sum;
}

}  // namespace thaw::replay
