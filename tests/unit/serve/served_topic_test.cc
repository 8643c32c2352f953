// Served topics on real tables pyiceberg wrote (make_serve_fixture.py):
// what Fetch, Offsets, OffsetForTime and MaxTimestamp answer is checked
// against the RecordReader's records (the path inspect and replay use) and
// brute-force scans of them. Set THAW_PYTHON to a python with pyiceberg.
#include "thaw/serve/served_topic.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "thaw/catalog/catalog.h"
#include "thaw/kafka/protocol/record_batch.h"
#include "thaw/records/record_reader.h"
#include "thaw/serve/topic_registry.h"

namespace thaw::serve {
namespace {

namespace fs = std::filesystem;

struct Row {
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  records::TimestampType type = records::TimestampType::kCreateTime;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  bool operator==(const Row&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << "{offset " << r.offset << ", ts " << r.timestamp_ms << ", type " << static_cast<int>(r.type) << ", key "
            << (r.key ? "'" + r.key->substr(0, 20) + "'" : "null") << ", value "
            << (r.value ? std::to_string(r.value->size()) + " bytes" : "null") << ", " << r.headers.size()
            << " headers}";
}

using Rows = std::vector<Row>;

// The tables every Fetch test runs over: several layouts, partitioned and
// not, with gaps, deletes and 1 MiB values.
const std::vector<std::string> kTables = {
    "serve_part", "serve_unpart", "canonical_v2", "canonical_cow_delete", "canonical_snappy_unpartitioned",
    "redpanda",   "connect_flat"};

class ServeFixture : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    if (!info_.is_null() || !skip_.empty()) return;
    const char* python = std::getenv("THAW_PYTHON");
    if (python == nullptr || *python == '\0') {
      skip_ = "THAW_PYTHON is not set";
      return;
    }
    char tmpl[] = "/tmp/thaw_serve_fixture_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::atexit([]() {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    });
    int rc = 0;
    std::string out = Script("", &rc);
    if (rc == 77) {
      skip_ = "pyiceberg not available";
      return;
    }
    ASSERT_EQ(rc, 0) << out;
    info_ = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(info_.is_discarded()) << out;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(info_.is_object());
  }

  // Runs make_serve_fixture.py on the warehouse with `mode` (build, append, delete).
  static std::string Script(const std::string& mode, int* rc) {
    const fs::path script = fs::path(THAW_SOURCE_DIR) / "tests/unit/serve/make_serve_fixture.py";
    const std::string cmd = std::string("'") + std::getenv("THAW_PYTHON") + "' '" + script.string() + "' '" +
                            (dir_ / "wh").string() + "' " + mode + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) {
      *rc = -1;
      return "popen failed";
    }
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    int status = pclose(pipe);
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    // The JSON is the last line (pyiceberg may warn before it).
    size_t nl = out.find_last_of('\n', out.size() >= 2 ? out.size() - 2 : 0);
    return *rc == 0 && nl != std::string::npos ? out.substr(nl + 1) : out;
  }

  static std::shared_ptr<catalog::Catalog> Catalog() {
    auto c = catalog::OpenCatalog(info_["catalog"].get<std::string>(), "default");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::shared_ptr<catalog::Catalog>(std::move(*c));
  }

  static TopicConfig Config(const std::string& table) {
    TopicConfig c;
    c.name = table;
    c.table = "ns." + table;
    return c;
  }

  // No read-ahead unless a test asks for it: the tests that count segment
  // reads would otherwise race a background read of the next segment.
  static ServeOptions Options() {
    ServeOptions o;
    o.read_ahead = 0;
    return o;
  }

