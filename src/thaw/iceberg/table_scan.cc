#include "thaw/iceberg/table_scan.h"

#include <algorithm>

namespace thaw::iceberg {

void ScanFilter::Intersect(int32_t field_id, IntRange r) {
  auto& cur = ranges[field_id];
  if (r.lo) cur.lo = cur.lo ? std::max(*cur.lo, *r.lo) : *r.lo;
  if (r.hi) cur.hi = cur.hi ? std::min(*cur.hi, *r.hi) : *r.hi;
}

Result<TableScan> TableScan::Make(std::shared_ptr<storage::FileIO> io, const TableMetadata* md,
                                  const Snapshot* snapshot, ScanFilter filter) {
  TableScan s;
  s.io_ = std::move(io);
  s.md_ = md;
  s.snapshot_ = snapshot;
  s.filter_ = std::move(filter);
  return s;
}

namespace {

bool IsDateType(const Type& t) { return t.id == TypeId::kDate; }
bool IsNanosType(const Type& t) { return t.id == TypeId::kTimestampNs || t.id == TypeId::kTimestampTzNs; }
bool IsIntegerLike(const Type& t) {
  switch (t.id) {
    case TypeId::kInt: case TypeId::kLong: case TypeId::kDate: case TypeId::kTime:
    case TypeId::kTimestamp: case TypeId::kTimestampTz: case TypeId::kTimestampNs: case TypeId::kTimestampTzNs:
      return true;
    default:
      return false;
  }
}

// Projects a source range through an order-preserving transform. For bucket,
// only a point range projects (to one bucket).
std::optional<IntRange> Project(const PartitionField& pf, const Type& source_type, const IntRange& r) {
  const bool date = IsDateType(source_type), nanos = IsNanosType(source_type);
  IntRange out;
  if (pf.transform.kind == TransformKind::kBucket) {
    if (!(r.lo && r.hi && *r.lo == *r.hi)) return std::nullopt;
    if (source_type.id != TypeId::kInt && source_type.id != TypeId::kLong) return std::nullopt;
    int32_t b = BucketLong(*r.lo, pf.transform.param);
    out.lo = out.hi = b;
    return out;
  }
  if (!pf.transform.preserves_order()) return std::nullopt;
  if (r.lo) out.lo = ApplyToLong(pf.transform, *r.lo, date, nanos);
  if (r.hi) out.hi = ApplyToLong(pf.transform, *r.hi, date, nanos);
  return out;
}

}  // namespace

bool TableScan::ManifestMayMatch(const ManifestFile& m) const {
  if (filter_.ranges.empty() || !m.spec_from_list) return true;
  const PartitionSpec* spec = md_->SpecById(m.spec_id);
  if (!spec || m.partitions.size() != spec->fields.size()) return true;
  const Schema& schema = md_->current_schema();
  for (size_t i = 0; i < spec->fields.size(); ++i) {
    const PartitionField& pf = spec->fields[i];
    auto it = filter_.ranges.find(pf.source_id());
    if (it == filter_.ranges.end()) continue;
    const NestedField* src = schema.FindById(pf.source_id());
    if (!src || !IsIntegerLike(*src->type)) continue;
    auto proj = Project(pf, *src->type, it->second);
    if (!proj) continue;
    const FieldSummary& fs = m.partitions[i];
    if (!fs.lower_bound || !fs.upper_bound) {
      // All values null: no row can satisfy a range predicate.
      if (!fs.contains_null) continue;
      if (m.added_files.value_or(1) + m.existing_files.value_or(1) > 0 && !fs.lower_bound && !fs.upper_bound) {
        return false;
      }
      continue;
    }
    auto lo = DecodeIntegerBound(*fs.lower_bound), hi = DecodeIntegerBound(*fs.upper_bound);
    if (lo && hi && !proj->Overlaps(*lo, *hi)) return false;
  }
  return true;
}

bool TableScan::PartitionMayMatch(const DataFile& f) const {
  if (filter_.ranges.empty()) return true;
  const PartitionSpec* spec = md_->SpecById(f.spec_id);
  if (!spec) return true;
  const Schema& schema = md_->current_schema();
  for (size_t i = 0; i < spec->fields.size() && i < f.partition.size(); ++i) {
    const PartitionField& pf = spec->fields[i];
    auto it = filter_.ranges.find(pf.source_id());
    if (it == filter_.ranges.end()) continue;
    const NestedField* src = schema.FindById(pf.source_id());
    if (!src || !IsIntegerLike(*src->type)) continue;
    const Datum& v = f.partition[i];
    if (v.kind == Datum::kNull) return false;  // a null cannot fall in a range
    if (v.kind != Datum::kInt) continue;
    auto proj = Project(pf, *src->type, it->second);
    if (proj && !proj->Contains(v.i)) return false;
  }
  return true;
}

bool TableScan::MetricsMayMatch(const DataFile& f) const {
  const Schema& schema = md_->current_schema();
  for (const auto& [id, range] : filter_.ranges) {
    if (range.empty()) return false;
    const NestedField* field = schema.FindById(id);
    if (!field || !IsIntegerLike(*field->type)) continue;
    // All values null => no match.
    auto vc = f.value_counts.find(id);
    auto nc = f.null_value_counts.find(id);
    if (vc != f.value_counts.end() && nc != f.null_value_counts.end() && vc->second == nc->second &&
        vc->second > 0) {
      return false;
    }
    auto lo_it = f.lower_bounds.find(id);
    auto hi_it = f.upper_bounds.find(id);
    if (lo_it == f.lower_bounds.end() || hi_it == f.upper_bounds.end()) continue;
    Datum lo = DecodeBound(lo_it->second, *field->type), hi = DecodeBound(hi_it->second, *field->type);
    if (lo.kind == Datum::kInt && hi.kind == Datum::kInt && !range.Overlaps(lo.i, hi.i)) return false;
  }
  return true;
}

std::vector<int32_t> TableScan::MetricIds() const {
  std::vector<int32_t> ids = extra_metric_ids_;
  for (const auto& [id, range] : filter_.ranges) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Status TableScan::IndexDeletes(const std::vector<ManifestFile>& manifests, std::set<std::string>* seen,
                               DeleteFileIndex* index) {
  for (const auto& m : manifests) {
    if (m.content != ManifestContent::kDeletes) continue;
    if (!seen->insert(m.path).second) continue;
    if (!m.may_have_live_files() || !ManifestMayMatch(m)) {
      ++stats_.manifests_skipped;
      continue;
    }
    ASSIGN_OR_RAISE(auto entries, ReadManifest(*io_, *md_, m));
    for (const auto& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      // One Puffin file holds many deletion vectors: a blob is its offset.
      const std::string key = e.file.path + "#" + std::to_string(e.file.content_offset.value_or(-1));
      if (!seen->insert(key).second) continue;
      index->Add(e, *md_);
    }
  }
  stats_.delete_files = static_cast<int64_t>(index->size());
  return Status::OK();
}

Status TableScan::PlanDataManifest(const ManifestFile& m, const DeleteFileIndex& deletes,
                                   const std::vector<int32_t>& metric_ids, std::optional<int64_t> added_by,
                                   std::vector<FileScanTask>* tasks) {
  ASSIGN_OR_RAISE(auto entries, ReadManifest(*io_, *md_, m, &metric_ids));
  for (auto& e : entries) {
    if (e.status == EntryStatus::kDeleted) continue;
    if (added_by && (e.status != EntryStatus::kAdded || e.snapshot_id != *added_by)) continue;
    if (e.file.content != FileContent::kData) {
      return Status::Corrupt("manifest {} lists delete file {} in a data manifest", m.path, e.file.path);
    }
    ++stats_.data_files_total;
    if (!PartitionMayMatch(e.file) || !MetricsMayMatch(e.file)) {
      ++stats_.data_files_skipped;
      continue;
    }
    FileScanTask t;
    t.data_sequence_number = e.sequence_number;
    t.file_sequence_number = e.file_sequence_number;
    t.deletes = deletes.ForDataFile(e.file, e.sequence_number, *md_);
    t.file = std::make_shared<const DataFile>(std::move(e.file));
    tasks->push_back(std::move(t));
  }
  return Status::OK();
}

Result<std::vector<FileScanTask>> TableScan::PlanFiles() {
  std::vector<FileScanTask> tasks;
  if (!snapshot_) return tasks;
  if (added_in_) return PlanAppended();
  ASSIGN_OR_RAISE(auto manifests, ReadManifestList(*io_, *md_, *snapshot_));
  stats_.manifests_total = static_cast<int64_t>(manifests.size());

  // Delete manifests first: every data file needs the complete index.
  DeleteFileIndex deletes;
  std::set<std::string> seen;
  RETURN_NOT_OK(IndexDeletes(manifests, &seen, &deletes));

  const std::vector<int32_t> metric_ids = MetricIds();
  for (const auto& m : manifests) {
    if (m.content != ManifestContent::kData) continue;
    if (!m.may_have_live_files() || !ManifestMayMatch(m)) {
      ++stats_.manifests_skipped;
      continue;
    }
    RETURN_NOT_OK(PlanDataManifest(m, deletes, metric_ids, std::nullopt, &tasks));
  }
  return tasks;
}

namespace {

Status ExpiredAppend(int64_t snapshot_id, std::string_view what) {
  return Status::NotFound(
      "snapshot {} appended records that --follow has not replayed yet, but {}: the job cannot continue without "
      "loss. Replay what it appended with a new job over the table as it is now (`thaw replay --job NAME --status` "
      "shows where this job stopped; start the new one there with --from-offset/--partitions or --where), and "
      "expire snapshots only after followers have passed them",
      snapshot_id, what);
}

}  // namespace

Result<std::vector<FileScanTask>> TableScan::PlanAppended() {
  std::vector<FileScanTask> tasks;
  if (added_in_->empty()) return tasks;
  // The scan's snapshot back to the oldest append: every snapshot whose
  // delete files may hide appended rows.
  std::vector<const Snapshot*> chain;
  size_t found = 0;
  for (const Snapshot* s = snapshot_; s != nullptr;) {
    chain.push_back(s);
    if (added_in_->count(s->snapshot_id) && ++found == added_in_->size()) break;
    if (!s->parent_snapshot_id) break;
    const Snapshot* parent = md_->SnapshotById(*s->parent_snapshot_id);
    if (!parent) {
      // Which appends are missing? Name the first one not reached.
      for (int64_t id : *added_in_) {
        if (!md_->SnapshotById(id)) return ExpiredAppend(id, "it has expired from the table's metadata");
      }
      return ExpiredAppend(*s->parent_snapshot_id, "an ancestor between it and the current snapshot has expired");
    }
    s = parent;
  }
  if (found != added_in_->size()) {
    for (int64_t id : *added_in_) {
      if (!md_->SnapshotById(id)) return ExpiredAppend(id, "it has expired from the table's metadata");
      bool in_chain = false;
      for (const Snapshot* s : chain) in_chain = in_chain || s->snapshot_id == id;
      if (!in_chain) {
        return Status::Invalid("snapshot {} is not an ancestor of snapshot {}: an incremental scan reads appends on "
                               "one branch's history only", id, snapshot_->snapshot_id);
      }
    }
  }

  DeleteFileIndex deletes;
  std::set<std::string> seen;
  std::vector<std::pair<const Snapshot*, std::vector<ManifestFile>>> appends;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Snapshot& s = **it;
    auto manifests = ReadManifestList(*io_, *md_, s);
    if (!manifests.ok()) {
      if (manifests.status().code() == StatusCode::kNotFound && added_in_->count(s.snapshot_id)) {
        return ExpiredAppend(s.snapshot_id, fmt::format("its manifest list {} is gone (expired or removed as an "
                                                        "orphan)", s.manifest_list));
      }
      return manifests.status();
    }
    RETURN_NOT_OK(IndexDeletes(*manifests, &seen, &deletes));
    if (added_in_->count(s.snapshot_id)) appends.emplace_back(&s, std::move(*manifests));
  }

  const std::vector<int32_t> metric_ids = MetricIds();
  for (const auto& [s, manifests] : appends) {
    for (const auto& m : manifests) {
      if (m.content != ManifestContent::kData) continue;
      ++stats_.manifests_total;
      // Only manifests this snapshot wrote can hold entries it added.
      if (m.added_snapshot_id != s->snapshot_id || m.added_files.value_or(1) == 0 || !ManifestMayMatch(m)) {
        ++stats_.manifests_skipped;
        continue;
      }
      RETURN_NOT_OK(PlanDataManifest(m, deletes, metric_ids, s->snapshot_id, &tasks));
    }
  }
  return tasks;
}

void DeleteFileIndex::Add(const ManifestEntry& e, const TableMetadata& md) {
  const PartitionSpec* spec = md.SpecById(e.file.spec_id);
  Entry entry{std::make_shared<const DataFile>(e.file), e.sequence_number,
              e.file.content == FileContent::kEqualityDeletes && (!spec || spec->unpartitioned())};
  if (e.file.is_deletion_vector() && e.file.referenced_data_file) {
    dv_by_path_.emplace(*e.file.referenced_data_file, deletes_.size());
  }
  deletes_.push_back(std::move(entry));
}

std::vector<std::shared_ptr<const DataFile>> DeleteFileIndex::ForDataFile(const DataFile& f, int64_t data_seq,
                                                                          const TableMetadata& md) const {
  std::vector<std::shared_ptr<const DataFile>> out;
  auto same_partition = [&](const DataFile& d) { return d.spec_id == f.spec_id && d.partition == f.partition; };
  // A deletion vector replaces position delete files for its data file. An
  // index built over several snapshots (incremental scans) may hold a DV and
  // the newer one that replaced it: the newest holds every deleted position.
  const Entry* dv = nullptr;
  auto [b, e] = dv_by_path_.equal_range(f.path);
  for (auto it = b; it != e; ++it) {
    const Entry& d = deletes_[it->second];
    if (d.seq >= data_seq && (!dv || d.seq > dv->seq)) dv = &d;
  }
  if (dv) out.push_back(dv->file);
  const bool has_dv = !out.empty();
  constexpr int32_t kFilePathId = 2147483546;
  for (const auto& d : deletes_) {
    const DataFile& df = *d.file;
    if (df.content == FileContent::kPositionDeletes) {
      if (df.is_deletion_vector() || has_dv) continue;
      if (d.seq < data_seq || !same_partition(df)) continue;
      if (df.referenced_data_file && *df.referenced_data_file != f.path) continue;
      // file_path bounds let us skip position delete files for other files.
      auto lo = df.lower_bounds.find(kFilePathId), hi = df.upper_bounds.find(kFilePathId);
      if (lo != df.lower_bounds.end() && hi != df.upper_bounds.end() &&
          (f.path < lo->second || f.path > hi->second)) {
        continue;
      }
      out.push_back(d.file);
    } else if (df.content == FileContent::kEqualityDeletes) {
      if (d.seq <= data_seq) continue;
      if (!d.global && !same_partition(df)) continue;
      out.push_back(d.file);
    }
  }
  return out;
}

}  // namespace thaw::iceberg
