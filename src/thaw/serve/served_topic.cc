#include "thaw/serve/served_topic.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <limits>

#include "thaw/common/log.h"
#include "thaw/records/avro_value.h"
#include "thaw/records/record_reader.h"
#include "thaw/serve/digest.h"
#include "thaw/serve/leader_epochs.h"
#include "thaw/serve/segment_reader.h"
#include "thaw/serve/streamed_segments.h"
#include "thaw/serve/topic_registry.h"

namespace thaw::serve {

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A read of one partition's offsets and timestamps only (no keys, values or
// headers) over [from, to); kMin / kMax = unbounded.
records::ReadOptions MetadataRead(const ServeOptions& options, int32_t partition, int64_t from, int64_t to) {
  records::ReadOptions ro;
  ro.partitions = std::set<int32_t>{partition};
  if (from != kMin) ro.from_offset = from;
  if (to != kMax) ro.to_offset = to;
  ro.metadata_only = true;
  ro.read_ahead = 1;
  ro.memory_budget = options.memory_budget;
  ro.spill_dir = options.spill_dir;
  return ro;
}
// Whether the snapshots after `from` up to `to` may have removed rows a
// consumer of `from` read: false only when `from` is an ancestor of `to`
// and every snapshot after it appends or replaces (compaction keeps rows).
bool MayRemoveRows(const iceberg::TableMetadata& md, std::optional<int64_t> from, std::optional<int64_t> to) {
  if (!from || from == to) return false;
  for (std::optional<int64_t> id = to; id;) {
    if (*id == *from) return false;
    const iceberg::Snapshot* s = md.SnapshotById(*id);
    if (!s) return true;  // the lineage is not known: compare
    const std::string op = s->operation();
    if (op != "append" && op != "replace") return true;
    id = s->parent_snapshot_id;
  }
  return true;  // `from` is not an ancestor (a rollback), or the table has no snapshot now
}

// Row groups per segment when their offset ranges chain together (files
// whose row groups overlap): beyond it a segment is cut, and the row group
// straddling the cut is decoded by both segments.
constexpr int kMaxSegmentRowGroups = 4;
// A partition where a segment cut by statistics would decode more row
// groups than this (files that all span most of its offsets) is streamed
// instead: its segments are cut as read (streamed_segments.h).
constexpr size_t kMaxRowGroupsPerSegmentRead = 2 * kMaxSegmentRowGroups;
// So is a partition with a row group of more rows than this (pyiceberg
// writes up to 1,048,576 by default): a segment is encoded whole before the
// first Fetch of it is answered, and one of a million 1 KiB records would
// hold a GB.
constexpr int64_t kMaxSegmentRows = 65536;

// Catalog implementations are not documented thread-safe (the SQL catalog
// shares one SQLite connection): their calls are serialized.
std::mutex& CatalogMutex() {
  static std::mutex mu;
  return mu;
}

std::string LayoutSignature(const records::Layout& l) {
  std::string s = l.name;
  for (const auto& [name, col] : l.KafkaColumns()) {
    s += '|';
    s += name;
    if (*col) {
      for (int32_t id : (*col)->ids) s += fmt::format(".{}", id);
    }
  }
  s += "|json";
  for (const auto& c : l.value_json) {
    for (int32_t id : c.ids) s += fmt::format(".{}", id);
    s += ',';
  }
  s += l.value_json_unwrap ? "|unwrap" : "|wrap";
  for (const auto& [id, text] : l.value_json_defaults) s += fmt::format("|d{}={}", id, text);
  // Row tables of Avro values re-encode the struct as the datum (and its framing).
  if (l.value_avro) {
    s += fmt::format("|avro{}|{}", l.value_avro_schema_id ? std::to_string(*l.value_avro_schema_id) : std::string("-"),
                     l.value_avro->schema_json());
  }
  if (l.value_json_frame_id) s += fmt::format("|json-schema#{}", *l.value_json_frame_id);
  if (l.value_framed) {
    s += fmt::format("|{}#{}|{}", l.value_framed->format(), l.value_framed_id.value_or(0), l.value_framed->schema_text());
  }
  for (const auto& [id, schema] : l.value_by_id) s += fmt::format("|{}#{}|{}", schema->format(), id, schema->schema_text());
  return s;
}

}  // namespace

std::array<uint8_t, 16> DeriveTopicId(std::string_view table_uuid, std::string_view topic) {
  std::string in = "thaw-topic-id";
  in += '\0';
  in += table_uuid;
  in += '\0';
  in += topic;
  uint64_t a = Mix(Fnv1a(in, 0xcbf29ce484222325ULL));
  uint64_t b = Mix(Fnv1a(in, 0x6c62272e07bb0142ULL) + a);
  std::array<uint8_t, 16> id{};
  for (int i = 0; i < 8; ++i) {
    id[i] = static_cast<uint8_t>(a >> (56 - 8 * i));
    id[8 + i] = static_cast<uint8_t>(b >> (56 - 8 * i));
  }
  id[6] = static_cast<uint8_t>((id[6] & 0x0f) | 0x80);  // version 8 (custom): never the null or metadata id
  id[8] = static_cast<uint8_t>((id[8] & 0x3f) | 0x80);  // RFC variant
  // Kafka's Uuid never starts with '-' in its base64 form (command lines
  // would take it for an option): the first 6 bits must not be 62.
  if ((id[0] >> 2) == 62) id[0] ^= 0x80;
  return id;
}

// One snapshot: its plan and, per partition, the segment index built on first use.
struct ServedTopic::State {
  std::shared_ptr<const iceberg::Table> table;
  std::shared_ptr<const records::ReadPlan> plan;
  std::optional<int64_t> snapshot_id;
  std::string key_prefix;  // topic, table, compression, layout: what every segment key starts with
  int32_t max_partition = -1;

