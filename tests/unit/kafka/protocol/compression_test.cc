#include "thaw/kafka/protocol/compression.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>

#include <cstring>
#include <random>

namespace thaw::kafka {
namespace {

constexpr Compression kCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                                   Compression::kZstd};

std::string Sample(size_t n, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>("abcdefgh"[rng() % 8]);
  return s;
}

std::string Packed(Compression c, std::string_view in, int level = -1) {
  std::string out = "prefix";
  Status st = Compress(c, in, level, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out.substr(6);
}

Result<std::string> Unpacked(Compression c, std::string_view in, size_t limit = size_t{1} << 30) {
  std::string out = "prefix";
  RETURN_NOT_OK(Decompress(c, in, limit, &out));
  EXPECT_EQ(out.substr(0, 6), "prefix");
  return out.substr(6);
}

TEST(Compression, RoundTripsEveryCodecAndSize) {
  for (Compression c : kCodecs) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{65536}, size_t{65537}, size_t{3} << 20}) {
      SCOPED_TRACE(fmt::format("{} {}", CompressionName(c), n));
      std::string in = Sample(n);
      auto out = Unpacked(c, Packed(c, in));
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_TRUE(*out == in);
    }
  }
}

TEST(Compression, WritesTheFormatsKafkaPeersWrite) {
  std::string in = Sample(200000);
  // gzip wrapper (1f 8b), not a zlib header.
  std::string gz = Packed(Compression::kGzip, in);
  EXPECT_EQ(gz.substr(0, 2), "\x1f\x8b");
  // Raw snappy, as librdkafka: decodable by plain snappy.
  std::string sn = Packed(Compression::kSnappy, in);
  std::string raw;
  ASSERT_TRUE(snappy::Uncompress(sn.data(), sn.size(), &raw));
  EXPECT_TRUE(raw == in);
  // LZ4 frame: magic 04 22 4d 18, FLG version 01 with block independence
  // (bit 5) and no content size/checksum, BD block max size 64 KiB (code 4).
  std::string lz = Packed(Compression::kLz4, in);
  EXPECT_EQ(lz.substr(0, 4), std::string("\x04\x22\x4d\x18", 4));
  EXPECT_EQ(static_cast<unsigned char>(lz[4]), 0x60u);
  EXPECT_EQ(static_cast<unsigned char>(lz[5]), 0x40u);
  // zstd frame magic 28 b5 2f fd.
  EXPECT_EQ(Packed(Compression::kZstd, in).substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
}

// The framing snappy-java's SnappyOutputStream writes (Kafka's Java
// producer): magic, version 1, compatible version 1, then (big-endian
// length, raw snappy block) per block of at most 32 KiB input.
std::string Xerial(std::string_view in, size_t block = 32 * 1024) {
  std::string out("\x82SNAPPY\0\0\0\0\x01\0\0\0\x01", 16);
  for (size_t pos = 0; pos < in.size(); pos += block) {
    std::string b;
    snappy::Compress(in.data() + pos, std::min(block, in.size() - pos), &b);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(b.size() >> (24 - 8 * i)));
    out += b;
  }
  return out;
}

TEST(Compression, ReadsXerialSnappyFraming) {
  std::string in = Sample(100000);
  auto out = Unpacked(Compression::kSnappy, Xerial(in));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == in);
  EXPECT_EQ(*Unpacked(Compression::kSnappy, Xerial("")), "");
  // A block length past the end.
  std::string bad = Xerial(in);
  bad.resize(bad.size() - 1);
  auto r = Unpacked(Compression::kSnappy, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("xerial snappy block at byte"), std::string::npos) << r.status().message();
  // The limit applies across blocks.
  r = Unpacked(Compression::kSnappy, Xerial(in), 50000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 50000 bytes"), std::string::npos) << r.status().message();
}

TEST(Compression, ReadsAnyLz4FrameAndConcatenatedGzip) {
  std::string in = Sample(300000);
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  prefs.frameInfo.contentSize = in.size();
  std::string lz(LZ4F_compressFrameBound(in.size(), &prefs), '\0');
  lz.resize(LZ4F_compressFrame(lz.data(), lz.size(), in.data(), in.size(), &prefs));
  auto out = Unpacked(Compression::kLz4, lz);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == in);
  // A corrupted content checksum is caught.
  lz[lz.size() - 2] ^= 1;
  EXPECT_FALSE(Unpacked(Compression::kLz4, lz).ok());

  std::string two = Packed(Compression::kGzip, "hello ") + Packed(Compression::kGzip, "world");
  EXPECT_EQ(*Unpacked(Compression::kGzip, two), "hello world");
}

TEST(Compression, TruncatedOrGarbageInputFails) {
  std::string in = Sample(100000);
  for (Compression c : kCodecs) {
    if (c == Compression::kNone) continue;
    SCOPED_TRACE(std::string(CompressionName(c)));
    std::string packed = Packed(c, in);
    for (size_t cut : {size_t{0}, size_t{3}, packed.size() / 2, packed.size() - 1}) {
      auto r = Unpacked(c, std::string_view(packed).substr(0, cut));
      EXPECT_FALSE(r.ok() && *r == in) << "cut " << cut;
      if (!r.ok()) EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << r.status().ToString();
    }
    EXPECT_FALSE(Unpacked(c, "this is not compressed data at all").ok());
  }
}

TEST(Compression, DecompressionIsBoundedExactlyAtTheLimit) {
  std::string zeros(16 << 20, '\0');
  for (Compression c : kCodecs) {
    SCOPED_TRACE(std::string(CompressionName(c)));
    std::string packed = Packed(c, zeros);
    auto r = Unpacked(c, packed, zeros.size() - 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(r.status().message().find("decompression bomb"), std::string::npos) << r.status().message();
    auto exact = Unpacked(c, packed, zeros.size());
    ASSERT_TRUE(exact.ok()) << exact.status().ToString();
    EXPECT_EQ(exact->size(), zeros.size());
  }
  // A zstd frame of 256 MiB of zeros (a few KiB of input) stops at the
  // limit instead of allocating 256 MiB.
  std::string huge(size_t{256} << 20, '\0');
  std::string bomb = Packed(Compression::kZstd, huge);
  huge = std::string();
  EXPECT_LT(bomb.size(), 50000u);
  auto r = Unpacked(Compression::kZstd, bomb, 4 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 4194304 bytes"), std::string::npos);
}

}  // namespace
}  // namespace thaw::kafka
