// `thaw replay`: flags -> ReplayOptions -> replay::RunReplay, with a
// progress bar on a terminal and a one-line (or JSON) summary.
#include "thaw/cli/ops_args.h"
#include "thaw/cli/registry_args.h"
#include "thaw/cli/replay.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "thaw/archive/maintain_plan.h"
#include "thaw/cli/kafka_args.h"
#include "thaw/cli/stop_signal.h"
#include "thaw/cli/log_args.h"
#include "thaw/cli/table_args.h"
#include "thaw/common/log.h"
#include "thaw/common/time_parse.h"
#include "thaw/common/units.h"
#include "thaw/records/read_summary.h"
#include "thaw/records/record_filter.h"
#include "thaw/replay/replay.h"
#include "thaw/serve/digest.h"

namespace thaw::cli {

namespace {

std::atomic<bool>& g_stop = StopFlag();

struct ReplayArgs {
  TableArgs table;
  KafkaArgs kafka;  // -b/-X/-F; resolved into brokers and props before the run
  std::set<int32_t> partitions;
  std::string brokers, topic, from_offset, to_offset, from_time, to_time, exclude_file;
  std::optional<std::string> where;  // set but empty is an error, like blanks
  std::string partitioner = "same", job, checkpoint_topic = "thaw-replay-jobs";
  std::vector<std::string> props;
  bool create_topic = false, exactly_once = false, dry_run = false, status = false, json = false;
  bool follow = false, force = false, verify = false, allow_empty = false;
  bool link_headers = true;
  LogArgs log;
  std::string progress_interval = "10s";
  OpsArgs ops;
  std::vector<std::string> topic_configs;
  std::string timestamps = "original";
  std::string checkpoint_interval = "0";  // 0: the default (a quarter of transaction.timeout.ms, at most 10s)
  std::string checkpoint_bytes = "64MiB";
  std::optional<int32_t> target_partitions;
  std::optional<int32_t> replication_factor;
  int parallelism = 1;
  std::string poll_interval = "2s";
  double rate = 0;
  int64_t checkpoint_every = 50000;
  std::string value_format;  // empty/json: decoded value columns as JSON; avro, protobuf, json-schema: through the registry
  RegistryArgs registry;
};

Result<std::set<std::pair<int32_t, int64_t>>> ReadExclusions(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("--exclude-offsets file '{}' cannot be read", path);
  std::set<std::pair<int32_t, int64_t>> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    size_t b = 0;
    while (b < line.size() && std::isspace(static_cast<unsigned char>(line[b]))) ++b;
    line = line.substr(b);
    if (line.empty()) continue;
    auto colon = line.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument(line);
      size_t u1 = 0, u2 = 0;
      int p = std::stoi(line.substr(0, colon), &u1);
      long long o = std::stoll(line.substr(colon + 1), &u2);
      if (u1 != colon || u2 != line.size() - colon - 1 || p < 0 || o < 0) throw std::invalid_argument(line);
      out.insert({p, o});
    } catch (const std::exception&) {
      return Status::Invalid("--exclude-offsets {} line {}: '{}' is not PARTITION:OFFSET", path, lineno, line);
    }
  }
  return out;
}

std::string Mb(int64_t bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

// --dry-run --json (docs/replay.md#dry-run).
nlohmann::ordered_json PlanJson(const replay::ReplayPlan& p) {
  nlohmann::ordered_json j;
  j["dry_run"] = true;
  j["table"] = p.table;
  j["snapshot_id"] = p.snapshot_id ? nlohmann::ordered_json(*p.snapshot_id) : nlohmann::ordered_json(nullptr);
  j["layout"] = p.layout;
  j["partitions"] = p.partitions;
  j["range"] = p.range.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.range);
  j["data_files"] = p.data_files;
  j["data_files_skipped"] = p.data_files_skipped;
  j["delete_files"] = p.delete_files;
  j["records_at_most"] = p.records_at_most;
  j["topic"] = p.topic;
  j["brokers"] = p.brokers;
  j["partitioner"] = p.partitioner;
  j["warnings"] = p.warnings;
  return j;
}

