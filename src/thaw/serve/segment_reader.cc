#include "thaw/serve/segment_reader.h"

#include <limits>
#include <optional>

namespace thaw::serve {

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// What a record weighs against BatchCut::max_bytes: its bytes plus a little
// for the per-record framing.
int64_t RecordWeight(const records::RecordBatch& b, const records::Record& r) {
  int64_t n = 8;
  if (r.key) n += static_cast<int64_t>(r.key->size());
  if (r.value) n += static_cast<int64_t>(r.value->size());
  for (const auto& h : b.HeadersOf(r)) n += static_cast<int64_t>(h.key.size() + (h.value ? h.value->size() : 0)) + 2;
  return n;
}
}  // namespace

Status BatchCutter::Add(const records::RecordBatch& source, size_t begin, size_t end) {
  if (begin >= end) return Status::OK();
  // The views of these records stay valid as long as their owners do.
  pending_.keepalive.insert(pending_.keepalive.end(), source.keepalive.begin(), source.keepalive.end());
  for (size_t i = begin; i < end; ++i) {
    const records::Record& r = source.records[i];
    const int64_t weight = RecordWeight(source, r);
    if (!pending_.records.empty()) {
      const records::Record& first = pending_.records.front();
      // A LogAppendTime batch has one timestamp for all its records (its
      // maxTimestamp, as consumers report it): cut where it changes.
      const bool log_append_split =
          r.timestamp_type == records::TimestampType::kLogAppendTime && r.timestamp_ms != first.timestamp_ms;
      if (r.timestamp_type != first.timestamp_type || log_append_split ||
          r.offset - first.offset > std::numeric_limits<int32_t>::max() ||
          static_cast<int64_t>(pending_.records.size()) >= cut_.max_records ||
          pending_bytes_ + weight > cut_.max_bytes) {
        RETURN_NOT_OK(Flush());
        pending_.keepalive.assign(source.keepalive.begin(), source.keepalive.end());
      }
    }
    if (!pending_.records.empty() && r.offset <= pending_.records.back().offset) {
      return Status::Internal("serve: records of partition {} out of offset order ({} after {})", r.partition, r.offset,
                              pending_.records.back().offset);
    }
    records::Record copy = r;
    copy.header_begin = static_cast<uint32_t>(pending_.headers.size());
    for (const auto& h : source.HeadersOf(r)) pending_.headers.push_back(h);
    pending_.records.push_back(copy);
    pending_bytes_ += weight;
  }
  return Status::OK();
}

Result<EncodedBatch> BatchCutter::EncodeOne(const records::RecordBatch& records) {
  auto bytes = std::make_shared<std::string>();
  RETURN_NOT_OK(kafka::AppendRecordBatch(records.records, records, batch_, bytes.get()));
  // Cached for long: no spare capacity (a compressed batch may have been
  // sized for its uncompressed records).
  if (bytes->capacity() > bytes->size() + bytes->size() / 8) bytes->shrink_to_fit();
  EncodedBatch b;
  b.base_offset = records.records.front().offset;
  b.last_offset = records.records.back().offset;
  b.records = static_cast<int32_t>(records.records.size());
  b.bytes = std::move(bytes);
  return b;
}

Status BatchCutter::Flush() {
  if (pending_.records.empty()) return Status::OK();
  ++batches_;
  if (defer_) {
    cuts_.push_back(std::move(pending_));
    encoded_.emplace_back();
  } else {
    ASSIGN_OR_RAISE(EncodedBatch b, EncodeOne(pending_));
    out_->bytes += static_cast<int64_t>(b.bytes->size());
    out_->batches.push_back(std::move(b));
  }
  pending_.Clear();
  pending_bytes_ = 0;
  return Status::OK();
}

Status BatchCutter::Finish() {
  RETURN_NOT_OK(Flush());
  pending_.Clear();
  return Status::OK();
}

Result<const EncodedBatch*> BatchCutter::Encode(size_t k) {
  if (!defer_ || k >= cuts_.size()) return Status::Internal("serve: batch {} of {} is not a deferred cut", k, cuts_.size());
  if (!encoded_[k]) {
    ASSIGN_OR_RAISE(EncodedBatch b, EncodeOne(cuts_[k]));
    encoded_[k] = std::move(b);
    cuts_[k] = records::RecordBatch();  // its views are no longer needed
  }
  return &*encoded_[k];
}

Status BatchCutter::EncodeAll() {
  if (!defer_) return Status::OK();
  for (size_t k = 0; k < cuts_.size(); ++k) {
    ASSIGN_OR_RAISE(const EncodedBatch* b, Encode(k));
    out_->bytes += static_cast<int64_t>(b->bytes->size());
    out_->batches.push_back(*b);
  }
  cuts_.clear();
  encoded_.clear();
  return Status::OK();
}

