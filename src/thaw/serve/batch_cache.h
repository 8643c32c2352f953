// The encoded-batch cache of `thaw serve`: record batches v2 as a Fetch
// returns them, a segment (a run of a partition's offsets, see
// served_topic.h) per entry, bounded in bytes, least recently used dropped
// first. Shared by every topic of a server.
//
// Consumers read sequentially: a segment a Fetch has read past is marked
// passed (Passed) and goes to the eviction end, so that what consumers are
// still reading outlives what they are done with; read-ahead loads only when
// the cache has room without evicting a segment that is not passed
// (HasRoomFor). A cache smaller than the segments its consumers are in at
// once still thrashes (each Fetch decoding its segment again):
// Stats::evicted_unpassed counts those evictions, and serve says so.
//
// A key names what a segment's bytes are made of -- the topic's table and
// compression, the partition, the segment's offset range and every row group
// (file path, row group, delete files) that holds records of it -- not the
// snapshot: a snapshot that only appends files leaves the keys of earlier
// segments unchanged, so their entries stay valid across refreshes; a
// snapshot that deletes or rewrites gives the segments it touches new keys,
// and the old entries, unreachable, age out.
//
// Concurrent requests for a key being loaded wait for that one load
// (in-flight dedup); a load may fill several keys at once (a row group that
// holds several Kafka partitions is decoded once for all of them), and
// requests for any of those keys wait for it too.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::serve {

// One encoded record batch v2 of a segment.
struct EncodedBatch {
  int64_t base_offset = 0;  // first record's offset
  int64_t last_offset = 0;  // last record's offset (base + lastOffsetDelta)
  int32_t records = 0;
  std::shared_ptr<const std::string> bytes;  // the whole batch, as sent
};

// A segment's batches, in offset order. Empty when every row of the
// segment's range was deleted (or the range holds none of the partition).
struct Segment {
  int64_t lo = 0, hi = 0;  // the offset range [lo, hi) it covers
  std::vector<EncodedBatch> batches;
  int64_t bytes = 0;  // sum of the batches' sizes
  bool empty() const { return batches.empty(); }
  int64_t first_offset() const { return batches.front().base_offset; }
  int64_t last_offset() const { return batches.back().last_offset; }
};

class BatchCache {
 public:
  struct Stats {
    int64_t hits = 0;       // Get / GetOrLoad answered from the cache
    int64_t misses = 0;     // GetOrLoad calls that ran a load
    int64_t waits = 0;      // GetOrLoad calls that waited for another's load (in-flight dedup)
    int64_t loads = 0;      // loads run
    int64_t filled = 0;     // entries inserted by loads (more than loads when a load fills several keys)
    int64_t evictions = 0;  // entries dropped to stay under capacity
    int64_t evicted_unpassed = 0;  // ... of them, segments no Fetch had read past
    int64_t passed_bytes = 0;      // now: bytes of passed entries
    int64_t entries = 0;    // now
    int64_t bytes = 0;      // now
    int64_t loading = 0;    // now: segments being read (a load may fill several)
  };

  // What one load produced: the segment of every key it filled (it must
  // fill the key asked for; it may fill others it was given).
  using Loaded = std::map<std::string, std::shared_ptr<const Segment>>;
  using Loader = std::function<Result<Loaded>(const std::vector<std::string>& keys)>;

  explicit BatchCache(int64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The cached segment of `key`, or null (counts a hit when found).
  std::shared_ptr<const Segment> Get(const std::string& key);

  // The segment of `key`: from the cache, from a load already running for
  // it (waits), or by running `load` on this thread with `key` first and
  // those of `also` that are neither cached nor being loaded (other
  // threads asking for them wait for this load). A failed load is not
  // cached: its waiters get its error and the next request loads again.
  // A segment bigger than the whole capacity is returned but not kept.
  Result<std::shared_ptr<const Segment>> GetOrLoad(const std::string& key, const std::vector<std::string>& also,
                                                   const Loader& load);

  // Whether `key` is cached or being loaded (no hit counted).
  bool Has(const std::string& key) const;
  // A Fetch read past the end of `key`'s segment: it is evicted before any
  // segment not passed (a later Get or load of it makes it recent again).
  void Passed(const std::string& key);
  // Whether `bytes` more fit without evicting a segment that is not passed.
  bool HasRoomFor(int64_t bytes) const;

  // Keeps `segment` under `key` (a segment cut as read, whose key is known
  // only once it is read: streamed_segments.h). Counts as a fill.
  void Put(const std::string& key, std::shared_ptr<const Segment> segment);

  Stats stats() const;
  int64_t capacity() const { return capacity_; }

 private:
  struct Flight;
  struct Entry {
    std::shared_ptr<const Segment> segment;
    std::list<std::string>::iterator lru;  // position in lru_ (front = most recent)
    bool passed = false;
  };
  void InsertLocked(const std::string& key, std::shared_ptr<const Segment> segment);
  void TouchLocked(Entry& e);  // a hit: most recent, no longer passed

  const int64_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_;
  std::unordered_map<std::string, std::shared_ptr<Flight>> flights_;
  Stats stats_;
};

}  // namespace thaw::serve
