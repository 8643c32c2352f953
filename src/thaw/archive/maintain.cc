#include "thaw/archive/maintain.h"

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "thaw/archive/archive_state.h"
#include "thaw/archive/maintain_plan.h"
#include "thaw/common/log.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/manifest_merge.h"
#include "thaw/iceberg/manifest_writer.h"
#include "thaw/iceberg/table_scan.h"
#include "thaw/iceberg/table_update.h"
#include "thaw/parquet/arrow_status.h"
#include "thaw/parquet/data_file_writer.h"
#include "thaw/parquet/parquet_file.h"
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

constexpr int32_t kRowIdFieldId = 2147483540;           // _row_id
constexpr int32_t kLastUpdatedSeqFieldId = 2147483539;  // _last_updated_sequence_number

// A delete file's identity: deletion vectors share a Puffin file, so the
// blob's offset is part of it.
std::string DeleteKey(const DataFile& f) {
  return f.content_offset ? fmt::format("{}#{}", f.path, *f.content_offset) : f.path;
}

struct CompactTask {
  int32_t partition = 0;
  std::optional<std::string> topic;     // the group's topic (tables holding several topics)
  std::vector<CompactionInput> inputs;  // in offset order
  std::vector<DataFile> input_files;
  std::vector<std::set<std::string>> input_deletes;  // per input: DeleteKeys attached when planned
  CompactionGroup group;
  DataFile output;
  bool written = false;
};

// Why a table cannot be compacted (empty: it can).
std::string CompactBlocker(const TableMetadata& md) {
  if (md.format_version != 2 && md.format_version != 3) {
    return fmt::format("compaction supports format v2 and v3 tables; this one is v{}", md.format_version);
  }
  const std::string layout = md.Property("thaw.layout");
  if (layout.rfind("thaw/", 0) != 0) {
    return "compaction rewrites tables written by `thaw archive` in the canonical layout (property "
           "thaw.layout=thaw/1); "
           "this table has no such property";
  }
  const auto& schema = md.current_schema();
  for (const auto& f : schema.fields()) {
    if (f.id < 1 || (f.id > 7 && f.id != kTopicFieldId)) {
      return fmt::format("column {} (id {}) is not one of the canonical layout's, so rewriting files would lose it",
                         f.name, f.id);
    }
  }
  for (const auto& spec : md.specs) {
    bool by_partition = false;
    for (const auto& f : spec.fields) {
      const int32_t src = f.source_id();
      if (f.transform.kind != iceberg::TransformKind::kIdentity || (src != kPartitionFieldId && src != kTopicFieldId)) {
        return fmt::format("partition spec {} is not identity(kafka_partition) [+ identity(kafka_topic)]",
                           spec.spec_id);
      }
      by_partition |= src == kPartitionFieldId;
    }
    if (!by_partition) return fmt::format("partition spec {} is not partitioned by kafka_partition", spec.spec_id);
  }
  return "";
}

