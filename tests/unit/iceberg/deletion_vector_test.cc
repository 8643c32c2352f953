// Tests for the Puffin footer parser and deletion-vector-v1 blobs.
//
// Byte layouts are built by hand here (not with the code under test) so a
// symmetric bug in reader and writer cannot hide. Golden vectors come from
// pyroaring 1.2.0 (CRoaring); with THAW_PYTHON set, make_dv_fixture.py also
// cross-checks against pyroaring and pyiceberg at test time.
#include "thaw/iceberg/deletion_vector.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "test_hex.h"
#include "thaw/iceberg/puffin.h"

namespace thaw::iceberg {
namespace {

// gmock is not linked into thaw_unit_tests, so a tiny substring assertion.
::testing::AssertionResult HasSubstr(const std::string& haystack, std::string_view needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << haystack << "\" does not contain \"" << needle << "\"";
}

// ---------------------------------------------------------------- helpers --

void PutLe16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xFF));
  out->push_back(static_cast<char>(v >> 8));
}
void PutLe32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void PutLe64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void PutBe32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

using thaw::testing::Hex;
using thaw::testing::Unhex;

// deletion-vector-v1 framing, written independently of DeletionVector::Serialize.
std::string Frame(std::string_view vector) {
  std::string body("\xD1\xD3\x39\x64", 4);
  body.append(vector);
  std::string out;
  PutBe32(&out, static_cast<uint32_t>(body.size()));
  out.append(body);
  PutBe32(&out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  return out;
}

// A Roaring64 vector holding one 32-bit bitmap.
std::string OneBitmap(uint32_t key, std::string_view bitmap32) {
  std::string out;
  PutLe64(&out, 1);
  PutLe32(&out, key);
  out.append(bitmap32);
  return out;
}

std::vector<int64_t> SortedUnique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

void ExpectRoundTrip(const std::vector<int64_t>& positions) {
  const std::vector<int64_t> expected = SortedUnique(positions);
  DeletionVector dv = DeletionVector::FromPositions(positions);
  EXPECT_EQ(dv.Cardinality(), static_cast<int64_t>(expected.size()));
  EXPECT_EQ(dv.ToVector(), expected);
  for (int64_t p : expected) {
    ASSERT_TRUE(dv.Contains(p)) << p;
    if (p < INT64_MAX && !std::binary_search(expected.begin(), expected.end(), p + 1)) {
      ASSERT_FALSE(dv.Contains(p + 1)) << p + 1;
    }
  }
  EXPECT_FALSE(dv.Contains(-1));

  const std::string blob = dv.Serialize();
  auto parsed = DeletionVector::Deserialize(blob, "round-trip");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ToVector(), expected);
  EXPECT_EQ(parsed->Cardinality(), dv.Cardinality());
  // Re-serializing what we read reproduces the same bytes.
  EXPECT_EQ(parsed->Serialize(), blob);
}

Status ParseBlobStatus(std::string_view blob) { return DeletionVector::Deserialize(blob, "test.puffin").status(); }

Status ParseVectorStatus(std::string_view vector) { return ParseBlobStatus(Frame(vector)); }

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// ------------------------------------------------------------- round trip --

TEST(DeletionVectorTest, EmptyRoundTrip) {
  DeletionVector dv = DeletionVector::FromPositions({});
  EXPECT_TRUE(dv.empty());
  EXPECT_EQ(dv.Cardinality(), 0);
  EXPECT_FALSE(dv.Contains(0));
  // Vector = u64 zero bitmap count; blob = length 12 | magic | 8 zero bytes | CRC.
  EXPECT_EQ(dv.SerializeVector(), std::string(8, '\0'));
  EXPECT_EQ(dv.Serialize(), Frame(std::string(8, '\0')));
  ExpectRoundTrip({});
}

TEST(DeletionVectorTest, SmallRoundTrip) {
  ExpectRoundTrip({7, 0, 1, 7, 65535, 65536, 1'000'000, 3});
  ExpectRoundTrip({0});
  ExpectRoundTrip({4294967295});  // last position under the first 32-bit key
}

TEST(DeletionVectorTest, DensePositionsUseBitmapContainers) {
  // 70,000 positions, every other row: no runs, more than 4096 per container.
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < 70'000; ++i) positions.push_back(2 * i);
  DeletionVector dv = DeletionVector::FromPositions(positions);
  EXPECT_EQ(dv.CountContainers().bitmap, 3);  // 140,000 rows span 3 containers
  EXPECT_EQ(dv.CountContainers().run, 0);
  ExpectRoundTrip(positions);
}

