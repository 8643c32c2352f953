#include "thaw/records/decode_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace thaw::records {
namespace {

TEST(DecodeGate, HoldsWhatFitsAndGivesItBackWhenReleased) {
  DecodeGate gate(100);
  {
    auto a = gate.Acquire(40);
    auto b = gate.Acquire(60);
    EXPECT_EQ(gate.held(), 100);
    a.Release();
    EXPECT_EQ(gate.held(), 60);
    a.Release();  // twice: nothing more
    EXPECT_EQ(gate.held(), 60);
  }
  EXPECT_EQ(gate.held(), 0);
  EXPECT_EQ(gate.peak(), 100);
  EXPECT_EQ(gate.waits(), 0);
}

TEST(DecodeGate, MovedHoldsReleaseOnce) {
  DecodeGate gate(100);
  DecodeGate::Hold outer;
  {
    auto h = gate.Acquire(30);
    outer = std::move(h);
  }
  EXPECT_EQ(gate.held(), 30);
  outer = gate.Acquire(20);  // the 30 given back, 20 taken
  EXPECT_EQ(gate.held(), 20);
  outer.Release();
  EXPECT_EQ(gate.held(), 0);
}

TEST(DecodeGate, WaitsUntilTheCostFitsAndClampsCostsAboveTheCapacity) {
  DecodeGate gate(100);
  auto first = gate.Acquire(70);
  std::atomic<bool> got{false};
  std::thread t([&] {
    auto big = gate.Acquire(1000);  // more than the capacity: waits until nothing else is held
    got = true;
    EXPECT_EQ(gate.held(), 100);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(got.load()) << "took 1000 bytes beside 70 of a 100-byte gate";
  first.Release();
  t.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(gate.held(), 0);
  EXPECT_EQ(gate.waits(), 1);
  EXPECT_LE(gate.peak(), 100);
}

TEST(DecodeGate, SaysToCollectEachTimeHalfTheCapacityWasGivenBack) {
  DecodeGate gate(100);
  auto a = gate.Acquire(30);
  auto b = gate.Acquire(30);
  auto c = gate.Acquire(30);
  EXPECT_FALSE(a.Release());  // 30 given back
  EXPECT_TRUE(b.Release());   // 60 >= 50: collect, count again from 0
  EXPECT_FALSE(c.Release());  // 30
  EXPECT_TRUE(gate.Acquire(20).Release());  // 50
  EXPECT_FALSE(DecodeGate::Hold().Release());
}

}  // namespace
}  // namespace thaw::records
