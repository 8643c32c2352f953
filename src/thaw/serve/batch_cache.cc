#include "thaw/serve/batch_cache.h"

#include <condition_variable>

#include "thaw/common/log.h"

namespace thaw::serve {

// A load in progress: its waiters block on `cv` until `done`.
struct BatchCache::Flight {
  std::condition_variable cv;
  bool done = false;
  Status status;
  Loaded loaded;
};

void BatchCache::TouchLocked(Entry& e) {
  lru_.splice(lru_.begin(), lru_, e.lru);
  if (e.passed) {
    e.passed = false;
    stats_.passed_bytes -= e.segment->bytes;
  }
  ++stats_.hits;
}

std::shared_ptr<const Segment> BatchCache::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  TouchLocked(it->second);
  return it->second.segment;
}

void BatchCache::Passed(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.passed) return;
  it->second.passed = true;
  stats_.passed_bytes += it->second.segment->bytes;
  lru_.splice(lru_.end(), lru_, it->second.lru);
}

bool BatchCache::HasRoomFor(int64_t bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.bytes - stats_.passed_bytes + bytes <= capacity_;
}

void BatchCache::InsertLocked(const std::string& key, std::shared_ptr<const Segment> segment) {
  if (!segment || segment->bytes > capacity_) return;
  if (auto it = entries_.find(key); it != entries_.end()) {
    stats_.bytes -= it->second.segment->bytes;
    if (it->second.passed) stats_.passed_bytes -= it->second.segment->bytes;
    lru_.erase(it->second.lru);
    entries_.erase(it);
  }
  lru_.push_front(key);
  stats_.bytes += segment->bytes;
  entries_.emplace(key, Entry{std::move(segment), lru_.begin()});
  ++stats_.filled;
  while (stats_.bytes > capacity_ && !lru_.empty()) {
    auto victim = entries_.find(lru_.back());
    stats_.bytes -= victim->second.segment->bytes;
    if (victim->second.passed) {
      stats_.passed_bytes -= victim->second.segment->bytes;
    } else if (++stats_.evicted_unpassed == 1) {
      log::Warn(
          "the batch cache ({} MiB, --cache-size) is evicting segments consumers have not read past: it is "
          "smaller than the segments they are reading at once, so Fetches decode some again; give it at least "
          "the partitions read at once times their segments' size (thaw_cache_evictions_unread_total counts these)",
          capacity_ >> 20);
    }
    entries_.erase(victim);
    lru_.pop_back();
    ++stats_.evictions;
  }
  stats_.entries = static_cast<int64_t>(entries_.size());
}

Result<std::shared_ptr<const Segment>> BatchCache::GetOrLoad(const std::string& key,
                                                             const std::vector<std::string>& also, const Loader& load) {
  std::shared_ptr<Flight> flight;
  std::vector<std::string> keys;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      TouchLocked(it->second);
      return it->second.segment;
    }
    if (auto it = flights_.find(key); it != flights_.end()) {
      auto f = it->second;
      ++stats_.waits;
      f->cv.wait(lock, [&] { return f->done; });
      if (!f->status.ok()) return f->status;
      auto s = f->loaded.find(key);
      if (s == f->loaded.end() || !s->second) {
        return Status::Internal("batch cache: the load that was to fill segment '{}' did not", key);
      }
      return s->second;
    }
    ++stats_.misses;
    ++stats_.loads;
    flight = std::make_shared<Flight>();
    keys.push_back(key);
    flights_.emplace(key, flight);
    for (const auto& k : also) {
      if (k == key || entries_.count(k) || flights_.count(k)) continue;
      keys.push_back(k);
      flights_.emplace(k, flight);
    }
  }
  auto loaded = load(keys);
  std::shared_ptr<const Segment> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& k : keys) flights_.erase(k);
    if (loaded.ok()) {
      for (const auto& k : keys) {
        auto it = loaded->find(k);
        if (it != loaded->end()) InsertLocked(k, it->second);
      }
      flight->loaded = std::move(*loaded);
      if (auto it = flight->loaded.find(key); it != flight->loaded.end()) out = it->second;
      if (!out) flight->status = Status::Internal("batch cache: the load for segment '{}' did not fill it", key);
    } else {
      flight->status = loaded.status();
    }
    flight->done = true;
  }
  flight->cv.notify_all();
  if (!flight->status.ok()) return flight->status;
  return out;
}

bool BatchCache::Has(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(key) > 0 || flights_.count(key) > 0;
}

void BatchCache::Put(const std::string& key, std::shared_ptr<const Segment> segment) {
  std::lock_guard<std::mutex> lock(mu_);
  InsertLocked(key, std::move(segment));
}

BatchCache::Stats BatchCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.loading = static_cast<int64_t>(flights_.size());
  return s;
}

}  // namespace thaw::serve