  struct Part {
    std::vector<int64_t> lo;           // segment i = [lo[i], lo[i + 1]) (the last: to the end)
    std::vector<std::string> keys;     // cache key of segment i
    std::vector<std::string> digests;  // of the row groups (and their deletes) that hold segment i
    // Files whose row groups contribute to segment i hold these partitions
    // (the candidates for decoding it once for several partitions).
    std::vector<std::pair<int32_t, int32_t>> file_parts;
    // Fetches read it through StreamedSegments (served_topic.h) instead of
    // the segments above (still used for its log start and end).
    bool streamed = false;
    std::shared_ptr<const std::vector<records::RowGroupRef>> row_groups;
    std::mutex mu;
    std::optional<PartitionOffsets> offsets;
    int64_t hi(size_t i) const { return i + 1 < lo.size() ? lo[i + 1] : kMax; }
  };
  std::mutex mu;
  std::map<int32_t, std::shared_ptr<Part>> parts;

  Result<std::shared_ptr<Part>> PartOf(int32_t p);
};

Result<std::shared_ptr<ServedTopic::State::Part>> ServedTopic::State::PartOf(int32_t p) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = parts.find(p); it != parts.end()) return it->second;
  }
  auto part = std::make_shared<Part>();
  if (p <= max_partition) {
    ASSIGN_OR_RAISE(auto rgs, plan->RowGroups(p));
    part->row_groups = rgs;
    // Segments: runs of row groups whose offset ranges overlap or touch (as
    // the reader clusters them, so each is decoded once), cut after
    // kMaxSegmentRowGroups row groups where the next one starts later.
    int64_t max_last = kMin;
    int in_segment = 0;
    for (const auto& r : *rgs) {
      part->streamed |= r.rows > kMaxSegmentRows;
      const bool overlaps = !part->lo.empty() && r.first_offset <= max_last;
      const bool can_cut = part->lo.empty() || r.first_offset > part->lo.back();
      if (can_cut && (!overlaps || in_segment >= kMaxSegmentRowGroups)) {
        part->lo.push_back(r.first_offset);
        in_segment = 0;
      }
      ++in_segment;
      max_last = std::max(max_last, r.last_offset);
    }
    // Each segment's key: its range and every row group that may hold
    // records of it (with the file's sequence numbers and delete files).
    const auto& files = plan->files();
    size_t next = 0;                 // first row group not yet started
    int64_t max_last_before = kMin;  // greatest last offset of the row groups before segment i
    for (size_t i = 0; i < part->lo.size(); ++i) {
      const int64_t lo = part->lo[i], hi = part->hi(i);
      std::vector<const records::RowGroupRef*> contrib;
      if (max_last_before >= lo) {
        // Rare: earlier row groups overlap this range (files not cut by offset).
        for (size_t k = 0; k < next; ++k) {
          if ((*rgs)[k].last_offset >= lo) contrib.push_back(&(*rgs)[k]);
        }
      }
      while (next < rgs->size() && (*rgs)[next].first_offset < hi) {
        contrib.push_back(&(*rgs)[next]);
        max_last_before = std::max(max_last_before, (*rgs)[next].last_offset);
        ++next;
      }
      std::string desc;
      int32_t plo = std::numeric_limits<int32_t>::max(), phi = std::numeric_limits<int32_t>::min();
      for (const auto* r : contrib) {
        const auto& f = files[r->file];
        plo = std::min(plo, f.part_lo);
        phi = std::max(phi, f.part_hi);
        desc += RowGroupDescription(f, r->row_group);
      }
      part->streamed |= contrib.size() > kMaxRowGroupsPerSegmentRead;
      part->digests.push_back(Digest(desc));
      part->keys.push_back(fmt::format("{}\x1fp{}\x1f{}..{}\x1f{}", key_prefix, p, lo, hi, part->digests.back()));
      part->file_parts.emplace_back(plo, phi);
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = parts.emplace(p, std::move(part));
  return it->second;
}

struct ServedTopic::Counters {
  std::atomic<int64_t> segment_reads{0}, segments_filled{0}, row_groups{0}, rows{0}, batches{0}, offset_reads{0},
      refreshes{0}, read_aheads{0}, read_aheads_skipped{0}, pressure_reads{0}, early_answers{0}, seek_reads{0};
};

namespace {
// Threads of a topic's load pool (LoadForFetch): as many as the server's
// default --threads, so that every Fetch the server runs at once can wait
// on a read of its own.
constexpr size_t kFetchLoadThreads = 4;
}  // namespace

ServedTopic::ServedTopic(std::shared_ptr<catalog::Catalog> catalog, TopicConfig config, ServeOptions options,
                         std::shared_ptr<BatchCache> cache)
    : catalog_(std::move(catalog)),
      config_(std::move(config)),
      options_(std::move(options)),
      cache_(std::move(cache)),
      counters_(std::make_unique<Counters>()) {
  StreamedSegments::Options so;
  so.read = SegmentOptions();
  streams_ = std::make_unique<StreamedSegments>(std::move(so), cache_);
  if (options_.read_ahead > 0) ahead_ = std::make_unique<ThreadPool>(static_cast<size_t>(options_.read_ahead));
}

ServedTopic::~ServedTopic() {
  stopping_ = true;  // segment reads queued in the background are dropped (their pool joins below)
  if (!epochs_) return;
  auto st = state();
  Status saved = epochs_->Save(st ? st->snapshot_id : std::nullopt);
  if (!saved.ok()) log::Warn("topic '{}': {}", config_.name, saved.message());
}

void ServedTopic::Ahead(std::function<void()> read) {
  if (!ahead_) return;
  if (ahead_running_.fetch_add(1) >= options_.read_ahead) {
    --ahead_running_;
    return;
  }
  ++counters_->read_aheads;
  ahead_->Submit([this, read = std::move(read)] {
    read();
    --ahead_running_;
  });
}

bool ServedTopic::Pressed() const { return !cache_->HasRoomFor(segment_bytes_.load()); }

namespace {
// A pressed cut: about a Fetch's share of a partition (records plus batch
// overhead within it), so the Fetch takes it whole.
int64_t PressedCut(int64_t max_bytes) { return std::max<int64_t>(int64_t{64} << 10, max_bytes / 4 * 3); }
}  // namespace

void ServedTopic::ReadAhead(int32_t partition, int64_t offset, int64_t max_bytes) {
  if (!ahead_ || partition < 0 || partition >= partition_count()) return;
  auto st = state();
  if (partition > st->max_partition) return;
  auto part = st->PartOf(partition);
  if (!part.ok()) return;
  auto offsets = OffsetsIn(*st, partition);
  if (!offsets.ok() || offset < offsets->log_start || offset >= offsets->high_watermark) return;
  const auto& lo = (*part)->lo;
  auto it = std::upper_bound(lo.begin(), lo.end(), offset);
  const size_t i = it == lo.begin() ? 0 : static_cast<size_t>(it - lo.begin()) - 1;
  if (!(*part)->streamed && (i >= lo.size() || cache_->Has((*part)->keys[i]))) return;
  const StreamedPartition sp{st->plan, partition, st->key_prefix, (*part)->row_groups};
  const bool pressed = !(*part)->streamed && (Pressed() || streams_->HasCursorAt(sp, offset));
  if ((*part)->streamed || pressed) {  // as Fetch will read it
    const int64_t target = pressed ? PressedCut(max_bytes) : 0;
    Ahead([this, st, sp, offset, target] { (void)streams_->SegmentAt(sp, offset, target); });
    return;
  }
  Ahead([this, st, partition, i] { (void)LoadSegment(*st, partition, i); });
}

namespace {

Result<std::shared_ptr<ServedTopic::State>> MakeState(const TopicConfig& config,
                                                      std::shared_ptr<const iceberg::Table> table) {
  auto st = std::make_shared<ServedTopic::State>();
  records::ReadOptions ro;
  ro.layout = config.layout;
  ro.source_topic = config.source_topic;
  auto plan = records::ReadPlan::Make(table, ro);
  if (!plan.ok()) return plan.status();
  RETURN_NOT_OK((*plan)->RequireOneTopic(
      fmt::format("source-topic (--topic {}={}:source-topic=TOPIC, or source-topic = \"TOPIC\" in its [[topic]])",
                  config.name, config.table)));
  st->plan = std::move(*plan);
  st->table = std::move(table);
  const auto& layout = st->plan->layout();
  if (!layout.offset) {
    return Status::Invalid(
        "table {} is not Kafka-shaped: its layout '{}' has no offset column, and a served topic needs the "
        "table's own offsets (force a layout with layout = \"...\" / --layout, or name the column with "
        "--column offset=COLUMN)",
        st->table->name, layout.name);
  }
  if (st->plan->snapshot()) st->snapshot_id = st->plan->snapshot()->snapshot_id;
  const auto& md = st->table->metadata;
  const int32_t schema_id =
      st->plan->snapshot() && st->plan->snapshot()->schema_id ? *st->plan->snapshot()->schema_id : md.current_schema_id;
  st->key_prefix =
      fmt::format("{}\x1f{}\x1f{}:{}\x1fs{}\x1f{}", config.name, md.table_uuid.empty() ? md.location : md.table_uuid,
                  static_cast<int>(config.compression), config.compression_level, schema_id, LayoutSignature(layout));
  const auto& parts = st->plan->partitions();
  st->max_partition = parts.empty() ? -1 : parts.back();
  return st;
}

}  // namespace

Result<std::shared_ptr<ServedTopic>> ServedTopic::Make(std::shared_ptr<catalog::Catalog> catalog, TopicConfig config,
                                                       const ServeOptions& options, std::shared_ptr<BatchCache> cache) {
  const std::string where = fmt::format("topic '{}' (table {})", config.name, config.table);
  RETURN_NOT_OK(ValidateTopicName(config.name).WithContext(where));
  if (!catalog) return Status::Invalid("{}: no catalog to load the table from", where);
  auto id = catalog::TableIdentifier::Parse(config.table);
  if (!id.ok()) return id.status().WithContext(where);
  std::shared_ptr<ServedTopic> t(
      new ServedTopic(std::move(catalog), std::move(config), options,
                      cache ? std::move(cache) : std::make_shared<BatchCache>(options.cache_bytes)));
  t->id_ = *id;
  Result<iceberg::Table> table = Status::Internal("unset");
  {
    std::lock_guard<std::mutex> lock(CatalogMutex());
    table = t->catalog_->LoadTable(t->id_);
  }
  if (!table.ok()) return table.status().WithContext(where);
  const auto& md = table->metadata;
  t->topic_id_ = DeriveTopicId(md.table_uuid.empty() ? md.location : md.table_uuid, t->config_.name);
  auto state = MakeState(t->config_, std::make_shared<const iceberg::Table>(std::move(*table)));
  if (!state.ok()) return state.status().WithContext(where);
  t->state_ = std::move(*state);
  t->partition_count_ = std::max(1, t->state_->max_partition + 1);
  std::string epochs_path;
  if (!t->options_.state_dir.empty()) {
    epochs_path = (std::filesystem::path(t->options_.state_dir) / "epochs" / (t->config_.name + ".json")).string();
  }
  auto epochs = LeaderEpochs::Open(epochs_path, md.table_uuid.empty() ? md.location : md.table_uuid);
  if (!epochs.ok()) return epochs.status().WithContext(where);
  t->epochs_ = std::move(*epochs);
  // What the previous run served may have been removed since.
  auto lowered = t->Lowered(*t->state_, t->epochs_->saved_snapshot());
  if (!lowered.ok()) return lowered.status().WithContext(where);
  {
    std::lock_guard<std::mutex> lock(t->mu_);
    t->Truncate(*t->state_, *lowered);
  }
  RETURN_NOT_OK(t->epochs_->Save(t->state_->snapshot_id).WithContext(where));
  return t;
}

Result<std::map<int32_t, ServedTopic::Lowering>> ServedTopic::Lowered(State& next,
                                                                      std::optional<int64_t> from_snapshot) {
  std::map<int32_t, Lowering> out;
  if (!MayRemoveRows(next.table->metadata, from_snapshot, next.snapshot_id)) return out;
  for (const auto& [p, served] : epochs_->Observed()) {
    ASSIGN_OR_RAISE(auto o, OffsetsIn(next, p));
    if (o.high_watermark < served) out[p] = Lowering{served, o.high_watermark};
  }
  return out;
}

void ServedTopic::Truncate(const State& next, const std::map<int32_t, Lowering>& lowered) {
  for (const auto& [p, l] : lowered) {
    const auto [served, hw] = l;
    if (auto epoch = epochs_->Truncate(p, hw)) {
      log::Info(
          "topic '{}' (table {}) partition {}: snapshot {} ends at offset {}, below the {} served before: leader "
          "epoch {} starts there, so consumers past it detect the truncation (KIP-320) and go back to {}",
          config_.name, config_.table, p, next.snapshot_id ? std::to_string(*next.snapshot_id) : "(none)", hw, served,
          *epoch, hw);
    }
  }
}

void ServedTopic::Served(const State& st, int32_t partition, PartitionOffsets* o) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.get() == &st) epochs_->Observe(partition, o->high_watermark);
  o->leader_epoch = epochs_->Current(partition);
}