TEST(DeletionVectorTest, ContiguousPositionsUseRunContainers) {
  std::vector<int64_t> positions;
  for (int64_t i = 10; i < 70'010; ++i) positions.push_back(i);
  DeletionVector dv = DeletionVector::FromPositions(positions);
  EXPECT_EQ(dv.CountContainers().run, 2);
  EXPECT_LT(dv.Serialize().size(), 100u);  // two runs, not 70,000 positions
  ExpectRoundTrip(positions);
}

TEST(DeletionVectorTest, PositionsAboveFourGiB) {
  const int64_t k32 = int64_t{1} << 32;
  std::vector<int64_t> positions = {1, 2, k32, k32 + 5, 3 * k32 + 9, 7 * k32 - 1, 0x7FFFFFFF * k32, INT64_MAX};
  for (int64_t i = 0; i < 5000; ++i) positions.push_back(9 * k32 + 3 * i);  // bitmap under key 9
  DeletionVector dv = DeletionVector::FromPositions(positions);
  EXPECT_TRUE(dv.Contains(INT64_MAX));
  EXPECT_FALSE(dv.Contains(INT64_MAX - 1));
  EXPECT_FALSE(dv.Contains(4 * k32 + 9));
  ExpectRoundTrip(positions);
}

TEST(DeletionVectorTest, RandomSetsMatchStdSet) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20; ++round) {
    const int64_t span = int64_t{1} << (10 + round * 2);  // 1 Ki .. 2^48
    std::uniform_int_distribution<int64_t> dist(0, span);
    std::vector<int64_t> positions(1 + rng() % 20'000);
    for (auto& p : positions) p = dist(rng);
    if (round % 3 == 0) {  // add a run
      for (int64_t i = 0; i < 9000; ++i) positions.push_back(span / 2 + i);
    }
    const std::set<int64_t> reference(positions.begin(), positions.end());
    DeletionVector dv = DeletionVector::FromPositions(positions);
    for (int probe = 0; probe < 20'000; ++probe) {
      const int64_t p = dist(rng);
      ASSERT_EQ(dv.Contains(p), reference.count(p) == 1) << "round " << round << " pos " << p;
    }
    ExpectRoundTrip(positions);
  }
}

TEST(DeletionVectorTest, ForEachVisitsAscending) {
  DeletionVector dv = DeletionVector::FromPositions({5, 3, int64_t{1} << 40, 65536, 4});
  std::vector<int64_t> seen;
  dv.ForEach([&](int64_t p) { seen.push_back(p); });
  EXPECT_EQ(seen, (std::vector<int64_t>{3, 4, 5, 65536, int64_t{1} << 40}));
}

// Golden bytes produced by pyroaring 1.2.0 (CRoaring), see file comment.
TEST(DeletionVectorTest, MatchesPyroaringGoldenBytes) {
  struct Case {
    std::vector<int64_t> positions;
    const char* hex;  // BitMap64(positions) [+ run_optimize()] .serialize()
  };
  std::vector<int64_t> with_runs;
  for (int64_t i = 0; i < 100; ++i) with_runs.push_back(i);
  with_runs.insert(with_runs.end(), {65537, 65539, 131077});
  for (int64_t i = 196608; i < 196618; ++i) with_runs.push_back(i);
  with_runs.push_back((int64_t{3} << 32) + 9);
  std::vector<int64_t> range100;
  for (int64_t i = 0; i < 100; ++i) range100.push_back(i);
  const Case cases[] = {
      {{1, 2, int64_t{1} << 33},
       "0200000000000000000000003a30000001000000000001001000000001000200020000003a300000010000000"
       "0000000100000000000"},
      {range100, "0100000000000000000000003b3000000100006300010000006300"},
      // Four containers in a run-cookie bitmap: offsets are present.
      {with_runs,
       "0200000000000000000000003b3003000900006300010001000200000003000900250000002b0000002f000000"
       "31000000010000006300010003000500010000000900030000003a3000000100000000000000100000000900"},
  };
  for (const Case& c : cases) {
    DeletionVector dv = DeletionVector::FromPositions(c.positions);
    EXPECT_EQ(Hex(dv.SerializeVector()), c.hex);
    auto parsed = DeletionVector::DeserializeVector(Unhex(c.hex), "golden");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->ToVector(), SortedUnique(c.positions));
  }
}