nlohmann::ordered_json VerifyJson(const replay::VerifyResult& v) {
  nlohmann::ordered_json j;
  j["ok"] = v.ok;
  j["against_table"] = v.against_table;
  j["partitions"] = v.partitions;
  j["records"] = v.records;
  j["expected"] = v.expected;
  j["missing"] = v.missing;
  j["duplicates"] = v.duplicates;
  j["out_of_order"] = v.out_of_order;
  j["unexpected"] = v.unexpected;
  j["first_problem"] =
      v.first_problem.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v.first_problem);
  return j;
}

void PrintVerify(const replay::VerifyResult& v, const std::string& topic) {
  if (v.ok) {
    std::printf("verify: ok: %lld records in %lld partitions of topic %s arrived exactly once and in order%s\n",
                static_cast<long long>(v.records), static_cast<long long>(v.partitions), topic.c_str(),
                v.against_table ? " (checked against the table)" : " (order and duplicates; no table given)");
  } else {
    std::printf(
        "verify: FAILED for topic %s: %lld missing, %lld duplicates, %lld out of order, %lld unexpected; "
        "first: %s\n",
        topic.c_str(), static_cast<long long>(v.missing), static_cast<long long>(v.duplicates),
        static_cast<long long>(v.out_of_order), static_cast<long long>(v.unexpected), v.first_problem.c_str());
  }
}

Status VerifyFailed(const replay::VerifyResult& v, const std::string& topic) {
  return Status::IOError(
      "verify: topic '{}' does not hold the job's records exactly once and in order ({} missing, "
      "{} duplicates, {} out of order, {} unexpected; first: {})",
      topic, v.missing, v.duplicates, v.out_of_order, v.unexpected, v.first_problem);
}

// The progress bar on a terminal. The total is the records the range
// selects as estimated from the plan (replay::Progress), scaled by the share
// of records --where / --exclude-offsets let through so far; "~N" unless
// exact.
void DrawBar(const replay::Progress& p) {
  double rate = p.seconds > 0 ? p.bytes / p.seconds / 1e6 : 0;
  double total = static_cast<double>(p.estimated_records);
  const int64_t seen = p.records + p.skipped;
  if (p.skipped > 0 && seen > 0) total = total * p.records / seen;
  total = std::max(total, static_cast<double>(p.records));
  double frac = total > 0 ? std::min(1.0, p.records / total) : 0;
  double eta = frac > 0 ? p.seconds / frac - p.seconds : 0;
  int filled = static_cast<int>(frac * 30);
  std::fprintf(stderr, "\r[%-30s] %lld / %s%lld records  %s  %.1f MB/s  ETA %.0fs ", std::string(filled, '#').c_str(),
               static_cast<long long>(p.records), p.estimate_exact ? "" : "~", static_cast<long long>(total),
               Mb(p.bytes).c_str(), rate, eta);
}

// Progress when stderr is not a terminal (container logs): one line per
// --progress-interval seconds.
void PrintProgressLine(const replay::Progress& p) {
  double rate = p.seconds > 0 ? p.bytes / p.seconds / 1e6 : 0;
  double rps = p.seconds > 0 ? p.records / p.seconds : 0;
  std::string pos;
  int shown = 0;
  for (const auto& [part, off] : p.next_offsets) {
    if (shown++ == 16) {
      pos += fmt::format(" (+{} more)", p.next_offsets.size() - 16);
      break;
    }
    pos += fmt::format("{}{}:{}", pos.empty() ? "" : " ", part, off);
  }
  std::fprintf(stderr, "thaw replay: progress: %lld records, %s, %.1f MB/s, %.0f records/s in %.0fs; next offsets %s\n",
               static_cast<long long>(p.records), Mb(p.bytes).c_str(), rate, rps, p.seconds,
               pos.empty() ? "none yet" : pos.c_str());
  std::fflush(stderr);
}

