#include "thaw/records/record_reader.h"

#include <arrow/array.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <future>
#include <limits>
#include <mutex>
#include <numeric>
#include <unordered_set>

#include "thaw/common/civil_time.h"
#include "thaw/common/thread_pool.h"
#include "thaw/iceberg/deletion_vector.h"
#include "thaw/parquet/arrow_status.h"
#include "thaw/parquet/parquet_file.h"
#include "thaw/records/arrow_access.h"
#include "thaw/records/avro_value.h"
#include "thaw/records/json_row.h"
#include "thaw/records/read_plan.h"
#include "thaw/records/record_merge.h"
#include "thaw/records/spill.h"
#include "thaw/records/struct_fields.h"
#include "thaw/registry/wire.h"
#include "thaw/storage/object_store.h"

namespace thaw::records {

using iceberg::DataFile;
using iceberg::FileContent;
using iceberg::FileScanTask;
using iceberg::TypeId;

namespace {

constexpr int32_t kDeleteFilePathId = 2147483546;
constexpr int32_t kDeletePosId = 2147483545;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
// Rows per Arrow batch decoded from Parquet (output batches use ReadOptions::batch_size).
constexpr int64_t kParquetBatchRows = 65536;
// ... and at most about this many bytes of Arrow arrays per batch: a binary
// column's buffer grows by doubling as a batch is decoded (copied at each
// step, into memory the allocator takes fresh from the system once it is
// this large), so a row group of big values is decoded in several batches.
constexpr int64_t kParquetBatchBytes = int64_t{4} << 20;
// The smallest batch a merge input reads at once.
constexpr int64_t kMinMergeBatchBytes = 64 << 10;
// Spilled runs a merge keeps open at once (each holds a file descriptor).
constexpr size_t kMaxOpenRuns = 256;

struct EqualityDeletes {
  std::vector<int32_t> ids;
  std::vector<std::string> names;
  std::unordered_set<std::string> keys;
};

std::string EncodeCell(const arrow::Array& a, int64_t i) {
  if (a.IsNull(i)) return std::string("\0", 1);
  if (auto b = GetBytes(a, i)) return "b" + std::string(*b);
  if (auto v = GetInt(a, i)) return "i" + std::to_string(*v);
  auto s = a.GetScalar(i);
  return "s" + (s.ok() ? (*s)->ToString() : std::string());
}

struct TaskState {
  FileScanTask task;
  int64_t off_lo = kMin, off_hi = kMax;  // file offset bounds (metrics)
  int32_t part_lo = std::numeric_limits<int32_t>::min(), part_hi = std::numeric_limits<int32_t>::max();
  bool deletes_loaded = false;
  std::vector<int64_t> deleted_positions;  // sorted
  std::shared_ptr<const iceberg::DeletionVector> dv;
  std::vector<std::shared_ptr<EqualityDeletes>> eq;
  // Duplicate priority (higher wins): order by data sequence number, file
  // sequence number, path.
  int64_t rank = 0;
};

struct Unit {
  size_t task;
  int rg;
  int64_t lo, hi;
  // What decoding it allocates (RecordReader::Impl::SizeUnit: Arrow
  // arrays estimated from the footer, corrected by what earlier row groups
  // really took, plus the Record views), for the memory budget.
  int64_t bytes = 0;
  int64_t rows = 0;
  int64_t arrow_estimate = 0;  // the footer's estimate of its Arrow arrays alone
  int64_t dictionary = 0;      // held by a reader while it reads it (dictionary pages)
  // Kafka partitions the row group may hold (statistics; all if unknown).
  int64_t part_lo = kMin, part_hi = kMax;
};

// A unit of decoding work: the row groups of one partition group whose
// offset ranges overlap (normally a single row group), with readers of its
// own so clusters decode in parallel. Output: the cluster's records of its
// partitions, sorted by (partition, offset).
struct Cluster {
  int32_t partition = 0;  // the first partition it emits
  // Per partition partition + i: whether the cluster emits it, and the first
  // offset wanted (ReadOptions::start_offsets; kMin when none).
  std::vector<char> accept;
  std::vector<int64_t> start;
  std::vector<Unit> units;
  std::vector<std::unique_ptr<pq::ParquetFile>> files;  // one per unit
  std::vector<Record> records;
  std::vector<Header> headers;
  std::vector<std::shared_ptr<const void>> keepalive;
  DuplicateStats dups;  // dropped inside this cluster
  // Too big to decode at once: merged as streams (files sorted by offset)
  // and sorted runs spilled to disk (the others). `files` then holds one
  // streaming reader per data file, `unit_file` maps units to them.
  bool merge = false;
  std::vector<size_t> unit_file;
  std::unique_ptr<KWayMerger> merger;
  // Column chunks fetched ahead (ReadOptions::prefetch) while it waited in
  // `planned`, and their bytes as stored.
  bool prefetched = false;
  int64_t fetch_bytes = 0;
};

bool ByOffset(const Record& a, const Record& b) {
  return a.partition != b.partition ? a.partition < b.partition : a.offset < b.offset;
}
bool SamePosition(const Record& a, const Record& b) { return a.partition == b.partition && a.offset == b.offset; }

}  // namespace

struct RecordReader::Impl {
  std::shared_ptr<const ReadPlan> plan;
  std::shared_ptr<const iceberg::Table> table;
  ReadOptions opt;
  Layout layout;
  const iceberg::Snapshot* snapshot = nullptr;
  iceberg::ScanStats stats;
  std::vector<TaskState> tasks;
  std::vector<int32_t> partitions;
  // position delete file path -> (data file path -> sorted positions)
  std::map<std::string, std::shared_ptr<std::map<std::string, std::vector<int64_t>>>> pos_cache;
  std::map<std::string, std::shared_ptr<EqualityDeletes>> eq_cache;
  // Deletion vectors, read by byte range and kept per (Puffin file, offset).
  std::unique_ptr<iceberg::DeletionVectorCache> dv_cache;
  // The table's name mapping, for data files written without field ids.
  std::shared_ptr<const iceberg::NameMapping> name_mapping;
  // Spill directory (made on first use; removed after the clusters below
  // that read from it are gone) and merge statistics, shared with workers.
  std::mutex merge_mu;
  std::unique_ptr<SpillDir> spill;
  RecordReader::MergeStats merge_stats;
  RecordReader::DecodeStats decode_stats;
  // Decoded Arrow bytes per byte the footer estimate promised, the highest
  // seen so far (>= 1; guarded by merge_mu): a file without the statistics
  // the estimate needs (dictionary-encoded values without size statistics
  // or min/max) is then sized by what its first row groups really took.
  double decoded_ratio = 1.0;
  DuplicateStats dups;
  // Partitions read together (ascending, disjoint): with
  // ReadOrder::kPerPartition the partitions of files that hold several, so
  // their row groups decode once; otherwise one partition each.
  std::vector<std::vector<int32_t>> groups;

  // Planning state (consumer thread).
  size_t part_index = 0;           // into groups
  std::vector<size_t> part_tasks;  // tasks of the current group, by off_lo
  size_t next_task = 0;
  bool part_started = false;
  bool planned_all = false;
  std::deque<std::unique_ptr<Cluster>> planned;
  // Clusters being decoded on worker threads, in emission order.
  std::deque<std::future<Result<std::unique_ptr<Cluster>>>> inflight;
  size_t max_inflight = 2;
  std::unique_ptr<ThreadPool> pool;  // created on first use; joined before the state above dies
  // Read-ahead (ReadOptions::prefetch): clusters in `planned` whose chunks
  // are fetched (a prefix of `planned`) and their bytes; data files being
  // opened in the background (task -> open), the task lists of groups not
  // started yet (computed once), and the threads that open them.
  size_t prefetched_clusters = 0;
  int64_t prefetched_bytes = 0;
  RecordReader::PrefetchStats prefetch;
  std::map<size_t, std::future<Result<std::unique_ptr<pq::ParquetFile>>>> opening;
  std::map<size_t, std::vector<size_t>> group_tasks;
  std::unique_ptr<ThreadPool> opener;
  // Emission state.
  std::unique_ptr<Cluster> current;
  size_t cur_pos = 0;
  // Per partition, the last offset emitted and a copy of that record (views
  // into `bytes`), to compare a duplicate at a cluster boundary with; a
  // copy, so that no cluster's buffers outlive their emission.
  struct Last {
    int64_t offset = 0;
    Record record;
    std::vector<Header> headers;
    std::deque<std::string> bytes;
  };
  std::map<int32_t, Last> last;
  int64_t plain_counter = 0;  // plain layout only; clusters then decode one at a time
  // Rows kept: only this source topic's (ReadPlan::source_topic(), when the
  // layout has a topic column); a null topic is `null_topic`'s.
  std::optional<std::string> select_topic;
  std::string null_topic;

  const iceberg::Schema& schema() const { return table->metadata.current_schema(); }
  std::string NameOf(int32_t id) const {
    const auto* f = schema().FindById(id);
    return f ? f->name : std::string();
  }