// A hand-built run-cookie bitmap mixing run, array and bitmap containers.
TEST(DeletionVectorTest, HandCraftedRunContainers) {
  std::string vector;
  PutLe64(&vector, 2);

  // Key 0: five containers (>= 4, so the offset header is present).
  PutLe32(&vector, 0);
  PutLe32(&vector, 12347 | (5 - 1) << 16);
  vector.push_back(static_cast<char>(0b10101));  // containers 0, 2, 4 are runs
  const uint16_t keys[] = {0, 1, 2, 7, 9};
  const uint32_t cards[] = {7, 2, 65536, 6400, 536};
  for (int i = 0; i < 5; ++i) {
    PutLe16(&vector, keys[i]);
    PutLe16(&vector, static_cast<uint16_t>(cards[i] - 1));
  }
  const uint32_t sizes[] = {2 + 8, 4, 2 + 4, 8192, 2 + 4};
  uint32_t offset = 4 + 1 + 5 * 4 + 5 * 4;
  for (uint32_t size : sizes) {
    PutLe32(&vector, offset);
    offset += size;
  }
  PutLe16(&vector, 2);  // container 0: runs [10, 15] and [100, 100]
  PutLe16(&vector, 10);
  PutLe16(&vector, 5);
  PutLe16(&vector, 100);
  PutLe16(&vector, 0);
  PutLe16(&vector, 3);  // container 1: array {3, 9}
  PutLe16(&vector, 9);
  PutLe16(&vector, 1);  // container 2: the full range [0, 65535]
  PutLe16(&vector, 0);
  PutLe16(&vector, 65535);
  for (int w = 0; w < 1024; ++w) {  // container 3: even values below 12800
    PutLe64(&vector, w < 200 ? 0x5555555555555555ULL : 0);
  }
  PutLe16(&vector, 1);  // container 4: [65000, 65535]
  PutLe16(&vector, 65000);
  PutLe16(&vector, 535);

  // Key 3: two containers (< 4, so no offset header).
  PutLe32(&vector, 3);
  PutLe32(&vector, 12347 | (2 - 1) << 16);
  vector.push_back(0b01);
  PutLe16(&vector, 0);
  PutLe16(&vector, 9);
  PutLe16(&vector, 1);
  PutLe16(&vector, 0);
  PutLe16(&vector, 1);  // run [5, 14]
  PutLe16(&vector, 5);
  PutLe16(&vector, 9);
  PutLe16(&vector, 1);  // array {1}

  std::vector<int64_t> expected;
  for (int64_t v = 10; v <= 15; ++v) expected.push_back(v);
  expected.push_back(100);
  expected.push_back(65536 + 3);
  expected.push_back(65536 + 9);
  for (int64_t v = 0; v < 65536; ++v) expected.push_back(2 * 65536 + v);
  for (int64_t v = 0; v < 12800; v += 2) expected.push_back(7 * 65536 + v);
  for (int64_t v = 65000; v <= 65535; ++v) expected.push_back(9 * 65536 + v);
  const int64_t k3 = int64_t{3} << 32;
  for (int64_t v = 5; v <= 14; ++v) expected.push_back(k3 + v);
  expected.push_back(k3 + 65536 + 1);

  auto dv = DeletionVector::Deserialize(Frame(vector), "hand-crafted");
  ASSERT_TRUE(dv.ok()) << dv.status().ToString();
  EXPECT_EQ(dv->Cardinality(), static_cast<int64_t>(expected.size()));
  EXPECT_EQ(dv->ToVector(), expected);
  EXPECT_EQ(dv->CountContainers().run, 4);
  EXPECT_EQ(dv->CountContainers().array, 2);
  EXPECT_EQ(dv->CountContainers().bitmap, 1);
  EXPECT_TRUE(dv->Contains(15));
  EXPECT_FALSE(dv->Contains(16));
  EXPECT_TRUE(dv->Contains(100));
  EXPECT_FALSE(dv->Contains(99));
  EXPECT_TRUE(dv->Contains(9 * 65536 + 65535));
  EXPECT_FALSE(dv->Contains(9 * 65536 + 64999));
  EXPECT_TRUE(dv->Contains(7 * 65536 + 12798));
  EXPECT_FALSE(dv->Contains(7 * 65536 + 12797));

  // The same vector re-serialized (our own container choice) parses back.
  auto again = DeletionVector::Deserialize(dv->Serialize(), "re-serialized");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->ToVector(), expected);
}

TEST(DeletionVectorTest, EmptyInnerBitmapIsAccepted) {
  // CRoaring may emit a 32-bit bitmap with zero containers; it holds nothing.
  std::string bitmap32;
  PutLe32(&bitmap32, 12346);
  PutLe32(&bitmap32, 0);
  auto dv = DeletionVector::DeserializeVector(OneBitmap(4, bitmap32), "empty inner");
  ASSERT_TRUE(dv.ok()) << dv.status().ToString();
  EXPECT_TRUE(dv->empty());
}

// ------------------------------------------------------------ corruption --

TEST(DeletionVectorErrorTest, BadCrc) {
  std::string blob = DeletionVector::FromPositions({1, 2, 3}).Serialize();
  blob.back() ^= 0x01;
  Status st = ParseBlobStatus(blob);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_TRUE(HasSubstr(st.message(), "CRC-32 mismatch"));
  EXPECT_TRUE(HasSubstr(st.message(), "test.puffin"));

  blob = DeletionVector::FromPositions({1, 2, 3}).Serialize();
  blob[blob.size() - 6] ^= 0x40;  // flip a vector bit instead
  EXPECT_TRUE(HasSubstr(ParseBlobStatus(blob).message(), "CRC-32 mismatch"));
}

TEST(DeletionVectorErrorTest, BadMagic) {
  std::string blob = DeletionVector::FromPositions({1}).Serialize();
  blob[5] = 'X';
  Status st = ParseBlobStatus(blob);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_TRUE(HasSubstr(st.message(), "bad magic d1 58 39 64"));
}

TEST(DeletionVectorErrorTest, TruncatedBlob) {
  const std::string blob = DeletionVector::FromPositions({1, 100, 1000}).Serialize();
  for (size_t len : {size_t{0}, size_t{3}, size_t{11}, size_t{12}, blob.size() - 1}) {
    Status st = ParseBlobStatus(std::string_view(blob).substr(0, len));
    EXPECT_EQ(st.code(), StatusCode::kCorrupt) << len;
    EXPECT_TRUE(HasSubstr(st.message(), "truncated")) << len;
  }
  // Trailing bytes after the CRC are not silently ignored either.
  EXPECT_TRUE(HasSubstr(ParseBlobStatus(blob + "x").message(), "trailing bytes"));

  // Framing intact (valid CRC) but the vector itself ends early.
  const std::string vector = DeletionVector::FromPositions({1, 100, 1000}).SerializeVector();
  for (size_t len = 0; len < vector.size(); ++len) {
    Status st = ParseVectorStatus(vector.substr(0, len));
    EXPECT_EQ(st.code(), StatusCode::kCorrupt) << len;
    EXPECT_TRUE(HasSubstr(st.message(), "truncated")) << len << ": " << st.message();
  }
}