  static std::unique_ptr<TopicRegistry> Registry(const std::vector<std::string>& tables, ServeOptions o = Options()) {
    std::vector<TopicConfig> cs;
    for (const auto& t : tables) cs.push_back(Config(t));
    auto r = TopicRegistry::Make(Catalog(), cs, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : nullptr;
  }

  // The table's records per partition, as the RecordReader gives them.
  static std::map<int32_t, Rows> ReaderRows(const std::string& table) { return ReaderRows(*Catalog(), table); }
  static std::map<int32_t, Rows> ReaderRows(catalog::Catalog& cat, const std::string& table) {
    auto id = catalog::TableIdentifier::Parse("ns." + table);
    auto t = cat.LoadTable(*id);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    auto reader = records::RecordReader::Make(std::make_shared<const iceberg::Table>(std::move(*t)), {});
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    std::map<int32_t, Rows> out;
    records::RecordBatch b;
    while (true) {
      auto more = (*reader)->Next(&b);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      for (const auto& r : b.records) {
        Row row{r.offset, r.timestamp_ms, r.timestamp_type, std::nullopt, std::nullopt, {}};
        if (r.key) row.key = std::string(*r.key);
        if (r.value) row.value = std::string(*r.value);
        for (const auto& h : b.HeadersOf(r)) {
          row.headers.emplace_back(std::string(h.key),
                                   h.value ? std::optional<std::string>(std::string(*h.value)) : std::nullopt);
        }
        out[r.partition].push_back(std::move(row));
      }
    }
    return out;
  }

  // Decodes a fetch result's batches (checking what every batch must hold).
  static Rows Decode(const FetchResult& f, std::vector<kafka::DecodedBatch>* batches_out = nullptr) {
    std::string bytes;
    int64_t total = 0;
    for (const auto& b : f.batches) {
      bytes += *b;
      total += static_cast<int64_t>(b->size());
    }
    EXPECT_EQ(total, f.bytes);
    auto batches = kafka::DecodeRecordBatches(bytes);
    EXPECT_TRUE(batches.ok()) << batches.status().ToString();
    Rows rows;
    if (!batches.ok()) return rows;
    EXPECT_EQ(batches->size(), f.batches.size());
    for (const auto& b : *batches) {
      // 0 unless a snapshot removed served offsets (then up to the latest).
      EXPECT_GE(b.leader_epoch, kLeaderEpoch);
      EXPECT_LE(b.leader_epoch, f.offsets.leader_epoch);
      EXPECT_EQ(b.base_offset + b.last_offset_delta, b.records.back().offset);
      for (const auto& r : b.records) {
        rows.push_back(Row{r.offset, r.timestamp_ms, b.timestamp_type(), r.key, r.value, r.headers});
      }
    }
    if (batches_out) *batches_out = std::move(*batches);
    return rows;
  }

  // All of a partition through Fetch, `max_bytes` at a time.
  static Rows FetchAll(ServedTopic& t, int32_t p, int64_t max_bytes, int* fetches = nullptr) {
    auto o = t.Offsets(p);
    EXPECT_TRUE(o.ok()) << o.status().ToString();
    Rows rows;
    int64_t next = o->log_start;
    int n = 0;
    while (next < o->high_watermark) {
      auto f = t.Fetch(p, next, max_bytes);
      EXPECT_TRUE(f.ok()) << f.status().ToString();
      if (!f.ok()) break;
      EXPECT_EQ(f->error, kafka::ErrorCode::kNone) << "partition " << p << " offset " << next;
      if (f->batches.empty()) break;
      Rows got = Decode(*f);
      if (got.empty()) break;
      rows.insert(rows.end(), got.begin(), got.end());
      next = got.back().offset + 1;
      ++n;
    }
    if (fetches) *fetches = n;
    return rows;
  }

  static inline nlohmann::json info_;
  static inline std::string skip_;
  static inline fs::path dir_;
};

TEST_F(ServeFixture, OffsetsAreTheFirstAndLastRecordsPresent) {
  auto reg = Registry(kTables);
  ASSERT_TRUE(reg);
  for (const auto& name : kTables) {
    SCOPED_TRACE(name);
    auto t = reg->FindTopic(name);
    ASSERT_TRUE(t);
    auto expected = ReaderRows(name);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(t->partition_count(), expected.rbegin()->first + 1);
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      auto o = t->Offsets(p);
      ASSERT_TRUE(o.ok()) << o.status().ToString();
      const Rows& rows = expected[p];
      EXPECT_EQ(o->log_start, rows.empty() ? 0 : rows.front().offset) << "partition " << p;
      EXPECT_EQ(o->high_watermark, rows.empty() ? 0 : rows.back().offset + 1) << "partition " << p;
      EXPECT_EQ(o->last_stable(), o->high_watermark);
      EXPECT_EQ(o->leader_epoch, kLeaderEpoch);
    }
    EXPECT_FALSE(t->Offsets(t->partition_count()).ok());
    EXPECT_FALSE(t->Offsets(-1).ok());
  }
  // serve_part has partitions 0, 1 and 3: 2 is served, empty.
  auto part = reg->FindTopic("serve_part");
  EXPECT_EQ(part->partition_count(), 4);
  auto empty = part->Offsets(2);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->log_start, 0);
  EXPECT_EQ(empty->high_watermark, 0);
}

// Offsets, whole-partition reads and a fetch at every offset of every
// partition, against the reader's records.
void CheckAgainstReader(ServedTopic& t, std::map<int32_t, Rows> expected);

TEST_F(ServeFixture, FetchAtEveryOffsetReturnsTheBatchHoldingItAndTheReadersRecords) {
  auto reg = Registry(kTables);
  ASSERT_TRUE(reg);
  for (const auto& name : kTables) {
    SCOPED_TRACE(name);
    CheckAgainstReader(*reg->FindTopic(name), ReaderRows(name));
  }
}

void CheckAgainstReader(ServedTopic& t, std::map<int32_t, Rows> expected) {
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(t.partition_count(), expected.rbegin()->first + 1);
  for (int32_t p = 0; p < t.partition_count(); ++p) {
    SCOPED_TRACE("partition " + std::to_string(p));
    const Rows& rows = expected[p];
    auto o = t.Offsets(p);
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    EXPECT_EQ(o->log_start, rows.empty() ? 0 : rows.front().offset);
    EXPECT_EQ(o->high_watermark, rows.empty() ? 0 : rows.back().offset + 1);
    // The whole partition, in one fetch and one batch at a time.
    EXPECT_EQ(ServeFixture::FetchAll(t, p, int64_t{1} << 40), rows);
    EXPECT_EQ(ServeFixture::FetchAll(t, p, 1), rows);
    if (rows.empty()) continue;
    // Every offset of the range, present or in a gap.
    for (int64_t off = rows.front().offset; off <= rows.back().offset; ++off) {
      auto f = t.Fetch(p, off, 1);
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      ASSERT_EQ(f->error, kafka::ErrorCode::kNone) << off;
      ASSERT_EQ(f->batches.size(), 1u) << off;  // max_bytes 1: the first batch only, whole (KIP-74)
      Rows got = ServeFixture::Decode(*f);
      ASSERT_FALSE(got.empty());
      // The batch holds the first record at or after `off` ...
      auto want = std::lower_bound(rows.begin(), rows.end(), off, [](const Row& r, int64_t o) { return r.offset < o; });
      ASSERT_NE(want, rows.end());
      ASSERT_LE(got.front().offset, want->offset) << off;
      ASSERT_GE(got.back().offset, want->offset) << off;
      // ... and exactly the reader's records over its range.
      auto from = std::lower_bound(rows.begin(), rows.end(), got.front().offset,
                                   [](const Row& r, int64_t o) { return r.offset < o; });
      ASSERT_GE(static_cast<size_t>(rows.end() - from), got.size());
      ASSERT_EQ(Rows(from, from + static_cast<ptrdiff_t>(got.size())), got) << off;
      // A batch that starts after `off` only does so because nothing lies between.
      if (got.front().offset > off) {
        ASSERT_TRUE(want == rows.begin() || (want - 1)->offset < off) << off;
      }
    }
  }
}