int32_t ServedTopic::LeaderEpoch(int32_t partition) const { return epochs_->Current(partition); }

int32_t ServedTopic::LeaderEpochAt(int32_t partition, int64_t offset) const {
  return epochs_->EpochAt(partition, offset);
}

Result<std::pair<int32_t, int64_t>> ServedTopic::EndOffsetForEpoch(int32_t partition, int32_t requested) {
  ASSIGN_OR_RAISE(auto o, Offsets(partition));
  return epochs_->EndOffsetFor(partition, requested, o.high_watermark);
}

kafka::ErrorCode ServedTopic::CheckLeaderEpoch(int32_t partition, int32_t current) const {
  if (current < 0) return kafka::ErrorCode::kNone;
  const int32_t epoch = epochs_->Current(partition);
  if (current < epoch) return kafka::ErrorCode::kFencedLeaderEpoch;
  if (current > epoch) return kafka::ErrorCode::kUnknownLeaderEpoch;
  return kafka::ErrorCode::kNone;
}

kafka::Uuid ServedTopic::topic_id() const {
  kafka::Uuid u;
  u.bytes = topic_id_;
  return u;
}

std::vector<std::pair<std::string, std::string>> ServedTopic::ConfigOverrides() const {
  return {{"compression.type", std::string(kafka::CompressionName(config_.compression))},
          {"thaw.table", config_.table}};
}

