#include "thaw/records/read_plan.h"

#include <arrow/record_batch.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "thaw/parquet/arrow_status.h"
#include "thaw/parquet/parquet_file.h"
#include "thaw/records/arrow_access.h"
#include "thaw/records/record_reader.h"

namespace thaw::records {

using iceberg::DataFile;
using iceberg::TypeId;

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The one source topic a data file holds when its metadata says so: an
// identity partition on the topic column (Thaw's kafka_topic), else equal
// lower and upper bounds of the column with no nulls (a truncated bound is
// never equal to the other: Iceberg truncates the upper one upward).
std::optional<std::string> PinnedTopic(const iceberg::TableMetadata& md, const DataFile& f, int32_t id) {
  if (const auto* spec = md.SpecById(f.spec_id)) {
    for (size_t i = 0; i < spec->fields.size() && i < f.partition.size(); ++i) {
      if (spec->fields[i].source_id() == id && spec->fields[i].transform.kind == iceberg::TransformKind::kIdentity &&
          f.partition[i].kind == iceberg::Datum::kBytes) {
        return f.partition[i].s;
      }
    }
  }
  if (auto nc = f.null_value_counts.find(id); nc != f.null_value_counts.end() && nc->second > 0) return std::nullopt;
  auto lo = f.lower_bounds.find(id), hi = f.upper_bounds.find(id);
  if (lo != f.lower_bounds.end() && hi != f.upper_bounds.end() && lo->second == hi->second) return lo->second;
  return std::nullopt;
}

// The distinct non-null values of a string column in a data file (read
// when its metadata does not pin the file's topic). Data files never change:
// what was read is kept per file and column (serve plans every new snapshot).
Status CollectStrings(storage::FileIO& io, const DataFile& f,
                      const std::shared_ptr<const iceberg::NameMapping>& mapping, const ColumnPath& column,
                      std::set<std::string>* into) {
  static std::mutex mu;
  static std::map<std::string, std::vector<std::string>> seen;
  const std::string key = fmt::format("{}\x1f{}\x1f{}", f.path, f.file_size, column.dotted());
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = seen.find(key); it != seen.end()) {
      into->insert(it->second.begin(), it->second.end());
      return Status::OK();
    }
  }
  std::set<std::string> found;
  ASSIGN_OR_RAISE(auto pf, pq::ParquetFile::OpenDataFile(io, f.path, mapping, f.file_size));
  const int top = pf->TopLevelField(column.top_level_id(), column.names[0]);
  if (top < 0) return Status::OK();
  std::vector<int> rgs(pf->num_row_groups());
  std::iota(rgs.begin(), rgs.end(), 0);
  ASSIGN_OR_RAISE(auto reader, pf->Read(rgs, {top}, 65536));
  std::string last;  // rows of one topic come in runs: look it up once per run
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), "Parquet file " + f.path));
    if (!b) break;
    auto acc = Resolve(*b, column);
    if (!acc) break;
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      if (acc->IsNull(i)) continue;
      auto v = GetBytes(*acc->array, i);
      if (v && (found.empty() || *v != last)) {
        last = std::string(*v);
        found.insert(last);
      }
    }
  }
  into->insert(found.begin(), found.end());
  std::lock_guard<std::mutex> lock(mu);
  if (seen.size() >= 65536) seen.clear();  // a bound on memory; a file is cheap to read again
  seen.emplace(key, std::vector<std::string>(found.begin(), found.end()));
  return Status::OK();
}
}  // namespace