Result<std::vector<CompactTask>> PlanCompaction(const Table& table, int64_t target_bytes, MaintainSummary* summary) {
  const auto& md = table.metadata;
  const Snapshot* snap = md.CurrentSnapshot();
  std::vector<CompactTask> tasks;
  if (!snap) return tasks;
  const bool has_topic_column = md.current_schema().FindById(kTopicFieldId) != nullptr;
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(table.io, &md, snap, {}));
  scan.KeepMetricsFor({kOffsetFieldId, kTopicFieldId});
  ASSIGN_OR_RAISE(auto planned, scan.PlanFiles());
  struct Slot {
    int32_t partition = 0;
    std::optional<std::string> topic;
    std::vector<CompactionInput> inputs;
    std::vector<DataFile> files;
    std::vector<std::set<std::string>> deletes;
  };
  // Files are grouped by partition spec, partition tuple and topic: a new
  // file belongs to one partition and holds one topic.
  std::map<std::string, Slot> slots;
  int64_t no_row_id = 0, no_topic = 0;
  for (const auto& t : planned) {
    const DataFile& f = *t.file;
    int32_t partition = 0;
    std::optional<std::string> topic;
    RETURN_NOT_OK(FileKafkaKey(md, f, has_topic_column, &partition, &topic).WithContext(table.name));
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
    // v3: a rewrite copies every row's _row_id, which needs the file's first_row_id.
    if (md.format_version >= 3 && !f.first_row_id) {
      in.rewritable = false;
      ++no_row_id;
    }
    if (has_topic_column && !topic) {
      in.rewritable = false;
      ++no_topic;
    }
    std::set<std::string> deletes;
    for (const auto& d : t.deletes) deletes.insert(DeleteKey(*d));
    auto& slot = slots[iceberg::DeleteFileIndex::PartitionKey(f.spec_id, f.partition) + '\x1f' + topic.value_or("")];
    slot.partition = partition;
    slot.topic = topic;
    slot.inputs.push_back(std::move(in));
    slot.files.push_back(f);
    slot.deletes.push_back(std::move(deletes));
  }
  if (no_row_id > 0) {
    summary->notes.push_back(fmt::format(
        "compaction: {} data file(s) without first_row_id (written before the table's upgrade to v3) are kept as "
        "they are: their rows have no row ids to carry over",
        no_row_id));
  }
  if (no_topic > 0) {
    summary->notes.push_back(fmt::format(
        "compaction: {} data file(s) whose topic is unknown (no kafka_topic partition value, unequal column bounds) "
        "are kept as they are",
        no_topic));
  }
  for (auto& [key, slot] : slots) {
    for (auto& g : PlanCompactionGroups(slot.inputs, target_bytes)) {
      CompactTask task;
      task.partition = slot.partition;
      task.topic = slot.topic;
      for (size_t i : g.inputs) {
        task.inputs.push_back(slot.inputs[i]);
        task.input_files.push_back(slot.files[i]);
        task.input_deletes.push_back(slot.deletes[i]);
      }
      task.group = std::move(g);
      tasks.push_back(std::move(task));
    }
  }
  return tasks;
}

// v3 row lineage of a group's rows, by offset (the group's files do not
// overlap in offsets): each row's _row_id and _last_updated_sequence_number
// as the spec defines them -- the file's column when the row has a value,
// else inherited: first_row_id + the row's position, and the file's data
// sequence number. The rewrite copies both (rows are moved, not modified).
struct Lineage {
  int64_t offset, row_id, seq;
};

