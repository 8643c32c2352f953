// `thaw maintain`: the command line of archive/maintain.h. Flags (and the
// [maintain] table of a --config file) become MaintainOptions; the summary is
// printed as text or, with --json, as one JSON object (docs/maintain.md).
#include "thaw/cli/maintain.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "thaw/archive/maintain.h"
#include "thaw/catalog/catalog_config.h"
#include "thaw/cli/stop_signal.h"
#include "thaw/cli/log_args.h"
#include "thaw/cli/table_args.h"
#include "thaw/common/log.h"
#include "thaw/common/units.h"

namespace thaw::cli {

namespace {

std::atomic<bool>& g_stop = StopFlag();

struct MaintainArgs {
  CatalogArgs catalog;
  std::string table;
  bool compact = false;
  bool rewrite_manifests = false;
  std::string target_file_size = "128MiB";
  std::string expire_older_than;
  int retain_last = 1;
  bool remove_orphans = false;
  std::string orphan_older_than = "3d";
  bool force = false;
  bool dry_run = false;
  bool json = false;
  LogArgs log;
};

Result<archive::MaintainOptions> ToOptions(const MaintainArgs& a) {
  archive::MaintainOptions o;
  if (a.table.empty()) return Status::Invalid("which table? give --table NS.NAME (and --catalog URI|NAME)");
  if (!a.catalog.given()) return Status::Invalid("which catalog? give --catalog URI|NAME");
  ASSIGN_OR_RAISE(o.table, catalog::TableIdentifier::Parse(a.table));
  if (!a.compact && !a.rewrite_manifests && a.expire_older_than.empty() && !a.remove_orphans) {
    return Status::Invalid(
        "nothing to do: give --compact, --rewrite-manifests, --expire-snapshots-older-than DURATION and/or "
        "--remove-orphans");
  }
  o.compact = a.compact;
  o.rewrite_manifests = a.rewrite_manifests;
  ASSIGN_OR_RAISE(o.target_file_bytes, ParseByteSize(a.target_file_size, "--target-file-size"));
  if (o.target_file_bytes < 1024) {
    return Status::Invalid("--target-file-size '{}' is too small (at least 1KiB)", a.target_file_size);
  }
  if (!a.expire_older_than.empty()) {
    ASSIGN_OR_RAISE(int64_t ms, ParseDurationMs(a.expire_older_than, "--expire-snapshots-older-than"));
    if (ms < 0) return Status::Invalid("--expire-snapshots-older-than must not be negative");
    o.expire_older_than_ms = ms;
  }
  if (a.retain_last < 1) return Status::Invalid("--retain-last must be at least 1 (the current snapshot is kept)");
  o.retain_last = a.retain_last;
  o.remove_orphans = a.remove_orphans;
  ASSIGN_OR_RAISE(o.orphan_older_than_ms, ParseDurationMs(a.orphan_older_than, "--orphan-older-than"));
  if (o.orphan_older_than_ms < 0) return Status::Invalid("--orphan-older-than must not be negative");
  constexpr int64_t kHourMs = 3'600'000;
  if (a.remove_orphans && o.orphan_older_than_ms < kHourMs && !a.force && !a.dry_run) {
    return Status::Invalid(
        "--orphan-older-than {} is under an hour: files a running archiver or another writer has written but not "
        "committed yet look like orphans for that long, and deleting them loses the data of their commit; keep "
        "the window at 1h or more (default 3d), or add --force if no writer is running",
        a.orphan_older_than);
  }
  o.dry_run = a.dry_run;
  o.stop = &g_stop;
  return o;
}

Status RunMaintainCommand(const MaintainArgs& a) {
  ASSIGN_OR_RAISE(auto options, ToOptions(a));
  ASSIGN_OR_RAISE(auto config, a.catalog.Resolve());
  ASSIGN_OR_RAISE(auto cat, catalog::OpenCatalog(config));
  CatchStopSignals(/*second_exits=*/false);
  const auto started = std::chrono::steady_clock::now();
  ASSIGN_OR_RAISE(auto s, archive::RunMaintain(*cat, options));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (a.json) {
    nlohmann::ordered_json j;
    j["table"] = options.table.ToString();
    j["dry_run"] = a.dry_run;
    j["snapshot_id"] = s.snapshot_id ? nlohmann::ordered_json(s.snapshot_id) : nlohmann::ordered_json(nullptr);
    j["commits"] = s.commits;
    j["compaction"] = {{"groups", s.compaction_groups},    {"files_rewritten", s.files_rewritten},
                       {"files_written", s.files_written}, {"records_rewritten", s.records_rewritten},
                       {"bytes_written", s.bytes_written}, {"delete_files_removed", s.delete_files_removed}};
    j["manifests"] = {{"before", s.manifests_before}, {"after", s.manifests_after}};
    j["expire"] = {{"snapshots_expired", s.snapshots_expired},
                   {"snapshot_ids", s.expired_snapshot_ids},
                   {"files", s.expired_files},
                   {"files_deleted", s.files_deleted}};
    j["orphans"] = {{"files", s.orphan_files}, {"deleted", s.orphans_deleted}};
    j["notes"] = s.notes;
    j["seconds"] = seconds;
    j["interrupted"] = g_stop.load();
    std::string out = j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::OK();
  }
  const char* would = a.dry_run ? "would " : "";
  std::string out;
  if (a.compact) {
    out += fmt::format("compact    {}rewrite {} data files into {} ({} records, {} bytes written){}\n", would,
                       s.files_rewritten, s.files_written, s.records_rewritten, s.bytes_written,
                       s.delete_files_removed > 0
                           ? fmt::format("; {} delete files left dangling removed", s.delete_files_removed)
                           : std::string());
  }
  if (a.rewrite_manifests) {
    out += fmt::format("manifests  {}merge {} manifests into {}\n", would, s.manifests_before, s.manifests_after);
  }
  if (options.expire_older_than_ms) {
    out += fmt::format("expire     {}expire {} snapshots; {} files only they reached{}\n", would, s.snapshots_expired,
                       s.expired_files.size(), a.dry_run ? "" : fmt::format(" ({} deleted)", s.files_deleted));
  }
  if (a.remove_orphans) {
    out += fmt::format("orphans    {} found{}\n", s.orphan_files.size(),
                       a.dry_run ? " (dry run: nothing deleted)" : fmt::format(", {} deleted", s.orphans_deleted));
    if (a.dry_run) {
      for (const auto& f : s.orphan_files) out += fmt::format("  {}\n", f);
    }
  }
  for (const auto& n : s.notes) out += fmt::format("note       {}\n", n);
  out += fmt::format("snapshot   {}\n", s.snapshot_id ? std::to_string(s.snapshot_id) : std::string("none"));
  std::fwrite(out.data(), 1, out.size(), stdout);
  return Status::OK();
}

}  // namespace

void RegisterMaintain(CLI::App* app, int* exit_code) {
  auto a = std::make_shared<MaintainArgs>();
  CLI::App* cmd = app->add_subcommand(
      "maintain", "Compact small files, expire old snapshots and remove orphan files of an archived table");
  a->catalog.Register(cmd);
  cmd->add_option("--table", a->table, "The table, NAMESPACE.NAME")->type_name("NS.NAME");
  cmd->add_flag("--compact", a->compact,
                "Rewrite runs of small data files of each Kafka partition into files of about --target-file-size");
  cmd->add_option("--target-file-size", a->target_file_size, "Compaction's target file size (default 128MiB)")
      ->type_name("SIZE");
  cmd->add_flag("--rewrite-manifests", a->rewrite_manifests,
                "Merge the current snapshot's small data manifests into manifests of about "
                "commit.manifest.target-size-bytes (8MiB), dropping those without live files (a replace snapshot)");
  cmd->add_option("--expire-snapshots-older-than", a->expire_older_than,
                  "Expire snapshots older than this (e.g. 7d) and delete the files only they reference")
      ->type_name("DURATION");
  cmd->add_option("--retain-last", a->retain_last,
                  "Snapshots of main always kept, however old (default 1: the current one)");
  cmd->add_flag("--remove-orphans", a->remove_orphans,
                "Delete files under the table location that no metadata references and that are older than "
                "--orphan-older-than");
  cmd->add_option("--orphan-older-than", a->orphan_older_than,
                  "Safety window of --remove-orphans: newer files are kept (default 3d)")
      ->type_name("DURATION");
  cmd->add_flag("--force", a->force,
                "Allow an --orphan-older-than under one hour (only when no writer of the table is running)");
  cmd->add_flag("--dry-run", a->dry_run, "Plan and report only: no file written, committed or deleted");
  cmd->add_flag("--json", a->json, "JSON summary (docs/maintain.md)");
  a->log.Register(cmd);
  cmd->callback([a, exit_code]() {
    Status st = a->log.Apply("maintain");
    if (st.ok()) st = RunMaintainCommand(*a);
    if (g_stop.load()) {
      // The exit code is the signal's (main.cc).
      std::fprintf(stderr, "thaw maintain: interrupted%s%s\n", st.ok() ? "" : ": ", st.message().c_str());
      return;
    }
    ReportError("maintain", st, exit_code);
  });
}

}  // namespace thaw::cli