TEST(DeletionVectorErrorTest, HugeContainerCount) {
  std::string bitmap32;
  PutLe32(&bitmap32, 12346);
  PutLe32(&bitmap32, 0xFFFFFFFF);
  Status st = ParseVectorStatus(OneBitmap(0, bitmap32));
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_TRUE(HasSubstr(st.message(), "container count 4294967295 exceeds the maximum 65536"));

  // A legal count whose header cannot fit in the bytes that follow.
  bitmap32.clear();
  PutLe32(&bitmap32, 12346);
  PutLe32(&bitmap32, 60000);
  PutLe32(&bitmap32, 0);
  st = ParseVectorStatus(OneBitmap(0, bitmap32));
  EXPECT_TRUE(HasSubstr(st.message(), "declares container count 60000"));

  // Same through the run cookie (count 65536 in the high half).
  bitmap32.clear();
  PutLe32(&bitmap32, 12347 | 0xFFFF0000u);
  bitmap32.append(8192, '\xFF');  // run flags, then nothing
  st = ParseVectorStatus(OneBitmap(0, bitmap32));
  EXPECT_TRUE(HasSubstr(st.message(), "declares container count 65536"));

  // The 64-bit bitmap count.
  std::string vector;
  PutLe64(&vector, uint64_t{1} << 62);
  vector.append(16, '\0');
  st = ParseVectorStatus(vector);
  EXPECT_TRUE(HasSubstr(st.message(), "truncated: bitmap count 4611686018427387904 needs"));
}

TEST(DeletionVectorErrorTest, MalformedRoaring) {
  auto with_header = [](uint32_t cookie_word, std::string rest) {
    std::string b;
    PutLe32(&b, cookie_word);
    return b + rest;
  };
  auto array_bitmap = [](std::vector<std::pair<uint16_t, std::vector<uint16_t>>> containers) {
    std::string b;
    PutLe32(&b, 12346);
    PutLe32(&b, static_cast<uint32_t>(containers.size()));
    for (const auto& [key, values] : containers) {
      PutLe16(&b, key);
      PutLe16(&b, static_cast<uint16_t>(values.size() - 1));
    }
    for (size_t i = 0; i < containers.size(); ++i) PutLe32(&b, 0);  // offsets, ignored
    for (const auto& [key, values] : containers) {
      for (uint16_t v : values) PutLe16(&b, v);
    }
    return b;
  };

  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, with_header(12345, std::string(8, '\0')))).message(),
                        "unknown roaring cookie 0x3039"));
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, array_bitmap({{0, {5, 5}}}))).message(),
                        "array values are not strictly ascending"));
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, array_bitmap({{3, {1}}, {3, {2}}}))).message(),
                        "container keys are not strictly ascending"));
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0x80000000u, array_bitmap({{0, {1}}}))).message(),
                        "would make positions negative"));

  // Two 64-bit entries with the same key.
  std::string vector;
  PutLe64(&vector, 2);
  for (int i = 0; i < 2; ++i) {
    PutLe32(&vector, 7);
    vector += array_bitmap({{0, {1}}});
  }
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(vector).message(), "bitmap keys are not strictly ascending"));

  // Bitmap container whose popcount disagrees with the header.
  std::string b;
  PutLe32(&b, 12346);
  PutLe32(&b, 1);
  PutLe16(&b, 0);
  PutLe16(&b, 4999);  // cardinality 5000
  PutLe32(&b, 16);
  b.append(8192, '\0');
  EXPECT_TRUE(
      HasSubstr(ParseVectorStatus(OneBitmap(0, b)).message(), "header cardinality 5000 but bitmap has 0 bits set"));

  // Run containers: past 65535, overlapping, zero runs, wrong cardinality.
  auto run_bitmap = [](uint16_t card_minus_one, std::vector<uint16_t> run_words) {
    std::string b;
    PutLe32(&b, 12347);
    b.push_back(1);
    PutLe16(&b, 0);
    PutLe16(&b, card_minus_one);
    PutLe16(&b, static_cast<uint16_t>(run_words.size() / 2));
    for (uint16_t w : run_words) PutLe16(&b, w);
    return b;
  };
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, run_bitmap(10, {65530, 10}))).message(), "runs past 65535"));
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, run_bitmap(5, {10, 2, 12, 1}))).message(), "runs overlap"));
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, run_bitmap(0, {}))).message(), "zero runs"));
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, run_bitmap(99, {0, 9}))).message(),
                        "header cardinality 100 but runs cover 10 values"));

  // Bytes after the last bitmap.
  EXPECT_TRUE(HasSubstr(ParseVectorStatus(OneBitmap(0, array_bitmap({{0, {1}}})) + "zz").message(),
                        "2 unexpected trailing bytes"));
}

// ----------------------------------------------------------------- puffin --

struct TestBlob {
  std::string type;
  std::string data;
  std::string extra_json;  // appended inside the blob's JSON object
};