std::shared_ptr<ServedTopic::State> ServedTopic::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

int32_t ServedTopic::partition_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return partition_count_;
}

std::optional<int64_t> ServedTopic::snapshot_id() const { return state()->snapshot_id; }

ServedTopic::Stats ServedTopic::stats() const {
  Stats s;
  s.segment_reads = counters_->segment_reads;
  s.segments_filled = counters_->segments_filled;
  s.row_groups_decoded = counters_->row_groups;
  s.rows_decoded = counters_->rows;
  s.batches_encoded = counters_->batches;
  s.offset_reads = counters_->offset_reads;
  s.refreshes = counters_->refreshes;
  const auto streamed = streams_->stats();
  s.read_aheads = counters_->read_aheads;
  s.read_aheads_skipped = counters_->read_aheads_skipped;
  s.pressure_reads = counters_->pressure_reads;
  s.early_answers = counters_->early_answers;
  s.seek_reads = counters_->seek_reads;
  s.segments_cut = streamed.segments_cut;
  s.cursors_opened = streamed.cursors_opened;
  s.cursors_continued = streamed.cursors_continued;
  s.cursors_open = streamed.cursors_opened - streamed.cursors_closed;
  s.row_groups_decoded += streamed.decode.row_groups;
  s.rows_decoded += streamed.decode.rows;
  s.batches_encoded += streamed.batches;
  return s;
}

