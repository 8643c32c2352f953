#include "thaw/serve/streamed_segments.h"

#include <algorithm>
#include <limits>

namespace thaw::serve {

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
}  // namespace

std::string RowGroupDescription(const records::PlannedFile& f, int row_group) {
  std::string desc = fmt::format("{}#{}@{}/{}", f.task.file->path, row_group, f.task.data_sequence_number,
                                 f.task.file_sequence_number);
  for (const auto& d : f.task.deletes) {
    desc += fmt::format("-{}:{}:{}", d->path, d->content_offset.value_or(-1), d->record_count);
  }
  desc += '\x1f';
  return desc;
}

StreamedSegments::StreamedSegments(Options options, std::shared_ptr<BatchCache> cache)
    : options_(std::move(options)), cache_(std::move(cache)) {}

StreamedSegments::~StreamedSegments() = default;

std::string StreamedSegments::DigestOf(const StreamedPartition& part, int64_t lo, int64_t hi) const {
  std::string desc;
  const auto& files = part.plan->files();
  for (const auto& r : *part.row_groups) {
    if (r.first_offset >= hi || r.last_offset < lo) continue;
    desc += RowGroupDescription(files[r.file], r.row_group);
  }
  return Digest(desc);
}

std::string StreamedSegments::KeyOf(const StreamedPartition& part, int64_t lo, int64_t hi,
                                    const std::string& digest) const {
  return fmt::format(
      "{}\x1fp{}\x1f"
      "cut{}..{}\x1f{}",
      part.key_prefix, part.partition, lo, hi, digest);
}

bool StreamedSegments::HasCursorAt(const StreamedPartition& part, int64_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& i : idle_) {
    const SegmentCursor& c = *i.cursor;
    if (c.plan() == part.plan.get() && c.partition() == part.partition && c.next() == offset) return true;
  }
  return false;
}

Result<std::unique_ptr<SegmentCursor>> StreamedSegments::TakeCursor(const StreamedPartition& part, int64_t lo) {
  std::vector<std::unique_ptr<SegmentCursor>> closed;  // destroyed outside the lock
  int64_t budget = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      const SegmentCursor& c = *it->cursor;
      if (c.plan() == part.plan.get() && c.partition() == part.partition && c.next() == lo) {
        auto out = std::move(it->cursor);
        idle_.erase(it);
        ++stats_.cursors_continued;
        return out;
      }
    }
    // A new cursor: close the least recently used idle ones beyond the
    // limit, then take half of what the open ones leave of the budget.
    while (!idle_.empty() && budgets_.size() >= options_.max_cursors) {
      ForgetLocked(*idle_.back().cursor);
      closed.push_back(std::move(idle_.back().cursor));
      idle_.pop_back();
    }
    const int64_t total = options_.read.memory_budget;
    budget = std::max((total - budget_used_) / 2, std::max<int64_t>(total / 128, int64_t{4} << 20));
    budget_used_ += budget;
    ++stats_.cursors_opened;
  }
  closed.clear();
  SegmentReadOptions ro = options_.read;
  ro.memory_budget = budget;
  auto c = SegmentCursor::Make(part.plan, part.partition, lo, ro);
  std::lock_guard<std::mutex> lock(mu_);
  if (!c.ok()) {
    budget_used_ -= budget;
    return c.status();
  }
  budgets_[c->get()] = budget;
  return std::move(*c);
}

void StreamedSegments::DropCursor(std::unique_ptr<SegmentCursor> c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ForgetLocked(*c);
  }
  c.reset();
}

void StreamedSegments::ReturnCursor(std::unique_ptr<SegmentCursor> c) {
  std::unique_ptr<SegmentCursor> closed;
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_front(Idle{std::move(c)});
  while (budgets_.size() > options_.max_cursors && !idle_.empty()) {
    ForgetLocked(*idle_.back().cursor);
    closed = std::move(idle_.back().cursor);
    idle_.pop_back();
  }
}

void StreamedSegments::CountLocked(SegmentCursor& c) {
  const auto d = c.TakeDecodeStats();
  stats_.decode.row_groups += d.row_groups;
  stats_.decode.rows += d.rows;
  stats_.decode.bytes += d.bytes;
}

void StreamedSegments::ForgetLocked(SegmentCursor& c) {
  CountLocked(c);  // what its reader decoded ahead and no cut used counts too
  budget_used_ -= budgets_[&c];
  budgets_.erase(&c);
  ++stats_.cursors_closed;
}

