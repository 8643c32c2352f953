#include "thaw/archive/maintain.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "thaw/archive/maintain_plan.h"
#include "thaw/common/log.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/manifest_writer.h"
#include "thaw/iceberg/table_scan.h"
#include "thaw/iceberg/table_update.h"
#include "thaw/parquet/data_file_writer.h"
#include "thaw/records/record_reader.h"

namespace thaw::archive {

namespace {

using iceberg::DataFile;
using iceberg::ManifestEntry;
using iceberg::ManifestFile;
using iceberg::Snapshot;
using iceberg::Table;
using iceberg::TableMetadata;

constexpr int kMaxCommitAttempts = 5;  // the first try and commit.retry.num-retries (4) more
constexpr int32_t kOffsetFieldId = 2;
constexpr int32_t kPartitionFieldId = 1;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Stopped(const MaintainOptions& o) { return o.stop && o.stop->load(); }

std::string TableDir(const TableMetadata& md) {
  std::string loc = md.location;
  while (loc.size() > 1 && loc.back() == '/') loc.pop_back();
  return loc;
}

// ---------------------------------------------------------------------------
// Reachability

// Paths a manifest names, live entries and DELETED ones apart (cached by
// manifest path: snapshots share most manifests).
struct ManifestPaths {
  std::vector<std::string> live, deleted;
};

class Reacher {
 public:
  Reacher(storage::FileIO& io, const TableMetadata& md) : io_(io), md_(md) {}

  // Adds what `snapshot` reaches to `out`; with `with_deleted`, also files
  // its manifests name as DELETED (orphan removal keeps those too).
  Status Add(const Snapshot& s, bool with_deleted, ReachableFiles* out) {
    if (!s.manifest_list.empty()) out->manifest_lists.insert(NormalizeLocation(s.manifest_list));
    auto list = iceberg::ReadManifestList(io_, md_, s);
    if (!list.ok()) return list.status().WithContext(fmt::format("snapshot {}", s.snapshot_id));
    for (const auto& m : *list) {
      out->manifests.insert(NormalizeLocation(m.path));
      auto it = cache_.find(m.path);
      if (it == cache_.end()) {
        static const std::vector<int32_t> kNoMetrics;
        auto entries = iceberg::ReadManifest(io_, md_, m, &kNoMetrics);
        if (!entries.ok()) return entries.status().WithContext(fmt::format("snapshot {}", s.snapshot_id));
        ManifestPaths paths;
        for (const auto& e : *entries) {
          (e.status == iceberg::EntryStatus::kDeleted ? paths.deleted : paths.live).push_back(e.file.path);
        }
        it = cache_.emplace(m.path, std::move(paths)).first;
      }
      for (const auto& p : it->second.live) out->content_files.insert(NormalizeLocation(p));
      if (with_deleted) {
        for (const auto& p : it->second.deleted) out->content_files.insert(NormalizeLocation(p));
      }
    }
    return Status::OK();
  }