// Builds a Puffin file by hand: magic, blobs, footer.
std::string BuildPuffin(const std::vector<TestBlob>& blobs, uint8_t flags0 = 0, std::string* payload_out = nullptr) {
  std::string file = "PFA1";
  std::string json = R"({"blobs":[)";
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (i > 0) json += ",";
    json += fmt::format(R"({{"type":"{}","fields":[],"snapshot-id":-1,"sequence-number":-1,"offset":{},)"
                        R"("length":{}{}}})",
                        blobs[i].type, file.size(), blobs[i].data.size(), blobs[i].extra_json);
    file += blobs[i].data;
  }
  json += R"(],"properties":{"created-by":"thaw test"}})";
  if (payload_out) *payload_out = json;
  file += "PFA1";
  file += json;
  PutLe32(&file, static_cast<uint32_t>(json.size()));
  file.push_back(static_cast<char>(flags0));
  file.append(3, '\0');
  file += "PFA1";
  return file;
}

std::string Lz4Frame(std::string_view data, bool with_content_size) {
  LZ4F_preferences_t prefs{};
  if (with_content_size) prefs.frameInfo.contentSize = data.size();
  std::string out(LZ4F_compressFrameBound(data.size(), &prefs), '\0');
  size_t n = LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), &prefs);
  EXPECT_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

// Replaces the (uncompressed) footer payload with `payload` and sets flags.
std::string ReplaceFooter(const std::string& file, size_t old_payload_size, std::string_view payload, uint8_t flags0) {
  std::string out = file.substr(0, file.size() - 16 - old_payload_size);
  out += "PFA1";
  out += payload;
  PutLe32(&out, static_cast<uint32_t>(payload.size()));
  out.push_back(static_cast<char>(flags0));
  out.append(3, '\0');
  out += "PFA1";
  return out;
}

TEST(PuffinTest, ParsesHandBuiltFile) {
  const DeletionVector dv = DeletionVector::FromPositions({3, 5, 8, int64_t{1} << 33});
  const std::vector<TestBlob> blobs = {
      {"apache-datasketches-theta-v1", "sketchbytes", R"(,"compression-codec":"zstd","properties":{"ndv":"42"})"},
      {"deletion-vector-v1", dv.Serialize(),
       R"(,"properties":{"referenced-data-file":"s3://b/data/a.parquet","cardinality":"4"})"},
  };
  const std::string file = BuildPuffin(blobs);

  auto footer = ParsePuffinFooter(file, "/x/y.puffin");
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  ASSERT_EQ(footer->blobs.size(), 2u);
  EXPECT_EQ(footer->properties.at("created-by"), "thaw test");
  EXPECT_FALSE(footer->payload_was_compressed);

  const PuffinBlobMetadata& sketch = footer->blobs[0];
  EXPECT_EQ(sketch.type, "apache-datasketches-theta-v1");
  EXPECT_EQ(sketch.offset, 4);
  EXPECT_EQ(sketch.length, 11);
  EXPECT_EQ(sketch.compression_codec, "zstd");
  EXPECT_EQ(sketch.Property("ndv"), "42");
  EXPECT_EQ(*SlicePuffinBlob(file, sketch, "/x/y.puffin"), "sketchbytes");

  const PuffinBlobMetadata& meta = footer->blobs[1];
  EXPECT_EQ(meta.type, kDeletionVectorBlobType);
  EXPECT_EQ(meta.snapshot_id, -1);
  EXPECT_EQ(meta.sequence_number, -1);
  EXPECT_EQ(meta.offset, 15);
  EXPECT_FALSE(meta.compression_codec.has_value());
  EXPECT_EQ(meta.Property("referenced-data-file"), "s3://b/data/a.parquet");
  EXPECT_FALSE(meta.Property("absent").has_value());

  // As a reader driven by the manifest entry's content_offset/content_size would.
  auto read = ReadDeletionVector(file, meta.offset, meta.length, "/x/y.puffin");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->ToVector(), dv.ToVector());
  auto read_meta = ReadDeletionVector(file, meta, "/x/y.puffin");
  ASSERT_TRUE(read_meta.ok()) << read_meta.status().ToString();
  EXPECT_EQ(read_meta->Cardinality(), 4);

  // Wrong offsets hit bounds checks or the CRC, never garbage.
  Status st = ReadDeletionVector(file, meta.offset + 1, meta.length, "/x/y.puffin").status();
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  st = ReadDeletionVector(file, meta.offset, int64_t{1} << 40, "/x/y.puffin").status();
  EXPECT_TRUE(HasSubstr(st.message(), "exceeds file size"));
  st = ReadDeletionVector(file, -4, 8, "/x/y.puffin").status();
  EXPECT_TRUE(HasSubstr(st.message(), "blob at offset -4"));
  // Blob-metadata checks.
  EXPECT_EQ(ReadDeletionVector(file, sketch, "/x/y.puffin").status().code(), StatusCode::kInvalidArgument);
  PuffinBlobMetadata lying = meta;
  lying.properties["cardinality"] = "5";
  EXPECT_TRUE(HasSubstr(ReadDeletionVector(file, lying, "/x/y.puffin").status().message(),
                        "holds 4 positions but its cardinality property says 5"));
}

TEST(PuffinTest, EmptyFile) {
  auto footer = ParsePuffinFooter(BuildPuffin({}), "empty.puffin");
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  EXPECT_TRUE(footer->blobs.empty());
  EXPECT_EQ(footer->footer_offset, 4);
}