Result<Segment> StreamedSegments::ReadWith(SegmentCursor& c, int64_t limit, int64_t target) {
  const int64_t batches_before = c.batches();
  auto seg = c.Read(limit, target);
  std::lock_guard<std::mutex> lock(mu_);
  CountLocked(c);
  stats_.batches += c.batches() - batches_before;
  if (seg.ok()) ++stats_.segments_cut;
  return seg;
}

Result<std::shared_ptr<const Segment>> StreamedSegments::SegmentAt(const StreamedPartition& part, int64_t offset,
                                                                   int64_t target_bytes) {
  const int32_t p = part.partition;
  int64_t lo = offset, stop = kMax;
  std::optional<Cut> known;
  std::shared_future<Result<std::shared_ptr<const Segment>>> wait;
  std::promise<Result<std::shared_ptr<const Segment>>> promise;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto& cuts = cuts_[p];
    auto it = cuts.upper_bound(offset);
    if (it != cuts.begin()) {
      auto prev = std::prev(it);
      if (prev->second.hi > offset) {
        lock.unlock();
        const std::string digest = DigestOf(part, prev->first, prev->second.hi);
        lock.lock();
        prev = cuts.find(prev->first);  // the map may have changed meanwhile
        if (prev != cuts.end() && prev->second.hi > offset) {
          if (prev->second.digest == digest) {
            lo = prev->first;
            known = prev->second;
          } else {
            cuts.erase(prev);  // rewritten by a later snapshot
          }
        }
      }
    }
    if (!known) {
      it = cuts.upper_bound(offset);
      if (it != cuts.end()) stop = it->first;
      const auto key = std::make_pair(p, lo);
      if (auto r = reading_.find(key); r != reading_.end()) {
        wait = r->second;
        ++stats_.waits;
      } else {
        reading_.emplace(key, promise.get_future().share());
      }
    }
  }
  if (known) {
    const std::string key = KeyOf(part, lo, known->hi, known->digest);
    const int64_t hi = known->hi;
    return cache_->GetOrLoad(key, {}, [&](const std::vector<std::string>&) -> Result<BatchCache::Loaded> {
      ASSIGN_OR_RAISE(auto cursor, TakeCursor(part, lo));
      auto seg = ReadWith(*cursor, hi, 0);
      if (!seg.ok()) {
        DropCursor(std::move(cursor));  // its position is unknown
        return seg.status();
      }
      seg->hi = hi;  // the same range as when it was first cut, records or not
      ReturnCursor(std::move(cursor));
      BatchCache::Loaded out;
      out.emplace(key, std::make_shared<const Segment>(std::move(*seg)));
      return out;
    });
  }
  if (wait.valid()) {
    auto r = wait.get();
    if (!r.ok()) return r.status();
    if (!*r || (*r)->hi > offset) return *r;
    return SegmentAt(part, offset, target_bytes);  // that cut ended before `offset`: look again
  }
  // A new cut from `lo`, ending at about segment_bytes or where the next
  // known cut starts.
  Result<std::shared_ptr<const Segment>> result = [&]() -> Result<std::shared_ptr<const Segment>> {
    ASSIGN_OR_RAISE(auto cursor, TakeCursor(part, lo));
    auto read = ReadWith(*cursor, stop, target_bytes > 0 ? target_bytes : options_.segment_bytes);
    if (!read.ok()) {
      DropCursor(std::move(cursor));
      return read.status();
    }
    Segment seg = std::move(*read);
    ReturnCursor(std::move(cursor));
    if (seg.hi <= seg.lo) return std::shared_ptr<const Segment>();  // nothing at or after lo
    const std::string digest = DigestOf(part, seg.lo, seg.hi);
    auto out = std::make_shared<const Segment>(std::move(seg));
    cache_->Put(KeyOf(part, out->lo, out->hi, digest), out);
    std::lock_guard<std::mutex> lock(mu_);
    cuts_[p][out->lo] = Cut{out->hi, digest};
    return out;
  }();
  {
    std::lock_guard<std::mutex> lock(mu_);
    reading_.erase(std::make_pair(p, lo));
  }
  promise.set_value(result);
  return result;
}

void StreamedSegments::Retain(const records::ReadPlan* current) {
  std::vector<std::unique_ptr<SegmentCursor>> closed;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = idle_.begin(); it != idle_.end();) {
    if (it->cursor->plan() == current) {
      ++it;
      continue;
    }
    ForgetLocked(*it->cursor);
    closed.push_back(std::move(it->cursor));
    it = idle_.erase(it);
  }
}

StreamedSegments::Stats StreamedSegments::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace thaw::serve
