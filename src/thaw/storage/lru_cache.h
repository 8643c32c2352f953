// A thread-safe LRU map bounded by the bytes its values hold, for the
// per-process caches of immutable files (footers, manifests, metadata).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace thaw::storage {

template <typename V>
class ByteLruCache {
 public:
  explicit ByteLruCache(int64_t capacity_bytes) : capacity_(capacity_bytes) {}

  std::optional<V> Get(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return std::nullopt;
    }
    ++hits_;
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->value;
  }

  // Entries larger than the whole capacity are not kept.
  void Put(const std::string& key, V value, int64_t bytes) {
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      used_ -= it->second->bytes;
      entries_.erase(it->second);
      index_.erase(it);
    }
    if (bytes > capacity_) return;
    entries_.push_front(Entry{key, std::move(value), bytes});
    index_[key] = entries_.begin();
    used_ += bytes;
    while (used_ > capacity_ && !entries_.empty()) {
      used_ -= entries_.back().bytes;
      index_.erase(entries_.back().key);
      entries_.pop_back();
    }
  }

  int64_t used_bytes() const {
    std::lock_guard lock(mu_);
    return used_;
  }
  int64_t hits() const {
    std::lock_guard lock(mu_);
    return hits_;
  }
  int64_t misses() const {
    std::lock_guard lock(mu_);
    return misses_;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    std::string key;
    V value;
    int64_t bytes;
  };
  mutable std::mutex mu_;
  int64_t capacity_;
  int64_t used_ = 0;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
  std::list<Entry> entries_;
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
};

}  // namespace thaw::storage