  Status Plan();
  Status LoadDeletes(TaskState& t);
  Result<std::shared_ptr<std::map<std::string, std::vector<int64_t>>>> LoadPositionDeletes(const DataFile& f);
  Result<std::shared_ptr<EqualityDeletes>> LoadEqualityDeletes(const DataFile& f);
  Status PlanMoreClusters();
  std::vector<size_t> TasksOfGroup(size_t g);
  Result<std::unique_ptr<pq::ParquetFile>> OpenTask(size_t task);
  bool WantPrefetch(const pq::ParquetFile& pf) const {
    return opt.prefetch == ReadOptions::Prefetch::kOn || (opt.prefetch == ReadOptions::Prefetch::kAuto && pf.remote());
  }
  Status ReadAhead();
  void SetPartitions(Cluster* c, const std::vector<int32_t>& parts) const;
  void Remember(const RecordBatch& out, size_t begin);
  void CountDecoded(int64_t row_groups, int64_t rows, int64_t bytes) {
    std::lock_guard<std::mutex> lock(merge_mu);
    decode_stats.row_groups += row_groups;
    decode_stats.rows += rows;
    decode_stats.bytes += bytes;
  }
  Status FillPipeline();
  Status LoadCluster(Cluster* c);
  std::vector<int> ProjectedColumns(const pq::ParquetFile& pf, const TaskState& t) const;
  // What decoding row group `rg` allocates: Unit::bytes.
  void SizeUnit(const pq::ParquetFile& pf, const TaskState& t, Unit* u);
  // Takes `bytes` from ReadOptions::decode_gate (nothing without one).
  DecodeGate::Hold Gate(int64_t bytes) { return opt.decode_gate ? opt.decode_gate->Acquire(bytes) : DecodeGate::Hold(); }
  // Gives it back, and has Arrow's allocator return what it keeps when the
  // gate says so (ReadOptions::return_freed).
  void Ungate(DecodeGate::Hold& hold) const {
    if (hold.Release() && opt.return_freed) arrow::default_memory_pool()->ReleaseUnused();
  }
  void LearnDecoded(int64_t estimate, int64_t actual);
  Status PrepareMerge(Cluster* c);
  Result<bool> IsSortedByOffset(pq::ParquetFile& pf, const std::vector<int>& rgs, int32_t partition);
  // The rows [first, second) of u's row group that can hold offsets in
  // range, or none when it is read whole (record_reader.h: require_narrow).
  Result<std::optional<std::pair<int64_t, int64_t>>> NarrowRows(pq::ParquetFile& pf, const Unit& u);
  Status SpillRuns(pq::ParquetFile& pf, const TaskState& t, const std::vector<int>& rgs, const Cluster& of,
                   int64_t run_budget, int64_t batch_bytes, bool in_order, std::vector<std::string>* runs);
  void DropAtBoundary(Cluster* c);
  void CountDuplicates(const DuplicateStats& d) { dups += d; }
  Status DecodeBatch(const std::shared_ptr<arrow::RecordBatch>& batch, const TaskState& t, int64_t first_pos,
                     Cluster* c);
};

RecordReader::RecordReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RecordReader::~RecordReader() {
  // Workers reference the Impl: let them finish before it is destroyed; and
  // no fetch or open started ahead outlives the reader.
  for (auto& f : impl_->inflight) f.wait();
  for (auto& [task, f] : impl_->opening) f.wait();
  for (auto& c : impl_->planned) {
    if (!c->prefetched) continue;
    for (auto& f : c->files) {
      if (f) f->WaitForPrefetch();
    }
  }
}
const Layout& RecordReader::layout() const { return impl_->layout; }
const iceberg::Snapshot* RecordReader::snapshot() const { return impl_->snapshot; }
const iceberg::ScanStats& RecordReader::scan_stats() const { return impl_->stats; }
int64_t RecordReader::planned_files() const { return static_cast<int64_t>(impl_->tasks.size()); }
std::vector<int32_t> RecordReader::partitions() const { return impl_->partitions; }
DuplicateStats RecordReader::duplicate_stats() const { return impl_->dups; }
RecordReader::MergeStats RecordReader::merge_stats() const {
  std::lock_guard<std::mutex> lock(impl_->merge_mu);
  return impl_->merge_stats;
}
iceberg::DeletionVectorCache::Stats RecordReader::deletion_vector_stats() const { return impl_->dv_cache->stats(); }
RecordReader::PrefetchStats RecordReader::prefetch_stats() const { return impl_->prefetch; }
RecordReader::DecodeStats RecordReader::decode_stats() const {
  std::lock_guard<std::mutex> lock(impl_->merge_mu);
  return impl_->decode_stats;
}
const std::shared_ptr<const ReadPlan>& RecordReader::plan() const { return impl_->plan; }
int64_t RecordReader::planned_records() const { return impl_->plan->planned_records(); }
int64_t RecordReader::planned_file_bytes() const { return impl_->plan->planned_file_bytes(); }
std::optional<std::pair<int64_t, int64_t>> RecordReader::planned_timestamp_range_ms() const {
  return impl_->plan->planned_timestamp_range_ms();
}

Result<std::unique_ptr<RecordReader>> RecordReader::Make(std::shared_ptr<const iceberg::Table> table,
                                                         ReadOptions options) {
  ASSIGN_OR_RAISE(auto plan, ReadPlan::Make(std::move(table), options));
  return Make(std::move(plan), std::move(options));
}

Result<std::unique_ptr<RecordReader>> RecordReader::Make(std::shared_ptr<const ReadPlan> plan, ReadOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->plan = std::move(plan);
  impl->table = impl->plan->table();
  impl->layout = impl->plan->layout();
  impl->snapshot = impl->plan->snapshot();
  impl->stats = impl->plan->scan_stats();
  impl->opt = std::move(options);
  impl->dv_cache = std::make_unique<iceberg::DeletionVectorCache>(impl->table->io);
  impl->name_mapping = impl->plan->name_mapping();
  if (impl->opt.source_topic && impl->opt.source_topic != impl->plan->source_topic()) {
    return Status::Invalid("table {}: the read selects source topic '{}' but its plan selects '{}'", impl->table->name,
                           impl->opt.source_topic.value_or(""), impl->plan->source_topic().value_or(""));
  }
  RETURN_NOT_OK(impl->plan->RequireOneTopic());
  if (impl->plan->source_topic() && impl->layout.topic) {
    impl->select_topic = impl->plan->source_topic();
    impl->null_topic = impl->table->metadata.Property("thaw.source.topic");
  }
  Status st = impl->Plan();
  if (!st.ok()) return st.WithContext(fmt::format("table {}", impl->table->name));
  return std::unique_ptr<RecordReader>(new RecordReader(std::move(impl)));
}

// The reader's share of the plan: its files (with the state their delete
// files load into), its partitions, and the groups of partitions read
// together.
Status RecordReader::Impl::Plan() {
  for (const auto& f : plan->files()) {
    TaskState t;
    t.task = f.task;
    t.off_lo = f.off_lo;
    t.off_hi = f.off_hi;
    t.part_lo = f.part_lo;
    t.part_hi = f.part_hi;
    t.rank = f.rank;
    tasks.push_back(std::move(t));
  }
  for (int32_t p : plan->partitions()) {
    if (!opt.partitions || opt.partitions->count(p)) partitions.push_back(p);
  }
  // Partition groups: partitions whose files' partition ranges overlap are
  // read together (each row group then decodes once, whatever partitions it
  // holds), unless the caller asked for all of one partition before the next.
  if (opt.order == ReadOrder::kPartitionMajor || !layout.partition) {
    for (int32_t p : partitions) groups.push_back({p});
  } else {
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const auto& t : tasks) spans.emplace_back(t.part_lo, t.part_hi);
    std::sort(spans.begin(), spans.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& sp : spans) {
      if (!merged.empty() && sp.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, sp.second);
      } else {
        merged.push_back(sp);
      }
    }
    size_t m = 0;
    for (int32_t p : partitions) {
      while (m < merged.size() && merged[m].second < p) ++m;
      if (m < merged.size() && merged[m].first <= p) {
        if (groups.empty() || groups.back().back() < merged[m].first) groups.emplace_back();
        groups.back().push_back(p);
      }
    }
  }
  max_inflight = layout.offset ? std::max<size_t>(1, opt.read_ahead) : 1;
  return Status::OK();
}

Result<std::shared_ptr<std::map<std::string, std::vector<int64_t>>>> RecordReader::Impl::LoadPositionDeletes(
    const DataFile& f) {
  if (auto it = pos_cache.find(f.path); it != pos_cache.end()) return it->second;
  auto out = std::make_shared<std::map<std::string, std::vector<int64_t>>>();
  ASSIGN_OR_RAISE(auto pf, pq::ParquetFile::Open(*table->io, f.path));
  int path_col = pf->TopLevelField(kDeleteFilePathId, "file_path");
  int pos_col = pf->TopLevelField(kDeletePosId, "pos");
  if (path_col < 0 || pos_col < 0) {
    return Status::Corrupt("position delete file {} lacks file_path/pos columns", f.path);
  }
  std::vector<int> rgs(pf->num_row_groups());
  for (int i = 0; i < pf->num_row_groups(); ++i) rgs[i] = i;
  ASSIGN_OR_RAISE(auto reader, pf->Read(rgs, {path_col, pos_col}, 65536));
  ColumnPath path_p{{kDeleteFilePathId}, {"file_path"}, nullptr}, pos_p{{kDeletePosId}, {"pos"}, nullptr};
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), "position delete file " + f.path));
    if (!b) break;
    auto pa = Resolve(*b, path_p), po = Resolve(*b, pos_p);
    if (!pa || !po) return Status::Corrupt("position delete file {} lacks file_path/pos columns", f.path);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      auto p = GetBytes(*pa->array, i);
      auto pos = GetInt(*po->array, i);
      if (p && pos) (*out)[std::string(*p)].push_back(*pos);
    }
  }
  for (auto& [k, v] : *out) std::sort(v.begin(), v.end());
  pos_cache[f.path] = out;
  return out;
}