TEST_F(ServeFixture, BatchesAreCompressedPerTopic) {
  std::vector<TopicConfig> cs;
  const std::vector<kafka::Compression> codecs = {kafka::Compression::kGzip, kafka::Compression::kSnappy,
                                                  kafka::Compression::kLz4, kafka::Compression::kZstd};
  for (auto c : codecs) {
    TopicConfig cfg = Config("canonical_v2");
    cfg.name = "v2-" + std::string(kafka::CompressionName(c));
    cfg.compression = c;
    cs.push_back(cfg);
  }
  cs.push_back(Config("canonical_v2"));
  auto reg = TopicRegistry::Make(Catalog(), cs, {});
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  auto expected = ReaderRows("canonical_v2");
  auto plain = (*reg)->FindTopic("canonical_v2");
  for (auto c : codecs) {
    SCOPED_TRACE(std::string(kafka::CompressionName(c)));
    auto t = (*reg)->FindTopic("v2-" + std::string(kafka::CompressionName(c)));
    ASSERT_TRUE(t);
    EXPECT_NE(t->topic_id_bytes(), plain->topic_id_bytes());
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      EXPECT_EQ(FetchAll(*t, p, 1 << 20), expected[p]);
      auto o = t->Offsets(p);
      auto f = t->Fetch(p, o->log_start, int64_t{1} << 40);
      auto u = plain->Fetch(p, o->log_start, int64_t{1} << 40);
      ASSERT_TRUE(f.ok() && u.ok());
      std::vector<kafka::DecodedBatch> batches;
      Decode(*f, &batches);
      for (const auto& b : batches) EXPECT_EQ(b.compression(), c);
      // Cached batches hold no spare capacity (the cache counts their sizes).
      for (const auto& b : f->batches) EXPECT_LE(b->capacity(), b->size() + b->size() / 8 + 16);
      // Same batch boundaries whatever the codec.
      EXPECT_EQ(f->batches.size(), u->batches.size());
      // Partition 0's small JSON values compress.
      if (p == 0) EXPECT_LT(f->bytes, u->bytes);
    }
  }
}

TEST_F(ServeFixture, OffsetsOutOfRangeAndUnknownPartitions) {
  auto reg = Registry({"serve_part"});
  auto t = reg->FindTopic("serve_part");
  auto expected = ReaderRows("serve_part");
  for (int32_t p : {0, 1, 3}) {
    auto o = t->Offsets(p);
    ASSERT_TRUE(o.ok());
    if (o->log_start > 0) {
      auto below = t->Fetch(p, o->log_start - 1, 1 << 20);
      ASSERT_TRUE(below.ok());
      EXPECT_EQ(below->error, kafka::ErrorCode::kOffsetOutOfRange);
      EXPECT_TRUE(below->batches.empty());
      EXPECT_EQ(below->offsets.log_start, o->log_start);  // the client resets with these
    }
    auto at_end = t->Fetch(p, o->high_watermark, 1 << 20);
    ASSERT_TRUE(at_end.ok());
    EXPECT_EQ(at_end->error, kafka::ErrorCode::kNone);
    EXPECT_TRUE(at_end->batches.empty());
    EXPECT_EQ(at_end->offsets.high_watermark, o->high_watermark);
    auto above = t->Fetch(p, o->high_watermark + 1, 1 << 20);
    ASSERT_TRUE(above.ok());
    EXPECT_EQ(above->error, kafka::ErrorCode::kOffsetOutOfRange);
  }
  ASSERT_GT(t->Offsets(1)->log_start, 0);  // partition 1 starts at 7: "below" was tested
  auto empty = t->Fetch(2, 0, 1 << 20);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->error, kafka::ErrorCode::kNone);
  EXPECT_TRUE(empty->batches.empty());
  EXPECT_EQ(t->Fetch(2, 1, 1 << 20)->error, kafka::ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(t->Fetch(4, 0, 1 << 20)->error, kafka::ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(t->Fetch(-1, 0, 1 << 20)->error, kafka::ErrorCode::kUnknownTopicOrPartition);
}

TEST_F(ServeFixture, MaxBytesTakesWholeBatchesAndAlwaysTheFirst) {
  auto reg = Registry({"canonical_v2", "serve_unpart"});
  for (const auto& [name, p] : std::vector<std::pair<std::string, int32_t>>{{"canonical_v2", 1}, {"serve_unpart", 2}}) {
    SCOPED_TRACE(name);
    auto t = reg->FindTopic(name);
    auto o = t->Offsets(p);
    ASSERT_TRUE(o.ok());
    auto all = t->Fetch(p, o->log_start, int64_t{1} << 40);
    ASSERT_TRUE(all.ok());
    ASSERT_GE(all->batches.size(), 3u);
    std::vector<int64_t> sizes;
    for (const auto& b : all->batches) sizes.push_back(static_cast<int64_t>(b->size()));
    int64_t sum = 0;
    for (size_t k = 1; k <= sizes.size(); ++k) {
      sum += sizes[k - 1];
      auto exact = t->Fetch(p, o->log_start, sum);
      ASSERT_TRUE(exact.ok());
      EXPECT_EQ(exact->batches.size(), k) << "max_bytes " << sum;
      EXPECT_EQ(exact->bytes, sum);
      auto under = t->Fetch(p, o->log_start, sum - 1);
      ASSERT_TRUE(under.ok());
      EXPECT_EQ(under->batches.size(), std::max<size_t>(k - 1, 1)) << "max_bytes " << sum - 1;
    }
  }
  // canonical_v2 partition 1 holds three 1 MiB values: each in a batch of
  // its own (over batch_bytes), returned whole even under a tiny max_bytes.
  auto t = reg->FindTopic("canonical_v2");
  auto rows = ReaderRows("canonical_v2")[1];
  int big = 0;
  for (const auto& r : rows) {
    if (!r.value || r.value->size() < (1u << 20)) continue;
    ++big;
    auto f = t->Fetch(1, r.offset, 100);
    ASSERT_TRUE(f.ok());
    std::vector<kafka::DecodedBatch> batches;
    Rows got = Decode(*f, &batches);
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_GT(f->bytes, 1 << 20);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], r);
  }
  EXPECT_EQ(big, 3);
}

