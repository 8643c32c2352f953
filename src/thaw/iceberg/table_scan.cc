#include "thaw/iceberg/table_scan.h"

#include <algorithm>
#include <bit>
#include <limits>

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
  for (const auto& [id, prefix] : filter_.prefixes) {
    const NestedField* field = schema.FindById(id);
    if (!field || prefix.empty()) continue;
    const TypeId t = field->type->id;
    if (t != TypeId::kString && t != TypeId::kBinary && t != TypeId::kFixed) continue;
    auto vc = f.value_counts.find(id);
    auto nc = f.null_value_counts.find(id);
    if (vc != f.value_counts.end() && nc != f.null_value_counts.end() && vc->second == nc->second &&
        vc->second > 0) {
      return false;  // only nulls, which start with nothing
    }
    // Bounds are the raw bytes; a truncated lower bound is <= the minimum,
    // a truncated upper bound >= the maximum. Every value starting with the
    // prefix is >= it, and below any string whose first |prefix| bytes
    // exceed it (std::string compares bytes as unsigned).
    if (auto hi = f.upper_bounds.find(id); hi != f.upper_bounds.end() && hi->second < prefix) return false;
    if (auto lo = f.lower_bounds.find(id);
        lo != f.lower_bounds.end() && std::string_view(lo->second).substr(0, prefix.size()) > prefix) {
      return false;
    }
  }
  return true;
}

std::vector<int32_t> TableScan::MetricIds() const {
  std::vector<int32_t> ids = extra_metric_ids_;
  for (const auto& [id, range] : filter_.ranges) ids.push_back(id);
  for (const auto& [id, prefix] : filter_.prefixes) ids.push_back(id);
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
    t.deletes = deletes.ForDataFile(e.file, e.sequence_number, *md_, &stats_.delete_candidates);
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

namespace {

constexpr int32_t kDeleteFilePathId = 2147483546;

// The one data file a position delete file applies to, when it says so:
// referenced_data_file, or file_path lower and upper bounds that are equal.
std::optional<std::string> SingleReferencedFile(const DataFile& d) {
  if (d.referenced_data_file) return *d.referenced_data_file;
  auto lo = d.lower_bounds.find(kDeleteFilePathId), hi = d.upper_bounds.find(kDeleteFilePathId);
  if (lo != d.lower_bounds.end() && hi != d.upper_bounds.end() && lo->second == hi->second) return lo->second;
  return std::nullopt;
}

void AppendBe64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xFF));
}

}  // namespace

std::string DeleteFileIndex::PartitionKey(int32_t spec_id, const std::vector<Datum>& partition) {
  std::string key;
  AppendBe64(&key, static_cast<uint32_t>(spec_id));
  for (const Datum& d : partition) {
    key.push_back(static_cast<char>('0' + d.kind));
    switch (d.kind) {
      case Datum::kNull:
        break;
      case Datum::kInt:
        AppendBe64(&key, static_cast<uint64_t>(d.i));
        break;
      case Datum::kDouble: {
        double v = d.d;
        if (v != v) v = std::numeric_limits<double>::quiet_NaN();
        if (v == 0) v = 0;  // -0.0 == 0.0
        AppendBe64(&key, std::bit_cast<uint64_t>(v));
        break;
      }
      case Datum::kBytes:
        AppendBe64(&key, d.s.size());
        key += d.s;
        break;
    }
  }
  return key;
}

void DeleteFileIndex::Add(const ManifestEntry& e, const TableMetadata& md) {
  const DataFile& f = e.file;
  const size_t i = deletes_.size();
  if (f.content == FileContent::kPositionDeletes) {
    if (f.is_deletion_vector()) {
      // A DV without referenced_data_file breaks the spec; it cannot be
      // matched to any data file.
      if (f.referenced_data_file) dv_by_path_[*f.referenced_data_file].push_back(i);
    } else if (auto path = SingleReferencedFile(f)) {
      pos_by_path_[*path].push_back(i);
    } else {
      pos_by_partition_[PartitionKey(f.spec_id, f.partition)].push_back(i);
    }
  } else if (f.content == FileContent::kEqualityDeletes) {
    const PartitionSpec* spec = md.SpecById(f.spec_id);
    if (!spec || spec->unpartitioned()) {
      global_eq_.push_back(i);
    } else {
      eq_by_partition_[PartitionKey(f.spec_id, f.partition)].push_back(i);
    }
  } else {
    return;  // a data file: nothing to index
  }
  deletes_.push_back(Entry{std::make_shared<const DataFile>(f), e.sequence_number});
}

std::vector<std::shared_ptr<const DataFile>> DeleteFileIndex::ForDataFile(const DataFile& f, int64_t data_seq,
                                                                          const TableMetadata& md,
                                                                          int64_t* candidates) const {
  (void)md;
  int64_t examined = 0;
  std::vector<size_t> hits;
  auto same_partition = [&](const DataFile& d) { return d.spec_id == f.spec_id && d.partition == f.partition; };
  // A deletion vector replaces position delete files for its data file. An
  // index built over several snapshots (incremental scans) may hold a DV and
  // the newer one that replaced it: the newest holds every deleted position.
  const Entry* dv = nullptr;
  size_t dv_index = 0;
  if (auto it = dv_by_path_.find(f.path); it != dv_by_path_.end()) {
    for (size_t i : it->second) {
      ++examined;
      const Entry& d = deletes_[i];
      if (d.seq >= data_seq && (!dv || d.seq > dv->seq)) {
        dv = &d;
        dv_index = i;
      }
    }
  }
  if (dv) {
    hits.push_back(dv_index);
  } else {
    auto position = [&](const std::vector<size_t>& bucket) {
      for (size_t i : bucket) {
        ++examined;
        const Entry& d = deletes_[i];
        const DataFile& df = *d.file;
        if (d.seq < data_seq || !same_partition(df)) continue;
        // file_path bounds rule out position delete files for other files.
        auto lo = df.lower_bounds.find(kDeleteFilePathId), hi = df.upper_bounds.find(kDeleteFilePathId);
        if (lo != df.lower_bounds.end() && hi != df.upper_bounds.end() &&
            (f.path < lo->second || f.path > hi->second)) {
          continue;
        }
        hits.push_back(i);
      }
    };
    if (auto it = pos_by_path_.find(f.path); it != pos_by_path_.end()) position(it->second);
    if (!pos_by_partition_.empty()) {
      if (auto it = pos_by_partition_.find(PartitionKey(f.spec_id, f.partition)); it != pos_by_partition_.end()) {
        position(it->second);
      }
    }
  }
  auto equality = [&](const std::vector<size_t>& bucket) {
    for (size_t i : bucket) {
      ++examined;
      if (deletes_[i].seq > data_seq) hits.push_back(i);
    }
  };
  equality(global_eq_);
  if (!eq_by_partition_.empty()) {
    if (auto it = eq_by_partition_.find(PartitionKey(f.spec_id, f.partition)); it != eq_by_partition_.end()) {
      equality(it->second);
    }
  }
  // In the order the delete files were added, as before indexing.
  std::sort(hits.begin(), hits.end());
  std::vector<std::shared_ptr<const DataFile>> out;
  out.reserve(hits.size());
  for (size_t i : hits) out.push_back(deletes_[i].file);
  if (candidates) *candidates += examined;
  return out;
}

}  // namespace thaw::iceberg