Result<std::shared_ptr<const ReadPlan>> ReadPlan::Make(std::shared_ptr<const iceberg::Table> table,
                                                       const ReadOptions& options) {
  std::shared_ptr<ReadPlan> plan(new ReadPlan());
  plan->table_ = std::move(table);
  const auto& md = plan->table_->metadata;
  if (auto text = md.Property(iceberg::kNameMappingProperty); !text.empty()) {
    auto mapping = iceberg::NameMapping::Parse(
        text, fmt::format("in property '{}' of table {}", iceberg::kNameMappingProperty, plan->table_->name));
    if (!mapping.ok()) return mapping.status();
    plan->name_mapping_ = std::make_shared<const iceberg::NameMapping>(std::move(*mapping));
  }
  ASSIGN_OR_RAISE(plan->snapshot_, iceberg::SelectSnapshot(md, options.snapshot));
  // A snapshot is read with the schema it was written with (rows as JSON follow it).
  const auto& schema = plan->snapshot_ ? md.SchemaFor(*plan->snapshot_) : md.current_schema();
  auto layout = ResolveLayout(md, schema, options.layout);
  if (!layout.ok()) return layout.status().WithContext(fmt::format("table {}", plan->table_->name));
  plan->layout_ = std::move(*layout);
  if (options.source_topic) {
    const std::string& want = *options.source_topic;
    if (want.empty()) return Status::Invalid("the source topic to select is empty (give --source-topic NAME)");
    const std::string own = md.Property("thaw.source.topic");
    if (!plan->layout_.topic && own != want) {
      if (!own.empty()) {
        return Status::Invalid("table {} holds only topic '{}' (property thaw.source.topic), not '{}'",
                               plan->table_->name, own, want);
      }
      return Status::Invalid(
          "table {} has no topic column (layout '{}'), so it holds one topic: source topic '{}' cannot be "
          "selected (drop the selection, or name the column with --column topic=COLUMN)",
          plan->table_->name, plan->layout_.name, want);
    }
    plan->source_topic_ = want;
  }
  Status st = plan->Plan(options);
  if (!st.ok()) return st.WithContext(fmt::format("table {}", plan->table_->name));
  return std::shared_ptr<const ReadPlan>(std::move(plan));
}

int64_t ReadPlan::timestamp_units_per_ms() const {
  if (!layout_.timestamp) return 1;
  auto id = layout_.timestamp->type->id;
  if (id == TypeId::kTimestamp || id == TypeId::kTimestampTz) return 1000;
  if (id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs) return 1'000'000;
  return 1;
}

int64_t MsToTimestampUnits(int64_t ms, int64_t units_per_ms) {
  int64_t out;
  if (__builtin_mul_overflow(ms, units_per_ms, &out)) return ms < 0 ? kMin : kMax;
  return out;
}