TEST_F(ServeFixture, OffsetForTimeAndMaxTimestampMatchABruteForceScan) {
  const std::vector<std::string> tables = {"serve_part", "serve_unpart", "canonical_v2", "canonical_cow_delete",
                                           "redpanda"};
  auto reg = Registry(tables);
  for (const auto& name : tables) {
    SCOPED_TRACE(name);
    auto t = reg->FindTopic(name);
    auto expected = ReaderRows(name);
    for (int32_t p = 0; p < t->partition_count(); ++p) {
      SCOPED_TRACE("partition " + std::to_string(p));
      const Rows& rows = expected[p];
      std::vector<int64_t> targets = {INT64_MIN / 2, 0};
      for (const auto& r : rows) {
        targets.push_back(r.timestamp_ms - 1);
        targets.push_back(r.timestamp_ms);
        targets.push_back(r.timestamp_ms + 1);
      }
      for (int64_t ts : targets) {
        std::optional<std::pair<int64_t, int64_t>> want;
        for (const auto& r : rows) {
          if (r.timestamp_ms >= ts) {
            want = std::make_pair(r.offset, r.timestamp_ms);
            break;
          }
        }
        auto got = t->OffsetForTime(p, ts);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_EQ(*got, want) << "ts " << ts;
      }
      std::optional<std::pair<int64_t, int64_t>> max;
      for (const auto& r : rows) {
        if (!max || r.timestamp_ms > max->second) max = std::make_pair(r.offset, r.timestamp_ms);
      }
      auto got = t->MaxTimestamp(p);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(*got, max);
    }
  }
}

// Polls `done` for up to ten seconds (background reads finishing).
static bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

TEST_F(ServeFixture, CachedSegmentsAreNotDecodedAgain) {
  ServeOptions opts = Options();
  auto reg = Registry({"serve_part"}, opts);
  auto t = reg->FindTopic("serve_part");
  auto rows = ReaderRows("serve_part")[0];
  const int64_t mid = rows[rows.size() / 2].offset;  // present: found in the first segment looked at
  auto first = t->Fetch(0, mid, 1);
  ASSERT_TRUE(first.ok());
  // The first Fetch may be answered before the rest of its segment is
  // encoded and cached (AFetchOfASegmentNotCached...): wait for the cache.
  ASSERT_TRUE(Eventually([&] { return reg->cache()->stats().loading == 0; }));
  const auto s1 = t->stats();
  const auto c1 = reg->cache()->stats();
  for (int i = 0; i < 5; ++i) {
    auto again = t->Fetch(0, mid, 1);
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(again->batches.size(), 1u);
    EXPECT_EQ(again->batches[0], first->batches[0]);  // the same cached bytes
  }
  EXPECT_EQ(t->stats().segment_reads, s1.segment_reads);
  EXPECT_EQ(reg->cache()->stats().hits, c1.hits + 5);
  EXPECT_EQ(reg->cache()->stats().misses, c1.misses);
}