Status RunReplayCommand(const ReplayArgs& a) {
  RETURN_NOT_OK(a.log.Apply("replay"));
  ASSIGN_OR_RAISE(auto metrics_endpoint, StartOps(a.ops, "replay"));
  if (a.brokers.empty()) return Status::Invalid("--brokers HOST:PORT is required");
  if (a.topic.empty() && !a.status && !(a.verify && !a.job.empty()))
    return Status::Invalid("--topic TARGET is required");
  replay::ReplayOptions o;
  o.kafka.brokers = a.brokers;
  o.kafka.stop = &g_stop;
  o.allow_empty = a.allow_empty;
  ASSIGN_OR_RAISE(const int64_t progress_ms, ParseDurationMs(a.progress_interval, "--progress-interval"));
  if (progress_ms <= 0) return Status::Invalid("--progress-interval '{}' must be positive", a.progress_interval);
  for (const auto& p : a.props) RETURN_NOT_OK(replay::ParseProperty(p, &o.kafka.properties));
  o.checkpoint_topic = a.checkpoint_topic;
  o.job = a.job;
  const bool have_table = !a.table.table.empty() || !a.table.metadata.empty();
  if (a.verify && !have_table) {
    // Without the table: order, duplicates and the checkpoint's count.
    if (a.job.empty()) return Status::Invalid("--verify without --table needs --job NAME (or give the table)");
    ASSIGN_OR_RAISE(auto cp, replay::LoadCheckpoint(o.kafka, o.checkpoint_topic, a.job, o.timeout_ms));
    if (!cp)
      return Status::NotFound("job '{}' has no checkpoint in topic '{}' on '{}'", a.job, o.checkpoint_topic, a.brokers);
    if (!cp->complete) {
      return Status::Invalid("job '{}' is not complete (state in progress): rerun it, then verify", a.job);
    }
    o.topic = a.topic.empty() ? cp->topic : a.topic;
    ASSIGN_OR_RAISE(auto v, replay::VerifyReplay(nullptr, cp->table, o, cp->records));
    if (a.json) {
      std::printf("%s\n", VerifyJson(v).dump().c_str());
    } else {
      PrintVerify(v, o.topic);
    }
    return v.ok ? Status::OK() : VerifyFailed(v, o.topic);
  }
  if (a.status) {
    if (a.job.empty()) return Status::Invalid("--status needs --job NAME");
    ASSIGN_OR_RAISE(auto cp, replay::LoadCheckpoint(o.kafka, o.checkpoint_topic, a.job, o.timeout_ms));
    if (!cp)
      return Status::NotFound("job '{}' has no checkpoint in topic '{}' on '{}'", a.job, o.checkpoint_topic, a.brokers);
    if (a.json) {
      std::printf("%s\n", cp->ToJson().c_str());
    } else {
      std::printf(
          "job        %s\ntable      %s\ntopic      %s\nsnapshot   %lld\nrange      %s\nrecords    %lld\nstate      "
          "%s\n",
          cp->job.c_str(), cp->table.c_str(), cp->topic.c_str(), static_cast<long long>(cp->snapshot_id),
          cp->range.empty() ? "all" : cp->range.c_str(), static_cast<long long>(cp->records),
          cp->complete ? "complete" : "in progress");
      for (const auto& [p, off] : cp->next_offsets)
        std::printf("  partition %d next offset %lld\n", p, static_cast<long long>(off));
    }
    return Status::OK();
  }
  if (a.parallelism < 1 || a.parallelism > 64) return Status::Invalid("--parallelism must be between 1 and 64");
  ASSIGN_OR_RAISE(const int64_t poll_ms, ParseDurationMs(a.poll_interval, "--poll-interval"));
  if (poll_ms <= 0 || poll_ms > std::numeric_limits<int>::max()) {
    return Status::Invalid("--poll-interval '{}' must be positive (and under 24 days)", a.poll_interval);
  }
  if (a.follow && !a.table.metadata.empty()) {
    return Status::Invalid(
        "--follow with --metadata: a metadata file never changes, so there is nothing to follow; "
        "give the table's catalog (--catalog URI --table NAME) to follow its new snapshots");
  }
  if (a.follow && (!a.table.snapshot_id.empty() || !a.table.as_of.empty())) {
    return Status::Invalid(
        "--follow follows a branch, but --snapshot/--as-of pin one snapshot: drop them to follow "
        "main, or give --ref BRANCH");
  }
  o.topic = a.topic;
  if (a.partitioner == "same")
    o.partitioner = replay::Partitioner::kSame;
  else if (a.partitioner == "key")
    o.partitioner = replay::Partitioner::kKey;
  else if (a.partitioner == "random")
    o.partitioner = replay::Partitioner::kRandom;
  else
    return Status::Invalid("--partitioner '{}': use same, key or random", a.partitioner);
  o.link_headers = a.link_headers;
  o.create_topic = a.create_topic;
  o.target_partitions = a.target_partitions;
  if (o.target_partitions && *o.target_partitions <= 0) return Status::Invalid("--target-partitions must be positive");
  o.exactly_once = a.exactly_once;
  o.dry_run = a.dry_run;
  o.rate_mb_per_s = a.rate;
  if (a.checkpoint_every <= 0) return Status::Invalid("--checkpoint-every must be positive");
  o.checkpoint_every = a.checkpoint_every;
  ASSIGN_OR_RAISE(o.checkpoint_interval_ms, ParseDurationMs(a.checkpoint_interval, "--checkpoint-interval"));
  ASSIGN_OR_RAISE(o.checkpoint_bytes, ParseByteSize(a.checkpoint_bytes, "--checkpoint-bytes"));
  if (o.checkpoint_bytes <= 0) return Status::Invalid("--checkpoint-bytes must be positive");
  for (const auto& c : a.topic_configs) {
    auto eq = c.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::Invalid("--topic-config '{}' is not key=value (a topic config, e.g. retention.ms=-1)", c);
    }
    o.topic_configs[c.substr(0, eq)] = c.substr(eq + 1);
  }
  if (a.replication_factor) {
    if (!a.create_topic) {
      return Status::Invalid("--replication-factor applies to a topic made by --create-topic; an existing topic's "
                             "replicas are changed with kafka-reassign-partitions");
    }
    if (*a.replication_factor < 1 || *a.replication_factor > 32767) {
      return Status::Invalid("--replication-factor must be between 1 and 32767 (omit it for the broker's "
                             "default.replication.factor)");
    }
    o.replication_factor = *a.replication_factor;
  }
  if (!o.topic_configs.empty() && !a.create_topic) {
    return Status::Invalid(
        "--topic-config applies to a topic made by --create-topic; change an existing topic's "
        "configs with kafka-configs --alter");
  }
  o.force = a.force;
  if (a.timestamps == "original")
    o.timestamps = replay::TimestampMode::kOriginal;
  else if (a.timestamps == "now")
    o.timestamps = replay::TimestampMode::kNow;
  else
    return Status::Invalid("--timestamps '{}': use original or now", a.timestamps);
  o.verify = a.verify;
  if (a.verify && a.follow) return Status::Invalid("--verify checks a finished job; a --follow job never finishes");
  if (a.verify && !a.link_headers)
    return Status::Invalid("--verify needs the link headers: drop --link-headers=false");
  RETURN_NOT_OK(a.table.Apply(&o.read));
  ASSIGN_OR_RAISE(o.read.layout.value_avro, ValueAvroChooserFor(a.value_format, a.registry, o.topic, a.dry_run));
  if (!a.partitions.empty()) {
    o.read.partitions = a.partitions;
    o.asked_partitions = a.partitions;
  }
  if (!a.from_offset.empty() && !a.from_time.empty())
    return Status::Invalid("give --from-offset or --from-time, not both");
  if (!a.to_offset.empty() && !a.to_time.empty()) return Status::Invalid("give --to-offset or --to-time, not both");
  // latest: each partition's end when the run starts (resolved once the table
  // is loaded), so only what is appended from then on: a --follow run.
  const bool from_latest = a.from_offset == "latest";
  if (from_latest && !a.follow) {
    return Status::Invalid(
        "--from-offset latest starts at each partition's end, so without --follow it selects nothing: add --follow "
        "to replay only what is appended from now on");
  }
  if (!a.from_offset.empty() && a.from_offset != "earliest" && !from_latest) {  // earliest: from the start, as if not given
    ASSIGN_OR_RAISE(o.read.from_offset, ParseOffset(a.from_offset, "--from-offset"));
  }
  if (!a.to_offset.empty()) {
    ASSIGN_OR_RAISE(o.read.to_offset, ParseOffset(a.to_offset, "--to-offset"));
  }
  if (!a.from_time.empty()) {
    ASSIGN_OR_RAISE(o.read.from_time_ms, ParseTimeMs(a.from_time, "--from-time"));
  }
  if (!a.to_time.empty()) {
    ASSIGN_OR_RAISE(o.read.to_time_ms, ParseTimeMs(a.to_time, "--to-time"));
  }
  if (o.read.from_offset && o.read.to_offset && *o.read.from_offset > *o.read.to_offset) {
    return Status::Invalid("--from-offset {} is after --to-offset {} (the range is from-offset <= offset < to-offset)",
                           *o.read.from_offset, *o.read.to_offset);
  }
  if (o.read.from_time_ms && o.read.to_time_ms && *o.read.from_time_ms > *o.read.to_time_ms) {
    return Status::Invalid(
        "--from-time {} ({} ms) is after --to-time {} ({} ms) (the range is from-time <= "
        "timestamp < to-time)",
        a.from_time, *o.read.from_time_ms, a.to_time, *o.read.to_time_ms);
  }
  o.range_given = !a.partitions.empty() || !a.from_offset.empty() || !a.to_offset.empty() || !a.from_time.empty() ||
                  !a.to_time.empty() || o.read.source_topic.has_value();
  if (!a.exclude_file.empty()) {
    ASSIGN_OR_RAISE(o.exclude, ReadExclusions(a.exclude_file));
  }
  const records::ReadOptions asked = o.read;  // the range as given, before --where narrows it
  // Partitions decode in parallel: N clusters (row groups of one or the next
  // partitions) are decoded ahead of the producer on N threads.
  o.read.read_ahead = static_cast<size_t>(a.parallelism) + 1;
  o.follow = a.follow;
  o.poll_interval_ms = static_cast<int>(poll_ms);
  o.reload = [&a]() { return a.table.Load(); };
  o.stop = &g_stop;
  o.report = [](const std::string& msg) {
    std::fprintf(stderr, "thaw replay: %s%s\n", msg.rfind("warning", 0) == 0 ? "" : "note: ", msg.c_str());
  };

  CatchStopSignals(/*second_exits=*/false);
  ASSIGN_OR_RAISE(auto table, a.table.Load());
  if (a.follow && !a.table.ref.empty()) {
    auto ref = table->metadata.refs.find(a.table.ref);
    if (ref != table->metadata.refs.end() && ref->second.type == "tag") {
      return Status::Invalid("--follow --ref {}: '{}' is a tag, which never moves; give a branch to follow",
                             a.table.ref, a.table.ref);
    }
  }
  std::string where;
  if (a.where) {
    ASSIGN_OR_RAISE(auto filter, records::RecordFilter::Make(*a.where, table->metadata, &o.read));
    o.filter = [filter](const records::RecordBatch& b, const records::Record& r) { return filter->Matches(b, r); };
    where = filter->canonical();
  }
  // The range, canonically: a job resumes only with the same one.
  o.range_description = records::CanonicalRange(asked, o.exclude.size(), where);
  if (from_latest) {
    // The ends at this run's snapshot; a job resumed keeps its own positions
    // (its checkpoint), and its range names `latest`, not these numbers.
    ASSIGN_OR_RAISE(o.read.start_offsets, PartitionEnds(table, o.read));
    o.range_description += std::string(o.range_description.empty() ? "" : " ") + "from-offset=latest";
    std::string ends;
    for (const auto& [p, end] : o.read.start_offsets) ends += fmt::format(" {}:{}", p, end);
    log::Info("--from-offset latest: starting at{}", ends.empty() ? " the start (the table holds no records)" : ends);
  }
  // --exactly-once without --job: a job named after what defines the replay
  // (table, snapshot selection, range, target cluster and topic), so that a
  // rerun of the same command resumes it instead of sending everything again.
  if (o.exactly_once && o.job.empty()) {
    const std::string what =
        fmt::format("{}\nsnapshot={} ref={} as-of={} source-topic={}\n{}\n{}\n{}", table->name, a.table.snapshot_id,
                    a.table.ref, a.table.as_of, a.table.source_topic, o.range_description, o.kafka.brokers, o.topic);
    o.job = "auto-" + serve::Digest(what).substr(0, 16);
    std::fprintf(stderr,
                 "thaw replay: job %s (named after the table, snapshot, range and target, as no --job was given): "
                 "rerunning this command resumes it\n",
                 o.job.c_str());
  }
  // A job tags the snapshot it has replayed up to, so that `thaw maintain`
  // keeps what it still needs (a table from a catalog; not --metadata).
  if (!o.job.empty() && a.table.metadata.empty()) {
    o.protect = [&a, tag = std::string(archive::kReplayTagPrefix) + o.job](std::optional<int64_t> id) -> Status {
      ASSIGN_OR_RAISE(auto table_id, catalog::TableIdentifier::Parse(a.table.table));
      ASSIGN_OR_RAISE(auto config, a.table.catalog.Resolve());
      ASSIGN_OR_RAISE(auto cat, catalog::OpenCatalog(config));
      return catalog::MoveTag(*cat, table_id, tag, id);
    };
  }
  if (o.dry_run) {
    ASSIGN_OR_RAISE(auto plan, replay::PlanReplay(table, o));
    if (a.json) {
      std::printf("%s\n", PlanJson(plan).dump().c_str());
    } else {
      const std::string text = replay::FormatPlan(plan);
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
    return Status::OK();
  }
  const bool tty = isatty(2) && !a.log.quiet && !a.json;
  const bool lines = !isatty(2) && !a.log.quiet;
  o.estimate_progress_total = tty;
  const double progress_s = static_cast<double>(progress_ms) / 1000;
  double next_line = progress_s;
  auto progress = [&](const replay::Progress& p) {
    if (tty) {
      DrawBar(p);
    } else if (lines && p.seconds >= next_line) {
      PrintProgressLine(p);
      while (next_line <= p.seconds) next_line += progress_s;
    }
  };
  ASSIGN_OR_RAISE(auto sum, replay::RunReplay(table, o, progress));
  if (tty) std::fprintf(stderr, "\r%80s\r", "");
  if (a.json) {
    nlohmann::ordered_json j;
    j["table"] = sum.table;
    j["topic"] = sum.topic;
    j["snapshot_id"] = sum.snapshot_id;
    j["job"] = o.job.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.job);
    j["resumed"] = sum.resumed;
    j["already_complete"] = sum.already_complete;
    j["records"] = sum.records;
    j["bytes"] = sum.bytes;
    j["excluded"] = sum.excluded;
    j["filtered"] = sum.filtered;
    j["seconds"] = sum.seconds;
    j["redone"] = sum.redone;
    j["duplicate_offsets"] = sum.duplicate_offsets;
    j["duplicates_differing"] = sum.duplicates_differing;
    j["warnings"] = sum.warnings;
    nlohmann::ordered_json next = nlohmann::ordered_json::object();
    for (const auto& [p, off] : sum.next_offsets) next[std::to_string(p)] = off;
    j["next_offsets"] = next;
    if (sum.verify) j["verify"] = VerifyJson(*sum.verify);
    std::printf("%s\n", j.dump().c_str());
  } else {  // the summary line is printed even with --quiet (which hides progress and info lines, not results)
    if (sum.already_complete) {
      std::printf("job %s is already complete (snapshot %lld); nothing to do\n", o.job.c_str(),
                  static_cast<long long>(sum.snapshot_id));
    } else {
      std::printf("replayed %lld records (%s) from %s snapshot %lld to topic %s in %.1fs (%.1f MB/s)%s%s\n",
                  static_cast<long long>(sum.records), Mb(sum.bytes).c_str(), sum.table.c_str(),
                  static_cast<long long>(sum.snapshot_id), sum.topic.c_str(), sum.seconds,
                  sum.seconds > 0 ? sum.bytes / sum.seconds / 1e6 : 0.0, sum.resumed ? " (resumed job)" : "",
                  sum.excluded ? fmt::format(", {} excluded", sum.excluded).c_str() : "");
      if (sum.duplicate_offsets > 0) {
        std::printf(
            "%lld duplicate offsets in the table (%lld with differing contents); one copy of each was "
            "replayed (docs/replay.md)\n",
            static_cast<long long>(sum.duplicate_offsets), static_cast<long long>(sum.duplicates_differing));
      }
      if (g_stop.load()) {
        std::printf(o.job.empty() ? "stopped by signal; without --job (or --exactly-once) a rerun sends every record "
                                    "again: give --job NAME to make a replay resumable\n"
                                  : "stopped by signal; the job can be resumed with the same command\n");
      }
    }
    if (sum.verify) PrintVerify(*sum.verify, sum.topic);
  }
  if (sum.verify && !sum.verify->ok) return VerifyFailed(*sum.verify, sum.topic);
  return Status::OK();
}

}  // namespace