Result<std::shared_ptr<EqualityDeletes>> RecordReader::Impl::LoadEqualityDeletes(const DataFile& f) {
  if (auto it = eq_cache.find(f.path); it != eq_cache.end()) return it->second;
  auto eq = std::make_shared<EqualityDeletes>();
  eq->ids = f.equality_ids;
  if (eq->ids.empty()) return Status::Corrupt("equality delete file {} has no equality_ids", f.path);
  ASSIGN_OR_RAISE(auto pf, pq::ParquetFile::Open(*table->io, f.path));
  std::vector<int> cols;
  std::vector<ColumnPath> paths;
  for (int32_t id : eq->ids) {
    std::string name = NameOf(id);
    eq->names.push_back(name);
    int c = pf->TopLevelField(id, name);
    if (c < 0) {
      return Status::Unsupported("equality delete file {}: column id {} is not a top-level column of the file", f.path,
                                 id);
    }
    cols.push_back(c);
    paths.push_back(ColumnPath{{id}, {name}, nullptr});
  }
  std::vector<int> rgs(pf->num_row_groups());
  for (int i = 0; i < pf->num_row_groups(); ++i) rgs[i] = i;
  ASSIGN_OR_RAISE(auto reader, pf->Read(rgs, cols, 65536));
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), "equality delete file " + f.path));
    if (!b) break;
    std::vector<Accessor> accs;
    for (const auto& p : paths) {
      auto a = Resolve(*b, p);
      if (!a) return Status::Corrupt("equality delete file {}: column {} missing", f.path, p.names[0]);
      accs.push_back(*a);
    }
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      std::string key;
      for (const auto& a : accs) key += EncodeCell(*a.array, i) + '\x1f';
      eq->keys.insert(std::move(key));
    }
  }
  eq_cache[f.path] = eq;
  return eq;
}

Status RecordReader::Impl::LoadDeletes(TaskState& t) {
  if (t.deletes_loaded) return Status::OK();
  for (const auto& d : t.task.deletes) {
    if (d->is_deletion_vector()) {
      if (!d->content_offset || !d->content_size) {
        return Status::Corrupt("deletion vector for {} in {} lacks content_offset/content_size_in_bytes",
                               t.task.file->path, d->path);
      }
      ASSIGN_OR_RAISE(t.dv,
                      dv_cache->Get(d->path, *d->content_offset, *d->content_size, t.task.file->path, d->record_count));
    } else if (d->content == FileContent::kPositionDeletes) {
      ASSIGN_OR_RAISE(auto m, LoadPositionDeletes(*d));
      if (auto it = m->find(t.task.file->path); it != m->end()) {
        t.deleted_positions.insert(t.deleted_positions.end(), it->second.begin(), it->second.end());
      }
    } else if (d->content == FileContent::kEqualityDeletes) {
      ASSIGN_OR_RAISE(auto eq, LoadEqualityDeletes(*d));
      t.eq.push_back(eq);
    }
  }
  std::sort(t.deleted_positions.begin(), t.deleted_positions.end());
  t.deletes_loaded = true;
  return Status::OK();
}

Status RecordReader::Impl::DecodeBatch(const std::shared_ptr<arrow::RecordBatch>& batch, const TaskState& t,
                                       int64_t first_pos, Cluster* c) {
  const int64_t base = c->partition;
  const int64_t accepted = static_cast<int64_t>(c->accept.size());
  auto& buf = c->records;
  auto& buf_headers = c->headers;
  const std::string& path = t.task.file->path;
  auto resolve = [&](const std::optional<ColumnPath>& c) -> std::optional<Accessor> {
    if (!c) return std::nullopt;
    return Resolve(*batch, *c);
  };
  static const std::optional<ColumnPath> kNone;
  const bool all = !opt.metadata_only;
  auto part = resolve(layout.partition), off = resolve(layout.offset), ts = resolve(layout.timestamp),
       tst = resolve(layout.timestamp_type), key = resolve(all ? layout.key : kNone),
       val = resolve(all ? layout.value : kNone), hdr = resolve(all ? layout.headers : kNone);
  if (layout.offset && !off) {
    return Status::Corrupt("data file {} has no column '{}' (the layout's offset column)", path,
                           layout.offset->dotted());
  }
  JsonRowBuilder json_value;
  // thaw-row tables of Avro values: the value struct re-encoded as its datum.
  std::optional<Accessor> avro_value, avro_schema_ids;
  const bool by_id = layout.value_schema_id.has_value();
  if (all && by_id) avro_schema_ids = resolve(layout.value_schema_id);
  const bool value_encoded = layout.value_avro || layout.value_framed;  // --value-format avro or protobuf
  if (all && value_encoded && layout.value_avro_wrap) {
    // The value columns as one struct (by name; columns a file lacks are left out: null when optional).
    std::vector<std::shared_ptr<arrow::Array>> children;
    std::vector<std::string> names;
    for (const auto& c : layout.value_json) {
      auto a = resolve(c);
      if (!a) continue;
      children.push_back(a->array);
      names.push_back(c.names.back());
    }
    auto st = children.empty() ? arrow::Result<std::shared_ptr<arrow::StructArray>>(arrow::Status::Invalid("none"))
                               : arrow::StructArray::Make(children, names);
    if (!st.ok()) {
      return Status::Corrupt("data file {}: the value columns do not form a struct: {}", path,
                             st.status().ToString());
    }
    avro_value = Accessor{*st, {}};
  } else if (all && (value_encoded || by_id)) {
    avro_value = resolve(layout.value_json.front());
    if (avro_value && avro_value->array->type_id() != arrow::Type::STRUCT) {
      return Status::Corrupt("data file {}: the value column '{}' is not a struct", path,
                             layout.value_json.front().dotted());
    }
  } else if (all) {
    ASSIGN_OR_RAISE(json_value, JsonRowBuilder::Bind(layout, *batch));
  }
  auto topic = resolve(all || select_topic ? layout.topic : kNone);
  if (select_topic && !topic) {
    return Status::Corrupt("data file {} has no column '{}' (the layout's topic column)", path, layout.topic->dotted());
  }
  std::vector<std::vector<Accessor>> eq_accs;
  for (const auto& eq : t.eq) {
    std::vector<Accessor> accs;
    for (size_t k = 0; k < eq->ids.size(); ++k) {
      auto a = Resolve(*batch, ColumnPath{{eq->ids[k]}, {eq->names[k]}, nullptr});
      if (!a) return Status::Internal("equality column {} not projected from {}", eq->names[k], path);
      accs.push_back(*a);
    }
    eq_accs.push_back(std::move(accs));
  }
  std::shared_ptr<std::deque<std::string>> owned;
  auto own = [&](std::string s) -> std::string_view {
    if (!owned) owned = std::make_shared<std::deque<std::string>>();
    owned->push_back(std::move(s));
    return owned->back();
  };
  auto del_it = std::lower_bound(t.deleted_positions.begin(), t.deleted_positions.end(), first_pos);
  const int64_t n = batch->num_rows();
  size_t kept_before = buf.size();
  StructFields value_fields;  // the decoded value column's struct children, across this batch's rows
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = first_pos + i;
    while (del_it != t.deleted_positions.end() && *del_it < pos) ++del_it;
    if (del_it != t.deleted_positions.end() && *del_it == pos) continue;
    if (t.dv && t.dv->Contains(pos)) continue;
    if (select_topic) {
      const auto row_topic = topic->IsNull(i) ? std::string_view(null_topic) : GetBytes(*topic->array, i);
      if (row_topic != *select_topic) continue;
    }
    Record r;
    int64_t slot = 0;  // into c->accept / c->start
    if (part) {
      if (part->IsNull(i)) continue;
      const int64_t pv = GetInt(*part->array, i).value_or(-1);
      slot = pv - base;
      if (slot < 0 || slot >= accepted || !c->accept[slot]) continue;
      r.partition = static_cast<int32_t>(pv);
    } else {
      r.partition = 0;
    }
    if (ts && !ts->IsNull(i)) {
      r.timestamp_ms = GetTimestampMs(*ts->array, i).value_or(-1);
    } else {
      r.timestamp_ms = -1;
    }
    if (opt.from_time_ms && r.timestamp_ms < *opt.from_time_ms) continue;
    if (opt.to_time_ms && r.timestamp_ms >= *opt.to_time_ms) continue;
    bool deleted = false;
    for (const auto& accs : eq_accs) {
      std::string k;
      for (const auto& a : accs) k += EncodeCell(*a.array, i) + '\x1f';
      if (t.eq[&accs - eq_accs.data()]->keys.count(k)) {
        deleted = true;
        break;
      }
    }
    if (deleted) continue;
    if (off) {
      if (off->IsNull(i)) return Status::Corrupt("data file {}: row {} has a null offset", path, pos);
      r.offset = *GetInt(*off->array, i);
      if (opt.from_offset && r.offset < *opt.from_offset) continue;
      if (r.offset < c->start[slot]) continue;
      if (opt.to_offset && r.offset >= *opt.to_offset) continue;
    } else {
      r.offset = plain_counter++;
      if (opt.from_offset && r.offset < *opt.from_offset) continue;
      if (opt.to_offset && r.offset >= *opt.to_offset) continue;
    }
    if (tst && !tst->IsNull(i)) {
      r.timestamp_type =
          GetInt(*tst->array, i).value_or(0) == 1 ? TimestampType::kLogAppendTime : TimestampType::kCreateTime;
    }
    if (key && !key->IsNull(i)) r.key = GetBytes(*key->array, i);
    if (val && !val->IsNull(i)) r.value = GetBytes(*val->array, i);
    if (!r.value && avro_value && !avro_value->IsNull(i)) {
      std::string datum;
      const auto& values = static_cast<const arrow::StructArray&>(*avro_value->array);
      Status st;
      if (by_id) {
        if (!avro_schema_ids || avro_schema_ids->IsNull(i)) {
          return Status::Corrupt("data file {}: row {} has a decoded value but no value_schema_id", path, pos);
        }
        const auto schema_id = static_cast<int32_t>(*GetInt(*avro_schema_ids->array, i));
        auto it = layout.value_by_id.find(schema_id);
        if (it == layout.value_by_id.end()) {
          if (auto bad = layout.value_unresolved.find(schema_id); bad != layout.value_unresolved.end()) {
            return Status::Corrupt("data file {}: row {} has schema id {}, whose writer schema the table holds but "
                                   "which does not read the value columns: {}",
                                   path, pos, schema_id, bad->second);
          }
          return Status::Corrupt("data file {}: row {} has schema id {}, but the table has no property holding "
                                 "its writer schema (thaw.row.avro-schema.{}, thaw.row.proto-schema.{} or "
                                 "thaw.row.json-schema.{})",
                                 path, pos, schema_id, schema_id, schema_id, schema_id);
        }
        st = it->second->EncodeFramed(values, i, schema_id, &datum, &value_fields);
      } else if (layout.value_framed) {
        st = layout.value_framed->EncodeFramed(values, i, layout.value_framed_id.value_or(0), &datum, &value_fields);
      } else {
        st = layout.value_avro->Encode(values, i, layout.value_avro_schema_id, &datum, &value_fields);
      }
      if (!st.ok()) return Status::Corrupt("data file {}: row {}: {}", path, pos, st.message());
      r.value = own(std::move(datum));
    }
    if (!r.value && !json_value.empty()) {
      std::string j;
      if (json_value.Append(i, &j)) {
        if (layout.value_json_frame_id) j = registry::Frame(*layout.value_json_frame_id, {}, /*protobuf=*/false, j);
        r.value = own(std::move(j));
      }
    }
    if (topic && !topic->IsNull(i)) r.topic = GetBytes(*topic->array, i);
    r.header_begin = static_cast<uint32_t>(buf_headers.size());
    if (hdr && !hdr->IsNull(i)) {
      const arrow::Array& ha = *hdr->array;
      if (ha.type_id() == arrow::Type::MAP) {
        const auto& m = static_cast<const arrow::MapArray&>(ha);
        for (int64_t j = m.value_offset(i); j < m.value_offset(i + 1); ++j) {
          Header h;
          h.key = GetBytes(*m.keys(), j).value_or(std::string_view());
          h.value = GetBytes(*m.items(), j);
          buf_headers.push_back(h);
        }
      } else if (ha.type_id() == arrow::Type::LIST || ha.type_id() == arrow::Type::LARGE_LIST) {
        std::shared_ptr<arrow::Array> values;
        int64_t b, e;
        if (ha.type_id() == arrow::Type::LIST) {
          const auto& l = static_cast<const arrow::ListArray&>(ha);
          values = l.values();
          b = l.value_offset(i);
          e = l.value_offset(i + 1);
        } else {
          const auto& l = static_cast<const arrow::LargeListArray&>(ha);
          values = l.values();
          b = l.value_offset(i);
          e = l.value_offset(i + 1);
        }
        if (values->type_id() != arrow::Type::STRUCT) {
          return Status::Corrupt("data file {}: headers column is not a list of structs", path);
        }
        const auto& st = static_cast<const arrow::StructArray&>(*values);
        auto hk = st.GetFieldByName("key"), hv = st.GetFieldByName("value");
        if (!hk) hk = st.GetFieldByName("key_v1");
        for (int64_t j = b; j < e; ++j) {
          Header h;
          if (hk) h.key = GetBytes(*hk, j).value_or(std::string_view());
          if (hv) h.value = GetBytes(*hv, j);
          buf_headers.push_back(h);
        }
      }
    }
    r.header_count = static_cast<uint32_t>(buf_headers.size() - r.header_begin);
    r.source_batch = batch.get();
    r.source_row = i;
    buf.push_back(r);
  }
  if (buf.size() > kept_before) {
    c->keepalive.push_back(batch);
    if (owned) c->keepalive.push_back(owned);
  }
  return Status::OK();
}