Result<std::shared_ptr<const Segment>> ServedTopic::LoadSegment(State& st, int32_t p, size_t i,
                                                                const EarlyFetch* early) {
  ASSIGN_OR_RAISE(auto part, st.PartOf(p));
  const int64_t lo = part->lo[i], hi = part->hi(i);
  // Siblings: partitions the contributing files hold whose own index has
  // this very segment (same range, same row groups).
  std::map<std::string, int32_t> partition_of{{part->keys[i], p}};
  std::vector<std::string> also;
  const auto [plo, phi] = part->file_parts[i];
  for (int64_t q = std::max<int64_t>(plo, 0); q <= std::min<int64_t>(phi, st.max_partition); ++q) {
    if (q == p) continue;
    ASSIGN_OR_RAISE(auto other, st.PartOf(static_cast<int32_t>(q)));
    auto it = std::lower_bound(other->lo.begin(), other->lo.end(), lo);
    if (it == other->lo.end() || *it != lo) continue;
    const size_t j = static_cast<size_t>(it - other->lo.begin());
    if (other->hi(j) != hi || other->digests[j] != part->digests[i]) continue;
    partition_of.emplace(other->keys[j], static_cast<int32_t>(q));
    also.push_back(other->keys[j]);
  }
  return cache_->GetOrLoad(
      part->keys[i], also, [&](const std::vector<std::string>& keys) -> Result<BatchCache::Loaded> {
        std::set<int32_t> parts;
        for (const auto& k : keys) parts.insert(partition_of.at(k));
        auto read = ReadSegments(st.plan, parts, lo, hi, SegmentOptions(), early);
        if (!read.ok()) {
          return read.status().WithContext(fmt::format("topic '{}' (table {}) partition {} offsets [{}, {})",
                                                       config_.name, st.table->name, p, lo,
                                                       hi == kMax ? std::string("end") : std::to_string(hi)));
        }
        ++counters_->segment_reads;
        counters_->segments_filled += static_cast<int64_t>(read->segments.size());
        counters_->row_groups += read->decode.row_groups;
        counters_->rows += read->decode.rows;
        counters_->batches += read->batches;
        LearnRecordBytes(*read);
        BatchCache::Loaded out;
        for (const auto& k : keys) {
          auto seg = std::make_shared<const Segment>(std::move(read->segments.at(partition_of.at(k))));
          segment_bytes_ = seg->bytes;
          out.emplace(k, std::move(seg));
        }
        return out;
      });
}

SegmentReadOptions ServedTopic::SegmentOptions() const {
  SegmentReadOptions so;
  so.cut = {options_.batch_bytes, options_.batch_records};
  so.batch.compression = config_.compression;
  so.batch.level = config_.compression_level;
  so.batch.leader_epoch = options_.batch_leader_epoch;
  so.memory_budget = options_.memory_budget;
  so.spill_dir = options_.spill_dir;
  so.decode_gate = options_.decode_gate;
  return so;
}

void ServedTopic::LearnRecordBytes(const SegmentReadResult& read) {
  int64_t records = 0, bytes = 0;
  for (const auto& [p, seg] : read.segments) {
    for (const auto& b : seg.batches) records += b.records;
    bytes += seg.bytes;
  }
  if (records > 0) record_bytes_ = std::max<int64_t>(1, bytes / records);
}

void ServedTopic::LoadInBackground(const std::shared_ptr<State>& st, int32_t partition, size_t i) {
  auto part = st->PartOf(partition);
  if (!part.ok()) return;  // the Fetch that asked has it already
  const std::string key = (*part)->keys[i];
  {
    // Queued once: the Fetches that seek into it before its read starts
    // (BatchCache::Has sees a read only once it runs) queue no more.
    std::lock_guard<std::mutex> lock(background_mu_);
    if (!background_.insert(key).second) return;
  }
  LoadPool().Submit([this, st, partition, i, key] {
    if (!stopping_) {
      try {
        auto seg = LoadSegment(*st, partition, i);
        if (!seg.ok()) log::Warn("topic '{}' partition {}: {}", config_.name, partition, seg.status().message());
      } catch (const std::exception& e) {
        log::Warn("topic '{}' partition {}: reading a segment: {}", config_.name, partition, e.what());
      }
    }
    std::lock_guard<std::mutex> lock(background_mu_);
    background_.erase(key);
  });
}

ThreadPool& ServedTopic::LoadPool() {
  std::call_once(loads_once_, [this] { loads_ = std::make_unique<ThreadPool>(kFetchLoadThreads); });
  return *loads_;
}

Result<std::optional<Segment>> ServedTopic::SeekRead(State& st, int32_t partition, size_t i, int64_t fetch_offset,
                                                     int64_t max_bytes) {
  ASSIGN_OR_RAISE(auto part, st.PartOf(partition));
  const int64_t hi = part->hi(i);
  // The records that fill max_bytes, by the size of those read so far (a
  // short answer only means the consumer asks again sooner).
  const int64_t per = record_bytes_.load();
  const int64_t rows = std::clamp<int64_t>(max_bytes / std::max<int64_t>(per, 1) + 16, 16, kMaxSegmentRows);
  const int64_t lo = part->lo[i];
  // A segment of less than two Fetches costs about what its part would:
  // read it whole. So does a Fetch whose records start near the segment's
  // start (a consumer reading on from the segment before): the whole segment
  // is decoded for it next anyway, and the early answer (LoadForFetch) costs
  // no second read of its first rows.
  if (hi != kMax && lo != kMin && hi - lo < 2 * rows) return std::optional<Segment>();
  if (lo > fetch_offset - rows) return std::optional<Segment>();  // fetch offsets are >= 0: no overflow
  const int64_t to = fetch_offset > kMax - rows ? kMax : std::min(hi, fetch_offset + rows);
  SegmentReadOptions so = SegmentOptions();
  so.require_narrow = true;
  auto read = ReadSegments(st.plan, {partition}, fetch_offset, to, so);
  if (!read.ok()) {
    if (read.status().code() == StatusCode::kUnsupported) return std::optional<Segment>();  // read it whole
    return read.status().WithContext(fmt::format("topic '{}' (table {}) partition {} from offset {}", config_.name,
                                                 st.table->name, partition, fetch_offset));
  }
  ++counters_->seek_reads;
  counters_->rows += read->decode.rows;
  log::Debug("topic '{}' partition {}: a Fetch from offset {} answered from the {} rows it needs ({} row groups read in part)",
             config_.name, partition, fetch_offset, read->decode.rows, read->decode.narrowed);
  return std::optional<Segment>(std::move(read->segments.at(partition)));
}

