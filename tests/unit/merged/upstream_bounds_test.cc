// The per-connection cache of the upstream's bounds (merged/tiered_requests.h).
#include <gtest/gtest.h>

#include "thaw/merged/tiered_requests.h"

namespace thaw::merged {
namespace {

using Clock = std::chrono::steady_clock;

TEST(UpstreamBounds, AnEntryLastsAtMostMaxAgeAndOnlyForItsPartition) {
  UpstreamBounds b;
  const auto t0 = Clock::now();
  EXPECT_EQ(b.Fresh("orders", 0, t0), nullptr);
  b.Put("orders", 0, 1000, 5000, t0);
  const auto* e = b.Fresh("orders", 0, t0 + std::chrono::milliseconds(999));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->start, 1000);
  EXPECT_EQ(e->end, 5000);
  EXPECT_EQ(b.Fresh("orders", 1, t0), nullptr);
  EXPECT_EQ(b.Fresh("other", 0, t0), nullptr);
  EXPECT_EQ(b.Fresh("orders", 0, t0 + UpstreamBounds::kMaxAge + std::chrono::milliseconds(1)), nullptr);
  b.Put("orders", 0, 1200, 5100, t0 + std::chrono::seconds(2));  // asked again: replaced
  e = b.Fresh("orders", 0, t0 + std::chrono::seconds(2));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->start, 1200);
}

TEST(UpstreamBounds, StaysBoundedWhateverTheClientFetches) {
  UpstreamBounds b;
  const auto now = Clock::now();
  for (int32_t p = 0; p < static_cast<int32_t>(UpstreamBounds::kMaxEntries) * 3; ++p) b.Put("t", p, 1, 2, now);
  size_t held = 0;
  for (int32_t p = 0; p < static_cast<int32_t>(UpstreamBounds::kMaxEntries) * 3; ++p) held += b.Fresh("t", p, now) ? 1 : 0;
  EXPECT_LE(held, UpstreamBounds::kMaxEntries);
  EXPECT_NE(b.Fresh("t", static_cast<int32_t>(UpstreamBounds::kMaxEntries) * 3 - 1, now), nullptr);  // the newest kept
}

}  // namespace
}  // namespace thaw::merged