Status ReadPlan::Plan(const ReadOptions& options) {
  iceberg::ScanFilter filter;
  const auto& md = table_->metadata;
  if (layout_.offset && (options.from_offset || options.to_offset)) {
    iceberg::IntRange r;
    if (options.from_offset) r.lo = *options.from_offset;
    if (options.to_offset) r.hi = *options.to_offset - 1;
    filter.Intersect(layout_.offset->field_id(), r);
  }
  if (layout_.partition && options.partitions && !options.partitions->empty()) {
    filter.Intersect(layout_.partition->field_id(), {*options.partitions->begin(), *options.partitions->rbegin()});
  }
  if (layout_.timestamp && (options.from_time_ms || options.to_time_ms)) {
    // Column units: long = ms; timestamps µs (ns for *_ns).
    iceberg::IntRange r;
    if (options.from_time_ms) r.lo = ms_to_timestamp_units(*options.from_time_ms);
    if (options.to_time_ms) {
      const int64_t hi = ms_to_timestamp_units(*options.to_time_ms);
      if (hi != kMax) r.hi = hi - 1;  // saturated: no upper bound
    }
    filter.Intersect(layout_.timestamp->field_id(), r);
  }
  if (layout_.key && options.key_prefix && !options.key_prefix->empty()) {
    filter.prefixes[layout_.key->field_id()] = *options.key_prefix;
  }
  // A selected topic prunes by the topic column's bounds (files that only
  // hold null topics too, unless null means the selected topic).
  if (layout_.topic && source_topic_ && md.Property("thaw.source.topic") != *source_topic_) {
    filter.prefixes[layout_.topic->field_id()] = *source_topic_;
  }
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(table_->io, &md, snapshot_, std::move(filter)));
  std::vector<int32_t> keep;
  if (layout_.offset) keep.push_back(layout_.offset->field_id());
  if (layout_.partition) keep.push_back(layout_.partition->field_id());
  if (layout_.timestamp) keep.push_back(layout_.timestamp->field_id());
  if (layout_.topic) keep.push_back(layout_.topic->field_id());
  scan.KeepMetricsFor(keep);
  if (options.only_added_in) scan.OnlyAddedIn(*options.only_added_in);
  ASSIGN_OR_RAISE(auto planned, scan.PlanFiles());
  stats_ = scan.stats();
  if (options.only_files) {
    std::erase_if(planned, [&](const iceberg::FileScanTask& t) { return !options.only_files->count(t.file->path); });
  }

  std::set<int32_t> parts;
  std::set<std::string> topics;
  for (auto& task : planned) {
    PlannedFile t;
    t.task = std::move(task);
    const DataFile& f = *t.task.file;
    if (f.format != "parquet") {
      return Status::Unsupported("data file {} is {} (Thaw reads Parquet data files)", f.path, f.format);
    }
    if (layout_.topic) {
      auto pinned = PinnedTopic(md, f, layout_.topic->field_id());
      if (source_topic_) {
        if (pinned && *pinned != *source_topic_) {
          ++stats_.data_files_skipped;
          continue;
        }
        t.other_topics = !pinned;
      } else if (pinned) {
        topics.insert(*pinned);
      } else {
        RETURN_NOT_OK(CollectStrings(*table_->io, f, name_mapping_, *layout_.topic, &topics));
      }
    }
    if (layout_.offset) {
      int32_t id = layout_.offset->field_id();
      auto lo = f.lower_bounds.find(id), hi = f.upper_bounds.find(id);
      if (lo != f.lower_bounds.end() && hi != f.upper_bounds.end()) {
        auto l = iceberg::DecodeIntegerBound(lo->second), h = iceberg::DecodeIntegerBound(hi->second);
        if (l && h) {
          t.off_lo = *l;
          t.off_hi = *h;
        }
      }
    }
    if (!layout_.partition) {
      t.part_lo = t.part_hi = 0;
    } else {
      int32_t id = layout_.partition->field_id();
      bool known = false;
      // An identity partition on the partition column pins the value.
      if (const auto* spec = md.SpecById(f.spec_id)) {
        for (size_t i = 0; i < spec->fields.size() && i < f.partition.size(); ++i) {
          if (spec->fields[i].source_id() == id &&
              spec->fields[i].transform.kind == iceberg::TransformKind::kIdentity &&
              f.partition[i].kind == iceberg::Datum::kInt) {
            t.part_lo = t.part_hi = static_cast<int32_t>(f.partition[i].i);
            known = true;
          }
        }
      }
      auto lo = f.lower_bounds.find(id), hi = f.upper_bounds.find(id);
      if (!known && lo != f.lower_bounds.end() && hi != f.upper_bounds.end()) {
        auto l = iceberg::DecodeIntegerBound(lo->second), h = iceberg::DecodeIntegerBound(hi->second);
        if (l && h) {
          t.part_lo = static_cast<int32_t>(*l);
          t.part_hi = static_cast<int32_t>(*h);
          known = true;
        }
      }
      if (!known) {
        // No metrics: read the partition column once to learn the range.
        ASSIGN_OR_RAISE(auto pf, pq::ParquetFile::OpenDataFile(*table_->io, f.path, name_mapping_, f.file_size));
        int top = pf->TopLevelField(layout_.partition->top_level_id(), layout_.partition->names[0]);
        int32_t mn = std::numeric_limits<int32_t>::max(), mx = std::numeric_limits<int32_t>::min();
        if (top >= 0) {
          std::vector<int> rgs(pf->num_row_groups());
          for (int i = 0; i < pf->num_row_groups(); ++i) rgs[i] = i;
          ASSIGN_OR_RAISE(auto reader, pf->Read(rgs, {top}, 65536));
          while (true) {
            std::shared_ptr<arrow::RecordBatch> b;
            RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), "Parquet file " + f.path));
            if (!b) break;
            auto acc = Resolve(*b, *layout_.partition);
            if (!acc) break;
            for (int64_t i = 0; i < b->num_rows(); ++i) {
              if (acc->IsNull(i)) continue;
              if (auto v = GetInt(*acc->array, i)) {
                mn = std::min<int32_t>(mn, static_cast<int32_t>(*v));
                mx = std::max<int32_t>(mx, static_cast<int32_t>(*v));
              }
            }
          }
        }
        if (mn > mx) continue;  // no non-null partition values: nothing to read
        t.part_lo = mn;
        t.part_hi = mx;
      }
    }
    if (t.part_hi - static_cast<int64_t>(t.part_lo) > 100000) {
      return Status::Corrupt(
          "data file {} spans partitions {}..{}: the partition column '{}' does not look like "
          "Kafka partitions (use --column partition=COLUMN)",
          f.path, t.part_lo, t.part_hi, layout_.partition->dotted());
    }
    for (int64_t p = t.part_lo; p <= t.part_hi; ++p) {
      if (!options.partitions || options.partitions->count(static_cast<int32_t>(p))) {
        parts.insert(static_cast<int32_t>(p));
      }
    }
    files_.push_back(std::move(t));
  }
  partitions_.assign(parts.begin(), parts.end());
  topics_.assign(topics.begin(), topics.end());
  {
    // Duplicate priority: higher data sequence number, then file sequence
    // number, then path (deterministic whatever the manifests' order).
    std::vector<size_t> order(files_.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const auto& ta = files_[a].task;
      const auto& tb = files_[b].task;
      if (ta.data_sequence_number != tb.data_sequence_number) return ta.data_sequence_number < tb.data_sequence_number;
      if (ta.file_sequence_number != tb.file_sequence_number) return ta.file_sequence_number < tb.file_sequence_number;
      return ta.file->path < tb.file->path;
    });
    for (size_t i = 0; i < order.size(); ++i) files_[order[i]].rank = static_cast<int64_t>(i);
  }
  if (!layout_.offset) {
    // Plain tables: a stable order of rows -- data sequence number, then path.
    std::sort(files_.begin(), files_.end(), [](const PlannedFile& a, const PlannedFile& b) {
      if (a.task.data_sequence_number != b.task.data_sequence_number)
        return a.task.data_sequence_number < b.task.data_sequence_number;
      return a.task.file->path < b.task.file->path;
    });
  }
  return Status::OK();
}