TEST(PuffinTest, Lz4CompressedFooter) {
  std::string payload;
  const std::string plain = BuildPuffin({{"deletion-vector-v1", "abcd", ""}}, 0, &payload);
  const std::string file = ReplaceFooter(plain, payload.size(), Lz4Frame(payload, /*with_content_size=*/true), 1);
  auto footer = ParsePuffinFooter(file, "lz4.puffin");
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  EXPECT_TRUE(footer->payload_was_compressed);
  ASSERT_EQ(footer->blobs.size(), 1u);
  EXPECT_EQ(*SlicePuffinBlob(file, footer->blobs[0], "lz4.puffin"), "abcd");

  // The spec requires the frame's content size; without it we cannot bound the output.
  const std::string no_size = ReplaceFooter(plain, payload.size(), Lz4Frame(payload, /*with_content_size=*/false), 1);
  EXPECT_TRUE(HasSubstr(ParsePuffinFooter(no_size, "lz4.puffin").status().message(), "no content size"));
  // Not an LZ4 frame at all.
  const std::string garbage = ReplaceFooter(plain, payload.size(), payload, 1);
  EXPECT_TRUE(HasSubstr(ParsePuffinFooter(garbage, "lz4.puffin").status().message(), "not an LZ4 frame"));
}

TEST(PuffinTest, WriterOutputParses) {
  const DeletionVector dv = DeletionVector::FromPositions({1, 2, 3, 1000});
  PuffinWriter writer;
  const PuffinBlobMetadata meta =
      writer.AddBlob(std::string(kDeletionVectorBlobType), {}, -1, -1, dv.Serialize(),
                     {{"referenced-data-file", "file:/t/data/1.parquet"}, {"cardinality", "4"}});
  const std::string file = writer.Finish({{"created-by", "thaw"}});
  auto footer = ParsePuffinFooter(file, "written.puffin");
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  ASSERT_EQ(footer->blobs.size(), 1u);
  EXPECT_EQ(footer->blobs[0].offset, meta.offset);
  EXPECT_EQ(footer->blobs[0].length, meta.length);
  EXPECT_EQ(footer->blobs[0].properties, meta.properties);
  auto read = ReadDeletionVector(file, footer->blobs[0], "written.puffin");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->ToVector(), dv.ToVector());
}

// Counts the bytes a real LocalFileIO reads, to show what a reader fetches.
class CountingFileIO : public storage::FileIO {
 public:
  class File : public storage::RandomAccessFile {
   public:
    File(std::unique_ptr<storage::RandomAccessFile> f, int64_t* bytes) : f_(std::move(f)), bytes_(bytes) {}
    int64_t size() const override { return f_->size(); }
    Status ReadAt(int64_t offset, int64_t length, void* out) override {
      *bytes_ += length;
      return f_->ReadAt(offset, length, out);
    }
    const std::string& location() const override { return f_->location(); }

   private:
    std::unique_ptr<storage::RandomAccessFile> f_;
    int64_t* bytes_;
  };
  Result<std::unique_ptr<storage::RandomAccessFile>> Open(const std::string& location) override {
    ++opens;
    ASSIGN_OR_RAISE(auto f, local_.Open(location));
    return std::unique_ptr<storage::RandomAccessFile>(new File(std::move(f), &bytes_read));
  }
  Result<bool> Exists(const std::string& location) override { return local_.Exists(location); }
  int64_t bytes_read = 0;
  int64_t opens = 0;

 private:
  storage::LocalFileIO local_;
};