TEST_F(ServeFixture, AFetchOfASegmentNotCachedIsAnsweredBeforeTheRestOfItIsEncoded) {
  auto rows = ReaderRows("serve_part")[3];
  ASSERT_GE(rows.size(), 4u);
  const int64_t mid = rows[rows.size() / 2].offset;
  // max_bytes 1: the batch holding `mid` only; unbounded: it and every batch after.
  for (const int64_t max_bytes : {int64_t{1}, int64_t{1} << 40}) {
    SCOPED_TRACE("max_bytes " + std::to_string(max_bytes));
    auto reg = Registry({"serve_part"});
    auto t = reg->FindTopic("serve_part");
    ASSERT_TRUE(t->Offsets(3).ok());  // the log start and end (metadata reads: nothing cached)
    ASSERT_TRUE(Eventually([&] { return reg->cache()->stats().loading == 0; }));
    const auto before = t->stats();
    auto early = t->Fetch(3, mid, max_bytes);
    ASSERT_TRUE(early.ok()) << early.status().ToString();
    EXPECT_EQ(t->stats().early_answers, before.early_answers + 1);
    Rows got = Decode(*early);
    ASSERT_FALSE(got.empty());
    ASSERT_LE(got.front().offset, mid);
    ASSERT_GE(got.back().offset, mid);
    auto from = std::lower_bound(rows.begin(), rows.end(), got.front().offset,
                                 [](const Row& r, int64_t o) { return r.offset < o; });
    ASSERT_GE(static_cast<size_t>(rows.end() - from), got.size());
    EXPECT_EQ(Rows(from, from + static_cast<ptrdiff_t>(got.size())), got);
    if (max_bytes == 1) {
      EXPECT_EQ(early->batches.size(), 1u);
    } else {
      EXPECT_EQ(got.back().offset, rows.back().offset);  // on to the end of the partition
    }
    // The rest of the segment is encoded and cached after the answer: the
    // same Fetch again is the same batches (cut by the records alone, the
    // very bytes the early answer sent), from the cache, with no new read.
    ASSERT_TRUE(Eventually([&] { return reg->cache()->stats().loading == 0; }));
    const auto settled = t->stats();
    auto again = t->Fetch(3, mid, max_bytes);
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(again->batches.size(), early->batches.size());
    for (size_t k = 0; k < again->batches.size(); ++k) EXPECT_EQ(*again->batches[k], *early->batches[k]) << k;
    EXPECT_EQ(again->batches[0], early->batches[0]);  // the same cached bytes, not a copy
    EXPECT_EQ(t->stats().segment_reads, settled.segment_reads);
    EXPECT_EQ(t->stats().early_answers, settled.early_answers);
  }
}

TEST_F(ServeFixture, ConcurrentFetchesOfOneSegmentDecodeItOnce) {
  auto reg = Registry({"serve_part"});
  auto t = reg->FindTopic("serve_part");
  auto o = t->Offsets(3);
  ASSERT_TRUE(o.ok());
  const auto before = t->stats();  // the first and last segments, read for the offsets
  auto rows = ReaderRows("serve_part")[3];
  const int64_t mid = rows[rows.size() / 2].offset;
  std::atomic<bool> go{false};
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      while (!go) std::this_thread::yield();
      auto f = t->Fetch(3, mid, 1);
      if (f.ok() && f->batches.size() == 1) ++ok;
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(t->stats().segment_reads, before.segment_reads + 1);
  const auto c = reg->cache()->stats();
  EXPECT_GE(c.waits + c.hits, 7);
}