std::vector<int> RecordReader::Impl::ProjectedColumns(const pq::ParquetFile& pf, const TaskState& t) const {
  std::vector<int32_t> ids;
  if (opt.metadata_only) {
    for (const auto* c : {&layout.partition, &layout.offset, &layout.timestamp, &layout.timestamp_type}) {
      if (*c) ids.push_back((*c)->top_level_id());
    }
    if (select_topic) ids.push_back(layout.topic->top_level_id());
  } else {
    ids = layout.TopLevelIds();
  }
  for (const auto& eq : t.eq) ids.insert(ids.end(), eq->ids.begin(), eq->ids.end());
  ids.insert(ids.end(), opt.extra_columns.begin(), opt.extra_columns.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<int> cols;
  for (int32_t id : ids) {
    int col = pf.TopLevelField(id, NameOf(id));
    if (col >= 0) cols.push_back(col);
  }
  return cols;
}

void RecordReader::Impl::SizeUnit(const pq::ParquetFile& pf, const TaskState& t, Unit* u) {
  const std::vector<int> cols = ProjectedColumns(pf, t);
  u->arrow_estimate = pf.row_group_decoded_bytes(u->rg, cols);
  double ratio;
  {
    std::lock_guard<std::mutex> lock(merge_mu);
    ratio = decoded_ratio;
  }
  int64_t arrow = static_cast<int64_t>(static_cast<double>(u->arrow_estimate) * ratio);
  // Values re-encoded from columns (JSON text, Avro datums) are held beside
  // the decoded columns until the cluster is emitted.
  if (!layout.value_json.empty() && !opt.metadata_only) arrow *= 2;
  u->bytes = arrow + u->rows * static_cast<int64_t>(sizeof(Record));
  u->dictionary = opt.metadata_only ? 0 : pf.row_group_dictionary_bytes(u->rg, cols);
}

void RecordReader::Impl::LearnDecoded(int64_t estimate, int64_t actual) {
  // Small row groups are mostly buffer padding: they teach nothing.
  if (estimate <= 0 || actual <= estimate || actual < (int64_t{1} << 20)) return;
  const double r = std::min(64.0, static_cast<double>(actual) / static_cast<double>(estimate));
  std::lock_guard<std::mutex> lock(merge_mu);
  decoded_ratio = std::max(decoded_ratio, r);
}

// Decodes one cluster (runs on a worker thread: touches only the cluster,
// read-only reader state, and plain_counter when clusters run one at a time).
Status RecordReader::Impl::LoadCluster(Cluster* c) {
  // Records [unit_end[u-1], unit_end[u]) come from unit u.
  std::vector<size_t> unit_end;
  // Room for every row at once: growing by doubling would copy the records
  // and touch about twice their memory (a cold read's page faults). Rows
  // filtered out leave their room untouched.
  size_t rows = 0;
  for (size_t u = 0; u < c->units.size(); ++u) {
    rows += static_cast<size_t>(std::max<int64_t>(0, c->files[u]->row_group_num_rows(c->units[u].rg)));
  }
  c->records.reserve(c->records.size() + rows);
  for (size_t u = 0; u < c->units.size(); ++u) {
    const TaskState& t = tasks[c->units[u].task];
    pq::ParquetFile* pf = c->files[u].get();
    const int64_t rg_rows = std::max<int64_t>(1, pf->row_group_num_rows(c->units[u].rg));
    const int64_t per_row = std::max<int64_t>(1, c->units[u].arrow_estimate / rg_rows);
    const int64_t batch_rows = std::clamp<int64_t>(kParquetBatchBytes / per_row, 1024, kParquetBatchRows);
    int64_t pos = pf->row_group_first_row(c->units[u].rg);
    std::unique_ptr<arrow::RecordBatchReader> reader;
    std::optional<std::pair<int64_t, int64_t>> rows;
    if (!c->prefetched || opt.require_narrow) {
      ASSIGN_OR_RAISE(rows, NarrowRows(*pf, c->units[u]));
    }
    if (rows) {
      auto part = pf->ReadRows(c->units[u].rg, ProjectedColumns(*pf, t), rows->first, rows->second);
      if (part.ok()) {
        reader = std::move(*part);
        pos += rows->first;
        std::lock_guard<std::mutex> lock(merge_mu);
        ++decode_stats.narrowed;
      } else if (part.status().code() != StatusCode::kUnsupported || opt.require_narrow) {
        return part.status();
      }
    }
    if (!reader) {
      ASSIGN_OR_RAISE(reader, pf->Read({c->units[u].rg}, ProjectedColumns(*pf, t), batch_rows));
    }
    const int64_t first = pos;
    int64_t bytes = 0;
    const std::string ctx = "Parquet file " + pf->location();
    while (true) {
      std::shared_ptr<arrow::RecordBatch> b;
      RETURN_NOT_OK(pq::CatchParquet(ctx, [&]() { return pq::FromArrow(reader->ReadNext(&b), ctx); }));
      if (!b) break;
      bytes += arrow::util::TotalBufferSize(*b);
      RETURN_NOT_OK(DecodeBatch(b, t, pos, c));
      pos += b->num_rows();
    }
    CountDecoded(1, pos - first, bytes);
    LearnDecoded(c->units[u].arrow_estimate, bytes);
    c->files[u].reset();  // close the file as soon as it is read
    unit_end.push_back(c->records.size());
  }
  if (!layout.offset) return Status::OK();
  auto& recs = c->records;
  if (c->units.size() > 1) {
    // Several row groups: order by offset, and among equal offsets put the
    // row to keep first (highest rank; within a file, file order).
    bool one_task = true;
    for (const auto& u : c->units) one_task &= u.task == c->units[0].task;
    if (one_task) {
      std::stable_sort(recs.begin(), recs.end(), ByOffset);
    } else if (!std::is_sorted(recs.begin(), recs.end(), ByOffset) ||
               std::adjacent_find(recs.begin(), recs.end(), SamePosition) != recs.end()) {
      std::vector<int64_t> rank(recs.size());
      for (size_t u = 0, b = 0; u < c->units.size(); b = unit_end[u++]) {
        std::fill(rank.begin() + b, rank.begin() + unit_end[u], tasks[c->units[u].task].rank);
      }
      std::vector<uint32_t> order(recs.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        if (!SamePosition(recs[a], recs[b])) return ByOffset(recs[a], recs[b]);
        return rank[a] > rank[b];
      });
      std::vector<Record> sorted(recs.size());
      for (size_t i = 0; i < order.size(); ++i) sorted[i] = recs[order[i]];
      recs = std::move(sorted);
    }
  } else if (!std::is_sorted(recs.begin(), recs.end(), ByOffset)) {
    // One row group: usually already in offset order.
    std::stable_sort(recs.begin(), recs.end(), ByOffset);
  }
  // Duplicate offsets: keep the first of each (the winner, by the order above).
  size_t w = 0;
  for (size_t r = 0; r < recs.size(); ++r) {
    if (w > 0 && SamePosition(recs[r], recs[w - 1])) {
      ++c->dups.duplicates;
      const Record& kept = recs[w - 1];
      if (!SameContent(kept, {c->headers.data() + kept.header_begin, kept.header_count}, recs[r],
                       {c->headers.data() + recs[r].header_begin, recs[r].header_count})) {
        ++c->dups.differing;
      }
      continue;
    }
    if (w != r) recs[w] = recs[r];
    ++w;
  }
  recs.resize(w);
  return Status::OK();
}

