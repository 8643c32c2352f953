// `thaw archive`: flags -> ArchiveOptions -> archive::RunArchive, with a
// progress line on a terminal and a one-line (or JSON) summary. See
// docs/archive.md.
#include "thaw/cli/ops_args.h"
#include "thaw/cli/registry_args.h"
#include "thaw/cli/archive.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "thaw/archive/archiver.h"
#include "thaw/cli/kafka_args.h"
#include "thaw/cli/stop_signal.h"
#include "thaw/cli/log_args.h"
#include "thaw/cli/table_args.h"
#include "thaw/common/log.h"
#include "thaw/common/units.h"

namespace thaw::cli {

namespace {

std::atomic<bool>& g_stop = StopFlag();

struct ArchiveArgs {
  CatalogArgs catalog;
  KafkaArgs kafka;
  std::set<int32_t> partitions;
  std::string table, warehouse, from_offset = "earliest", layout = "thaw", group, value_schema;
  std::optional<int32_t> value_schema_id;
  std::string value_format;  // empty: json, or avro with --value-schema
  std::string key_format;    // empty: bytes
  RegistryArgs registry;
  std::vector<std::string> topics;
  std::string commit_interval = "10s", target_file_size = "128MiB", buffer_size = "256MiB", timeout = "30s";
  bool create = false, follow = false, json = false, dry_run = false;
  LogArgs log;
  int format_version = 2;
  OpsArgs ops;
};

std::string Mb(int64_t bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

// --dry-run's output: text, or one JSON object (docs/archive.md#dry-run).
void PrintPlan(const archive::ArchiveSummary& sum, const archive::ArchiveOptions& o, bool json) {
  int64_t total = 0;
  bool bounded = true;
  for (const auto& p : sum.plan) {
    if (p.to) {
      total += std::max<int64_t>(0, *p.to - p.from);
    } else {
      bounded = false;
    }
  }
  if (json) {
    nlohmann::ordered_json j;
    j["dry_run"] = true;
    j["table"] = sum.table;
    j["table_exists"] = sum.table_exists;
    j["topics"] = o.topics;
    j["follow"] = o.follow;
    nlohmann::ordered_json parts = nlohmann::ordered_json::array();
    for (const auto& p : sum.plan) {
      nlohmann::ordered_json e;
      e["topic"] = p.topic;
      e["partition"] = p.partition;
      e["from_offset"] = p.from;
      e["to_offset"] = p.to ? nlohmann::ordered_json(*p.to) : nlohmann::ordered_json(nullptr);
      e["from"] = p.resumed ? "table" : "from-offset";
      parts.push_back(e);
    }
    j["partitions"] = parts;
    j["offsets_at_most"] = bounded ? nlohmann::ordered_json(total) : nlohmann::ordered_json(nullptr);
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  std::printf("dry run: nothing is created, written or committed\n");
  std::printf("table       %s (%s)\n", sum.table.c_str(),
              sum.table_exists ? "exists" : "does not exist: a run with --create creates it");
  for (const auto& p : sum.plan) {
    std::printf("partition   %s/%d: from %lld (%s) %s\n", p.topic.c_str(), p.partition,
                static_cast<long long>(p.from), p.resumed ? "the table's next offset" : "--from-offset",
                p.to ? fmt::format("to {} ({} offsets)", *p.to, std::max<int64_t>(0, *p.to - p.from)).c_str()
                     : "on, following");
  }
  if (bounded) {
    std::printf("offsets     at most %lld (transaction markers and aborted records take offsets too)\n",
                static_cast<long long>(total));
  } else {
    std::printf("offsets     unbounded (--follow)\n");
  }
}

Status RunArchiveCommand(const ArchiveArgs& a, const kafka::rdkafka::KafkaConfig& kafka) {
  RETURN_NOT_OK(a.log.Apply("archive"));
  ASSIGN_OR_RAISE(auto metrics_endpoint, StartOps(a.ops, "archive"));
  archive::ArchiveOptions o;
  o.kafka = kafka;
  if (o.kafka.brokers.empty()) return Status::Invalid("--brokers HOST:PORT is required");
  o.kafka.stop = &g_stop;
  for (const auto& list : a.topics) {
    size_t start = 0;
    while (true) {
      size_t comma = list.find(',', start);
      std::string t = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (t.empty()) return Status::Invalid("--topic '{}': an empty topic name", list);
      if (std::find(o.topics.begin(), o.topics.end(), t) != o.topics.end()) {
        return Status::Invalid("--topic: topic '{}' is given twice", t);
      }
      o.topics.push_back(t);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (o.topics.empty()) return Status::Invalid("--topic NAME[,NAME...] is required: the topic(s) to archive");
  if (a.table.empty()) return Status::Invalid("--table NS.NAME is required: the table to archive into");
  if (!a.catalog.given()) {
    return Status::Invalid(
        "which catalog? give --catalog URI|NAME (e.g. sqlite:////path/catalog.db, "
        "http://host:8181, or a catalog of ~/.pyiceberg.yaml)");
  }
  ASSIGN_OR_RAISE(o.table, catalog::TableIdentifier::Parse(a.table));
  if (!a.warehouse.empty() && !a.create) {
    return Status::Invalid("--warehouse says where a new table goes: it needs --create");
  }
  o.create = a.create;
  o.warehouse = a.warehouse;
  if (!o.warehouse.empty() && o.warehouse.find("://") == std::string::npos) {
    // A local directory: absolute, as a file: URI (how pyiceberg and Iceberg Java write local locations).
    std::error_code ec;
    auto abs = std::filesystem::absolute(o.warehouse, ec);
    if (ec) return Status::Invalid("--warehouse '{}': {}", o.warehouse, ec.message());
    o.warehouse = "file://" + abs.lexically_normal().string();
  }
  if (a.format_version != 2 && a.format_version != 3) {
    return Status::Invalid("--format-version {}: use 2 or 3", a.format_version);
  }
  o.format_version = a.format_version;
  o.follow = a.follow;
  ASSIGN_OR_RAISE(o.commit_interval_ms, ParseDurationMs(a.commit_interval, "--commit-interval"));
  if (o.commit_interval_ms < 100) {
    return Status::Invalid("--commit-interval '{}' is too short (at least 100ms)", a.commit_interval);
  }
  ASSIGN_OR_RAISE(o.target_file_bytes, ParseByteSize(a.target_file_size, "--target-file-size"));
  if (o.target_file_bytes < (1 << 20)) {
    return Status::Invalid("--target-file-size '{}' is too small (at least 1MiB)", a.target_file_size);
  }
  ASSIGN_OR_RAISE(o.memory_bytes, ParseByteSize(a.buffer_size, "--buffer-size"));
  if (o.memory_bytes < (4 << 20))
    return Status::Invalid("--buffer-size '{}' is too small (at least 4MiB)", a.buffer_size);
  ASSIGN_OR_RAISE(int64_t timeout_ms, ParseDurationMs(a.timeout, "--timeout"));
  if (timeout_ms < 100 || timeout_ms > (int64_t{1} << 30))
    return Status::Invalid("--timeout '{}' is out of range", a.timeout);
  o.timeout_ms = static_cast<int>(timeout_ms);
  o.partitions.assign(a.partitions.begin(), a.partitions.end());
  ASSIGN_OR_RAISE(o.from, archive::FromOffset::Parse(a.from_offset));
  if (a.layout == "thaw") {
    o.layout = archive::Layout::kThaw;
  } else if (a.layout == "thaw-row" || a.layout == "row") {  // row: its first name
    o.layout = archive::Layout::kRow;
  } else {
    return Status::Invalid("--layout '{}': use thaw (the default) or thaw-row, the names inspect and serve read them "
                           "by",
                           a.layout);
  }
  if (!a.value_schema.empty()) {
    std::ifstream in(a.value_schema, std::ios::binary);
    if (!in) return Status::Invalid("--value-schema '{}': cannot read the file", a.value_schema);
    std::stringstream text;
    text << in.rdbuf();
    o.value_avro_schema = text.str();
    if (o.value_avro_schema.empty()) return Status::Invalid("--value-schema '{}': the file is empty", a.value_schema);
  }
  if (a.value_schema_id && *a.value_schema_id < 0) {
    return Status::Invalid("--value-schema-id {}: a schema registry id is not negative", *a.value_schema_id);
  }
  o.value_avro_schema_id = a.value_schema_id;
  ASSIGN_OR_RAISE(auto registry, OpenRegistry(a.registry));
  if (a.value_format == "registry") {
    if (!registry) {
      return Status::Invalid(
          "--value-format registry reads each value's schema from a schema registry: give --schema-registry URL");
    }
    o.value_registry = registry;
  } else if (a.value_format == "avro") {
    if (a.value_schema.empty()) {
      return Status::Invalid(
          "--value-format avro needs the writer schema: --value-schema FILE.avsc (or --value-format registry "
          "--schema-registry URL for values framed with a schema id)");
    }
  } else if (a.value_format == "json") {
    if (!a.value_schema.empty()) return Status::Invalid("--value-schema describes Avro values, not --value-format json");
  } else if (!a.value_format.empty()) {
    return Status::Invalid("--value-format '{}': use json, avro or registry", a.value_format);
  }
  if (a.key_format == "registry") {
    if (!registry) {
      return Status::Invalid(
          "--key-format registry reads each key's schema from a schema registry: give --schema-registry URL");
    }
    o.key_registry = registry;
  } else if (!a.key_format.empty() && a.key_format != "bytes") {
    return Status::Invalid("--key-format '{}': use bytes (the default: keys as they are) or registry", a.key_format);
  }
  if (registry && a.value_format != "registry" && a.key_format != "registry") {
    return Status::Invalid("--schema-registry is for --value-format registry or --key-format registry (archive)");
  }
  o.group_id = a.group;
  o.stop = &g_stop;
  o.dry_run = a.dry_run;
  const bool tty = isatty(2) && !a.log.quiet && !a.json;
  if (tty) {
    o.progress = [](const std::string& line) { std::fprintf(stderr, "\r\033[K%s", line.c_str()); };
  } else if (!a.log.quiet) {
    // Off a terminal (containers, CI, 2>log): a line per commit, and the
    // progress line every 10 s, as replay prints it.
    o.log_commits = true;
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    o.progress = [last](const std::string& line) {
      const auto now = std::chrono::steady_clock::now();
      if (now - *last < std::chrono::seconds(10)) return;
      *last = now;
      log::Info("progress: {}", line);
    };
  }

  ASSIGN_OR_RAISE(auto config, a.catalog.Resolve());
  ASSIGN_OR_RAISE(auto cat, catalog::OpenCatalog(config));
  // The first signal asks for a clean stop (commit what is buffered); a second
  // one ends the process at once (exit 128 + N): a commit in flight is then left
  // to the table's rules -- its files are kept, a rerun resumes from the table.
  CatchStopSignals(/*second_exits=*/true);
  auto result = archive::RunArchive(*cat, o);
  if (tty) std::fprintf(stderr, "\r\033[K");
  ASSIGN_OR_RAISE(auto sum, std::move(result));
  if (sum.dry_run) {
    PrintPlan(sum, o, a.json);
    return Status::OK();
  }
  if (a.json) {
    nlohmann::ordered_json j;
    j["table"] = sum.table;
    j["topics"] = o.topics;
    j["records"] = sum.records;
    j["bytes"] = sum.bytes;
    j["commits"] = sum.commits;
    j["data_files"] = sum.data_files;
    j["conflicts_retried"] = sum.conflicts_retried;
    j["manifest_merges"] = sum.manifest_merges;
    j["snapshot_id"] = sum.snapshot_id == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(sum.snapshot_id);
    nlohmann::ordered_json next = nlohmann::ordered_json::object();
    for (const auto& [topic, parts] : sum.next_offsets) {
      nlohmann::ordered_json t = nlohmann::ordered_json::object();
      for (const auto& [p, off] : parts) t[std::to_string(p)] = off;
      next[topic] = t;
    }
    j["next_offsets"] = next;
    j["seconds"] = sum.seconds;
    j["interrupted"] = sum.interrupted;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::string topics;
    for (const auto& t : o.topics) topics += (topics.empty() ? "" : ",") + t;
    std::printf(
        "archived %lld records (%s) from topic %s into %s in %lld commits (%lld data files%s) in %.1fs "
        "(%.1f MB/s)\n",
        static_cast<long long>(sum.records), Mb(sum.bytes).c_str(), topics.c_str(), sum.table.c_str(),
        static_cast<long long>(sum.commits), static_cast<long long>(sum.data_files),
        sum.snapshot_id ? fmt::format(", snapshot {}", sum.snapshot_id).c_str() : "", sum.seconds,
        sum.seconds > 0 ? sum.bytes / sum.seconds / 1e6 : 0.0);
    if (sum.interrupted) {
      std::printf("stopped by signal: the records read were committed; rerun to continue from the table's offsets\n");
    }
  }
  return Status::OK();
}

}  // namespace

void RegisterArchive(CLI::App* app, int* exit_code) {
  auto a = std::make_shared<ArchiveArgs>();
  CLI::App* cmd =
      app->add_subcommand("archive", "Archive Kafka topics into an Iceberg table: exact offsets, exactly once");
  a->catalog.Register(cmd);
  a->kafka.Register(cmd);
  cmd->add_option("--topic", a->topics, "Topic(s) to archive: NAME[,NAME...] (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--table", a->table, "Table as NAMESPACE.TABLE");
  cmd->add_flag("--create", a->create, "Create the table (in the --layout given) if it does not exist");
  cmd->add_option("--warehouse", a->warehouse,
                  "With --create: the new table goes to WAREHOUSE/NS.db/NAME (default: the catalog's warehouse "
                  "property)")
      ->type_name("URI");
  cmd->add_option("--format-version", a->format_version, "Iceberg format version of a new table: 2 (default) or 3");
  cmd->add_flag("--follow", a->follow,
                "Keep archiving new records (default: archive up to each partition's last stable offset as of the "
                "start, commit, exit)");
  cmd->add_option("--commit-interval", a->commit_interval, "Time between commits (default 10s)")->type_name("DURATION");
  cmd->add_option("--target-file-size", a->target_file_size, "Data files are rolled at this size (default 128MiB)")
      ->type_name("SIZE");
  cmd->add_option("--buffer-size", a->buffer_size,
                  "Records buffered in memory before a commit is forced (default 256MiB)")
      ->type_name("SIZE");
  AddPartitionsOption(cmd, "--partitions", &a->partitions, "Only these partitions, e.g. 0,3-5; repeatable");
  cmd->add_option("--from-offset", a->from_offset,
                  "Where a partition the table has no offset for starts: earliest (default), latest or N")
      ->type_name("OFFSET");
  cmd->add_option("--layout", a->layout,
                  "thaw (canonical, default) or thaw-row (values also as typed columns; docs/layouts.md). The "
                  "names inspect, replay and serve read these layouts by");
  cmd->add_option("--value-schema", a->value_schema,
                  "With --layout thaw-row: the values are Avro datums of this writer schema (default: JSON values)")
      ->type_name("FILE.avsc");
  cmd->add_option("--value-schema-id", a->value_schema_id,
                  "With --value-schema: the values carry the Confluent header with this schema registry id")
      ->type_name("ID");
  cmd->add_option("--value-format", a->value_format,
                  "With --layout thaw-row: json (default), avro (--value-schema FILE.avsc) or registry (each value framed "
                  "with a schema registry id: magic byte 0 + id; --schema-registry URL)")
      ->type_name("FORMAT");
  cmd->add_option("--key-format", a->key_format,
                  "With --layout thaw-row: bytes (default) or registry (each key framed with a schema registry id, also "
                  "decoded into the key_decoded columns; the key bytes are kept; --schema-registry URL)")
      ->type_name("FORMAT");
  AddRegistryOptions(cmd, &a->registry);
  cmd->add_option("--group", a->group,
                  "Consumer group to commit offsets to for monitoring (the table's offsets stay the truth)");
  cmd->add_option("--timeout", a->timeout, "How long to wait for the brokers (default 30s)")->type_name("DURATION");
  a->log.Register(cmd, "no progress line");
  cmd->add_flag("--dry-run", a->dry_run,
                "Check the options, the table and the topics, and print where each partition would start and stop: "
                "nothing is created, written or committed (docs/archive.md)");
  cmd->add_flag("--json", a->json, "JSON summary (with --dry-run: the plan)");
  AddOpsOptions(cmd, &a->ops);
  cmd->callback([a, exit_code]() {
    auto kafka = a->kafka.Resolve();
    if (!kafka.ok()) return ReportError("archive", kafka.status(), exit_code);
    Status st = RunArchiveCommand(*a, *kafka);
    ReportError("archive", st, exit_code);
  });
}

}  // namespace thaw::cli