 private:
  storage::FileIO& io_;
  const TableMetadata& md_;
  std::map<std::string, ManifestPaths> cache_;
};

// Deletes `files`; a file already gone is fine. Returns how many went.
int64_t DeleteAll(storage::FileIO& io, const std::vector<std::string>& files, MaintainSummary* summary) {
  int64_t n = 0;
  for (const auto& f : files) {
    Status st = io.Delete(f);
    if (st.ok()) {
      ++n;
    } else if (st.code() != StatusCode::kNotFound) {
      summary->notes.push_back(fmt::format("could not delete {}: {}", f, st.message()));
      log::Warn("could not delete {}: {}", f, st.message());
    }
  }
  return n;
}

std::vector<iceberg::TableRequirement> Guard(const TableMetadata& md) {
  return {iceberg::TableRequirement::AssertTableUuid(md.table_uuid),
          iceberg::TableRequirement::AssertRefSnapshotId("main", md.current_snapshot_id)};
}

// ---------------------------------------------------------------------------
// Compaction

struct CompactTask {
  int32_t partition = 0;
  std::vector<CompactionInput> inputs;  // in offset order
  std::vector<DataFile> input_files;
  CompactionGroup group;
  DataFile output;
  bool written = false;
};

// Why a table cannot be compacted (empty: it can).
std::string CompactBlocker(const TableMetadata& md) {
  if (md.format_version != 2) {
    return fmt::format(
        "compaction supports format v2 tables; this one is v{} (v3 row lineage would need the "
        "rows' ids carried into the new files)",
        md.format_version);
  }
  const std::string layout = md.Property("thaw.layout");
  if (layout.rfind("thaw/", 0) != 0) {
    return "compaction rewrites tables written by `thaw archive` in the canonical layout (property "
           "thaw.layout=thaw/1); "
           "this table has no such property";
  }
  const auto& schema = md.current_schema();
  for (const auto& f : schema.fields()) {
    if (f.id < 1 || (f.id > 7 && f.id != 11)) {
      return fmt::format("column {} (id {}) is not one of the canonical layout's, so rewriting files would lose it",
                         f.name, f.id);
    }
    if (f.id == 11) return "tables holding several topics (kafka_topic column) are not compacted yet";
  }
  for (const auto& spec : md.specs) {
    if (spec.fields.size() != 1 || spec.fields[0].source_id() != kPartitionFieldId ||
        spec.fields[0].transform.kind != iceberg::TransformKind::kIdentity) {
      return fmt::format("partition spec {} is not identity(kafka_partition)", spec.spec_id);
    }
  }
  return "";
}

Result<std::vector<CompactTask>> PlanCompaction(const Table& table, int64_t target_bytes) {
  const auto& md = table.metadata;
  const Snapshot* snap = md.CurrentSnapshot();
  std::vector<CompactTask> tasks;
  if (!snap) return tasks;
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(table.io, &md, snap, {}));
  scan.KeepMetricsFor({kOffsetFieldId});
  ASSIGN_OR_RAISE(auto planned, scan.PlanFiles());
  std::map<int32_t, std::pair<std::vector<CompactionInput>, std::vector<DataFile>>> by_partition;
  for (const auto& t : planned) {
    const DataFile& f = *t.file;
    if (f.partition.size() != 1 || f.partition[0].kind != iceberg::Datum::kInt) {
      return Status::Corrupt("{}: data file {} has partition {} where identity(kafka_partition) needs one integer",
                             table.name, f.path, f.partition.empty() ? "()" : f.partition[0].ToString());
    }
    CompactionInput in;
    in.path = f.path;
    in.file_size = f.file_size;
    in.record_count = f.record_count;
    auto lo = f.lower_bounds.find(kOffsetFieldId);
    auto hi = f.upper_bounds.find(kOffsetFieldId);
    if (lo != f.lower_bounds.end() && hi != f.upper_bounds.end()) {
      auto l = iceberg::DecodeIntegerBound(lo->second);
      auto h = iceberg::DecodeIntegerBound(hi->second);
      if (l && h) {
        in.has_offset_bounds = true;
        in.offset_lo = *l;
        in.offset_hi = *h;
      }
    }
    in.has_deletes = !t.deletes.empty();
    in.data_sequence_number = t.data_sequence_number;
    auto& slot = by_partition[static_cast<int32_t>(f.partition[0].i)];
    slot.first.push_back(std::move(in));
    slot.second.push_back(f);
  }
  for (auto& [p, files] : by_partition) {
    for (auto& g : PlanCompactionGroups(files.first, target_bytes)) {
      CompactTask task;
      task.partition = p;
      for (size_t i : g.inputs) {
        task.inputs.push_back(files.first[i]);
        task.input_files.push_back(files.second[i]);
      }
      task.group = std::move(g);
      tasks.push_back(std::move(task));
    }
  }
  return tasks;
}

// Reads the group's records (the offset range holds exactly the group's
// files, PlanCompactionGroups saw to it) into one new data file.
Status WriteGroup(const std::shared_ptr<const Table>& table, int64_t snapshot_id, const std::string& commit_uuid,
                  int file_index, CompactTask* task) {
  const auto& md = table->metadata;
  records::ReadOptions opt;
  opt.snapshot.snapshot_id = snapshot_id;
  opt.partitions = std::set<int32_t>{task->partition};
  opt.from_offset = task->group.offset_lo;
  opt.to_offset = task->group.offset_hi + 1;
  opt.order = records::ReadOrder::kPartitionMajor;
  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, opt));
  if (reader->planned_files() != static_cast<int64_t>(task->inputs.size())) {
    return Status::Internal("{} partition {} offsets {}-{}: the read planned {} files, the compaction group has {}",
                            table->name, task->partition, task->group.offset_lo, task->group.offset_hi,
                            reader->planned_files(), task->inputs.size());
  }
  const std::string location = fmt::format("{}/data/kafka_partition={}/{:05d}-{}-{}.parquet", TableDir(md),
                                           task->partition, file_index, 0, commit_uuid);
  const auto& first = task->input_files.front();
  ASSIGN_OR_RAISE(auto writer, parquet::DataFileWriter::Make(*table->io, location, md.current_schema(), first.spec_id,
                                                             first.partition));
  records::RecordBatch batch;
  std::optional<int64_t> last;
  while (true) {
    auto more = reader->Next(&batch);
    if (!more.ok()) {
      writer->Abort();
      return more.status();
    }
    if (!*more) break;
    for (const auto& r : batch.records) {
      if (last && r.offset <= *last) {
        writer->Abort();
        return Status::Internal("{} partition {}: offset {} read after {}", table->name, task->partition, r.offset,
                                *last);
      }
      last = r.offset;
    }
    Status st = writer->Append(batch, 0, batch.size());
    if (!st.ok()) {
      writer->Abort();
      return st;
    }
  }
  if (writer->record_count() != task->group.records) {
    writer->Abort();
    return Status::Corrupt(
        "{} partition {} offsets {}-{}: read {} records where the {} data files' manifests count {}; nothing "
        "rewritten",
        table->name, task->partition, task->group.offset_lo, task->group.offset_hi, writer->record_count(),
        task->inputs.size(), task->group.records);
  }
  ASSIGN_OR_RAISE(task->output, writer->Finish());
  task->written = true;
  return Status::OK();
}