Status ReadPlan::RequireOneTopic(std::string_view how) const {
  if (topics_.size() <= 1) return Status::OK();
  constexpr size_t kNamed = 20;
  std::string names;
  for (size_t i = 0; i < topics_.size() && i < kNamed; ++i) names += (i ? ", " : "") + topics_[i];
  if (topics_.size() > kNamed) names += fmt::format(" and {} more", topics_.size() - kNamed);
  return Status::Invalid("table {} holds topics {}: choose one with {}", table_->name, names, how);
}

int64_t ReadPlan::planned_records() const {
  int64_t n = 0;
  for (const auto& f : files_) n += f.task.file->record_count;
  return n;
}

int64_t ReadPlan::planned_file_bytes() const {
  int64_t n = 0;
  for (const auto& f : files_) n += f.task.file->file_size;
  return n;
}

std::optional<std::pair<int64_t, int64_t>> ReadPlan::planned_timestamp_range_ms() const {
  if (!layout_.timestamp || files_.empty()) return std::nullopt;
  const int32_t id = layout_.timestamp->field_id();
  const int64_t units = timestamp_units_per_ms();
  int64_t lo = kMax, hi = kMin;
  for (const auto& pf : files_) {
    const DataFile& f = *pf.task.file;
    auto l = f.lower_bounds.find(id), h = f.upper_bounds.find(id);
    if (l == f.lower_bounds.end() || h == f.upper_bounds.end()) return std::nullopt;
    auto lv = iceberg::DecodeIntegerBound(l->second), hv = iceberg::DecodeIntegerBound(h->second);
    if (!lv || !hv) return std::nullopt;
    // Floor / ceiling to whole milliseconds.
    int64_t lms = *lv / units - ((*lv % units) < 0 ? 1 : 0);
    int64_t hms = *hv / units + ((*hv % units) > 0 ? 1 : 0);
    lo = std::min(lo, lms);
    hi = std::max(hi, hms);
  }
  return std::make_pair(lo, hi);
}

