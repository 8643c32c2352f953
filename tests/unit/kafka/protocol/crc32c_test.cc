#include "thaw/kafka/protocol/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace thaw::kafka {
namespace {

// RFC 3720 (iSCSI) appendix B.4 test vectors, plus the common check value.
struct Vector {
  std::string data;
  uint32_t crc;
};

std::vector<Vector> Vectors() {
  std::vector<Vector> v;
  v.push_back({std::string(32, '\0'), 0x8A9136AAu});
  v.push_back({std::string(32, '\xFF'), 0x62A8AB43u});
  std::string inc, dec;
  for (int i = 0; i < 32; ++i) inc.push_back(static_cast<char>(i));
  for (int i = 31; i >= 0; --i) dec.push_back(static_cast<char>(i));
  v.push_back({inc, 0x46DD794Eu});
  v.push_back({dec, 0x113FDB5Cu});
  const unsigned char pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  v.push_back({std::string(reinterpret_cast<const char*>(pdu), sizeof(pdu)), 0xD9963A56u});
  v.push_back({"123456789", 0xE3069283u});
  v.push_back({"", 0u});
  return v;
}

TEST(Crc32c, Rfc3720Vectors) {
  for (const auto& v : Vectors()) {
    EXPECT_EQ(Crc32c(v.data), v.crc) << v.data.size() << " bytes";
    EXPECT_EQ(Crc32cSoftware(v.data.data(), v.data.size()), v.crc) << v.data.size() << " bytes";
    if (Crc32cHardwareAvailable()) {
      EXPECT_EQ(Crc32cHardware(v.data.data(), v.data.size()), v.crc);
    }
  }
}

TEST(Crc32c, IncrementalAndUnalignedAgreeAcrossImplementations) {
  std::mt19937_64 rng(42);
  std::string buf(5000, '\0');
  for (auto& c : buf) c = static_cast<char>(rng());
  for (size_t start : {0u, 1u, 3u, 7u, 9u}) {
    for (size_t len : {0u, 1u, 7u, 8u, 31u, 32u, 33u, 100u, 4000u}) {
      std::string_view s(buf.data() + start, len);
      uint32_t sw = Crc32cSoftware(s.data(), s.size());
      EXPECT_EQ(Crc32c(s), sw) << start << "+" << len;
      if (Crc32cHardwareAvailable()) {
        EXPECT_EQ(Crc32cHardware(s.data(), s.size()), sw) << start << "+" << len;
      }
      // Continuing a CRC over a split gives the CRC of the whole.
      for (size_t cut : {size_t{0}, len / 3, len}) {
        EXPECT_EQ(Crc32c(s.substr(cut), Crc32c(s.substr(0, cut))), sw);
        EXPECT_EQ(Crc32cSoftware(s.data() + cut, len - cut, Crc32cSoftware(s.data(), cut)), sw);
      }
    }
  }
}

// Buffers long enough for the three-lane blocks (3 × 8 KiB and 3 × 256
// bytes) and their remainders, at every alignment, against the tables.
TEST(Crc32c, LongBuffersAgreeAcrossImplementations) {
  std::mt19937_64 rng(7);
  std::string buf(200000, '\0');
  for (auto& c : buf) c = static_cast<char>(rng());
  for (size_t start : {0u, 1u, 5u, 8u}) {
    for (size_t len : {767u, 768u, 769u, 24575u, 24576u, 24577u, 25344u, 100003u, 199000u}) {
      std::string_view s(buf.data() + start, len);
      const uint32_t sw = Crc32cSoftware(s.data(), s.size());
      EXPECT_EQ(Crc32c(s), sw) << start << "+" << len;
      if (Crc32cHardwareAvailable()) {
        EXPECT_EQ(Crc32cHardware(s.data(), s.size()), sw) << start << "+" << len;
        EXPECT_EQ(Crc32cHardware(s.data() + len / 2, len - len / 2, Crc32cHardware(s.data(), len / 2)), sw);
      }
    }
  }
  // All zeros (the lanes started from 0 see nothing but zeros).
  std::string zeros(3 * 8192 * 2 + 17, '\0');
  EXPECT_EQ(Crc32c(zeros), Crc32cSoftware(zeros.data(), zeros.size()));
}

}  // namespace
}  // namespace thaw::kafka