Result<std::vector<Lineage>> ReadLineage(const Table& table, const CompactTask& task,
                                         const std::shared_ptr<const iceberg::NameMapping>& mapping) {
  std::vector<Lineage> out;
  for (size_t k = 0; k < task.input_files.size(); ++k) {
    const DataFile& f = task.input_files[k];
    if (!f.first_row_id) return Status::Internal("{}: data file {} has no first_row_id", table.name, f.path);
    ASSIGN_OR_RAISE(auto pf, pq::ParquetFile::OpenDataFile(*table.io, f.path, mapping, f.file_size));
    std::vector<int> cols;
    const int off_col = pf->TopLevelField(kOffsetFieldId, "kafka_offset");
    if (off_col < 0) return Status::Corrupt("data file {} has no kafka_offset column", f.path);
    const int id_col = pf->TopLevelField(kRowIdFieldId, "_row_id");
    const int seq_col = pf->TopLevelField(kLastUpdatedSeqFieldId, "_last_updated_sequence_number");
    for (int c : {off_col, id_col, seq_col}) {
      if (c >= 0) cols.push_back(c);
    }
    std::sort(cols.begin(), cols.end());
    auto index_of = [&](int c) {
      return c < 0 ? -1 : static_cast<int>(std::find(cols.begin(), cols.end(), c) - cols.begin());
    };
    const int off_i = index_of(off_col), id_i = index_of(id_col), seq_i = index_of(seq_col);
    std::vector<int> rgs(pf->num_row_groups());
    std::iota(rgs.begin(), rgs.end(), 0);
    ASSIGN_OR_RAISE(auto reader, pf->Read(rgs, cols, 64 * 1024));
    int64_t pos = 0;
    const std::string ctx = "Parquet file " + f.path;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> b;
      RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), ctx));
      if (!b) break;
      const auto* off = dynamic_cast<const arrow::Int64Array*>(b->column(off_i).get());
      const auto* ids = id_i >= 0 ? dynamic_cast<const arrow::Int64Array*>(b->column(id_i).get()) : nullptr;
      const auto* seqs = seq_i >= 0 ? dynamic_cast<const arrow::Int64Array*>(b->column(seq_i).get()) : nullptr;
      if (!off || (id_i >= 0 && !ids) || (seq_i >= 0 && !seqs)) {
        return Status::Corrupt("{}: kafka_offset, _row_id and _last_updated_sequence_number must be longs", ctx);
      }
      for (int64_t i = 0; i < b->num_rows(); ++i, ++pos) {
        if (off->IsNull(i)) continue;  // the reader rejects such a row
        Lineage l;
        l.offset = off->Value(i);
        l.row_id = ids && !ids->IsNull(i) ? ids->Value(i) : *f.first_row_id + pos;
        l.seq = seqs && !seqs->IsNull(i) ? seqs->Value(i) : task.inputs[k].data_sequence_number;
        out.push_back(l);
      }
    }
  }
  // The reader keeps the first row of a duplicated offset: a stable sort puts it first.
  std::stable_sort(out.begin(), out.end(), [](const Lineage& a, const Lineage& b) { return a.offset < b.offset; });
  return out;
}

