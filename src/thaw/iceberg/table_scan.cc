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

Result<std::vector<FileScanTask>> TableScan::PlanFiles() {
  std::vector<FileScanTask> tasks;
  if (!snapshot_) return tasks;
  ASSIGN_OR_RAISE(auto manifests, ReadManifestList(*io_, *md_, *snapshot_));
  stats_.manifests_total = static_cast<int64_t>(manifests.size());

  // Delete manifests first: every data file needs the complete index.
  DeleteFileIndex deletes;
  for (const auto& m : manifests) {
    if (m.content != ManifestContent::kDeletes) continue;
    if (!m.may_have_live_files() || !ManifestMayMatch(m)) {
      ++stats_.manifests_skipped;
      continue;
    }
    ASSIGN_OR_RAISE(auto entries, ReadManifest(*io_, *md_, m));
    for (const auto& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      deletes.Add(e, *md_);
    }
  }
  stats_.delete_files = static_cast<int64_t>(deletes.size());

  std::vector<int32_t> metric_ids = extra_metric_ids_;
  for (const auto& [id, range] : filter_.ranges) metric_ids.push_back(id);
  std::sort(metric_ids.begin(), metric_ids.end());
  for (const auto& m : manifests) {
    if (m.content != ManifestContent::kData) continue;
    if (!m.may_have_live_files() || !ManifestMayMatch(m)) {
      ++stats_.manifests_skipped;
      continue;
    }
    ASSIGN_OR_RAISE(auto entries, ReadManifest(*io_, *md_, m, &metric_ids));
    for (auto& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      if (added_in_ && (e.status != EntryStatus::kAdded || !added_in_->count(e.snapshot_id))) continue;
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
      tasks.push_back(std::move(t));
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
  // A deletion vector replaces position delete files for its data file.
  auto [b, e] = dv_by_path_.equal_range(f.path);
  for (auto it = b; it != e; ++it) {
    const Entry& d = deletes_[it->second];
    if (d.seq >= data_seq) {
      out.push_back(d.file);
      break;
    }
  }
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