namespace {

// A data file sorted by offset, streamed a batch at a time into the merge.
class FileInput : public MergeInput {
 public:
  using Decode = std::function<Status(const std::shared_ptr<arrow::RecordBatch>&, int64_t, Cluster*)>;
  FileInput(pq::ParquetFile* pf, std::vector<int> rgs, std::vector<int> cols, int64_t batch_rows, const Cluster& of,
            Decode decode)
      : pf_(pf), rgs_(std::move(rgs)), cols_(std::move(cols)), batch_rows_(batch_rows), decode_(std::move(decode)) {
    scratch_.partition = of.partition;
    scratch_.accept = of.accept;
    scratch_.start = of.start;
  }
  Result<bool> Next(RecordChunk* out) override {
    const std::string ctx = "Parquet file " + pf_->location();
    return pq::CatchParquet(ctx, [&]() -> Result<bool> {
      while (true) {
        if (!reader_) {
          if (next_rg_ >= rgs_.size()) return false;
          const int rg = rgs_[next_rg_++];
          // One row group at a time: the reader then holds one batch, not the file.
          ASSIGN_OR_RAISE(reader_, pf_->Read({rg}, cols_, batch_rows_));
          pos_ = pf_->row_group_first_row(rg);
        }
        std::shared_ptr<arrow::RecordBatch> b;
        RETURN_NOT_OK(pq::FromArrow(reader_->ReadNext(&b), ctx));
        if (!b) {
          reader_.reset();
          continue;
        }
        scratch_.records.clear();
        scratch_.headers.clear();
        scratch_.keepalive.clear();
        RETURN_NOT_OK(decode_(b, pos_, &scratch_));
        pos_ += b->num_rows();
        out->records.swap(scratch_.records);
        out->headers.swap(scratch_.headers);
        out->keepalive.swap(scratch_.keepalive);
        return true;
      }
    });
  }
  std::string Describe() const override { return "data file " + pf_->location(); }

 private:
  pq::ParquetFile* pf_;
  std::vector<int> rgs_;
  std::vector<int> cols_;
  int64_t batch_rows_;
  Decode decode_;
  size_t next_rg_ = 0;
  std::unique_ptr<arrow::RecordBatchReader> reader_;
  int64_t pos_ = 0;
  Cluster scratch_;
};

// A sorted run spilled to disk, read back a batch at a time.
class RunInput : public MergeInput {
 public:
  using Decode = std::function<Status(const std::shared_ptr<arrow::RecordBatch>&, Cluster*)>;
  RunInput(std::unique_ptr<RunReader> run, std::string source, const Cluster& of, Decode decode)
      : run_(std::move(run)), source_(std::move(source)), decode_(std::move(decode)) {
    scratch_.partition = of.partition;
    scratch_.accept = of.accept;
    scratch_.start = of.start;
  }
  Result<bool> Next(RecordChunk* out) override {
    ASSIGN_OR_RAISE(auto b, run_->Next());
    if (!b) return false;
    scratch_.records.clear();
    scratch_.headers.clear();
    scratch_.keepalive.clear();
    RETURN_NOT_OK(decode_(b, &scratch_));
    out->records.swap(scratch_.records);
    out->headers.swap(scratch_.headers);
    out->keepalive.swap(scratch_.keepalive);
    return true;
  }
  std::string Describe() const override { return "spilled run " + run_->path() + " of data file " + source_; }

 private:
  std::unique_ptr<RunReader> run_;
  std::string source_;
  Decode decode_;
  Cluster scratch_;
};

}  // namespace

// Whether the rows of `partition` in these row groups (in this order) are in
// offset order: read from the offset (and partition) columns alone.
Result<bool> RecordReader::Impl::IsSortedByOffset(pq::ParquetFile& pf, const std::vector<int>& rgs, int32_t partition) {
  std::vector<int> cols;
  int off_col = pf.TopLevelField(layout.offset->top_level_id(), layout.offset->names[0]);
  if (off_col < 0) return true;  // DecodeBatch reports the missing column
  cols.push_back(off_col);
  if (layout.partition) {
    int part_col = pf.TopLevelField(layout.partition->top_level_id(), layout.partition->names[0]);
    if (part_col >= 0 && part_col != off_col) cols.push_back(part_col);
  }
  std::sort(cols.begin(), cols.end());
  std::optional<int64_t> last;
  const std::string ctx = "Parquet file " + pf.location();
  for (int rg : rgs) {
    ASSIGN_OR_RAISE(auto reader, pf.Read({rg}, cols, kParquetBatchRows));
    while (true) {
      std::shared_ptr<arrow::RecordBatch> b;
      RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), ctx));
      if (!b) break;
      auto off = Resolve(*b, *layout.offset);
      if (!off) return true;
      std::optional<Accessor> part;
      if (layout.partition) part = Resolve(*b, *layout.partition);
      for (int64_t i = 0; i < b->num_rows(); ++i) {
        if (part && (part->IsNull(i) || GetInt(*part->array, i).value_or(-1) != partition)) continue;
        if (off->IsNull(i)) continue;
        int64_t o = *GetInt(*off->array, i);
        if (last && o < *last) return false;
        last = o;
      }
    }
  }
  return true;
}

// The rows of a row group that can hold the offset range, when it is worth
// reading it in part (record_reader.h, above ReadOptions::require_narrow).
Result<std::optional<std::pair<int64_t, int64_t>>> RecordReader::Impl::NarrowRows(pq::ParquetFile& pf, const Unit& u) {
  using Out = std::optional<std::pair<int64_t, int64_t>>;
  const bool cut_front = opt.from_offset && u.lo < *opt.from_offset;
  const bool cut_back = opt.to_offset && u.hi >= *opt.to_offset;
  if (!layout.offset || (!cut_front && !cut_back)) return Out();
  const int64_t rows = pf.row_group_num_rows(u.rg);
  if (!opt.require_narrow) {
    if (rows < ReadOptions::kNarrowMinRows) return Out();
    // Worth a second read of the offset column only when the range cuts
    // off a good part (an eighth) of the row group's offsets, by its
    // statistics (none: unknown, try).
    if (u.lo != kMin && u.hi != kMax && u.hi > u.lo) {
      const double span = static_cast<double>(u.hi) - static_cast<double>(u.lo) + 1;
      double cut = 0;
      if (cut_front) cut += static_cast<double>(*opt.from_offset) - static_cast<double>(u.lo);
      if (cut_back) cut += static_cast<double>(u.hi) - static_cast<double>(*opt.to_offset) + 1;
      if (cut < span / 8) return Out();
    }
  }
  auto refuse = [&](std::string_view why) -> Result<Out> {
    if (!opt.require_narrow) return Out();
    return Status::Unsupported("Parquet file {} row group {}: not read in part ({})", pf.location(), u.rg, why);
  };
  if (pf.remote()) return refuse("on an object store");
  const int off_col = pf.TopLevelField(layout.offset->top_level_id(), layout.offset->names[0]);
  if (off_col < 0) return refuse("no offset column");
  const std::string ctx = "Parquet file " + pf.location();
  ASSIGN_OR_RAISE(auto reader, pf.Read({u.rg}, {off_col}, std::max<int64_t>(rows, 1)));
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(rows));
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), ctx));
    if (!b) break;
    auto off = Resolve(*b, *layout.offset);
    if (!off) return refuse("no offset column");
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      std::optional<int64_t> o = off->IsNull(i) ? std::nullopt : GetInt(*off->array, i);
      if (!o) return refuse("a null offset");
      if (!offsets.empty() && *o < offsets.back()) return refuse("offsets not in ascending row order");
      offsets.push_back(*o);
    }
  }
  if (static_cast<int64_t>(offsets.size()) != rows) return refuse("offset column shorter than the row group");
  const int64_t from = cut_front ? std::lower_bound(offsets.begin(), offsets.end(), *opt.from_offset) - offsets.begin() : 0;
  const int64_t to = cut_back ? std::lower_bound(offsets.begin(), offsets.end(), *opt.to_offset) - offsets.begin() : rows;
  if (from == 0 && to == rows) return Out();
  return Out(std::make_pair(from, std::max(from, to)));
}

