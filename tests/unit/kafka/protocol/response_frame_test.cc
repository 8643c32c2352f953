#include "thaw/kafka/protocol/response_frame.h"

#include <gtest/gtest.h>

#include "test_hex.h"

namespace thaw::kafka {
namespace {

using thaw::testing::Hex;

TEST(ResponseFrame, SizeCountsTheHeaderAndTheBodySentAfterIt) {
  // Header v0: the correlation id alone; size = 4 + body.
  EXPECT_EQ(Hex(EncodeResponseHead(7, 0, 10)), "0000000e00000007");
  // Header v1 (flexible): correlation id + no tagged fields; size = 5 + body.
  EXPECT_EQ(Hex(EncodeResponseHead(0x01020304, 1, 0)), "000000050102030400");
}

}  // namespace
}  // namespace thaw::kafka