// One Puffin file holding the DVs of several data files (as Iceberg Java
// writes them): each DV is fetched by its byte range, once.
TEST(DeletionVectorCacheTest, ReadsEachBlobByItsRangeOnce) {
  std::vector<DeletionVector> dvs;
  for (int k = 0; k < 3; ++k) {
    std::vector<int64_t> positions;
    for (int64_t p = k; p < 20000; p += 3 + k) positions.push_back(p);
    dvs.push_back(DeletionVector::FromPositions(positions));
  }
  PuffinWriter writer;
  std::vector<PuffinBlobMetadata> metas;
  for (size_t k = 0; k < dvs.size(); ++k) {
    metas.push_back(writer.AddBlob(std::string(kDeletionVectorBlobType), {}, -1, -1, dvs[k].Serialize(),
                                   {{"referenced-data-file", "data-" + std::to_string(k) + ".parquet"}}));
  }
  const std::string bytes = writer.Finish();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("thaw_dv_cache_" + std::to_string(getpid()) + ".puffin");
  { std::ofstream(path, std::ios::binary) << bytes; }

  auto io = std::make_shared<CountingFileIO>();
  DeletionVectorCache cache(io);
  int64_t blob_bytes = 0;
  for (int round = 0; round < 2; ++round) {
    for (size_t k = 0; k < dvs.size(); ++k) {
      auto dv = cache.Get(path.string(), metas[k].offset, metas[k].length, "data.parquet");
      ASSERT_TRUE(dv.ok()) << dv.status().ToString();
      EXPECT_EQ((*dv)->ToVector(), dvs[k].ToVector());
      if (round == 0) blob_bytes += metas[k].length;
    }
  }
  EXPECT_EQ(io->bytes_read, blob_bytes);
  EXPECT_LT(io->bytes_read, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(io->opens, 3);
  const auto stats = cache.stats();
  EXPECT_EQ(stats.blobs_read, 3);
  EXPECT_EQ(stats.bytes_read, blob_bytes);
  EXPECT_EQ(stats.hits, 3);

  // A range outside the file names the file, the data file and the range.
  auto bad = cache.Get(path.string(), static_cast<int64_t>(bytes.size()) - 2, 100, "data-9.parquet");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(HasSubstr(bad.status().message(), path.string()));
  EXPECT_TRUE(HasSubstr(bad.status().message(), "data-9.parquet"));
  EXPECT_TRUE(HasSubstr(bad.status().message(), "content_offset"));
  // The manifest's record_count is the DV's cardinality; a mismatch is an error.
  auto dv1 = DeletionVector::FromPositions({1, 2});
  PuffinWriter w2;
  const auto m2 = w2.AddBlob(std::string(kDeletionVectorBlobType), {}, -1, -1, dv1.Serialize());
  const std::filesystem::path path2 = path.string() + ".2";
  { std::ofstream(path2, std::ios::binary) << w2.Finish(); }
  EXPECT_TRUE(cache.Get(path2.string(), m2.offset, m2.length, "d.parquet", 2).ok());
  auto wrong = DeletionVectorCache(io).Get(path2.string(), m2.offset, m2.length, "d.parquet", 3);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(HasSubstr(wrong.status().message(), "holds 2 positions but the manifest's record_count says 3"));
  std::filesystem::remove(path2);
  // A range inside the file that is not a DV fails the DV's own checks.
  auto garbage = cache.Get(path.string(), metas[0].offset + 1, metas[0].length - 1, "data-0.parquet");
  EXPECT_FALSE(garbage.ok());
  std::filesystem::remove(path);
}

TEST(PuffinErrorTest, FramingErrors) {
  const std::string good = BuildPuffin({{"deletion-vector-v1", "abcd", ""}});
  auto message = [](std::string_view bytes) {
    Status st = ParsePuffinFooter(bytes, "/x/y.puffin").status();
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(HasSubstr(st.message(), "puffin file /x/y.puffin: "));
    return st.message();
  };
  EXPECT_TRUE(HasSubstr(message("PFA1"), "smaller than the minimum"));
  EXPECT_TRUE(HasSubstr(message("XFA1" + good.substr(4)), "bad magic at start"));
  EXPECT_TRUE(HasSubstr(message(good.substr(0, good.size() - 1) + "X"), "bad magic at end"));

  // Payload size field: too large, negative, and pointing at the wrong place.
  std::string bad = good;
  bad.replace(bad.size() - 12, 4, std::string("\x3f\x42\x0f\x00", 4));  // 999999
  EXPECT_TRUE(HasSubstr(message(bad), fmt::format("footer payload size 999999 exceeds file size {}", bad.size())));
  bad.replace(bad.size() - 12, 4, std::string("\xff\xff\xff\xff", 4));
  EXPECT_TRUE(HasSubstr(message(bad), "negative footer payload size -1"));
  bad.replace(bad.size() - 12, 4, std::string("\x02\x00\x00\x00", 4));
  EXPECT_TRUE(HasSubstr(message(bad), "bad magic at footer start"));

  // Reserved flag bits.
  bad = good;
  bad[bad.size() - 8] = 0x02;
  EXPECT_EQ(ParsePuffinFooter(bad, "f").status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(HasSubstr(message(bad), "unknown footer flags 02 00 00 00"));
  bad = good;
  bad[bad.size() - 5] = 0x01;
  EXPECT_TRUE(HasSubstr(message(bad), "unknown footer flags 00 00 00 01"));
}

TEST(PuffinErrorTest, FooterJsonErrors) {
  std::string payload;
  const std::string good = BuildPuffin({{"deletion-vector-v1", "abcd", ""}}, 0, &payload);
  auto message = [&](std::string_view json) {
    Status st = ParsePuffinFooter(ReplaceFooter(good, payload.size(), json, 0), "j.puffin").status();
    EXPECT_EQ(st.code(), StatusCode::kCorrupt) << json;
    EXPECT_TRUE(HasSubstr(st.message(), "puffin file j.puffin"));
    return st.message();
  };
  const std::string blob_head = R"({"blobs":[{"type":"t","fields":[1],"snapshot-id":-1,"sequence-number":-1)";
  EXPECT_TRUE(HasSubstr(message("{not json"), "not valid JSON"));
  EXPECT_TRUE(HasSubstr(message("[]"), "must be a JSON object"));
  EXPECT_TRUE(HasSubstr(message(R"({"blobs":{}})"), "'blobs' is missing or not a list"));
  EXPECT_TRUE(HasSubstr(message(R"({"blobs":[1]})"), "blob 0: must be a JSON object"));
  EXPECT_TRUE(HasSubstr(message(R"({"blobs":[{"fields":[]}]})"), "'type' is missing"));
  EXPECT_TRUE(HasSubstr(message(R"({"blobs":[{"type":"t"}]})"), "'fields' is missing"));
  EXPECT_TRUE(
      HasSubstr(message(R"({"blobs":[{"type":"t","fields":["a"]}]})"), "'fields' entries must be 32-bit integers"));
  EXPECT_TRUE(HasSubstr(message(R"({"blobs":[{"type":"t","fields":[4294967296]}]})"),
                        "'fields' entries must be 32-bit integers"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"length":4}]})"), "missing required field 'offset'"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"offset":"4","length":4}]})"), "field 'offset' must be an integer"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"offset":1.5,"length":4}]})"), "field 'offset' must be an integer"));
  EXPECT_TRUE(
      HasSubstr(message(blob_head + R"(,"offset":18446744073709551615,"length":4}]})"), "does not fit in a long"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"offset":4,"length":5}]})"),
                        "offset 4 length 5 lies outside the blob area [4, 8)"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"offset":0,"length":4}]})"), "outside"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"offset":4,"length":-1}]})"), "outside"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"offset":4,"length":4,"compression-codec":7}]})"),
                        "'compression-codec' must be a string"));
  EXPECT_TRUE(HasSubstr(message(blob_head + R"(,"offset":4,"length":4,"properties":{"a":1}}]})"),
                        "property 'a' must be a string"));
  EXPECT_TRUE(HasSubstr(message(R"({"blobs":[],"properties":[]})"), "must be an object"));
  // Invalid UTF-8 inside a string.
  EXPECT_TRUE(HasSubstr(message("{\"blobs\":[],\"properties\":{\"a\":\"\xff\"}}"), "not valid JSON"));
}