Result<ServedTopic::EarlyBatches> ServedTopic::LoadForFetch(const std::shared_ptr<State>& st, int32_t partition,
                                                            size_t i, int64_t fetch_offset, int64_t max_bytes) {
  // What the read hands the waiting Fetch: its batches, or the whole
  // segment (when it was cached or read by another meanwhile), or an error.
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool ready = false;
    Status status;
    EarlyBatches early;
    std::shared_ptr<const Segment> segment;
  };
  auto w = std::make_shared<Waiter>();
  LoadPool().Submit([this, st, partition, i, fetch_offset, max_bytes, w] {
    EarlyFetch early;
    early.partition = partition;
    early.fetch_offset = fetch_offset;
    early.max_bytes = max_bytes;
    early.deliver = [w](std::vector<EncodedBatch> batches, bool reaches_end) {
      std::lock_guard<std::mutex> lock(w->mu);
      w->early.batches = std::move(batches);
      w->early.reaches_end = reaches_end;
      w->ready = true;
      w->cv.notify_all();
    };
    // Whatever happens, the waiting Fetch is woken: an exception (bad_alloc)
    // becomes its error rather than a Fetch that never returns.
    Result<std::shared_ptr<const Segment>> seg = Status::Internal("serve: a segment read ended without a result");
    try {
      seg = LoadSegment(*st, partition, i, &early);
    } catch (const std::exception& e) {
      seg = Status::Internal("serve: reading topic '{}' partition {}: {}", config_.name, partition, e.what());
    }
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->ready) {
      // Answered early; the rest of the segment is cached, unless its read
      // failed (the next Fetch of it reads it again and reports the error).
      if (!seg.ok()) log::Warn("topic '{}' partition {}: {}", config_.name, partition, seg.status().message());
      return;
    }
    if (seg.ok()) {
      w->segment = std::move(*seg);
    } else {
      w->status = seg.status();
    }
    w->ready = true;
    w->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(w->mu);
  w->cv.wait(lock, [&] { return w->ready; });
  RETURN_NOT_OK(w->status);
  if (!w->segment) {
    ++counters_->early_answers;
    return std::move(w->early);
  }
  // Read without an early answer: the whole segment (Fetch takes its batches).
  EarlyBatches out;
  out.batches = w->segment->batches;
  return out;
}

Result<PartitionOffsets> ServedTopic::Offsets(int32_t partition) {
  if (partition < 0 || partition >= partition_count()) {
    return Status::NotFound("topic '{}' has no partition {} (it has {})", config_.name, partition, partition_count());
  }
  return OffsetsIn(*state(), partition);
}

Result<PartitionOffsets> ServedTopic::OffsetsIn(State& st, int32_t partition) {
  ASSIGN_OR_RAISE(auto part, st.PartOf(partition));
  std::optional<PartitionOffsets> cached;
  {
    std::lock_guard<std::mutex> lock(part->mu);
    cached = part->offsets;
  }
  if (cached) {
    Served(st, partition, &*cached);
    return *cached;
  }
  // Exact, not statistics: the first record present and the last. A row
  // group's offset statistics are exact when its file holds only this
  // partition (and no other source topic) and has no delete files (the
  // lowest and highest offsets are rows that are read); otherwise the first
  // segment that has a record, and the last one, are looked at (cached, or
  // their offsets read).
  PartitionOffsets o;
  ASSIGN_OR_RAISE(auto rgs, st.plan->RowGroups(partition));
  auto exact = [&](const records::RowGroupRef& r) {
    const auto& f = st.plan->files()[r.file];
    return f.part_lo == partition && f.part_hi == partition && f.task.deletes.empty() && !f.other_topics &&
           r.first_offset != kMin && r.last_offset != kMax;
  };
  if (!rgs->empty()) {
    const records::RowGroupRef* lowest = &rgs->front();
    const records::RowGroupRef* highest = &rgs->front();
    for (const auto& r : *rgs) {
      if (r.last_offset > highest->last_offset || (r.last_offset == highest->last_offset && exact(r))) highest = &r;
      if (r.first_offset == lowest->first_offset && exact(r)) lowest = &r;
    }
    std::optional<int64_t> start, end;
    if (exact(*lowest)) start = lowest->first_offset;
    if (exact(*highest)) end = highest->last_offset + 1;
    // The offsets of the first and last records of segment i: from the
    // cache when it holds the segment, else a metadata-only read
    // (partition, offset and timestamp columns: no values decoded).
    auto bounds = [&](size_t i) -> Result<std::optional<std::pair<int64_t, int64_t>>> {
      using Out = std::optional<std::pair<int64_t, int64_t>>;
      if (auto seg = cache_->Get(part->keys[i])) {
        return seg->empty() ? Out() : Out(std::make_pair(seg->first_offset(), seg->last_offset()));
      }
      {
        std::lock_guard<std::mutex> lock(bounds_mu_);
        if (auto it = bounds_.find(part->keys[i]); it != bounds_.end()) return it->second;
      }
      ++counters_->offset_reads;
      records::ReadOptions ro = MetadataRead(options_, partition, part->lo[i], part->hi(i));
      ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(st.plan, ro));
      Out out;
      records::RecordBatch b;
      while (true) {
        ASSIGN_OR_RAISE(bool more, reader->Next(&b));
        if (!more) break;
        for (const auto& r : b.records) {
          if (r.partition != partition) continue;
          if (!out) out = std::make_pair(r.offset, r.offset);
          out->second = r.offset;
        }
      }
      std::lock_guard<std::mutex> lock(bounds_mu_);
      if (bounds_.size() >= 65536) bounds_.clear();  // a bound on memory; entries are cheap to read again
      bounds_[part->keys[i]] = out;
      return out;
    };
    size_t first = 0;
    for (; !start && first < part->lo.size(); ++first) {
      ASSIGN_OR_RAISE(auto b, bounds(first));
      if (b) start = b->first;
    }
    if (start) {
      for (size_t i = part->lo.size(); !end && i-- > 0;) {
        ASSIGN_OR_RAISE(auto b, bounds(i));
        if (b) end = b->second + 1;
      }
    }
    if (start && end) {
      o.log_start = *start;
      o.high_watermark = *end;
    }
  }
  {
    std::lock_guard<std::mutex> lock(part->mu);
    part->offsets = o;
  }
  Served(st, partition, &o);
  return o;
}