// True when every input of every task is still live in `table`'s current
// snapshot with no delete files attached (after a concurrent commit).
Result<bool> StillValid(const Table& table, const std::vector<CompactTask>& tasks, std::string* why) {
  const auto& md = table.metadata;
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(table.io, &md, md.CurrentSnapshot(), {}));
  ASSIGN_OR_RAISE(auto planned, scan.PlanFiles());
  std::map<std::string, bool> live;  // path -> has deletes
  for (const auto& t : planned) live[t.file->path] = !t.deletes.empty();
  for (const auto& task : tasks) {
    for (const auto& in : task.inputs) {
      auto it = live.find(in.path);
      if (it == live.end()) {
        *why = fmt::format("{} is no longer in the table", in.path);
        return false;
      }
      if (it->second) {
        *why = fmt::format("{} now has delete files", in.path);
        return false;
      }
    }
  }
  return true;
}

std::string SummaryNumber(const Snapshot* parent, const std::string& key, int64_t delta) {
  if (!parent) return std::to_string(delta);
  auto it = parent->summary.find(key);
  if (it == parent->summary.end()) return "";
  try {
    return std::to_string(std::stoll(it->second) + delta);
  } catch (...) {
    return "";
  }
}

// One attempt: manifests and list on `base`, then the commit. Files written
// by the attempt are returned in *written (for cleanup after a conflict).
Result<Table> CommitCompaction(catalog::Catalog& catalog, const catalog::TableIdentifier& id, const Table& base,
                               const std::vector<CompactTask>& tasks, int64_t snapshot_id,
                               const std::string& commit_uuid, int attempt, std::vector<std::string>* written) {
  const auto& md = base.metadata;
  const Snapshot* parent = md.CurrentSnapshot();
  if (!parent) return Status::CommitConflict("{}: the table has no snapshot any more", base.name);
  auto& io = *base.io;
  std::set<std::string> removed;
  int64_t removed_bytes = 0, removed_records = 0, added_bytes = 0, added_records = 0;
  for (const auto& t : tasks) {
    for (const auto& in : t.inputs) {
      removed.insert(in.path);
      removed_bytes += in.file_size;
      removed_records += in.record_count;
    }
    added_bytes += t.output.file_size;
    added_records += t.output.record_count;
  }
  const std::string meta = TableDir(md) + "/metadata";
  int manifest_no = 0;
  auto next_manifest = [&]() { return fmt::format("{}/{}-a{}-m{}.avro", meta, commit_uuid, attempt, manifest_no++); };

  // The new files, ADDED by this snapshot.
  std::map<int32_t, std::vector<ManifestEntry>> added_by_spec;
  for (const auto& t : tasks) {
    ManifestEntry e;
    e.status = iceberg::EntryStatus::kAdded;
    e.snapshot_id = snapshot_id;
    e.file = t.output;
    added_by_spec[t.output.spec_id].push_back(std::move(e));
  }
  std::vector<ManifestFile> list;
  for (const auto& [spec_id, entries] : added_by_spec) {
    const auto* spec = md.SpecById(spec_id);
    if (!spec) return Status::Internal("{}: no partition spec {}", base.name, spec_id);
    std::string loc = next_manifest();
    written->push_back(loc);
    ASSIGN_OR_RAISE(auto mf, iceberg::WriteManifest(io, loc, md, *spec, snapshot_id, entries));
    list.push_back(std::move(mf));
  }
  // The parent's manifests; those holding an input are rewritten with it
  // DELETED and their other live files EXISTING (as Iceberg Java's rewrite).
  ASSIGN_OR_RAISE(auto parent_manifests, iceberg::ReadManifestList(io, md, *parent));
  size_t found = 0;
  for (const auto& m : parent_manifests) {
    if (m.content != iceberg::ManifestContent::kData || !m.may_have_live_files()) {
      list.push_back(m);
      continue;
    }
    ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(io, md, m));
    bool touched = false;
    for (const auto& e : entries) {
      if (e.status != iceberg::EntryStatus::kDeleted && removed.count(e.file.path)) touched = true;
    }
    if (!touched) {
      list.push_back(m);
      continue;
    }
    std::vector<ManifestEntry> rewritten;
    for (auto& e : entries) {
      if (e.status == iceberg::EntryStatus::kDeleted) continue;
      if (removed.count(e.file.path)) {
        e.status = iceberg::EntryStatus::kDeleted;
        e.snapshot_id = snapshot_id;
        ++found;
      } else {
        e.status = iceberg::EntryStatus::kExisting;
      }
      rewritten.push_back(std::move(e));
    }
    const auto* spec = md.SpecById(m.spec_id);
    if (!spec)
      return Status::Corrupt("{}: manifest {} names partition spec {} the table lacks", base.name, m.path, m.spec_id);
    std::string loc = next_manifest();
    written->push_back(loc);
    ASSIGN_OR_RAISE(auto mf, iceberg::WriteManifest(io, loc, md, *spec, snapshot_id, rewritten));
    list.push_back(std::move(mf));
  }
  if (found != removed.size()) {
    return Status::CommitConflict("{}: {} of the {} rewritten files are no longer in the table's manifests", base.name,
                                  removed.size() - found, removed.size());
  }

  Snapshot snap;
  snap.snapshot_id = snapshot_id;
  snap.parent_snapshot_id = parent->snapshot_id;
  snap.sequence_number = md.last_sequence_number + 1;
  snap.timestamp_ms = NowMs();
  snap.schema_id = md.current_schema_id;
  snap.manifest_list = fmt::format("{}/snap-{}-{}-{}.avro", meta, snapshot_id, attempt, commit_uuid);
  auto& sum = snap.summary;
  sum["operation"] = "replace";
  sum["added-data-files"] = std::to_string(tasks.size());
  sum["deleted-data-files"] = std::to_string(removed.size());
  sum["added-records"] = std::to_string(added_records);
  sum["deleted-records"] = std::to_string(removed_records);
  sum["added-files-size"] = std::to_string(added_bytes);
  sum["removed-files-size"] = std::to_string(removed_bytes);
  sum["changed-partition-count"] = std::to_string([&] {
    std::set<int32_t> ps;
    for (const auto& t : tasks) ps.insert(t.partition);
    return ps.size();
  }());
  auto total = [&](const char* key, int64_t delta) {
    std::string v = SummaryNumber(parent, key, delta);
    if (!v.empty()) sum[key] = v;
  };
  total("total-records", added_records - removed_records);
  total("total-data-files", static_cast<int64_t>(tasks.size()) - static_cast<int64_t>(removed.size()));
  total("total-files-size", added_bytes - removed_bytes);
  total("total-delete-files", 0);
  total("total-position-deletes", 0);
  total("total-equality-deletes", 0);
  // The archive's offsets and writer carry over: a replace changes no offsets.
  for (const char* key : {"thaw.archive.next-offsets", "thaw.archive.writer"}) {
    if (auto it = parent->summary.find(key); it != parent->summary.end()) sum[key] = it->second;
  }
  written->push_back(snap.manifest_list);
  RETURN_NOT_OK(iceberg::WriteManifestList(io, snap.manifest_list, md, snap, list).status());
  return catalog.CommitTable(
      id, base, Guard(md),
      {iceberg::TableUpdate::AddSnapshot(snap), iceberg::TableUpdate::SetBranch("main", snapshot_id)});
}