// --------------------------------------------- independent implementation --

// Runs make_dv_fixture.py with $THAW_PYTHON; returns its exit code.
class PythonOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* python = std::getenv("THAW_PYTHON");
    if (python == nullptr || *python == '\0') {
      GTEST_SKIP() << "set THAW_PYTHON to a python with pyroaring to cross-check";
    }
    python_ = python;
    dir_ =
        std::filesystem::path(::testing::TempDir()) / ("thaw_dv_" + std::to_string(::getpid()) + "_" +
                                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  static std::filesystem::path Script() {
#ifdef THAW_SOURCE_DIR
    return std::filesystem::path(THAW_SOURCE_DIR) / "tests/unit/iceberg/make_dv_fixture.py";
#else
    return std::filesystem::path(__FILE__).parent_path() / "make_dv_fixture.py";
#endif
  }

  int Run(std::string_view mode, const std::filesystem::path& data, const std::filesystem::path& positions) {
    const std::string cmd =
        fmt::format("'{}' '{}' {} '{}' '{}'", python_, Script().string(), mode, data.string(), positions.string());
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  static std::vector<int64_t> ReadPositions(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<int64_t> out;
    for (int64_t p; in >> p;) out.push_back(p);
    return out;
  }
  static void WritePositions(const std::filesystem::path& path, const DeletionVector& dv) {
    std::ofstream out(path);
    dv.ForEach([&](int64_t p) { out << p << '\n'; });
  }

  std::string python_;
  std::filesystem::path dir_;
};

TEST_F(PythonOracleTest, ReadsPyroaringSerialization) {
  const auto blob_path = dir_ / "dv.bin";
  const auto positions_path = dir_ / "positions.txt";
  const int rc = Run("write", blob_path, positions_path);
  if (rc == 77) GTEST_SKIP() << "pyroaring.BitMap64 is not importable by " << python_;
  ASSERT_EQ(rc, 0);

  const std::vector<int64_t> expected = ReadPositions(positions_path);
  ASSERT_GT(expected.size(), 100'000u);
  const std::string blob = ReadFile(blob_path);
  auto dv = DeletionVector::Deserialize(blob, blob_path.string());
  ASSERT_TRUE(dv.ok()) << dv.status().ToString();
  EXPECT_EQ(dv->Cardinality(), static_cast<int64_t>(expected.size()));
  EXPECT_EQ(dv->ToVector(), expected);
  const auto counts = dv->CountContainers();
  EXPECT_GT(counts.array, 0);
  EXPECT_GT(counts.bitmap, 0);
  EXPECT_GT(counts.run, 0);
  for (int64_t p : expected) ASSERT_TRUE(dv->Contains(p)) << p;

  // Our serialization of the same set is readable by pyroaring.
  const auto ours = dir_ / "ours.bin";
  WriteFile(ours, DeletionVector::FromPositions(expected).Serialize());
  EXPECT_EQ(Run("check", ours, positions_path), 0);
}

TEST_F(PythonOracleTest, PyicebergReadsOurPuffinFile) {
  std::vector<int64_t> positions = {0, 1, 2, 99, 65536, (int64_t{2} << 32) + 17};
  for (int64_t i = 0; i < 20'000; ++i) positions.push_back(300'000 + 3 * i);
  for (int64_t i = 0; i < 10'000; ++i) positions.push_back(900'000 + i);
  const DeletionVector dv = DeletionVector::FromPositions(positions);
  PuffinWriter writer;
  writer.AddBlob(
      std::string(kDeletionVectorBlobType), {}, -1, -1, dv.Serialize(),
      {{"referenced-data-file", "file:/wh/t/data/0.parquet"}, {"cardinality", std::to_string(dv.Cardinality())}});
  const auto puffin_path = dir_ / "dv.puffin";
  const auto positions_path = dir_ / "positions.txt";
  WriteFile(puffin_path, writer.Finish({{"created-by", "thaw test"}}));
  WritePositions(positions_path, dv);
  const int rc = Run("check-puffin", puffin_path, positions_path);
  if (rc == 77) GTEST_SKIP() << "pyiceberg is not importable by " << python_;
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace thaw::iceberg