// Reads the group's records -- exactly its files, with their deletes
// applied by the reader -- into one new data file.
Status WriteGroup(const std::shared_ptr<const Table>& table, int64_t snapshot_id, const std::string& commit_uuid,
                  int file_index, std::optional<int32_t> sort_order_id, CompactTask* task) {
  const auto& md = table->metadata;
  records::ReadOptions opt;
  opt.snapshot.snapshot_id = snapshot_id;
  opt.partitions = std::set<int32_t>{task->partition};
  opt.from_offset = task->group.offset_lo;
  opt.to_offset = task->group.offset_hi + 1;
  opt.order = records::ReadOrder::kPartitionMajor;
  opt.only_files.emplace();
  for (const auto& in : task->inputs) opt.only_files->insert(in.path);
  if (task->topic) opt.source_topic = *task->topic;  // a several-topic table is read one topic at a time
  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, opt));
  const std::string where = fmt::format("{}{} partition {} offsets {}-{}", table->name,
                                        task->topic ? " topic " + *task->topic : std::string(), task->partition,
                                        task->group.offset_lo, task->group.offset_hi);
  if (reader->planned_files() != static_cast<int64_t>(task->inputs.size())) {
    return Status::Internal("{}: the read planned {} files, the compaction group has {}", where,
                            reader->planned_files(), task->inputs.size());
  }
  std::vector<Lineage> lineage;
  parquet::DataFileWriterOptions wopt;
  wopt.topic = task->topic;
  if (md.format_version >= 3) {
    ASSIGN_OR_RAISE(lineage, ReadLineage(*table, *task, reader->plan()->name_mapping()));
    wopt.row_lineage =
        [&lineage](const records::Record& r) -> std::pair<std::optional<int64_t>, std::optional<int64_t>> {
      auto it = std::lower_bound(lineage.begin(), lineage.end(), r.offset,
                                 [](const Lineage& l, int64_t o) { return l.offset < o; });
      if (it == lineage.end() || it->offset != r.offset) return {};
      return {it->row_id, it->seq};
    };
  }
  const std::string dir = task->topic ? fmt::format("{}/data/kafka_partition={}/kafka_topic={}", TableDir(md),
                                                    task->partition, *task->topic)
                                      : fmt::format("{}/data/kafka_partition={}", TableDir(md), task->partition);
  const std::string location = fmt::format("{}/{:05d}-{}-{}.parquet", dir, file_index, 0, commit_uuid);
  const auto& first = task->input_files.front();
  ASSIGN_OR_RAISE(auto writer, parquet::DataFileWriter::Make(*table->io, location, md.current_schema(), first.spec_id,
                                                             first.partition, std::move(wopt)));
  records::RecordBatch batch;
  std::optional<int64_t> last;
  auto fail = [&](Status st) {
    writer->Abort();
    return st;
  };
  while (true) {
    auto more = reader->Next(&batch);
    if (!more.ok()) return fail(more.status());
    if (!*more) break;
    for (const auto& r : batch.records) {
      if (last && r.offset <= *last) {
        return fail(Status::Internal("{}: offset {} read after {}", where, r.offset, *last));
      }
      last = r.offset;
      if (task->topic && r.topic && *r.topic != *task->topic) {
        return fail(Status::Corrupt("{}: offset {} has topic '{}' in a file of topic '{}'", where, r.offset, *r.topic,
                                    *task->topic));
      }
      if (md.format_version >= 3) {
        auto it = std::lower_bound(lineage.begin(), lineage.end(), r.offset,
                                   [](const Lineage& l, int64_t o) { return l.offset < o; });
        if (it == lineage.end() || it->offset != r.offset) {
          return fail(Status::Internal("{}: no row lineage read for offset {}", where, r.offset));
        }
      }
    }
    Status st = writer->Append(batch, 0, batch.size());
    if (!st.ok()) return fail(st);
  }
  // Without deletes every row is read back; with them, at most as many.
  bool any_deletes = false;
  for (const auto& in : task->inputs) any_deletes |= in.has_deletes;
  if (any_deletes ? writer->record_count() > task->group.records : writer->record_count() != task->group.records) {
    return fail(Status::Corrupt("{}: read {} records where the {} data files' manifests count {}; nothing rewritten",
                                where, writer->record_count(), task->inputs.size(), task->group.records));
  }
  ASSIGN_OR_RAISE(task->output, writer->Finish());
  task->output.sort_order_id = sort_order_id;
  task->written = true;
  return Status::OK();
}