Result<FetchResult> ServedTopic::Fetch(int32_t partition, int64_t fetch_offset, int64_t max_bytes) {
  FetchResult out;
  if (partition < 0 || partition >= partition_count()) {
    out.error = kafka::ErrorCode::kUnknownTopicOrPartition;
    return out;
  }
  auto st = state();  // one snapshot answers the whole fetch
  ASSIGN_OR_RAISE(out.offsets, OffsetsIn(*st, partition));
  if (fetch_offset < out.offsets.log_start || fetch_offset > out.offsets.high_watermark) {
    out.error = kafka::ErrorCode::kOffsetOutOfRange;
    return out;
  }
  if (fetch_offset == out.offsets.high_watermark) return out;
  ASSIGN_OR_RAISE(auto part, st->PartOf(partition));
  // Batches are encoded with epoch 0 and cached; those after a truncation
  // leave with the epoch of their last record (a batch that straddles an
  // epoch's start -- files compacted across it -- takes the later epoch, so
  // a consumer validating after it never sees a false truncation).
  const std::vector<EpochStart> epochs = epochs_->History(partition);
  // Appends a segment's batches from the fetch offset on while they fit
  // (the first always: KIP-74); false once the response is full.
  auto take = [&](const Segment& seg) {
    for (const auto& b : seg.batches) {
      if (b.last_offset < fetch_offset) continue;  // before the fetch offset: never the one holding it
      const int64_t size = static_cast<int64_t>(b.bytes->size());
      if (!out.batches.empty() && out.bytes + size > max_bytes) return false;
      const int32_t epoch = options_.batch_leader_epoch < 0 ? -1 : EpochAt(epochs, b.last_offset);
      out.batches.push_back(kafka::WithLeaderEpoch(b.bytes, epoch));
      out.bytes += size;
    }
    return out.batches.empty() || out.bytes < max_bytes;
  };
  auto it = std::upper_bound(part->lo.begin(), part->lo.end(), fetch_offset);
  size_t i = it == part->lo.begin() ? 0 : static_cast<size_t>(it - part->lo.begin()) - 1;
  // A segment not cached, where the cache has no room for one without
  // evicting segments consumers are still in (more partitions read at once
  // than their segments fit in --cache-size): read as a streamed partition
  // is, in cuts of about a Fetch by a reader kept open for the next Fetch,
  // instead of decoding the whole segment for each Fetch that finds it
  // evicted. Once so, the consumer's next Fetch continues that reader.
  const StreamedPartition sp{st->plan, partition, st->key_prefix, part->row_groups};
  const bool pressed = !part->streamed && i < part->lo.size() && !cache_->Has(part->keys[i]) &&
                       (Pressed() || streams_->HasCursorAt(sp, fetch_offset));
  if (pressed) ++counters_->pressure_reads;
  if (part->streamed || pressed) {
    // Pressed: cuts of about this Fetch's share, so that the next Fetch
    // continues the reader at the next cut rather than needing this one
    // again from a cache that has no room to keep it.
    const int64_t target = pressed ? PressedCut(max_bytes) : 0;
    int64_t pos = fetch_offset;
    while (pos < out.offsets.high_watermark) {
      auto seg = streams_->SegmentAt(sp, pos, target);
      if (!seg.ok()) {
        return seg.status().WithContext(fmt::format("topic '{}' (table {}) partition {} from offset {}", config_.name,
                                                    st->table->name, partition, pos));
      }
      if (!*seg || (*seg)->hi <= pos) break;
      const bool more = take(**seg);
      pos = (*seg)->hi;
      if (!more) break;
    }
    // The consumer's next cut, read while it takes this one.
    if (ahead_ && pos < out.offsets.high_watermark) {
      Ahead([this, st, sp, pos, target] { (void)streams_->SegmentAt(sp, pos, target); });
    }
    return out;
  }
  // The segment after the last one returned, read while the consumer takes
  // these -- if the cache has room for it (about the size of the last one)
  // without evicting what consumers are still reading (batch_cache.h).
  int64_t last_bytes = 0;
  auto read_next = [&](size_t next) {
    if (!ahead_ || next >= part->lo.size() || cache_->Has(part->keys[next])) return;
    if (!cache_->HasRoomFor(last_bytes)) {
      ++counters_->read_aheads_skipped;
      return;
    }
    Ahead([this, st, partition, next] { (void)LoadSegment(*st, partition, next); });
  };
  // A segment neither cached nor being read (a consumer that seeks, or one
  // ahead of the read-ahead): where its row groups can be read in part, this
  // Fetch's records alone are decoded (SeekRead) and the whole segment is
  // read for the cache on the load pool; else the segment is read on the
  // load pool and this Fetch answered as soon as its own batches are
  // encoded, not the whole segment.
  if (i < part->lo.size() && !cache_->Has(part->keys[i])) {
    ASSIGN_OR_RAISE(auto seek, SeekRead(*st, partition, i, fetch_offset, max_bytes));
    if (seek && !seek->batches.empty()) {
      LoadInBackground(st, partition, i);
      take(*seek);
      return out;
    }
    ASSIGN_OR_RAISE(auto early, LoadForFetch(st, partition, i, fetch_offset, max_bytes));
    Segment seg;
    seg.batches = std::move(early.batches);
    for (const auto& b : seg.batches) last_bytes += static_cast<int64_t>(b.bytes->size());
    const bool more = take(seg) && early.reaches_end;
    if (!more) {
      read_next(i + 1);
      return out;
    }
    cache_->Passed(part->keys[i]);
    ++i;
  }
  for (; i < part->lo.size(); ++i) {
    ASSIGN_OR_RAISE(auto seg, LoadSegment(*st, partition, i));
    last_bytes = seg->bytes;
    if (!take(*seg)) break;
    cache_->Passed(part->keys[i]);  // read to its end: evicted before what others still read
  }
  read_next(i + 1);
  return out;
}