Status Compact(catalog::Catalog& catalog, const MaintainOptions& o, Table* table, MaintainSummary* summary) {
  if (std::string why = CompactBlocker(table->metadata); !why.empty()) {
    summary->notes.push_back("compaction skipped: " + why);
    return Status::OK();
  }
  if (o.target_file_bytes < 1024) return Status::Invalid("--target-file-size must be at least 1KiB");
  ASSIGN_OR_RAISE(auto tasks, PlanCompaction(*table, o.target_file_bytes));
  for (const auto& t : tasks) summary->files_rewritten += static_cast<int64_t>(t.inputs.size());
  summary->compaction_groups = static_cast<int64_t>(tasks.size());
  if (tasks.empty()) {
    summary->notes.push_back("compaction: no runs of small files to rewrite");
    return Status::OK();
  }
  if (o.dry_run) {
    summary->files_written = static_cast<int64_t>(tasks.size());
    return Status::OK();
  }
  const auto shared = std::make_shared<const Table>(*table);
  const int64_t read_snapshot = table->metadata.current_snapshot_id.value_or(0);
  const std::string commit_uuid = iceberg::NewUuid();
  std::vector<std::string> data_files;
  auto drop_data = [&]() { DeleteAll(*table->io, data_files, summary); };
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (Stopped(o)) {
      drop_data();
      summary->notes.push_back("compaction interrupted before its commit; nothing changed");
      summary->files_rewritten = 0;
      return Status::OK();
    }
    Status st = WriteGroup(shared, read_snapshot, commit_uuid, static_cast<int>(i), &tasks[i]);
    if (!st.ok()) {
      drop_data();
      return st;
    }
    data_files.push_back(tasks[i].output.path);
    summary->bytes_written += tasks[i].output.file_size;
    summary->records_rewritten += tasks[i].output.record_count;
  }
  const int64_t snapshot_id = iceberg::NewSnapshotId();
  Table base = *table;
  for (int attempt = 1;; ++attempt) {
    std::vector<std::string> written;
    auto committed = CommitCompaction(catalog, o.table, base, tasks, snapshot_id, commit_uuid, attempt, &written);
    if (committed.ok()) {
      *table = std::move(*committed);
      summary->files_written = static_cast<int64_t>(tasks.size());
      ++summary->commits;
      return Status::OK();
    }
    const Status& st = committed.status();
    if (st.code() == StatusCode::kCommitStateUnknown) {
      auto reloaded = catalog.LoadTable(o.table);
      if (reloaded.ok() && reloaded->metadata.SnapshotById(snapshot_id)) {
        *table = std::move(*reloaded);
        summary->files_written = static_cast<int64_t>(tasks.size());
        ++summary->commits;
        return Status::OK();
      }
      return Status::CommitStateUnknown(
          "{}: the compaction commit's state is unknown ({}); its files are kept (snapshot {}); `thaw maintain "
          "--remove-orphans` removes them later if it did not land",
          o.table.ToString(), st.message(), snapshot_id);
    }
    DeleteAll(*table->io, written, summary);  // this attempt's manifests and list: never committed
    if (st.code() != StatusCode::kCommitConflict) {
      drop_data();
      return st.WithContext("committing the compaction");
    }
    if (attempt >= kMaxCommitAttempts) {
      drop_data();
      return Status::CommitConflict("{}: the compaction lost {} commit races in a row ({}); nothing changed, rerun it",
                                    o.table.ToString(), attempt, st.message());
    }
    log::Info("compaction commit conflict ({}); reloading and retrying", st.message());
    ASSIGN_OR_RAISE(base, catalog.LoadTable(o.table));
    std::string why;
    ASSIGN_OR_RAISE(bool valid, StillValid(base, tasks, &why));
    if (!valid) {
      drop_data();
      *table = base;
      summary->files_rewritten = summary->files_written = summary->records_rewritten = summary->bytes_written = 0;
      summary->notes.push_back(
          fmt::format("compaction abandoned: the table changed under it ({}); nothing changed, "
                      "rerun to compact",
                      why));
      return Status::OK();
    }
  }
}