// External sort of one data file: decoded rows (deletes and ranges applied)
// are gathered until `run_budget` bytes, put in offset order and written as
// a run; the runs are then merged with the other inputs. A file in offset
// order already (spilled only for its dictionaries) is written as one run,
// each batch as it is decoded.
Status RecordReader::Impl::SpillRuns(pq::ParquetFile& pf, const TaskState& t, const std::vector<int>& rgs,
                                     const Cluster& of, int64_t run_budget, int64_t batch_bytes, bool in_order,
                                     std::vector<std::string>* runs) {
  const std::string ctx = "Parquet file " + pf.location();
  const std::vector<int> cols = ProjectedColumns(pf, t);
  Cluster scratch;
  scratch.partition = of.partition;
  scratch.accept = of.accept;
  scratch.start = of.start;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::vector<std::pair<uint32_t, int64_t>> rows;  // (batch, row) of kept records
  std::vector<int64_t> offsets;
  int64_t bytes = 0;
  auto new_run = [&]() -> Result<std::string> {
    std::lock_guard<std::mutex> lock(merge_mu);
    if (!spill) {
      auto dir = SpillDir::Make(opt.spill_dir);
      if (!dir.ok()) return dir.status().WithContext(fmt::format("sorting {} by offset", pf.location()));
      spill = std::move(*dir);
    }
    return spill->NewFileName();
  };
  auto run_written = [&](const std::string& path, const Result<int64_t>& written) -> Status {
    if (!written.ok()) {
      return written.status().WithContext(
          fmt::format("sorting {} by offset (spill directory full? free space or "
                      "give another --spill-dir)",
                      pf.location()));
    }
    std::lock_guard<std::mutex> lock(merge_mu);
    ++merge_stats.spilled_runs;
    merge_stats.spilled_bytes += *written;
    runs->push_back(path);
    return Status::OK();
  };
  std::unique_ptr<RunWriter> writer;  // in_order: the one run
  std::string writer_path;
  auto write_in_order = [&](const std::shared_ptr<arrow::RecordBatch>& b) -> Status {
    std::shared_ptr<arrow::RecordBatch> kept = b;
    if (static_cast<int64_t>(scratch.records.size()) != b->num_rows()) {
      std::vector<std::pair<uint32_t, int64_t>> rows_kept;
      rows_kept.reserve(scratch.records.size());
      for (const auto& r : scratch.records) rows_kept.emplace_back(0, r.source_row);
      ASSIGN_OR_RAISE(auto table, GatherRows({b}, rows_kept));
      ARROW_ASSIGN_OR_RAISE_CTX(kept, table->CombineChunksToBatch(), ctx);
    }
    if (!writer) {
      ASSIGN_OR_RAISE(writer_path, new_run());
      auto w = RunWriter::Open(writer_path, kept->schema());
      if (!w.ok()) return run_written(writer_path, w.status());
      writer = std::move(*w);
    }
    Status st = writer->Write(*kept);
    return st.ok() ? st : run_written(writer_path, st);
  };
  auto flush = [&]() -> Status {
    if (rows.empty()) {
      batches.clear();
      bytes = 0;
      return Status::OK();
    }
    std::vector<uint32_t> order(rows.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return offsets[a] < offsets[b]; });
    std::vector<std::pair<uint32_t, int64_t>> sorted(rows.size());
    for (size_t i = 0; i < order.size(); ++i) sorted[i] = rows[order[i]];
    ASSIGN_OR_RAISE(auto table, GatherRows(batches, sorted));
    batches.clear();
    const int64_t n = static_cast<int64_t>(rows.size());
    const int64_t per_row = std::max<int64_t>(1, bytes / n);
    rows.clear();
    offsets.clear();
    bytes = 0;
    ASSIGN_OR_RAISE(std::string path, new_run());
    return run_written(path,
                       WriteRun(path, *table, std::clamp<int64_t>(batch_bytes / per_row, 16, kParquetBatchRows)));
  };
  for (int rg : rgs) {
    const int64_t rg_rows = std::max<int64_t>(1, pf.row_group_num_rows(rg));
    Unit sized{0, rg, kMin, kMax, 0, rg_rows};
    SizeUnit(pf, t, &sized);
    const int64_t per_row = std::max<int64_t>(1, sized.bytes / rg_rows);
    const int64_t batch_rows = std::clamp<int64_t>(batch_bytes / per_row, 16, kParquetBatchRows);
    // Decoding it holds its dictionaries and up to a run beside the run
    // being gathered (in order: a batch).
    DecodeGate::Hold hold = Gate(sized.dictionary + (in_order ? 2 * batch_bytes : 2 * run_budget));
    ASSIGN_OR_RAISE(auto reader, pf.Read({rg}, cols, batch_rows));
    int64_t pos = pf.row_group_first_row(rg);
    while (true) {
      std::shared_ptr<arrow::RecordBatch> b;
      RETURN_NOT_OK(pq::FromArrow(reader->ReadNext(&b), ctx));
      if (!b) break;
      CountDecoded(0, b->num_rows(), arrow::util::TotalBufferSize(*b));
      scratch.records.clear();
      scratch.headers.clear();
      scratch.keepalive.clear();
      RETURN_NOT_OK(DecodeBatch(b, t, pos, &scratch));
      pos += b->num_rows();
      if (scratch.records.empty()) continue;
      if (in_order) {
        RETURN_NOT_OK(write_in_order(b));
        continue;
      }
      const auto bi = static_cast<uint32_t>(batches.size());
      batches.push_back(b);
      for (const auto& r : scratch.records) {
        rows.emplace_back(bi, r.source_row);
        offsets.push_back(r.offset);
      }
      bytes += arrow::util::TotalBufferSize(*b);
      if (bytes >= run_budget) RETURN_NOT_OK(flush());
    }
    reader.reset();
    Ungate(hold);
  }
  if (writer) {
    auto written = writer->Close();
    writer.reset();
    return run_written(writer_path, written);
  }
  return flush();
}

// Sets up the k-way merge of a cluster too big to decode at once (runs on a
// worker thread): files sorted by offset become streams, the others are
// sorted into spilled runs first.
Status RecordReader::Impl::PrepareMerge(Cluster* c) {
  const int64_t budget = std::max<int64_t>(opt.memory_budget / 2, 1 << 20);
  struct FileUnits {
    size_t file;  // index into c->files
    size_t task;
    std::vector<int> rgs;  // ascending offset lower bound
    int64_t bytes = 0, rows = 0;
    int64_t dictionary = 0;  // the most a reader of its row groups holds for dictionary pages
    bool sorted = false;     // streamed into the merge
    bool in_order = false;   // in offset order (streamed, or spilled as one run for its dictionaries)
  };
  std::vector<FileUnits> files;
  for (size_t u = 0; u < c->units.size(); ++u) {
    size_t f = c->unit_file[u];
    auto it = std::find_if(files.begin(), files.end(), [&](const FileUnits& x) { return x.file == f; });
    if (it == files.end()) {
      files.push_back(FileUnits{f, c->units[u].task, {}, 0, 0, false});
      it = files.end() - 1;
    }
    it->rgs.push_back(c->units[u].rg);
    it->bytes += c->units[u].bytes;
    it->rows += c->units[u].rows;
    it->dictionary = std::max(it->dictionary, c->units[u].dictionary);
  }
  int64_t inputs = 0;
  for (auto& f : files) {
    ASSIGN_OR_RAISE(f.in_order, IsSortedByOffset(*c->files[f.file], f.rgs, c->partition));
    f.sorted = f.in_order;
  }
  // Sorted files stream into the merge all open at once, each reader holding
  // its dictionary pages (a fixed cost per input: files of distinct values
  // written with dictionaries that overflowed hold megabytes each). When
  // those would take more than the merge's budget (and more than
  // ReadOptions::dictionary_allowance: spilling a file costs far more than a
  // few small dictionaries), the files with the largest are spilled instead,
  // one file open at a time, each as one run written as it is decoded (it is
  // in order already); what they leave of it is what the inputs' batches
  // get.
  int64_t dictionaries = 0;
  {
    for (const auto& f : files) dictionaries += f.sorted ? f.dictionary : 0;
    std::vector<FileUnits*> by_size;
    for (auto& f : files) {
      if (f.sorted && f.dictionary > 0) by_size.push_back(&f);
    }
    std::sort(by_size.begin(), by_size.end(), [](auto* a, auto* b) { return a->dictionary > b->dictionary; });
    for (auto* f : by_size) {
      if (dictionaries <= std::max(budget, opt.dictionary_allowance)) break;
      f->sorted = false;
      dictionaries -= f->dictionary;
    }
  }
  // Runs of a quarter of the budget, but no smaller than the square root of
  // (bytes to sort x the smallest merge batch): with a small budget (serve
  // splits its budget among readers) and a big partition, runs of budget/4
  // would number thousands, and the merge holds a batch of each.
  int64_t to_sort = 0;
  for (const auto& f : files) to_sort += f.in_order ? 0 : f.bytes;
  const int64_t run_budget = std::max<int64_t>(
      {budget / 4, 256 << 10, static_cast<int64_t>(std::sqrt(static_cast<double>(to_sort) * kMinMergeBatchBytes))});
  for (auto& f : files) {
    inputs += f.in_order ? 1 : (f.bytes + run_budget - 1) / run_budget;
    CountDecoded(static_cast<int64_t>(f.rgs.size()), 0, 0);  // each decoded once below, streamed or spilled
  }
  // Each input holds about one batch of this size while merging.
  const int64_t batch_bytes = std::clamp<int64_t>(
      std::max<int64_t>(budget - dictionaries, 0) / (2 * std::max<int64_t>(inputs, 1)), kMinMergeBatchBytes, 16 << 20);
  std::vector<KWayMerger::Input> merge_inputs;
  std::vector<std::pair<size_t, std::vector<std::string>>> spilled;  // task, its runs
  size_t total_runs = 0;
  for (auto& f : files) {
    const TaskState& t = tasks[f.task];
    pq::ParquetFile* pf = c->files[f.file].get();
    if (f.sorted) {
      const int64_t per_row = std::max<int64_t>(1, f.bytes / std::max<int64_t>(1, f.rows));
      auto decode = [this, &t](const std::shared_ptr<arrow::RecordBatch>& b, int64_t pos, Cluster* out) {
        CountDecoded(0, b->num_rows(), arrow::util::TotalBufferSize(*b));
        return DecodeBatch(b, t, pos, out);
      };
      merge_inputs.push_back(
          {std::make_unique<FileInput>(pf, f.rgs, ProjectedColumns(*pf, t),
                                       std::clamp<int64_t>(batch_bytes / per_row, 16, kParquetBatchRows), *c, decode),
           t.rank});
      continue;
    }
    spilled.push_back({f.task, {}});
    RETURN_NOT_OK(SpillRuns(*pf, t, f.rgs, *c, run_budget, batch_bytes, f.in_order, &spilled.back().second));
    total_runs += spilled.back().second.size();
  }
  // Past a few hundred runs (a partition far bigger than the budget), runs
  // are opened per batch rather than each holding a file descriptor.
  const bool keep_open = total_runs <= kMaxOpenRuns;
  for (const auto& [task, runs] : spilled) {
    const TaskState& t = tasks[task];
    // Runs hold rows already filtered by deletes: decode them with none.
    auto bare = std::make_shared<TaskState>();
    bare->task.file = t.task.file;
    for (const auto& path : runs) {
      ASSIGN_OR_RAISE(auto run, RunReader::Open(path, keep_open));
      auto decode = [this, bare](const std::shared_ptr<arrow::RecordBatch>& b, Cluster* out) {
        return DecodeBatch(b, *bare, 0, out);
      };
      merge_inputs.push_back({std::make_unique<RunInput>(std::move(run), t.task.file->path, *c, decode), t.rank});
    }
  }
  ASSIGN_OR_RAISE(c->merger, KWayMerger::Make(std::move(merge_inputs)));
  std::lock_guard<std::mutex> lock(merge_mu);
  ++merge_stats.merged_clusters;
  return Status::OK();
}