Result<std::optional<OffsetAndTime>> ServedTopic::OffsetForTime(int32_t partition, int64_t ts_ms) {
  using Out = std::optional<std::pair<int64_t, int64_t>>;
  if (partition < 0 || partition >= partition_count()) {
    return Status::NotFound("topic '{}' has no partition {} (it has {})", config_.name, partition, partition_count());
  }
  auto st = state();
  if (partition > st->max_partition) return Out();
  ASSIGN_OR_RAISE(auto rg, st->plan->FirstAtOrAfterTime(partition, ts_ms));
  if (!rg) return Out();
  // Statistics name the row group; the exact record is found by reading
  // forward from it (deleted rows and other partitions' rows skipped).
  records::ReadOptions ro = MetadataRead(options_, partition, rg->first_offset, kMax);
  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(st->plan, ro));
  records::RecordBatch b;
  while (true) {
    ASSIGN_OR_RAISE(bool more, reader->Next(&b));
    if (!more) return Out();
    for (const auto& r : b.records) {
      if (r.partition == partition && r.timestamp_ms >= ts_ms) return Out(std::make_pair(r.offset, r.timestamp_ms));
    }
  }
}

Result<std::optional<OffsetAndTime>> ServedTopic::MaxTimestamp(int32_t partition) {
  using Out = std::optional<std::pair<int64_t, int64_t>>;
  if (partition < 0 || partition >= partition_count()) {
    return Status::NotFound("topic '{}' has no partition {} (it has {})", config_.name, partition, partition_count());
  }
  auto st = state();
  if (partition > st->max_partition) return Out();
  ASSIGN_OR_RAISE(auto rgs, st->plan->RowGroups(partition));
  // Row groups by their greatest timestamp (statistics), highest first: once
  // a row group's bound is below the best record found, none after it can
  // beat it. Equal bounds are read too, for the lowest offset among ties.
  std::vector<const records::RowGroupRef*> order;
  for (const auto& r : *rgs) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->max_timestamp_ms > b->max_timestamp_ms; });
  Out best;
  for (const auto* r : order) {
    if (best && r->max_timestamp_ms < best->second) break;
    records::ReadOptions ro =
        MetadataRead(options_, partition, r->first_offset, r->last_offset == kMax ? kMax : r->last_offset + 1);
    ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(st->plan, ro));
    records::RecordBatch b;
    while (true) {
      ASSIGN_OR_RAISE(bool more, reader->Next(&b));
      if (!more) break;
      for (const auto& rec : b.records) {
        if (rec.partition != partition) continue;
        if (!best || rec.timestamp_ms > best->second ||
            (rec.timestamp_ms == best->second && rec.offset < best->first)) {
          best = std::make_pair(rec.offset, rec.timestamp_ms);
        }
      }
    }
  }
  return best;
}

Status ServedTopic::RefreshIfChanged() {
  const uint64_t seen = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return refresh_generation_;
  }();
  std::lock_guard<std::mutex> refresh(refresh_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Another caller reloaded while this one waited, or a reload started
    // moments ago: share its answer.
    if (refresh_generation_ != seen) return last_refresh_;
    if (refresh_generation_ > 0 &&
        std::chrono::steady_clock::now() - last_refresh_start_ < options_.min_check_interval) {
      return last_refresh_;
    }
  }
  const auto started = std::chrono::steady_clock::now();
  const std::string where = fmt::format("refreshing topic '{}' (table {})", config_.name, config_.table);
  auto current = state();
  Status status = [&]() -> Status {
    Result<iceberg::Table> table = Status::Internal("unset");
    {
      std::lock_guard<std::mutex> lock(CatalogMutex());
      table = catalog_->LoadTable(id_);
    }
    if (!table.ok()) return table.status().WithContext(where);
    if (table->metadata_location == current->table->metadata_location) return Status::OK();
    auto snap = iceberg::SelectSnapshot(table->metadata, {});
    if (!snap.ok()) return snap.status().WithContext(where);
    std::optional<int64_t> id;
    if (*snap) id = (*snap)->snapshot_id;
    if (id == current->snapshot_id) return Status::OK();  // metadata changed, data did not
    auto next = MakeState(config_, std::make_shared<const iceberg::Table>(std::move(*table)));
    if (!next.ok()) return next.status().WithContext(where);
    auto lowered = Lowered(**next, current->snapshot_id);
    if (!lowered.ok()) return lowered.status().WithContext(where);
    std::lock_guard<std::mutex> lock(mu_);
    Truncate(**next, *lowered);  // with the swap: no Fetch sees the new end under the old epoch
    state_ = std::move(*next);
    partition_count_ = std::max(partition_count_, state_->max_partition + 1);
    ++counters_->refreshes;
    streams_->Retain(state_->plan.get());
    return Status::OK();
  }();
  // Refreshes are serialized (refresh_mu_): a new state is this one's.
  if (auto now = state(); now != current) {
    auto name = [](const std::optional<int64_t>& id) { return id ? std::to_string(*id) : std::string("(none)"); };
    log::Info("topic '{}' (table {}): serving snapshot {} (was {})", config_.name, config_.table, name(now->snapshot_id),
              name(current->snapshot_id));
  }
  if (status.ok()) status = epochs_->Save(state()->snapshot_id).WithContext(where);
  std::lock_guard<std::mutex> lock(mu_);
  ++refresh_generation_;
  last_refresh_ = status;
  last_refresh_start_ = started;
  return status;
}

}  // namespace thaw::serve