Result<SegmentReadResult> ReadSegments(const std::shared_ptr<const records::ReadPlan>& plan,
                                       const std::set<int32_t>& partitions, int64_t lo, int64_t hi,
                                       const SegmentReadOptions& options, const EarlyFetch* early) {
  if (partitions.empty()) return Status::Internal("serve: a segment read without partitions");
  records::ReadOptions ro;
  ro.partitions = partitions;
  if (lo != kMin) ro.from_offset = lo;
  if (hi != kMax) ro.to_offset = hi;
  ro.order = records::ReadOrder::kPerPartition;
  ro.memory_budget = options.memory_budget;
  ro.spill_dir = options.spill_dir;
  ro.decode_gate = options.decode_gate;
  ro.read_ahead = 1;  // a segment is normally one row group: nothing to read ahead of
  ro.require_narrow = options.require_narrow;
  ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(plan, ro));

  SegmentReadResult out;
  std::map<int32_t, BatchCutter> cutters;
  for (int32_t p : partitions) {
    Segment& s = out.segments[p];
    s.lo = lo;
    s.hi = hi;
    const bool defer = early && early->partition == p;
    cutters.emplace(std::piecewise_construct, std::forward_as_tuple(p),
                    std::forward_as_tuple(options.cut, options.batch, &s, defer));
  }
  records::RecordBatch b;
  while (true) {
    ASSIGN_OR_RAISE(bool more, reader->Next(&b));
    if (!more) break;
    size_t i = 0;
    while (i < b.records.size()) {
      const int32_t p = b.records[i].partition;
      size_t j = i + 1;
      while (j < b.records.size() && b.records[j].partition == p) ++j;
      auto c = cutters.find(p);
      if (c == cutters.end()) {
        return Status::Internal("serve: the reader returned partition {} of table {}, not asked for", p,
                                plan->table()->name);
      }
      RETURN_NOT_OK(c->second.Add(b, i, j));
      i = j;
    }
  }
  for (auto& [p, c] : cutters) {
    RETURN_NOT_OK(c.Finish());
    out.batches += c.batches();
  }
  if (early) {
    // The waiting Fetch's batches first, then the rest of its segment.
    auto c = cutters.find(early->partition);
    if (c != cutters.end()) {
      BatchCutter& cut = c->second;
      size_t k = 0;
      while (k < cut.cut_count() && cut.cut_last_offset(k) < early->fetch_offset) ++k;
      if (k < cut.cut_count()) {
        std::vector<EncodedBatch> taken;
        int64_t bytes = 0;
        for (; k < cut.cut_count(); ++k) {
          ASSIGN_OR_RAISE(const EncodedBatch* b, cut.Encode(k));
          const int64_t size = static_cast<int64_t>(b->bytes->size());
          if (!taken.empty() && bytes + size > early->max_bytes) break;
          taken.push_back(*b);
          bytes += size;
          if (bytes >= early->max_bytes) {
            ++k;
            break;
          }
        }
        early->deliver(std::move(taken), k >= cut.cut_count());
      }
      RETURN_NOT_OK(cut.EncodeAll());
    }
  }
  out.decode = reader->decode_stats();
  return out;
}

Result<std::unique_ptr<SegmentCursor>> SegmentCursor::Make(const std::shared_ptr<const records::ReadPlan>& plan,
                                                           int32_t partition, int64_t from,
                                                           const SegmentReadOptions& options) {
  records::ReadOptions ro;
  ro.partitions = std::set<int32_t>{partition};
  if (from != kMin) ro.from_offset = from;
  ro.order = records::ReadOrder::kPerPartition;
  ro.memory_budget = options.memory_budget;
  ro.spill_dir = options.spill_dir;
  ro.decode_gate = options.decode_gate;
  ro.read_ahead = 1;
  // A cursor stays open between Fetches, beside one per partition being
  // read: a file whose dictionaries do not fit its share is spilled (no
  // dictionary held) rather than streamed, and what decoding freed is given
  // back to the system (the cache had no room: memory is short).
  ro.dictionary_allowance = 0;
  ro.return_freed = true;
  std::unique_ptr<SegmentCursor> c(new SegmentCursor());
  ASSIGN_OR_RAISE(c->reader_, records::RecordReader::Make(plan, ro));
  c->plan_ = plan;
  c->partition_ = partition;
  c->options_ = options;
  c->next_ = from;
  return c;
}

records::RecordReader::DecodeStats SegmentCursor::TakeDecodeStats() {
  const auto now = reader_->decode_stats();
  records::RecordReader::DecodeStats d;
  d.row_groups = now.row_groups - counted_.row_groups;
  d.rows = now.rows - counted_.rows;
  d.bytes = now.bytes - counted_.bytes;
  d.narrowed = now.narrowed - counted_.narrowed;
  counted_ = now;
  return d;
}

Result<Segment> SegmentCursor::Read(int64_t limit, int64_t target_bytes) {
  Segment s;
  s.lo = next_;
  BatchCutter cutter(options_.cut, options_.batch, &s);
  int64_t bytes = 0;
  std::optional<int64_t> last;
  bool at_limit = false;
  while (true) {
    if (pos_ >= pending_.records.size()) {
      if (done_) break;
      ASSIGN_OR_RAISE(bool more, reader_->Next(&pending_));
      pos_ = 0;
      if (!more) {
        done_ = true;
        pending_.Clear();
        break;
      }
    }
    const auto& recs = pending_.records;
    size_t j = pos_;
    bool full = false;
    for (; j < recs.size() && recs[j].offset < limit; ++j) {
      if (target_bytes > 0 && bytes >= target_bytes) {
        full = true;
        break;
      }
      if (recs[j].partition != partition_) {
        return Status::Internal("serve: the reader returned partition {} of table {}, not asked for", recs[j].partition,
                                plan_->table()->name);
      }
      bytes += RecordWeight(pending_, recs[j]);
    }
    RETURN_NOT_OK(cutter.Add(pending_, pos_, j));
    if (j > pos_) last = recs[j - 1].offset;
    pos_ = j;
    if (full) break;  // the rest of the batch starts the next segment
    if (j < recs.size()) {
      at_limit = true;
      break;
    }
    if (target_bytes > 0 && bytes >= target_bytes) break;
  }
  RETURN_NOT_OK(cutter.Finish());
  batches_ += cutter.batches();
  s.hi = at_limit ? limit : last ? *last + 1 : s.lo;
  next_ = s.hi;
  return s;
}

}  // namespace thaw::serve