void RecordReader::Impl::SetPartitions(Cluster* c, const std::vector<int32_t>& parts) const {
  c->partition = parts.front();
  const size_t n = static_cast<size_t>(parts.back() - parts.front()) + 1;
  c->accept.assign(n, 0);
  c->start.assign(n, kMin);
  for (int32_t p : parts) {
    c->accept[p - c->partition] = 1;
    if (auto it = opt.start_offsets.find(p); it != opt.start_offsets.end()) c->start[p - c->partition] = it->second;
  }
}

// The data files of partition group `gi`, in the order they are opened
// (by first offset): files wholly before the group's first offset wanted (or
// past the end) are left out. Computed once per group (read-ahead looks at
// the next groups' files before their turn).
std::vector<size_t> RecordReader::Impl::TasksOfGroup(size_t gi) {
  if (auto it = group_tasks.find(gi); it != group_tasks.end()) return it->second;
  const auto& g = groups[gi];
  std::vector<size_t> part_tasks;
  // The lowest first offset wanted among the group's partitions: files
  // wholly before it (or past the end) are not opened.
  int64_t first = opt.from_offset.value_or(kMin);
  int64_t lowest_start = kMax;
  for (int32_t p : g) {
    auto it = opt.start_offsets.find(p);
    lowest_start = std::min(lowest_start, it == opt.start_offsets.end() ? kMin : it->second);
  }
  first = std::max(first, lowest_start);
  for (size_t i = 0; i < tasks.size(); ++i) {
    // Groups are disjoint unions of the tasks' partition ranges: a task
    // overlapping the group's span belongs to it.
    if (tasks[i].part_lo > g.back() || g.front() > tasks[i].part_hi) continue;
    if (layout.offset && (tasks[i].off_hi < first || (opt.to_offset && tasks[i].off_lo >= *opt.to_offset))) {
      continue;
    }
    part_tasks.push_back(i);
  }
  if (layout.offset) {
    std::stable_sort(part_tasks.begin(), part_tasks.end(),
                     [&](size_t a, size_t b) { return tasks[a].off_lo < tasks[b].off_lo; });
  }
  group_tasks[gi] = part_tasks;
  return part_tasks;
}

// Opens the data file of a task: the background open started ahead if there
// is one, else now.
Result<std::unique_ptr<pq::ParquetFile>> RecordReader::Impl::OpenTask(size_t task) {
  if (auto it = opening.find(task); it != opening.end()) {
    auto pf = it->second.get();
    opening.erase(it);
    return pf;
  }
  const DataFile& f = *tasks[task].task.file;
  return pq::ParquetFile::OpenDataFile(*table->io, f.path, name_mapping, f.file_size);
}

// Plans the clusters of the next group of files (files of one partition
// group whose offset ranges overlap): opens them, prunes row groups by
// statistics, loads the delete files that apply, and splits the row groups
// into clusters. Returns once at least one more cluster is planned, or all
// are.
Status RecordReader::Impl::PlanMoreClusters() {
  const size_t planned_before = planned.size();
  while (planned.size() == planned_before && !planned_all) {
    if (!part_started) {
      if (part_index >= groups.size()) {
        planned_all = true;
        break;
      }
      part_tasks = TasksOfGroup(part_index);
      group_tasks.erase(part_index);
      next_task = 0;
      part_started = true;
    }
    const std::vector<int32_t>& group = groups[part_index];
    if (next_task >= part_tasks.size()) {
      part_started = false;
      ++part_index;
      continue;
    }
    // Whether a row group whose partition statistics are [lo, hi] may hold
    // a partition of the group.
    auto holds = [&](int64_t lo, int64_t hi) {
      auto it = std::lower_bound(group.begin(), group.end(), lo);
      return it != group.end() && *it <= hi;
    };
    // The lowest first offset wanted among the group's partitions.
    int64_t group_start = kMax;
    for (int32_t p : group) {
      auto it = opt.start_offsets.find(p);
      group_start = std::min(group_start, it == opt.start_offsets.end() ? kMin : it->second);
    }
    size_t end = next_task + 1;
    if (layout.offset) {
      int64_t hi = tasks[part_tasks[next_task]].off_hi;
      while (end < part_tasks.size() && tasks[part_tasks[end]].off_lo <= hi) {
        hi = std::max(hi, tasks[part_tasks[end]].off_hi);
        ++end;
      }
    }
    std::vector<std::unique_ptr<pq::ParquetFile>> open;
    std::vector<std::pair<Unit, pq::ParquetFile*>> units;
    auto leaf_of = [](pq::ParquetFile& pf, const std::optional<ColumnPath>& c) {
      if (!c) return -1;
      std::vector<std::pair<int32_t, std::string>> path;
      for (size_t i = 0; i < c->ids.size(); ++i) path.emplace_back(c->ids[i], c->names[i]);
      return pf.LeafColumn(path);
    };
    for (size_t k = next_task; k < end; ++k) {
      TaskState& t = tasks[part_tasks[k]];
      RETURN_NOT_OK(LoadDeletes(t));
      ASSIGN_OR_RAISE(auto pf, OpenTask(part_tasks[k]));
      const int off_leaf = leaf_of(*pf, layout.offset), part_leaf = leaf_of(*pf, layout.partition);
      const int ts_leaf = (opt.from_time_ms || opt.to_time_ms) ? leaf_of(*pf, layout.timestamp) : -1;
      for (int rg = 0; rg < pf->num_row_groups(); ++rg) {
        Unit u{part_tasks[k], rg, kMin, kMax, 0, pf->row_group_num_rows(rg)};
        SizeUnit(*pf, t, &u);
        u.part_lo = t.part_lo;
        u.part_hi = t.part_hi;
        if (auto st = pf->IntStats(rg, off_leaf)) {
          u.lo = st->first;
          u.hi = st->second;
        }
        if (auto st = pf->IntStats(rg, part_leaf)) {
          if (!holds(st->first, st->second)) continue;
          u.part_lo = std::max(u.part_lo, st->first);
          u.part_hi = std::min(u.part_hi, st->second);
        }
        if (auto st = pf->IntStats(rg, ts_leaf)) {
          if (opt.from_time_ms && st->second < plan->ms_to_timestamp_units(*opt.from_time_ms)) continue;
          if (opt.to_time_ms && st->first >= plan->ms_to_timestamp_units(*opt.to_time_ms)) continue;
        }
        if (opt.from_offset && layout.offset && u.hi < *opt.from_offset) continue;
        if (layout.offset && u.hi < group_start) continue;
        if (opt.to_offset && layout.offset && u.lo >= *opt.to_offset) continue;
        units.emplace_back(u, pf.get());
      }
      open.push_back(std::move(pf));
    }
    next_task = end;
    if (layout.offset) {
      std::stable_sort(units.begin(), units.end(),
                       [](const auto& a, const auto& b) { return a.first.lo < b.first.lo; });
    }
    // Row groups whose offset ranges overlap decode together; each cluster
    // gets readers of its own (sharing the parsed footers).
    for (size_t i = 0; i < units.size();) {
      size_t j = i + 1;
      if (layout.offset) {
        int64_t hi = units[i].first.hi;
        while (j < units.size() && units[j].first.lo <= hi) hi = std::max(hi, units[j++].first.hi);
      } else {
        j = units.size();  // plain tables: row order, one cluster per file group
      }
      int64_t bytes = 0;
      for (size_t k = i; k < j; ++k) bytes += units[k].first.bytes;
      // Row groups that overlap (or one row group) and would not fit the
      // budget decoded at once (with the clusters decoded ahead): merge them
      // as streams, one partition at a time (the k-way merge orders one
      // partition), each input a batch at a time.
      const bool merge = layout.offset && bytes > opt.memory_budget / static_cast<int64_t>(2 * (max_inflight + 1));
      std::vector<std::vector<int32_t>> emit;  // the clusters' partitions
      if (merge && group.size() > 1) {
        for (int32_t p : group) emit.push_back({p});
      } else {
        emit.push_back(group);
      }
      for (const auto& parts : emit) {
        auto c = std::make_unique<Cluster>();
        SetPartitions(c.get(), parts);
        c->merge = merge;
        for (size_t k = i; k < j; ++k) {
          const Unit& u = units[k].first;
          if (u.part_hi < parts.front() || u.part_lo > parts.back()) continue;
          c->units.push_back(u);
          if (!c->merge) {
            ASSIGN_OR_RAISE(auto clone, units[k].second->Clone(*table->io));
            c->fetch_bytes += clone->row_group_fetch_bytes(u.rg, ProjectedColumns(*clone, tasks[u.task]));
            c->files.push_back(std::move(clone));
            continue;
          }
          // One streaming reader per data file.
          size_t f = 0;
          while (f < c->units.size() - 1 && c->units[f].task != u.task) ++f;
          if (f < c->units.size() - 1) {
            c->unit_file.push_back(c->unit_file[f]);
          } else {
            ASSIGN_OR_RAISE(auto clone, units[k].second->CloneStreaming(*table->io));
            c->unit_file.push_back(c->files.size());
            c->files.push_back(std::move(clone));
          }
        }
        if (c->units.empty()) continue;
        planned.push_back(std::move(c));
      }
      i = j;
    }
  }
  return Status::OK();
}