Result<std::shared_ptr<const std::vector<RowGroupRef>>> ReadPlan::RowGroups(int32_t partition) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(partition); it != index_.end()) return it->second;
  }
  // Built outside the lock (footers are read); the first to finish is kept.
  auto leaf_of = [](const pq::ParquetFile& pf, const std::optional<ColumnPath>& c) {
    if (!c) return -1;
    std::vector<std::pair<int32_t, std::string>> path;
    for (size_t i = 0; i < c->ids.size(); ++i) path.emplace_back(c->ids[i], c->names[i]);
    return pf.LeafColumn(path);
  };
  const int64_t units = timestamp_units_per_ms();
  auto out = std::make_shared<std::vector<RowGroupRef>>();
  for (size_t i = 0; i < files_.size(); ++i) {
    const PlannedFile& f = files_[i];
    if (partition < f.part_lo || partition > f.part_hi) continue;
    ASSIGN_OR_RAISE(
        auto pf, pq::ParquetFile::OpenDataFile(*table_->io, f.task.file->path, name_mapping_, f.task.file->file_size));
    const int off_leaf = leaf_of(*pf, layout_.offset), part_leaf = leaf_of(*pf, layout_.partition);
    const int ts_leaf = leaf_of(*pf, layout_.timestamp);
    for (int rg = 0; rg < pf->num_row_groups(); ++rg) {
      RowGroupRef r;
      r.file = i;
      r.row_group = rg;
      r.rows = pf->row_group_num_rows(rg);
      if (r.rows == 0) continue;
      if (auto st = pf->IntStats(rg, part_leaf); st && (partition < st->first || partition > st->second)) continue;
      if (auto st = pf->IntStats(rg, off_leaf)) {
        r.first_offset = st->first;
        r.last_offset = st->second;
      } else {
        // No statistics: the file's bounds.
        r.first_offset = f.off_lo;
        r.last_offset = f.off_hi;
      }
      if (auto st = pf->IntStats(rg, ts_leaf)) {
        // Floor / ceiling to whole milliseconds.
        r.min_timestamp_ms = st->first / units - ((st->first % units) < 0 ? 1 : 0);
        r.max_timestamp_ms = st->second / units + ((st->second % units) > 0 ? 1 : 0);
      }
      out->push_back(r);
    }
  }
  std::sort(out->begin(), out->end(), [](const RowGroupRef& a, const RowGroupRef& b) {
    if (a.first_offset != b.first_offset) return a.first_offset < b.first_offset;
    if (a.file != b.file) return a.file < b.file;
    return a.row_group < b.row_group;
  });
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, fresh] = index_.emplace(partition, std::move(out));
  return it->second;
}

Result<std::optional<RowGroupRef>> ReadPlan::Locate(int32_t partition, int64_t offset) const {
  if (!layout_.offset)
    return Status::Unsupported("table {} has no offset column: records cannot be located by offset", table_->name);
  ASSIGN_OR_RAISE(auto rgs, RowGroups(partition));
  // Row groups are by first offset but may overlap: the first one whose
  // last offset reaches `offset` is where a forward read must start.
  for (const auto& r : *rgs) {
    if (r.last_offset >= offset) return std::optional<RowGroupRef>(r);
  }
  return std::optional<RowGroupRef>();
}

