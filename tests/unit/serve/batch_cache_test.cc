// The encoded-batch cache on its own: LRU within the byte bound, in-flight
// dedup (concurrent requests run one load), loads that fill several keys,
// failed loads not cached.
#include "thaw/serve/batch_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <thread>
#include <vector>

namespace thaw::serve {
namespace {

std::shared_ptr<const Segment> SegmentOf(int64_t lo, int64_t bytes) {
  auto s = std::make_shared<Segment>();
  s->lo = lo;
  s->hi = lo + 1;
  EncodedBatch b;
  b.base_offset = b.last_offset = lo;
  b.records = 1;
  b.bytes = std::make_shared<const std::string>(static_cast<size_t>(bytes), 'x');
  s->batches.push_back(b);
  s->bytes = bytes;
  return s;
}

BatchCache::Loader Fill(int64_t bytes, std::atomic<int>* calls) {
  return [bytes, calls](const std::vector<std::string>& keys) -> Result<BatchCache::Loaded> {
    ++*calls;
    BatchCache::Loaded out;
    for (const auto& k : keys) out[k] = SegmentOf(static_cast<int64_t>(k.size()), bytes);
    return out;
  };
}

// Loads each key in turn, `bytes` each.
void LoadEach(BatchCache& cache, std::initializer_list<const char*> keys, int64_t bytes, std::atomic<int>* calls) {
  for (const char* k : keys) ASSERT_TRUE(cache.GetOrLoad(k, {}, Fill(bytes, calls)).ok()) << k;
}

TEST(BatchCache, KeepsRecentlyUsedWithinTheByteBound) {
  BatchCache cache(300);
  std::atomic<int> calls{0};
  LoadEach(cache, {"a", "b", "c"}, 100, &calls);
  EXPECT_EQ(calls, 3);
  ASSERT_NE(cache.Get("a"), nullptr);                             // a is now the most recent
  ASSERT_TRUE(cache.GetOrLoad("d", {}, Fill(100, &calls)).ok());  // evicts b, the least recent
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_NE(cache.Get("a"), nullptr);
  EXPECT_NE(cache.Get("c"), nullptr);
  auto s = cache.stats();
  EXPECT_EQ(s.bytes, 300);
  EXPECT_EQ(s.entries, 3);
  EXPECT_EQ(s.evictions, 1);
  EXPECT_EQ(s.loads, 4);
  // A segment bigger than the whole cache is returned, not kept.
  auto big = cache.GetOrLoad("huge", {}, Fill(1000, &calls));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)->bytes, 1000);
  EXPECT_EQ(cache.Get("huge"), nullptr);
  EXPECT_EQ(cache.stats().bytes, 300);
}

// Sequential consumers: a segment read past goes before the segments
// consumers are still in, even a more recent one; a hit makes it current
// again; room for read-ahead counts passed segments as free.
TEST(BatchCache, PassedSegmentsAreEvictedFirst) {
  BatchCache cache(300);
  std::atomic<int> calls{0};
  LoadEach(cache, {"a", "b", "c"}, 100, &calls);
  EXPECT_FALSE(cache.HasRoomFor(1));
  cache.Passed("c");  // the most recent, but read past
  cache.Passed("missing");  // not cached: nothing happens
  EXPECT_TRUE(cache.HasRoomFor(100));
  EXPECT_FALSE(cache.HasRoomFor(101));
  EXPECT_EQ(cache.stats().passed_bytes, 100);
  ASSERT_TRUE(cache.GetOrLoad("d", {}, Fill(100, &calls)).ok());  // evicts c, not a (the least recent)
  EXPECT_EQ(cache.Get("c"), nullptr);
  EXPECT_NE(cache.Get("a"), nullptr);
  auto s = cache.stats();
  EXPECT_EQ(s.evictions, 1);
  EXPECT_EQ(s.evicted_unpassed, 0);
  EXPECT_EQ(s.passed_bytes, 0);
  // A passed segment another consumer reads again is current again.
  cache.Passed("b");
  EXPECT_NE(cache.Get("b"), nullptr);
  EXPECT_EQ(cache.stats().passed_bytes, 0);
  ASSERT_TRUE(cache.GetOrLoad("e", {}, Fill(100, &calls)).ok());  // nothing passed: the LRU one (d)
  EXPECT_EQ(cache.Get("d"), nullptr);
  EXPECT_EQ(cache.stats().evicted_unpassed, 1);
}

TEST(BatchCache, ConcurrentRequestsShareOneLoad) {
  BatchCache cache(1 << 20);
  std::atomic<int> calls{0};
  std::atomic<bool> go{false};
  auto slow = [&](const std::vector<std::string>& keys) -> Result<BatchCache::Loaded> {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    BatchCache::Loaded out;
    for (const auto& k : keys) out[k] = SegmentOf(1, 10);
    return out;
  };
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      while (!go) std::this_thread::yield();
      // Half ask for "k", half for "sibling", which the load of "k" also fills.
      auto r = i % 2 ? cache.GetOrLoad("sibling", {}, slow) : cache.GetOrLoad("k", {"sibling"}, slow);
      if (r.ok() && *r) ++ok;
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 8);
  auto s = cache.stats();
  // Every request was answered by a load, a wait on one, or a hit; loads
  // only when neither key was in flight.
  EXPECT_EQ(s.misses + s.waits + s.hits, 8);
  EXPECT_LE(calls.load(), 2);
  EXPECT_EQ(s.loads, calls.load());
  EXPECT_NE(cache.Get("k"), nullptr);
  EXPECT_NE(cache.Get("sibling"), nullptr);
}

TEST(BatchCache, FailedLoadIsNotCached) {
  BatchCache cache(1 << 20);
  int calls = 0;
  auto failing = [&](const std::vector<std::string>&) -> Result<BatchCache::Loaded> {
    ++calls;
    return Status::IOError("disk on fire");
  };
  auto r = cache.GetOrLoad("k", {}, failing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("disk on fire"), std::string::npos);
  std::atomic<int> fills{0};
  auto again = cache.GetOrLoad("k", {}, Fill(10, &fills));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(fills, 1);
  EXPECT_EQ(calls, 1);
  // A load that does not fill the key it was asked for is an error, not a hang.
  auto empty = [](const std::vector<std::string>&) -> Result<BatchCache::Loaded> { return BatchCache::Loaded{}; };
  EXPECT_FALSE(cache.GetOrLoad("nothing", {}, empty).ok());
}

}  // namespace
}  // namespace thaw::serve