void RegisterReplay(CLI::App* app, int* exit_code) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* cmd =
      app->add_subcommand("replay", "Produce a table's records into a Kafka topic, in order, linked, resumable");
  a->table.Register(cmd);
  a->kafka.Register(cmd);
  cmd->add_option("--topic", a->topic, "Target topic");
  AddPartitionsOption(cmd, "--partitions", &a->partitions, "Source partitions, e.g. 0,3-5; repeatable");
  cmd->add_option("--from-offset", a->from_offset,
                  "First source offset (inclusive): N, earliest, or latest (each partition's end; with --follow: only "
                  "what is appended from now on)")
      ->type_name("OFFSET");
  cmd->add_option("--to-offset", a->to_offset, "End source offset (exclusive)")->type_name("OFFSET");
  cmd->add_option("--from-time", a->from_time, "Records with timestamp >= T (ISO-8601 or epoch ms)")
      ->check(TimeValidator())
      ->type_name("TIME");
  cmd->add_option("--to-time", a->to_time, "Records with timestamp < T")->check(TimeValidator())->type_name("TIME");
  cmd->add_option("--where", a->where, "Filter expression (docs/where.md)");
  cmd->add_option("--exclude-offsets", a->exclude_file, "File of PARTITION:OFFSET lines never to replay");
  cmd->add_option("--partitioner", a->partitioner, "same (p -> p), key (Java client's murmur2), random");
  cmd->add_flag("--create-topic", a->create_topic, "Create the target topic if missing");
  cmd->add_option("--target-partitions", a->target_partitions,
                  "Partitions for --create-topic (default: the highest source partition replayed + 1)");
  cmd->add_option("--replication-factor", a->replication_factor,
                  "Replicas of each partition for --create-topic (default: the broker's default.replication.factor)");
  cmd->add_option("--topic-config", a->topic_configs,
                  "Config of the topic --create-topic makes, key=value (repeatable; default retention.ms=-1 "
                  "retention.bytes=-1: keep everything)");
  cmd->add_flag("--force", a->force,
                "Replay even where the target topic's retention would delete, or LogAppendTime rewrite, what is sent");
  cmd->add_option("--value-format", a->value_format,
                  "Decoded value columns (row tables of other writers, --layout thaw-row) as json (default), avro, "
                  "protobuf or json-schema: framed with a schema registry id (--schema-registry; "
                  "docs/schema-registry.md)")
      ->type_name("FORMAT");
  AddRegistryOptions(cmd, &a->registry);
  cmd->add_option("--timestamps", a->timestamps,
                  "original (default) or now (produce time; the original in a thaw.source.timestamp header)");
  cmd->add_flag("--verify", a->verify,
                "After the job, read the topic back (read_committed) and check every source offset arrived once, "
                "in order; with --job on a finished job, only verify");
  cmd->add_option("--checkpoint-interval", a->checkpoint_interval,
                  "Time between checkpoints/commits (default: a quarter of transaction.timeout.ms, at most 10s)")
      ->type_name("DURATION");
  cmd->add_option("--checkpoint-bytes", a->checkpoint_bytes,
                  "Bytes per checkpoint / transaction: SIZE (64MiB, 1GB; a bare number is bytes; default 64MiB)")
      ->type_name("SIZE");
  cmd->add_option("--job", a->job, "Resumable job name (progress kept in the target cluster)");
  cmd->add_option("--checkpoint-topic", a->checkpoint_topic, "Topic holding job checkpoints");
  cmd->add_option("--checkpoint-every", a->checkpoint_every, "Records per checkpoint (and per transaction)");
  cmd->add_flag("--status", a->status, "Show the job's checkpoint and exit");
  cmd->add_flag("--exactly-once", a->exactly_once, "Transactional producer; checkpoint in the same transaction");
  cmd->add_flag("--follow", a->follow, "After the range, keep replaying records appended by new snapshots");
  cmd->add_option("--poll-interval", a->poll_interval, "Time between checks for new snapshots (--follow; default 2s)")
      ->type_name("DURATION");
  cmd->add_option("--parallelism", a->parallelism, "Decode threads running ahead of the producer (default 1)");
  cmd->add_option("--rate", a->rate, "Limit to this many MB/s");
  cmd->add_flag("--link-headers", a->link_headers,
                "Add thaw.source.* headers linking each record to its source (default on; --link-headers=false "
                "to leave them out)");
  cmd->add_flag("--dry-run", a->dry_run, "Print the plan and exit");
  a->log.Register(cmd, "no progress (bar on a terminal, else a line every --progress-interval)");
  cmd->add_option("--progress-interval", a->progress_interval,
                  "Time between progress lines when stderr is not a terminal (default 10s)")
      ->type_name("DURATION");
  cmd->add_flag("--allow-empty", a->allow_empty,
                "A range that selects no records (or partitions the table lacks) is a warning and exit 0, not an "
                "error");
  cmd->add_flag("--json", a->json, "JSON summary");
  AddOpsOptions(cmd, &a->ops);
  cmd->callback([a, exit_code]() {
    auto kafka = a->kafka.Resolve();
    if (!kafka.ok()) return ReportError("replay", kafka.status(), exit_code);
    a->brokers = kafka->brokers;
    a->props.clear();
    for (const auto& [k, v] : kafka->properties) a->props.push_back(k + "=" + v);
    Status st = RunReplayCommand(*a);
    if (!st.ok() && g_stop.load()) {
      // Interrupted while waiting (e.g. on a broker that does not answer);
      // the exit code is the signal's (main.cc).
      std::fprintf(stderr, "thaw replay: interrupted: %s\n", st.message().c_str());
      return;
    }
    ReportError("replay", st, exit_code);
  });
}

}  // namespace thaw::cli