Result<std::optional<RowGroupRef>> ReadPlan::FirstAtOrAfterTime(int32_t partition, int64_t ts_ms) const {
  ASSIGN_OR_RAISE(auto rgs, RowGroups(partition));
  for (const auto& r : *rgs) {
    if (r.max_timestamp_ms >= ts_ms) return std::optional<RowGroupRef>(r);
  }
  return std::optional<RowGroupRef>();
}

Result<std::optional<ReadPlan::OffsetBounds>> ReadPlan::Watermarks(int32_t partition) const {
  ASSIGN_OR_RAISE(auto rgs, RowGroups(partition));
  if (rgs->empty()) return std::optional<OffsetBounds>();
  OffsetBounds b{kMax, kMin};
  for (const auto& r : *rgs) {
    b.low = std::min(b.low, r.first_offset);
    b.high = std::max(b.high, r.last_offset == kMax ? kMax : r.last_offset + 1);
  }
  return std::optional<OffsetBounds>(b);
}

Result<std::optional<int64_t>> ReadPlan::ExactEnd(int32_t partition) const {
  for (const PlannedFile& f : files_) {
    if (partition < f.part_lo || partition > f.part_hi) continue;
    if (f.part_lo != f.part_hi || f.other_topics) return std::optional<int64_t>();
  }
  ASSIGN_OR_RAISE(auto bounds, Watermarks(partition));
  if (!bounds || bounds->high == kMax) return std::optional<int64_t>();  // a row group without offset bounds
  return std::optional<int64_t>(bounds->high);
}

namespace {

std::string CacheKey(const iceberg::Table& table, const iceberg::Snapshot* snap, const ReadOptions& o) {
  std::string k = table.metadata_location + '\x1f' + table.name + '\x1f' +
                  (snap ? std::to_string(snap->snapshot_id) : std::string("-"));
  auto opt = [&](const std::optional<int64_t>& v) { k += '\x1f' + (v ? std::to_string(*v) : std::string("-")); };
  opt(o.from_offset);
  opt(o.to_offset);
  opt(o.from_time_ms);
  opt(o.to_time_ms);
  k += "\x1fk" + (o.key_prefix ? "=" + *o.key_prefix : std::string("-"));
  k += "\x1fp";
  if (o.partitions) {
    for (int32_t p : *o.partitions) k += std::to_string(p) + ',';
  } else {
    k += '*';
  }
  k += "\x1f"
       "a";
  if (o.only_added_in) {
    for (int64_t s : *o.only_added_in) k += std::to_string(s) + ',';
  } else {
    k += '*';
  }
  k += "\x1ft" + (o.source_topic ? "=" + *o.source_topic : std::string("-"));
  k += "\x1fl" + o.layout.forced.value_or("");
  for (const auto& [f, c] : o.layout.column_overrides) k += '\x1f' + f + '=' + c;
  return k;
}

}  // namespace

Result<std::shared_ptr<const ReadPlan>> ReadPlanCache::Get(std::shared_ptr<const iceberg::Table> table,
                                                           const ReadOptions& options) {
  ASSIGN_OR_RAISE(const iceberg::Snapshot* snap, iceberg::SelectSnapshot(table->metadata, options.snapshot));
  const std::string key = CacheKey(*table, snap, options);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [k, plan] : entries_) {
      if (k == key) return plan;
    }
  }
  ASSIGN_OR_RAISE(auto plan, ReadPlan::Make(std::move(table), options));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [k, p] : entries_) {
    if (k == key) return p;  // another thread planned it meanwhile
  }
  entries_.emplace_back(key, plan);
  while (entries_.size() > std::max<size_t>(capacity_, 1)) entries_.erase(entries_.begin());
  return plan;
}

size_t ReadPlanCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace thaw::records