// True when every input of every task is still live in `table`'s current
// snapshot with the same position deletes / deletion vectors attached, and
// no equality delete it had was removed (a newer equality delete is fine:
// its sequence number is above the new files' data sequence number, so it
// applies to them as it does to the inputs).
Result<bool> StillValid(const Table& table, const std::vector<CompactTask>& tasks, std::string* why) {
  const auto& md = table.metadata;
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(table.io, &md, md.CurrentSnapshot(), {}));
  ASSIGN_OR_RAISE(auto planned, scan.PlanFiles());
  struct Now {
    std::set<std::string> positional, equality;
  };
  std::map<std::string, Now> live;
  for (const auto& t : planned) {
    auto& n = live[t.file->path];
    for (const auto& d : t.deletes) {
      (d->content == iceberg::FileContent::kEqualityDeletes ? n.equality : n.positional).insert(DeleteKey(*d));
    }
  }
  for (const auto& task : tasks) {
    for (size_t k = 0; k < task.inputs.size(); ++k) {
      const auto& path = task.inputs[k].path;
      auto it = live.find(path);
      if (it == live.end()) {
        *why = fmt::format("{} is no longer in the table", path);
        return false;
      }
      for (const auto& d : task.input_deletes[k]) {
        if (!it->second.positional.count(d) && !it->second.equality.count(d)) {
          *why = fmt::format("delete file {} of {} was removed", d, path);
          return false;
        }
      }
      for (const auto& d : it->second.positional) {
        if (!task.input_deletes[k].count(d)) {
          *why = fmt::format("{} has a new position delete file or deletion vector ({})", path, d);
          return false;
        }
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

// Delete files of `base` that the rewrite leaves dangling (as Java's
// RewriteDataFiles with remove-dangling-deletes): attached to an input when
// planned, and, on `base`, applying to no data file that stays live -- nor,
// for equality deletes, to a new file (whose data sequence number is its
// inputs' maximum). Keys as DeleteKey.
Result<std::set<std::string>> DanglingDeletes(const Table& base, const std::vector<CompactTask>& tasks,
                                              const std::set<std::string>& removed) {
  std::set<std::string> candidates;
  for (const auto& t : tasks) {
    for (const auto& ds : t.input_deletes) candidates.insert(ds.begin(), ds.end());
  }
  if (candidates.empty()) return candidates;
  const auto& md = base.metadata;
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(base.io, &md, md.CurrentSnapshot(), {}));
  ASSIGN_OR_RAISE(auto planned, scan.PlanFiles());
  iceberg::DeleteFileIndex index;
  for (const auto& t : planned) {
    if (removed.count(t.file->path)) {
      continue;
    }
    for (const auto& d : t.deletes) candidates.erase(DeleteKey(*d));
  }
  if (candidates.empty()) return candidates;
  // Equality deletes that would apply to a new file stay.
  ASSIGN_OR_RAISE(auto manifests, iceberg::ReadManifestList(*base.io, md, *md.CurrentSnapshot()));
  for (const auto& m : manifests) {
    if (m.content != iceberg::ManifestContent::kDeletes) continue;
    ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(*base.io, md, m));
    for (const auto& e : entries) {
      if (e.status != iceberg::EntryStatus::kDeleted && e.file.content == iceberg::FileContent::kEqualityDeletes) {
        index.Add(e, md);
      }
    }
  }
  for (const auto& t : tasks) {
    for (const auto& d : index.ForDataFile(t.output, t.group.max_data_sequence_number, md)) {
      candidates.erase(DeleteKey(*d));
    }
  }
  return candidates;
}

// A `replace` snapshot of maintenance on `parent` (compaction, manifest
// rewrite): the archive's offsets and writer carry over, as a replace changes
// no offsets; the caller adds the rest of the summary.
Snapshot ReplaceSnapshot(const TableMetadata& md, const Snapshot& parent, int64_t snapshot_id, const std::string& meta,
                         int attempt, const std::string& commit_uuid) {
  Snapshot snap;
  snap.snapshot_id = snapshot_id;
  snap.parent_snapshot_id = parent.snapshot_id;
  snap.sequence_number = md.last_sequence_number + 1;
  snap.timestamp_ms = std::max(NowMs(), md.last_updated_ms);
  snap.schema_id = md.current_schema_id;
  snap.manifest_list = fmt::format("{}/snap-{}-{}-{}.avro", meta, snapshot_id, attempt, commit_uuid);
  snap.summary["operation"] = "replace";
  for (const char* key : {kNextOffsetsKey, kWriterKey}) {
    if (auto it = parent.summary.find(key); it != parent.summary.end()) snap.summary[key] = it->second;
  }
  return snap;
}

// One attempt: manifests and list on `base`, then the commit. Files written
// by the attempt are returned in *written (for cleanup after a conflict).
Result<Table> CommitCompaction(catalog::Catalog& catalog, const catalog::TableIdentifier& id, const Table& base,
                               const std::vector<CompactTask>& tasks, int64_t snapshot_id,
                               const std::string& commit_uuid, int attempt, std::vector<std::string>* written,
                               MaintainSummary* summary) {
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
  ASSIGN_OR_RAISE(auto dangling, DanglingDeletes(base, tasks, removed));
  const std::string meta = TableDir(md) + "/metadata";
  int manifest_no = 0;
  auto next_manifest = [&]() { return fmt::format("{}/{}-a{}-m{}.avro", meta, commit_uuid, attempt, manifest_no++); };

  // The new files, ADDED by this snapshot with their inputs' largest data
  // sequence number (Java's RewriteFiles.dataSequenceNumber): an equality
  // delete committed after the inputs still applies to the rows.
  std::map<int32_t, std::vector<ManifestEntry>> added_by_spec;
  for (const auto& t : tasks) {
    ManifestEntry e;
    e.status = iceberg::EntryStatus::kAdded;
    e.snapshot_id = snapshot_id;
    e.sequence_number = t.group.max_data_sequence_number;
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
  // The parent's manifests; those holding an input (or a dangling delete
  // file) are rewritten with it DELETED and their other live files EXISTING
  // (as Iceberg Java's rewrite).
  ASSIGN_OR_RAISE(auto parent_manifests, iceberg::ReadManifestList(io, md, *parent));
  size_t found = 0;
  int64_t del_files = 0, del_pos_files = 0, del_eq_files = 0, del_dvs = 0, del_pos = 0, del_eq = 0;
  for (const auto& m : parent_manifests) {
    const bool data = m.content == iceberg::ManifestContent::kData;
    if (!m.may_have_live_files() || (!data && dangling.empty())) {
      list.push_back(m);
      continue;
    }
    ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(io, md, m));
    auto drop = [&](const ManifestEntry& e) {
      return data ? removed.count(e.file.path) > 0 : dangling.count(DeleteKey(e.file)) > 0;
    };
    bool touched = false;
    for (const auto& e : entries) {
      if (e.status != iceberg::EntryStatus::kDeleted && drop(e)) touched = true;
    }
    if (!touched) {
      list.push_back(m);
      continue;
    }
    std::vector<ManifestEntry> rewritten;
    for (auto& e : entries) {
      if (e.status == iceberg::EntryStatus::kDeleted) continue;
      if (drop(e)) {
        e.status = iceberg::EntryStatus::kDeleted;
        e.snapshot_id = snapshot_id;
        if (data) {
          ++found;
        } else {
          ++del_files;
          if (e.file.content == iceberg::FileContent::kEqualityDeletes) {
            ++del_eq_files;
            del_eq += e.file.record_count;
          } else {
            e.file.is_deletion_vector() ? ++del_dvs : ++del_pos_files;
            del_pos += e.file.record_count;
          }
        }
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

  Snapshot snap = ReplaceSnapshot(md, *parent, snapshot_id, meta, attempt, commit_uuid);
  auto& sum = snap.summary;
  sum["added-data-files"] = std::to_string(tasks.size());
  sum["deleted-data-files"] = std::to_string(removed.size());
  sum["added-records"] = std::to_string(added_records);
  sum["deleted-records"] = std::to_string(removed_records);
  sum["added-files-size"] = std::to_string(added_bytes);
  sum["removed-files-size"] = std::to_string(removed_bytes);
  if (del_files > 0) {
    // Java's SnapshotSummary keys for removed delete files.
    sum["removed-delete-files"] = std::to_string(del_files);
    if (del_pos_files > 0) sum["removed-position-delete-files"] = std::to_string(del_pos_files);
    if (del_eq_files > 0) sum["removed-equality-delete-files"] = std::to_string(del_eq_files);
    if (del_dvs > 0) sum["removed-dvs"] = std::to_string(del_dvs);
    if (del_pos > 0) sum["removed-position-deletes"] = std::to_string(del_pos);
    if (del_eq > 0) sum["removed-equality-deletes"] = std::to_string(del_eq);
  }
  sum["changed-partition-count"] = std::to_string([&] {
    std::set<std::string> ps;
    for (const auto& t : tasks) ps.insert(iceberg::DeleteFileIndex::PartitionKey(t.output.spec_id, t.output.partition));
    return ps.size();
  }());
  auto total = [&](const char* key, int64_t delta) {
    std::string v = SummaryNumber(parent, key, delta);
    if (!v.empty()) sum[key] = v;
  };
  total("total-records", added_records - removed_records);
  total("total-data-files", static_cast<int64_t>(tasks.size()) - static_cast<int64_t>(removed.size()));
  total("total-files-size", added_bytes - removed_bytes);
  total("total-delete-files", -del_files);
  total("total-position-deletes", -del_pos);
  total("total-equality-deletes", -del_eq);
  if (md.format_version >= 3) snap.first_row_id = md.next_row_id.value_or(0);
  written->push_back(snap.manifest_list);
  ASSIGN_OR_RAISE(int64_t rows, iceberg::WriteManifestList(io, snap.manifest_list, md, snap, list));
  if (md.format_version >= 3) snap.added_rows = rows;
  summary->delete_files_removed = del_files;
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
  ASSIGN_OR_RAISE(auto tasks, PlanCompaction(*table, o.target_file_bytes, summary));
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
  // The new files are in the table's sort order when it is the one archive writes in.
  ASSIGN_OR_RAISE(std::string metadata_text, iceberg::ReadMetadataText(table->metadata_location, *table->io));
  const std::optional<int32_t> sort_order_id = FileSortOrderId(metadata_text);
  const int64_t read_snapshot = table->metadata.current_snapshot_id.value_or(0);
  const std::string commit_uuid = iceberg::NewUuid();
  std::vector<std::string> data_files;
  auto drop_data = [&]() { DeleteAll(*table->io, data_files, summary); };
  auto interrupted = [&]() {
    drop_data();
    summary->notes.push_back("compaction interrupted before its commit; nothing changed");
    summary->files_rewritten = summary->compaction_groups = summary->records_rewritten = summary->bytes_written = 0;
    return Status::OK();
  };
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (Stopped(o)) return interrupted();
    Status st = WriteGroup(shared, read_snapshot, commit_uuid, static_cast<int>(i), sort_order_id, &tasks[i]);
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
    if (Stopped(o)) return interrupted();  // nothing sent yet: the commit is not started
    std::vector<std::string> written;
    auto committed =
        CommitCompaction(catalog, o.table, base, tasks, snapshot_id, commit_uuid, attempt, &written, summary);
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
    summary->delete_files_removed = 0;
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
// Manifest rewrite

// Merges the current snapshot's small data manifests into manifests of about
// commit.manifest.target-size-bytes (Iceberg's RewriteManifests: a `replace`
// snapshot that changes no data), dropping manifests without live files: a
// table archived at short intervals before merging (or by a writer that does
// not merge) reads one manifest per commit otherwise.
Status RewriteManifests(catalog::Catalog& catalog, const MaintainOptions& o, Table* table, MaintainSummary* summary) {
  Table base = *table;
  for (int attempt = 1;; ++attempt) {
    const auto& md = base.metadata;
    const Snapshot* parent = md.CurrentSnapshot();
    if (!parent) {
      summary->notes.push_back("rewrite-manifests: the table has no snapshot");
      return Status::OK();
    }
    if (md.format_version != 2) {
      summary->notes.push_back(
          fmt::format("rewrite-manifests: format v{} tables are left as they are (v3 row lineage is not carried yet)",
                      md.format_version));
      return Status::OK();
    }
    auto& io = *base.io;
    ASSIGN_OR_RAISE(auto manifests, iceberg::ReadManifestList(io, md, *parent));
    summary->manifests_before = static_cast<int64_t>(manifests.size());
    iceberg::ManifestMergeOptions merge = iceberg::ManifestMergeOptions::FromProperties(md);
    merge.enabled = true;
    merge.min_count = 2;
    const int64_t snapshot_id = iceberg::NewSnapshotId();
    const std::string commit_uuid = iceberg::NewUuid();
    const std::string meta = TableDir(md) + "/metadata";
    if (o.dry_run) {
      // What a merge would leave: the manifests kept plus one per target size of the rest.
      int64_t kept = 0, bytes = 0, small = 0;
      for (const auto& m : manifests) {
        if (iceberg::MergeCandidate(m, md, merge)) {
          if (m.may_have_live_files()) bytes += m.length;
          ++small;
        } else {
          ++kept;
        }
      }
      summary->manifests_after =
          small < 2 ? summary->manifests_before : kept + (bytes + merge.target_bytes - 1) / merge.target_bytes;
      return Status::OK();
    }
    ASSIGN_OR_RAISE(auto merged, iceberg::MergeManifests(io, md, snapshot_id, manifests,
                                                         fmt::format("{}/{}-a{}", meta, commit_uuid, attempt), merge));
    if (merged.size() >= manifests.size()) {
      summary->manifests_after = summary->manifests_before;
      summary->notes.push_back("rewrite-manifests: nothing to merge");
      return Status::OK();
    }
    Snapshot snap = ReplaceSnapshot(md, *parent, snapshot_id, meta, attempt, commit_uuid);
    int64_t created = 0;
    for (const auto& m : merged) created += m.added_snapshot_id == snapshot_id ? 1 : 0;
    snap.summary["manifests-created"] = std::to_string(created);
    snap.summary["manifests-kept"] = std::to_string(static_cast<int64_t>(merged.size()) - created);
    snap.summary["manifests-replaced"] =
        std::to_string(static_cast<int64_t>(manifests.size() + created) - static_cast<int64_t>(merged.size()));
    // No data changes: the totals carry over.
    for (const char* key : {"total-records", "total-data-files", "total-delete-files", "total-files-size",
                            "total-position-deletes", "total-equality-deletes"}) {
      if (auto it = parent->summary.find(key); it != parent->summary.end()) snap.summary[key] = it->second;
    }
    RETURN_NOT_OK(iceberg::WriteManifestList(io, snap.manifest_list, md, snap, merged).status());
    auto committed = catalog.CommitTable(
        o.table, base, Guard(md),
        {iceberg::TableUpdate::AddSnapshot(snap), iceberg::TableUpdate::SetBranch("main", snapshot_id)});
    if (!committed.ok()) {
      const Status& st = committed.status();
      if (st.code() == StatusCode::kCommitConflict && attempt < kMaxCommitAttempts) {
        ASSIGN_OR_RAISE(base, catalog.LoadTable(o.table));
        continue;
      }
      return st.WithContext("committing the manifest rewrite");
    }
    *table = std::move(*committed);
    ++summary->commits;
    summary->manifests_after = static_cast<int64_t>(merged.size());
    return Status::OK();
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
    std::map<std::string, int64_t> held;
    auto ids = SnapshotsToExpire(md, cutoff, o.retain_last, &held);
    if (attempt == 1) {
      for (const auto& [job, n] : held) {
        summary->notes.push_back(fmt::format(
            "expiry: {} snapshot(s) older than the cutoff kept for replay job '{}' (tag {}{}: what it has still to "
            "replay); drop the tag if the job is abandoned",
            n, job, kReplayTagPrefix, job));
      }
    }
    if (ids.empty()) {
      summary->notes.push_back("expiry: no snapshot is old enough");
      return Status::OK();
    }
    std::set<int64_t> expired(ids.begin(), ids.end());
    Reacher reach(*base.io, md);
    ReachableFiles before, kept;
    for (const auto& s : md.snapshots) {
      RETURN_NOT_OK(reach.Add(*s, false, expired.count(s->snapshot_id) ? &before : &kept));
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
    for (const auto& s : table->metadata.snapshots) RETURN_NOT_OK(reach_after.Add(*s, false, &after));
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
  for (const auto& s : md.snapshots) RETURN_NOT_OK(reach.Add(*s, true, &all));
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
  if (options.rewrite_manifests && !Stopped(options)) {
    RETURN_NOT_OK(RewriteManifests(catalog, options, &table, &summary));
  }
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