Status RecordReader::Impl::FillPipeline() {
  while (inflight.size() < max_inflight) {
    if (planned.empty()) RETURN_NOT_OK(PlanMoreClusters());
    if (planned.empty()) break;
    std::shared_ptr<Cluster> c(planned.front().release());
    planned.pop_front();
    if (c->prefetched) {
      --prefetched_clusters;
      prefetched_bytes -= c->fetch_bytes;
    }
    if (!pool) pool = std::make_unique<ThreadPool>(max_inflight);
    inflight.push_back(pool->Submit([this, c]() -> Result<std::unique_ptr<Cluster>> {
      // A cluster too big to decode at once is merged as streams of whole
      // row groups: never read in part (ReadOptions::require_narrow).
      if (c->merge && opt.require_narrow) {
        return Status::Unsupported("a cluster of {} row groups merged as streams: not read in part", c->units.size());
      }
      // A cluster decoded at once holds its arrays and dictionaries while it
      // decodes (a merge takes its share per file it sorts, SpillRuns).
      DecodeGate::Hold hold;
      if (!c->merge) {
        int64_t cost = 0;
        for (const auto& u : c->units) cost += u.bytes + u.dictionary;
        hold = Gate(cost);
      }
      Status st =
          pq::CatchParquet("decoding", [&]() { return c->merge ? PrepareMerge(c.get()) : LoadCluster(c.get()); });
      Ungate(hold);
      if (!st.ok()) return st;
      auto out = std::make_unique<Cluster>();
      out->partition = c->partition;
      out->records = std::move(c->records);
      out->headers = std::move(c->headers);
      out->keepalive = std::move(c->keepalive);
      out->dups = c->dups;
      out->merge = c->merge;
      out->merger = std::move(c->merger);
      if (c->merge) out->files = std::move(c->files);  // the merge's inputs read them
      return out;
    }));
  }
  return ReadAhead();
}

// With the workers busy, fetches ahead (ReadOptions::prefetch): the column
// chunks of the next clusters in line (at most read_ahead of them and
// prefetch_bytes, or one cluster if it is bigger), planning the next files'
// clusters when fewer wait and their files are already open, and opens the
// footers of the next files_ahead files in the background. Memory in flight
// stays bounded: (read_ahead clusters decoding) + (read_ahead clusters or
// prefetch_bytes fetched) + files_ahead footers.
Status RecordReader::Impl::ReadAhead() {
  if (opt.prefetch == ReadOptions::Prefetch::kOff || inflight.size() < max_inflight) return Status::OK();
  const size_t max_ahead = max_inflight;
  auto room = [&](const Cluster& c) {
    return prefetched_clusters < max_ahead &&
           (prefetched_clusters == 0 || prefetched_bytes + c.fetch_bytes <= opt.prefetch_bytes);
  };
  // Plan further files while too few clusters wait, but only when the next
  // file to open is open already (planning must not wait for a footer here).
  auto next_file_open = [&]() {
    size_t k = part_started ? next_task : 0;
    for (size_t g = part_index; g < groups.size(); ++g, k = 0) {
      const std::vector<size_t> ts = g == part_index && part_started ? part_tasks : TasksOfGroup(g);
      if (k < ts.size()) {
        auto it = opening.find(ts[k]);
        return it != opening.end() && it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
      }
    }
    return true;  // nothing left to open
  };
  while (planned.size() < max_ahead && !planned_all && next_file_open()) RETURN_NOT_OK(PlanMoreClusters());
  for (auto& c : planned) {
    if (c->prefetched) continue;
    if (c->merge || !room(*c)) break;
    bool want = false;
    for (const auto& f : c->files) want |= WantPrefetch(*f);
    if (!want) break;
    for (size_t u = 0; u < c->units.size(); ++u) {
      pq::ParquetFile& pf = *c->files[u];
      RETURN_NOT_OK(pf.Prefetch({c->units[u].rg}, ProjectedColumns(pf, tasks[c->units[u].task])));
    }
    c->prefetched = true;
    ++prefetched_clusters;
    prefetched_bytes += c->fetch_bytes;
    ++prefetch.clusters;
    prefetch.bytes += c->fetch_bytes;
    prefetch.max_clusters_ahead = std::max<int64_t>(prefetch.max_clusters_ahead, prefetched_clusters);
    prefetch.max_bytes_ahead = std::max(prefetch.max_bytes_ahead, prefetched_bytes);
  }
  // Footers of the next files (after those already planned), in the order
  // they will be read: the rest of this group's, then the next groups'.
  if (opt.files_ahead == 0 || (opt.prefetch == ReadOptions::Prefetch::kAuto && !storage::IsObjectStore(*table->io))) {
    return Status::OK();
  }
  std::vector<size_t> upcoming;
  if (part_started) {
    for (size_t k = next_task; k < part_tasks.size() && upcoming.size() < opt.files_ahead; ++k) {
      upcoming.push_back(part_tasks[k]);
    }
  }
  for (size_t g = part_started ? part_index + 1 : part_index; upcoming.size() < opt.files_ahead && g < groups.size();
       ++g) {
    for (size_t t : TasksOfGroup(g)) {
      if (upcoming.size() < opt.files_ahead) upcoming.push_back(t);
    }
  }
  for (size_t t : upcoming) {
    if (opening.count(t)) continue;
    if (!opener) opener = std::make_unique<ThreadPool>(opt.files_ahead);
    const DataFile& f = *tasks[t].task.file;
    opening.emplace(t, opener->Submit([io = table->io, path = f.path, size = f.file_size, mapping = name_mapping] {
      return pq::ParquetFile::OpenDataFile(*io, path, mapping, size);
    }));
    ++prefetch.files_opened_ahead;
  }
  return Status::OK();
}

// Drops the records of a new cluster (or merged chunk) at or below the last
// offset emitted for their partition: a duplicate across clusters (offset
// ranges that overlap although their statistics say otherwise) keeps the row
// emitted first.
void RecordReader::Impl::DropAtBoundary(Cluster* c) {
  if (!layout.offset || last.empty()) return;
  auto& recs = c->records;
  size_t w = 0;
  const Last* l = nullptr;
  for (size_t r = 0; r < recs.size(); ++r) {
    const Record& rec = recs[r];
    if (r == 0 || rec.partition != recs[r - 1].partition) {
      auto it = last.find(rec.partition);
      l = it == last.end() ? nullptr : &it->second;
    }
    if (l && rec.offset <= l->offset) {
      ++dups.duplicates;
      if (rec.offset != l->offset ||
          !SameContent(l->record, l->headers, rec, {c->headers.data() + rec.header_begin, rec.header_count})) {
        ++dups.differing;
      }
      continue;
    }
    if (w != r) recs[w] = rec;
    ++w;
  }
  recs.resize(w);
}

// Remembers the last record of each partition in out->records[begin..] (alive
// through the batch's owners) for duplicates at the next cluster boundary.
void RecordReader::Impl::Remember(const RecordBatch& out, size_t begin) {
  const auto& recs = out.records;
  for (size_t i = recs.size(); i-- > begin;) {
    if (i + 1 < recs.size() && recs[i + 1].partition == recs[i].partition) continue;
    const Record& rec = recs[i];
    Last& l = last[rec.partition];
    l.offset = rec.offset;
    l.bytes.clear();
    auto own = [&](std::optional<std::string_view> v) -> std::optional<std::string_view> {
      if (!v) return std::nullopt;
      return l.bytes.emplace_back(*v);
    };
    l.record = rec;
    l.record.key = own(rec.key);
    l.record.value = own(rec.value);
    l.record.topic = own(rec.topic);
    l.record.source_batch = nullptr;
    l.headers.clear();
    for (const auto& h : out.HeadersOf(rec)) l.headers.push_back(Header{*own(h.key), own(h.value)});
  }
}

Result<bool> RecordReader::Next(RecordBatch* out) {
  Impl& s = *impl_;
  out->Clear();
  while (!s.current || s.cur_pos >= s.current->records.size()) {
    if (s.current && s.current->merger) {
      // A merged cluster: take its next chunk.
      RecordChunk chunk;
      ASSIGN_OR_RAISE(bool more, s.current->merger->Next(static_cast<size_t>(std::max<int64_t>(s.opt.batch_size, 1)),
                                                         &chunk, &s.dups));
      if (more) {
        s.current->records = std::move(chunk.records);
        s.current->headers = std::move(chunk.headers);
        s.current->keepalive = std::move(chunk.keepalive);
        s.cur_pos = 0;
        s.DropAtBoundary(s.current.get());
        continue;
      }
    }
    s.current.reset();
    RETURN_NOT_OK(s.FillPipeline());
    if (s.inflight.empty()) return false;
    auto result = s.inflight.front().get();
    s.inflight.pop_front();
    if (!result.ok()) return result.status();
    s.current = std::move(*result);
    s.cur_pos = 0;
    s.dups += s.current->dups;
    RETURN_NOT_OK(s.FillPipeline());  // keep the workers busy while this one is emitted
    s.DropAtBoundary(s.current.get());
  }
  const auto& c = *s.current;
  size_t n = std::min<size_t>(c.records.size() - s.cur_pos, static_cast<size_t>(s.opt.batch_size));
  out->records.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Record r = c.records[s.cur_pos + i];
    uint32_t begin = static_cast<uint32_t>(out->headers.size());
    out->headers.insert(out->headers.end(), c.headers.begin() + r.header_begin,
                        c.headers.begin() + r.header_begin + r.header_count);
    r.header_begin = begin;
    out->records.push_back(r);
  }
  s.cur_pos += n;
  out->keepalive = c.keepalive;
  if (s.layout.offset && n > 0) s.Remember(*out, 0);
  return true;
}

}  // namespace thaw::records