// ---------------------------------------------------------------------------
// Snapshot expiry

Status Expire(catalog::Catalog& catalog, const MaintainOptions& o, Table* table, MaintainSummary* summary) {
  const int64_t cutoff = NowMs() - *o.expire_older_than_ms;
  if (o.retain_last < 1) return Status::Invalid("--retain-last must be at least 1");
  Table base = *table;
  for (int attempt = 1;; ++attempt) {
    const auto& md = base.metadata;
    auto ids = SnapshotsToExpire(md, cutoff, o.retain_last);
    if (ids.empty()) {
      summary->notes.push_back("expiry: no snapshot is old enough");
      return Status::OK();
    }
    std::set<int64_t> expired(ids.begin(), ids.end());
    Reacher reach(*base.io, md);
    ReachableFiles before, kept;
    for (const auto& s : md.snapshots) {
      RETURN_NOT_OK(reach.Add(s, false, expired.count(s.snapshot_id) ? &before : &kept));
    }
    if (o.dry_run) {
      summary->expired_snapshot_ids = ids;
      summary->snapshots_expired = static_cast<int64_t>(ids.size());
      summary->expired_files = FilesOnlyIn(before, kept);
      return Status::OK();
    }
    auto committed = catalog.CommitTable(o.table, base, Guard(md), {iceberg::TableUpdate::RemoveSnapshots(ids)});
    if (!committed.ok()) {
      const Status& st = committed.status();
      if (st.code() == StatusCode::kCommitConflict && attempt < kMaxCommitAttempts) {
        ASSIGN_OR_RAISE(base, catalog.LoadTable(o.table));
        continue;
      }
      if (st.code() == StatusCode::kCommitStateUnknown) {
        return Status::CommitStateUnknown(
            "{}: the snapshot expiry's commit state is unknown ({}); no file was deleted, rerun it", o.table.ToString(),
            st.message());
      }
      return st.WithContext("committing the snapshot expiry");
    }
    *table = std::move(*committed);
    ++summary->commits;
    summary->expired_snapshot_ids = ids;
    summary->snapshots_expired = static_cast<int64_t>(ids.size());
    // What the committed table still reaches (a concurrent commit's new
    // snapshots included) is kept; the rest of what the expired snapshots
    // reached goes.
    ReachableFiles after;
    Reacher reach_after(*table->io, table->metadata);
    for (const auto& s : table->metadata.snapshots) RETURN_NOT_OK(reach_after.Add(s, false, &after));
    summary->expired_files = FilesOnlyIn(before, after);
    summary->files_deleted += DeleteAll(*table->io, summary->expired_files, summary);
    return Status::OK();
  }
}