TEST_F(ServeFixture, ReadAheadDecodesTheNextSegmentOnceWhileTheConsumerTakesThisOne) {
  // Without read-ahead: how many segment reads one pass costs.
  auto plain_reg = Registry({"serve_part"});
  auto plain = plain_reg->FindTopic("serve_part");
  const auto expected = FetchAll(*plain, 3, 1);
  const int64_t segments = plain->stats().segment_reads;
  ASSERT_GE(segments, 3) << "the fixture's partition 3 needs several segments";

  ServeOptions opts = Options();
  opts.read_ahead = 2;
  auto reg = Registry({"serve_part"}, opts);
  auto t = reg->FindTopic("serve_part");
  auto o = t->Offsets(3);
  ASSERT_TRUE(o.ok());
  const auto before = t->stats();
  auto first = t->Fetch(3, o->log_start, 1);
  ASSERT_TRUE(first.ok());
  // The segment after the one returned is decoded in the background.
  EXPECT_TRUE(Eventually([&] { return t->stats().segment_reads == before.segment_reads + 2; }))
      << t->stats().segment_reads;
  EXPECT_EQ(t->stats().read_aheads, before.read_aheads + 1);
  // A whole pass gives the same records and decodes each segment once:
  // a read ahead is never repeated by the consumer that reaches it.
  EXPECT_EQ(FetchAll(*t, 3, 1), expected);
  EXPECT_TRUE(Eventually([&] { return t->stats().segment_reads >= segments; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(t->stats().segment_reads, segments);
}

TEST_F(ServeFixture, RowGroupsHoldingSeveralPartitionsAreDecodedOnceForAll) {
  auto reg = Registry({"serve_unpart"});
  auto t = reg->FindTopic("serve_unpart");
  ASSERT_EQ(t->partition_count(), 4);
  auto expected = ReaderRows("serve_unpart");
  for (int32_t p = 0; p < 4; ++p) EXPECT_EQ(FetchAll(*t, p, 1 << 20), expected[p]);
  const int64_t row_groups = info_["row_groups"]["serve_unpart"].get<int64_t>();
  const auto s = t->stats();
  // Each row group decoded once, for the four partitions it holds.
  EXPECT_EQ(s.row_groups_decoded, row_groups);
  EXPECT_EQ(s.segment_reads, row_groups);
  EXPECT_EQ(s.segments_filled, 4 * row_groups);
  // What reading partition by partition would have cost.
  auto id = catalog::TableIdentifier::Parse("ns.serve_unpart");
  auto table = Catalog()->LoadTable(*id);
  records::ReadOptions ro;
  ro.order = records::ReadOrder::kPartitionMajor;
  auto reader = records::RecordReader::Make(std::make_shared<const iceberg::Table>(std::move(*table)), ro);
  ASSERT_TRUE(reader.ok());
  records::RecordBatch b;
  while (*(*reader)->Next(&b)) {
  }
  EXPECT_EQ((*reader)->decode_stats().row_groups, 4 * row_groups);
}

TEST_F(ServeFixture, ASmallCacheStaysWithinItsBoundAndServesTheSameRecords) {
  ServeOptions opts = Options();
  opts.cache_bytes = 64 << 10;
  auto reg = Registry({"serve_unpart"}, opts);
  auto t = reg->FindTopic("serve_unpart");
  auto expected = ReaderRows("serve_unpart");
  for (int round = 0; round < 2; ++round) {
    for (int32_t p = 0; p < 4; ++p) EXPECT_EQ(FetchAll(*t, p, 1 << 20), expected[p]);
  }
  const auto c = reg->cache()->stats();
  EXPECT_LE(c.bytes, opts.cache_bytes);
  EXPECT_GT(c.evictions, 0);
}

TEST_F(ServeFixture, ANewSnapshotIsServedAfterRefresh) {
  ServeOptions opts = Options();
  opts.min_check_interval = std::chrono::milliseconds(0);
  auto reg = Registry({"serve_tail", "serve_unpart_tail"}, opts);
  auto t = reg->FindTopic("serve_tail");
  auto u = reg->FindTopic("serve_unpart_tail");
  // Files holding both partitions: offsets are read (offset columns only), a
  // first and a last segment per partition.
  for (int32_t p : {0, 1}) {
    EXPECT_EQ(u->Offsets(p)->log_start, 0);
    EXPECT_EQ(u->Offsets(p)->high_watermark, 50);
  }
  EXPECT_EQ(u->stats().offset_reads, 4);
  EXPECT_EQ(u->stats().segment_reads, 0);
  ServeOptions slow = Options();
  slow.min_check_interval = std::chrono::hours(1);
  auto slow_reg = Registry({"serve_tail"}, slow);
  auto slow_t = slow_reg->FindTopic("serve_tail");
  ASSERT_TRUE(slow_t->RefreshIfChanged().ok());
  auto before = ReaderRows("serve_tail");
  ASSERT_EQ(t->Offsets(0)->high_watermark, 100);
  EXPECT_EQ(FetchAll(*t, 0, 1 << 20), before[0]);
  EXPECT_EQ(FetchAll(*t, 1, 1 << 20), before[1]);
  const auto snap = t->snapshot_id();
  ASSERT_TRUE(t->RefreshIfChanged().ok());  // nothing changed
  EXPECT_EQ(t->snapshot_id(), snap);
  EXPECT_EQ(t->stats().refreshes, 0);

  int rc = 0;
  std::string out = Script("append", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(t->Offsets(0)->high_watermark, 100);  // not before a refresh
  EXPECT_EQ(t->Fetch(0, 100, 1 << 20)->batches.size(), 0u);
  ASSERT_TRUE(reg->RefreshAll().ok());
  EXPECT_NE(t->snapshot_id(), snap);
  EXPECT_EQ(t->stats().refreshes, 1);
  // The unchanged first segments' offsets are remembered: only the new last segments are read.
  for (int32_t p : {0, 1}) {
    EXPECT_EQ(u->Offsets(p)->log_start, 0);
    EXPECT_EQ(u->Offsets(p)->high_watermark, 60);
  }
  EXPECT_EQ(u->stats().offset_reads, 6);
  auto unpart = ReaderRows("serve_unpart_tail");
  EXPECT_EQ(FetchAll(*u, 0, 1 << 20), unpart[0]);
  EXPECT_EQ(FetchAll(*u, 1, 1 << 20), unpart[1]);
  // Within min_check_interval of its last reload, a topic does not ask the catalog again.
  ASSERT_TRUE(slow_t->RefreshIfChanged().ok());
  EXPECT_EQ(slow_t->snapshot_id(), snap);
  auto after = ReaderRows("serve_tail");
  ASSERT_EQ(after[0].back().offset, 124);
  EXPECT_EQ(t->Offsets(0)->high_watermark, 125);
  auto tail = t->Fetch(0, 100, 1 << 20);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(Decode(*tail), Rows(after[0].end() - 25, after[0].end()));
  // An append leaves earlier segments as they were: still cached.
  const auto reads = t->stats().segment_reads;
  for (int64_t off = 0; off < 80; off += 10) {
    auto f = t->Fetch(0, off, 1);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->error, kafka::ErrorCode::kNone);
  }
  EXPECT_EQ(t->stats().segment_reads, reads);
  EXPECT_EQ(FetchAll(*t, 0, 1 << 20), after[0]);
  EXPECT_EQ(FetchAll(*t, 1, 1 << 20), after[1]);

  // A delete rewrites history: served from the next refresh on.
  out = Script("delete", &rc);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_TRUE(t->RefreshIfChanged().ok());
  auto deleted = ReaderRows("serve_tail");
  ASSERT_EQ(deleted[0].front().offset, 5);
  ASSERT_EQ(deleted[1].back().offset, 121);
  auto o0 = t->Offsets(0);
  auto o1 = t->Offsets(1);
  EXPECT_EQ(o0->log_start, 5);
  EXPECT_EQ(o1->high_watermark, 122);
  EXPECT_EQ(t->Fetch(0, 0, 1 << 20)->error, kafka::ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(t->Fetch(1, 123, 1 << 20)->error, kafka::ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(FetchAll(*t, 0, 1 << 20), deleted[0]);
  EXPECT_EQ(FetchAll(*t, 1, 1 << 20), deleted[1]);
}

// Leader epoch of every batch of a Fetch.
std::vector<std::pair<int64_t, int32_t>> BatchEpochs(const FetchResult& f) {
  std::vector<std::pair<int64_t, int32_t>> out;
  for (const auto& b : f.batches) {
    auto d = kafka::DecodeRecordBatches(*b);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (d.ok()) {
      for (const auto& batch : *d) out.emplace_back(batch.base_offset, batch.leader_epoch);
    }
  }
  return out;
}

TEST_F(ServeFixture, ASnapshotRemovingServedOffsetsStartsANewLeaderEpoch) {
  // serve_epochs: partitions 0 and 1 at offsets 0-99; epochs-delete removes
  // partition 1 from 90 on. A server that served it to 100 -- one running
  // (refresh) and one restarted on the state the first saved -- starts
  // epoch 1 at 90 on partition 1.
  const fs::path state = dir_ / "epoch-state";
  ServeOptions opts = Options();
  opts.min_check_interval = std::chrono::milliseconds(0);
  opts.state_dir = state.string();
  ServeOptions in_memory = Options();
  in_memory.min_check_interval = std::chrono::milliseconds(0);
  auto running = Registry({"serve_epochs"}, in_memory);
  auto live = running->FindTopic("serve_epochs");
  {
    auto reg = Registry({"serve_epochs"}, opts);
    auto t = reg->FindTopic("serve_epochs");
    for (auto* topic : {t.get(), live.get()}) {
      ASSERT_EQ(topic->Offsets(0)->high_watermark, 100);
      ASSERT_EQ(topic->Offsets(1)->high_watermark, 100);
      EXPECT_EQ(topic->LeaderEpoch(1), 0);
    }
  }  // saved: served to 100 at this snapshot
  EXPECT_TRUE(fs::exists(state / "epochs" / "serve_epochs.json"));
  int rc = 0;
  std::string out = Script("epochs-delete", &rc);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_TRUE(live->RefreshIfChanged().ok());

  auto reg = Registry({"serve_epochs"}, opts);
  auto t = reg->FindTopic("serve_epochs");
  for (auto* topic : {t.get(), live.get()}) {
    EXPECT_EQ(topic->LeaderEpoch(0), 0);  // its high watermark did not move
    EXPECT_EQ(topic->LeaderEpoch(1), 1);
    EXPECT_EQ(topic->Offsets(1)->leader_epoch, 1);
    EXPECT_EQ(topic->Offsets(1)->high_watermark, 90);
    EXPECT_EQ(topic->Offsets(0)->leader_epoch, 0);
    // OffsetForLeaderEpoch: epoch 0 ends where epoch 1 starts; epoch 1 at
    // the high watermark; epochs never seen are UNDEFINED.
    EXPECT_EQ(*topic->EndOffsetForEpoch(1, 0), std::make_pair(0, int64_t{90}));
    EXPECT_EQ(*topic->EndOffsetForEpoch(1, 1), std::make_pair(1, int64_t{90}));
    EXPECT_EQ(*topic->EndOffsetForEpoch(1, 2), std::make_pair(-1, int64_t{-1}));
    EXPECT_EQ(*topic->EndOffsetForEpoch(1, -1), std::make_pair(-1, int64_t{-1}));
    EXPECT_EQ(*topic->EndOffsetForEpoch(0, 0), std::make_pair(0, int64_t{100}));
    EXPECT_EQ(topic->CheckLeaderEpoch(1, 0), kafka::ErrorCode::kFencedLeaderEpoch);
    EXPECT_EQ(topic->CheckLeaderEpoch(1, 2), kafka::ErrorCode::kUnknownLeaderEpoch);
    EXPECT_EQ(topic->CheckLeaderEpoch(1, 1), kafka::ErrorCode::kNone);
    EXPECT_EQ(topic->CheckLeaderEpoch(1, -1), kafka::ErrorCode::kNone);
    EXPECT_EQ(topic->CheckLeaderEpoch(0, 0), kafka::ErrorCode::kNone);
  }

  // New records where the old ones were removed carry epoch 1; the rows
  // before 90 keep epoch 0. An append starts no epoch.
  out = Script("epochs-append", &rc);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_TRUE(t->RefreshIfChanged().ok());
  EXPECT_EQ(t->Offsets(1)->high_watermark, 98);
  EXPECT_EQ(t->LeaderEpoch(1), 1);
  auto all = t->Fetch(1, 50, 1 << 30);
  ASSERT_TRUE(all.ok());
  auto epochs = BatchEpochs(*all);
  ASSERT_FALSE(epochs.empty());
  for (const auto& [base, epoch] : epochs) EXPECT_EQ(epoch, base >= 90 ? 1 : 0) << "batch at " << base;
  EXPECT_EQ(epochs.back().second, 1);
  auto rows = ReaderRows("serve_epochs");
  EXPECT_EQ(FetchAll(*t, 1, 1 << 20), rows[1]);
  EXPECT_EQ(FetchAll(*t, 0, 1 << 20), rows[0]);

  // Restarted on the same state: the epochs stay (never back to 0).
  t.reset();
  reg.reset();
  auto again = Registry({"serve_epochs"}, opts);
  EXPECT_EQ(again->FindTopic("serve_epochs")->LeaderEpoch(1), 1);
  EXPECT_EQ(*again->FindTopic("serve_epochs")->EndOffsetForEpoch(1, 0), std::make_pair(0, int64_t{90}));
}

TEST_F(ServeFixture, BadTopicsAreErrorsNamingTopicAndTable) {
  auto cat = Catalog();
  auto missing = TopicRegistry::Make(cat, {TopicConfig{"orders", "ns.nope", {}, kafka::Compression::kNone}}, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("topic 'orders'"), std::string::npos) << missing.status().message();
  EXPECT_NE(missing.status().message().find("ns.nope"), std::string::npos) << missing.status().message();
  auto plain = TopicRegistry::Make(cat, {TopicConfig{"rows", "ns.plain", {}, kafka::Compression::kNone}}, {});
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("not Kafka-shaped"), std::string::npos) << plain.status().message();
  EXPECT_NE(plain.status().message().find("topic 'rows'"), std::string::npos) << plain.status().message();
  auto bad_name = TopicRegistry::Make(cat, {TopicConfig{"a b", "ns.serve_part", {}, kafka::Compression::kNone}}, {});
  ASSERT_FALSE(bad_name.ok());
  EXPECT_NE(bad_name.status().message().find("' '"), std::string::npos) << bad_name.status().message();
  auto twice = TopicRegistry::Make(cat,
                                   {TopicConfig{"t", "ns.serve_part", {}, kafka::Compression::kNone},
                                    TopicConfig{"t", "ns.serve_tail", {}, kafka::Compression::kNone}},
                                   {});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("twice"), std::string::npos) << twice.status().message();
}

TEST_F(ServeFixture, TablePrefixServesTheKafkaShapedTablesOfANamespace) {
  auto cat = Catalog();
  std::vector<std::string> skipped;
  auto found = TopicRegistry::DiscoverTopics(*cat, "ns", TopicConfig{}, &skipped);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  std::vector<std::string> names;
  for (const auto& c : *found) {
    names.push_back(c.name);
    EXPECT_EQ(c.table, "ns." + c.name);
  }
  for (const auto& t : kTables) EXPECT_NE(std::find(names.begin(), names.end(), t), names.end()) << t;
  EXPECT_EQ(std::find(names.begin(), names.end(), "plain"), names.end());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("ns.plain"), std::string::npos) << skipped[0];
  auto reg = TopicRegistry::Make(cat, *found, {});
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  EXPECT_TRUE((*reg)->Find("serve_part"));
  EXPECT_TRUE(TopicRegistry::DiscoverTopics(*cat, "other", TopicConfig{})->empty());
}

TEST_F(ServeFixture, TopicIdsAreStableAndDistinct) {
  auto a = Registry({"serve_part", "serve_tail"});
  auto b = Registry({"serve_part"});
  auto pa = a->FindTopic("serve_part"), pb = b->FindTopic("serve_part"), ta = a->FindTopic("serve_tail");
  EXPECT_EQ(pa->topic_id_bytes(), pb->topic_id_bytes());
  EXPECT_NE(pa->topic_id_bytes(), ta->topic_id_bytes());
  EXPECT_EQ(a->FindById(pa->topic_id()), pa);
  EXPECT_EQ(a->FindById(ta->topic_id_bytes()), ta);
  std::array<uint8_t, 16> zero{};
  EXPECT_EQ(a->FindById(zero), nullptr);
  // Another topic name over the same table gets another id.
  EXPECT_NE(DeriveTopicId("3f9b6c1e-0000-4000-8000-000000000001", "a"),
            DeriveTopicId("3f9b6c1e-0000-4000-8000-000000000001", "b"));
  const auto id = pa->topic_id_bytes();
  EXPECT_EQ(id[6] >> 4, 8);   // version 8
  EXPECT_EQ(id[8] >> 6, 2);   // RFC variant
  EXPECT_NE(id[0] >> 2, 62);  // base64 form does not start with '-'
}

// Row-level deletes written by Iceberg Java (tests/fixtures/java: v2
// position deletes, v2 equality deletes, a v3 deletion vector, bucket/day
// partition transforms): offsets count only live rows, and fetches return
// exactly the reader's records.
TEST_F(ServeFixture, TablesWithDeleteFilesFromIcebergJava) {
  const fs::path wh = dir_ / "java";
  fs::create_directories(wh);
  const std::string cmd =
      "'" + (fs::path(THAW_SOURCE_DIR) / "tests/fixtures/java/run.sh").string() + "' write '" + wh.string() + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  if (out.find("install-java.sh") != std::string::npos) GTEST_SKIP() << "Iceberg Java not installed: " << out;
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  auto cat = catalog::OpenCatalog("sqlite:///" + (wh / "java_catalog.db").string(), "");
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  std::shared_ptr<catalog::Catalog> shared(std::move(*cat));
  const std::vector<std::string> tables = {"pos_deletes", "eq_deletes", "dv_deletes", "partitioned_transforms"};
  std::vector<TopicConfig> cs;
  for (const auto& t : tables) cs.push_back(Config(t));
  auto reg = TopicRegistry::Make(shared, cs, {});
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  for (const auto& name : tables) {
    SCOPED_TRACE(name);
    CheckAgainstReader(*(*reg)->FindTopic(name), ReaderRows(*shared, name));
  }
}

}  // namespace
}  // namespace thaw::serve