// ---------------------------------------------------------------------------
// Orphan removal

Status RemoveOrphans(const MaintainOptions& o, const Table& table, MaintainSummary* summary) {
  const auto& md = table.metadata;
  if (md.location.empty()) return Status::Invalid("{}: the table metadata has no location", table.name);
  std::set<std::string> referenced;
  referenced.insert(NormalizeLocation(table.metadata_location));
  ASSIGN_OR_RAISE(std::string text, iceberg::ReadMetadataText(table.metadata_location, *table.io));
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::Corrupt("{}: table metadata is not a JSON object", table.metadata_location);
  }
  if (auto it = doc.find("metadata-log"); it != doc.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (e.is_object() && e.contains("metadata-file") && e["metadata-file"].is_string()) {
        referenced.insert(NormalizeLocation(e["metadata-file"].get<std::string>()));
      }
    }
  }
  for (const char* key : {"statistics", "partition-statistics"}) {
    if (auto it = doc.find(key); it != doc.end() && it->is_array()) {
      for (const auto& e : *it) {
        if (e.is_object() && e.contains("statistics-path") && e["statistics-path"].is_string()) {
          referenced.insert(NormalizeLocation(e["statistics-path"].get<std::string>()));
        }
      }
    }
  }
  const std::string dir = TableDir(md);
  referenced.insert(NormalizeLocation(dir + "/metadata/version-hint.text"));
  Reacher reach(*table.io, md);
  ReachableFiles all;
  for (const auto& s : md.snapshots) RETURN_NOT_OK(reach.Add(s, true, &all));
  referenced.insert(all.manifest_lists.begin(), all.manifest_lists.end());
  referenced.insert(all.manifests.begin(), all.manifests.end());
  referenced.insert(all.content_files.begin(), all.content_files.end());

  ASSIGN_OR_RAISE(auto listed, table.io->List(dir));
  std::vector<ListedFile> files;
  files.reserve(listed.size());
  for (auto& f : listed) files.push_back({std::move(f.location), f.size, f.mtime_ms});
  auto orphans = FindOrphans(files, referenced, NowMs() - o.orphan_older_than_ms);
  for (const auto& f : orphans) summary->orphan_files.push_back(f.location);
  if (o.dry_run) return Status::OK();
  summary->orphans_deleted = DeleteAll(*table.io, summary->orphan_files, summary);
  return Status::OK();
}

}  // namespace

Result<MaintainSummary> RunMaintain(catalog::Catalog& catalog, const MaintainOptions& options) {
  MaintainSummary summary;
  ASSIGN_OR_RAISE(auto table, catalog.LoadTable(options.table));
  if (options.compact) RETURN_NOT_OK(Compact(catalog, options, &table, &summary));
  if (options.expire_older_than_ms && !Stopped(options)) RETURN_NOT_OK(Expire(catalog, options, &table, &summary));
  if (options.remove_orphans && !Stopped(options)) {
    // A fresh load: the orphan check must see every commit up to now.
    ASSIGN_OR_RAISE(table, catalog.LoadTable(options.table));
    RETURN_NOT_OK(RemoveOrphans(options, table, &summary));
  }
  summary.snapshot_id = table.metadata.current_snapshot_id.value_or(0);
  return summary;
}

}  // namespace thaw::archive
