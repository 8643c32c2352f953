// The record reader on real tables pyiceberg wrote (make_reader_fixture.py):
// the same records unpartitioned (every row group holds all four Kafka
// partitions) and partitioned by identity(kafka_partition). Set THAW_PYTHON
// to a python with pyiceberg.
#include "thaw/records/record_reader.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "python_fixture.h"
#include "thaw/catalog/catalog.h"
#include "thaw/records/read_plan.h"
#include "thaw/records/read_summary.h"

namespace thaw::records {
namespace {

namespace fs = std::filesystem;

struct Row {
  int32_t partition;
  int64_t offset;
  int64_t timestamp_ms;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  bool operator==(const Row&) const = default;
};

class ReaderFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!info_.is_null() || !skip_.empty()) return;  // made once for every suite
    auto f = testing::RunPythonFixture("tests/unit/records/make_reader_fixture.py", "thaw_reader_fixture_");
    skip_ = f.skip;
    ASSERT_TRUE(f.error.empty()) << f.error;
    info_ = std::move(f.info);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(info_.is_object());
  }

  static std::shared_ptr<const iceberg::Table> Load(const char* which) {
    auto t = catalog::LoadTableFromMetadata(info_[which].get<std::string>());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return std::make_shared<const iceberg::Table>(std::move(*t));
  }

  // Reads everything; `reader` (if given) receives the finished reader.
  static std::vector<Row> ReadAll(const char* which, ReadOptions opt, RecordReader::DecodeStats* stats = nullptr,
                                  RecordReader::PrefetchStats* prefetch = nullptr) {
    opt.batch_size = 7;  // batches that end inside clusters and partitions
    auto reader = RecordReader::Make(Load(which), opt);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return {};
    std::vector<Row> rows;
    RecordBatch b;
    while (true) {
      auto more = (*reader)->Next(&b);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      for (const auto& r : b.records) {
        Row row{r.partition, r.offset, r.timestamp_ms, std::nullopt, std::nullopt, {}};
        if (r.key) row.key = std::string(*r.key);
        if (r.value) row.value = std::string(*r.value);
        for (const auto& h : b.HeadersOf(r)) {
          row.headers.emplace_back(std::string(h.key),
                                   h.value ? std::optional<std::string>(std::string(*h.value)) : std::nullopt);
        }
        rows.push_back(std::move(row));
      }
    }
    if (stats) *stats = (*reader)->decode_stats();
    if (prefetch) *prefetch = (*reader)->prefetch_stats();
    return rows;
  }

  static std::map<int32_t, std::vector<Row>> ByPartition(const std::vector<Row>& rows) {
    std::map<int32_t, std::vector<Row>> out;
    for (const auto& r : rows) out[r.partition].push_back(r);
    return out;
  }

  // Each partition's offsets strictly ascending.
  static void ExpectOffsetOrderPerPartition(const std::vector<Row>& rows) {
    std::map<int32_t, int64_t> last;
    for (const auto& r : rows) {
      auto [it, fresh] = last.try_emplace(r.partition, r.offset);
      if (!fresh) {
        EXPECT_LT(it->second, r.offset) << "partition " << r.partition;
        it->second = r.offset;
      }
    }
  }

  static inline nlohmann::json info_;
  static inline std::string skip_;
};

TEST_F(ReaderFixture, DecodesEachRowGroupOnceHoweverManyPartitionsItHolds) {
  RecordReader::DecodeStats unpart_stats, part_stats;
  auto unpart = ReadAll("unpart", {}, &unpart_stats);
  auto part = ReadAll("part", {}, &part_stats);
  ASSERT_EQ(static_cast<int64_t>(unpart.size()), info_["records"].get<int64_t>());
  // Every row group of the unpartitioned table holds all four partitions:
  // read once each, not once per partition.
  EXPECT_EQ(unpart_stats.row_groups, info_["row_groups"]["unpart"].get<int64_t>());
  EXPECT_EQ(unpart_stats.rows, info_["records"].get<int64_t>());
  EXPECT_EQ(part_stats.row_groups, info_["row_groups"]["part"].get<int64_t>());
  ExpectOffsetOrderPerPartition(unpart);
  // The same records, partition by partition, as the partitioned table's.
  EXPECT_EQ(ByPartition(unpart), ByPartition(part));
  // The partitioned table still reads partition by partition.
  for (size_t i = 1; i < part.size(); ++i) {
    ASSERT_TRUE(std::tie(part[i - 1].partition, part[i - 1].offset) < std::tie(part[i].partition, part[i].offset));
  }
  // Contents: the rows the fixture wrote.
  const auto by_partition = ByPartition(unpart);
  EXPECT_EQ(by_partition.at(1).front().offset, 0);
  EXPECT_EQ(by_partition.at(1)[5].offset, 8);  // 5, 6, 7 are a gap
  const Row& r = by_partition.at(2)[17];
  EXPECT_EQ(r.offset, 17);
  EXPECT_EQ(r.timestamp_ms, 1'700'000'000'000 + 170 + 2);
  EXPECT_EQ(r.key, "k2-17");
  ASSERT_TRUE(r.value.has_value());
  EXPECT_EQ(r.value->substr(0, 14), "p2o17:p2o17:p2");
  EXPECT_EQ(r.headers, (std::vector<std::pair<std::string, std::optional<std::string>>>{{"h", "2:17"}}));
}

TEST_F(ReaderFixture, ReadAheadKeepsTheRecordsAndTheirOrderWithinItsBounds) {
  // Read-ahead is on by default only on object stores; forced on here for
  // local files (the same code path: column chunks fetched on Arrow's IO
  // pool while other clusters decode, footers opened in the background).
  for (const char* which : {"unpart", "part"}) {
    SCOPED_TRACE(which);
    ReadOptions off;
    off.prefetch = ReadOptions::Prefetch::kOff;
    RecordReader::PrefetchStats none;
    const auto expected = ReadAll(which, off, nullptr, &none);
    ASSERT_EQ(static_cast<int64_t>(expected.size()), info_["records"].get<int64_t>());
    EXPECT_EQ(none.clusters, 0);
    EXPECT_EQ(none.files_opened_ahead, 0);

    ReadOptions on;
    on.prefetch = ReadOptions::Prefetch::kOn;
    RecordReader::PrefetchStats st;
    RecordReader::DecodeStats decoded;
    EXPECT_EQ(ReadAll(which, on, &decoded, &st), expected);  // same records, same order
    EXPECT_GT(st.clusters, 0);
    EXPECT_GT(st.bytes, 0);
    EXPECT_GT(st.files_opened_ahead, 0);
    EXPECT_LE(st.max_clusters_ahead, static_cast<int64_t>(on.read_ahead));
    EXPECT_LE(st.max_bytes_ahead, on.prefetch_bytes);
    EXPECT_EQ(decoded.row_groups, info_["row_groups"][which].get<int64_t>());

    // A byte budget smaller than any cluster: one cluster fetched ahead at a
    // time, never more.
    on.prefetch_bytes = 1;
    on.files_ahead = 1;
    EXPECT_EQ(ReadAll(which, on, nullptr, &st), expected);
    EXPECT_GT(st.clusters, 0);
    EXPECT_EQ(st.max_clusters_ahead, 1);

    // Ranges and start offsets: the same records with and without.
    ReadOptions part_off = off, part_on = on;
    for (ReadOptions* o : {&part_off, &part_on}) {
      o->partitions = std::set<int32_t>{1, 3};
      o->start_offsets = {{3, 120}};
      o->to_offset = 260;
    }
    EXPECT_EQ(ReadAll(which, part_on), ReadAll(which, part_off));
  }
}

TEST_F(ReaderFixture, PartitionMajorOrderReadsAllOfOnePartitionFirst) {
  ReadOptions opt;
  opt.order = ReadOrder::kPartitionMajor;
  RecordReader::DecodeStats stats;
  auto rows = ReadAll("unpart", opt, &stats);
  ASSERT_EQ(static_cast<int64_t>(rows.size()), info_["records"].get<int64_t>());
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_TRUE(std::tie(rows[i - 1].partition, rows[i - 1].offset) < std::tie(rows[i].partition, rows[i].offset)) << i;
  }
  // The price of that order: each row group once per partition it holds.
  EXPECT_EQ(stats.row_groups, info_["row_groups"]["unpart"].get<int64_t>() * info_["partitions"].get<int64_t>());
  EXPECT_EQ(ByPartition(rows), ByPartition(ReadAll("unpart", {})));
}

TEST_F(ReaderFixture, RangesAndStartOffsetsApplyPerPartitionInASharedRowGroup) {
  ReadOptions opt;
  opt.partitions = std::set<int32_t>{1, 2, 3};
  opt.start_offsets = {{1, 250}, {3, 120}};
  opt.to_offset = 260;
  auto rows = ByPartition(ReadAll("unpart", opt));
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(rows[1].size(), 10u);  // 250..259
  EXPECT_EQ(rows[1].front().offset, 250);
  EXPECT_EQ(rows[2].front().offset, 0);
  EXPECT_EQ(rows[2].size(), 260u);
  EXPECT_EQ(rows[3].front().offset, 120);
  EXPECT_EQ(rows[3].size(), 139u);  // 120..259 without 150
  ReadOptions whole;
  whole.partitions = opt.partitions;
  auto all = ByPartition(ReadAll("part", whole));
  EXPECT_EQ(rows[3], std::vector<Row>(all[3].begin() + 120, all[3].begin() + 259));
}

TEST_F(ReaderFixture, MetadataOnlyReadsNoKeysValuesOrHeaders) {
  ReadOptions opt;
  opt.metadata_only = true;
  RecordReader::DecodeStats meta, full;
  auto rows = ReadAll("unpart", opt, &meta);
  auto all = ReadAll("unpart", {}, &full);
  ASSERT_EQ(rows.size(), all.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(std::tie(rows[i].partition, rows[i].offset, rows[i].timestamp_ms),
              std::tie(all[i].partition, all[i].offset, all[i].timestamp_ms));
    EXPECT_FALSE(rows[i].key || rows[i].value || !rows[i].headers.empty()) << i;
  }
  const int64_t value_bytes = info_["value_bytes"].get<int64_t>();
  EXPECT_GE(full.bytes, value_bytes);
  // Partition, offset, timestamp, timestamp type: ~24 bytes a row.
  EXPECT_LT(meta.bytes, value_bytes / 20) << "metadata-only read decoded " << meta.bytes << " bytes";
}

TEST_F(ReaderFixture, ClustersTooBigForTheBudgetMergeOnePartitionAtATime) {
  // One offset's rows straddle row groups, so each file's row groups chain
  // into one cluster (~800 KB); a 1 MiB budget makes them merge as streams,
  // one partition at a time.
  ReadOptions opt;
  opt.memory_budget = 1 << 20;
  auto reader = RecordReader::Make(Load("unpart"), opt);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<Row> merged;
  RecordBatch b;
  while (true) {
    auto more = (*reader)->Next(&b);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    for (const auto& r : b.records)
      merged.push_back(Row{r.partition, r.offset, r.timestamp_ms, std::string(*r.key), std::string(*r.value), {}});
  }
  EXPECT_GT((*reader)->merge_stats().merged_clusters, 0);
  ExpectOffsetOrderPerPartition(merged);
  auto all = ReadAll("unpart", {});
  for (auto& r : all) r.headers.clear();
  EXPECT_EQ(ByPartition(merged), ByPartition(all));
}

TEST_F(ReaderFixture, ReadersSharingADecodeGateStayWithinItAndReadTheSame) {
  // Two readers decoding at once, one gate smaller than a cluster: each
  // cluster's decoding waits for the other's to finish, and both read what a
  // reader alone reads.
  auto gate = std::make_shared<DecodeGate>(64 << 10);
  ReadOptions opt;
  opt.decode_gate = gate;
  std::vector<Row> a, b;
  std::thread other([&] { b = ReadAll("part", opt); });
  a = ReadAll("part", opt);
  other.join();
  const auto alone = ReadAll("part", {});
  ASSERT_FALSE(alone.empty());
  EXPECT_EQ(a, alone);
  EXPECT_EQ(b, alone);
  EXPECT_EQ(gate->held(), 0);
  EXPECT_GT(gate->peak(), 0) << "the readers decoded without taking from the gate";
  EXPECT_LE(gate->peak(), gate->capacity());
}

TEST_F(ReaderFixture, SummarizeReadsOnlyMetadataAndMatchesTheRecords) {
  auto sum = Summarize(Load("unpart"), {});
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->summary.records(), info_["records"].get<int64_t>());
  EXPECT_EQ(sum->decoded.row_groups, info_["row_groups"]["unpart"].get<int64_t>());
  EXPECT_LT(sum->decoded.bytes, info_["value_bytes"].get<int64_t>() / 20);
  EXPECT_EQ(sum->duplicates.duplicates, 0);
  const auto& parts = sum->summary.partitions();
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts.at(1).records, 297);
  EXPECT_EQ(parts.at(1).gaps, (std::vector<std::pair<int64_t, int64_t>>{{5, 7}}));
  EXPECT_EQ(parts.at(3).gaps, (std::vector<std::pair<int64_t, int64_t>>{{150, 150}}));
  EXPECT_EQ(parts.at(2).min_timestamp_ms, 1'700'000'000'000 + 2);
  EXPECT_EQ(parts.at(2).max_timestamp_ms, 1'700'000'000'000 + 2990 + 2);
  // A filter that looks at values: the values are read, the summary follows it.
  auto big = Summarize(Load("unpart"), {},
                       [](const RecordBatch&, const Record& r) { return r.value && r.value->substr(0, 3) == "p0o"; });
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->summary.records(), 300);
  EXPECT_EQ(big->summary.partitions().count(1), 0u);
  EXPECT_GE(big->decoded.bytes, info_["value_bytes"].get<int64_t>());
}

// ---------------------------------------------------------------------------
// ReadPlan: the per-partition index from offsets and timestamps to row groups.

class ReadPlanIndex : public ReaderFixture {
 protected:
  static std::shared_ptr<const ReadPlan> PlanOf(const char* which) {
    auto plan = ReadPlan::Make(Load(which), {});
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() ? *plan : nullptr;
  }
  // Every record of every partition is in the range of the row group Locate
  // names, and no row group before it (by offset) reaches it; the same by
  // timestamp. `disjoint`: the table's row groups do not overlap.
  static void ExpectIndexFindsEveryRecord(const char* which, bool disjoint) {
    auto plan = PlanOf(which);
    ASSERT_NE(plan, nullptr);
    for (const auto& [p, rows] : ByPartition(ReadAll(which, {}))) {
      auto rgs = plan->RowGroups(p);
      ASSERT_TRUE(rgs.ok()) << rgs.status().ToString();
      ASSERT_FALSE((*rgs)->empty());
      for (const auto& row : rows) {
        auto at = plan->Locate(p, row.offset);
        ASSERT_TRUE(at.ok()) << at.status().ToString();
        ASSERT_TRUE(at->has_value()) << p << ":" << row.offset;
        const RowGroupRef& r = **at;
        EXPECT_LE(r.first_offset, row.offset);
        EXPECT_GE(r.last_offset, row.offset);
        for (const auto& before : **rgs) {
          if (before.file == r.file && before.row_group == r.row_group) break;
          EXPECT_LT(before.last_offset, row.offset);
        }
        auto by_time = plan->FirstAtOrAfterTime(p, row.timestamp_ms);
        ASSERT_TRUE(by_time.ok() && by_time->has_value());
        // Timestamps rise with offsets here: where row groups do not
        // overlap, the same row group; either way none before it reaches ts.
        if (disjoint) {
          EXPECT_EQ((*by_time)->file, r.file);
          EXPECT_EQ((*by_time)->row_group, r.row_group);
        }
        for (const auto& before : **rgs) {
          if (before.file == (*by_time)->file && before.row_group == (*by_time)->row_group) break;
          EXPECT_LT(before.max_timestamp_ms, row.timestamp_ms);
        }
        EXPECT_LE((*by_time)->min_timestamp_ms, row.timestamp_ms);
        EXPECT_GE((*by_time)->max_timestamp_ms, row.timestamp_ms);
      }
      // Past the end: nothing; before the start: the first row group.
      auto past = plan->Locate(p, rows.back().offset + 1);
      ASSERT_TRUE(past.ok());
      EXPECT_FALSE(past->has_value());
      // (+ 10: past every partition's last timestamp, which share row groups in "unpart")
      auto later = plan->FirstAtOrAfterTime(p, rows.back().timestamp_ms + 10);
      ASSERT_TRUE(later.ok());
      EXPECT_FALSE(later->has_value());
      auto before = plan->Locate(p, -10);
      ASSERT_TRUE(before.ok() && before->has_value());
      EXPECT_EQ((*before)->first_offset, (*rgs)->front().first_offset);
      auto marks = plan->Watermarks(p);
      ASSERT_TRUE(marks.ok() && marks->has_value());
      EXPECT_EQ((*marks)->low, rows.front().offset);
      EXPECT_EQ((*marks)->high, rows.back().offset + 1);
    }
    auto none = plan->Watermarks(99);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
  }
};

TEST_F(ReadPlanIndex, FindsEveryOffsetAndTimestampInAPartitionedTable) { ExpectIndexFindsEveryRecord("part", true); }

TEST_F(ReadPlanIndex, FindsEveryOffsetAndTimestampWhenRowGroupsHoldAllPartitions) {
  // Row groups overlap by an offset where one offset's rows of the four
  // partitions straddle two of them.
  ExpectIndexFindsEveryRecord("unpart", false);
}

TEST_F(ReadPlanIndex, RowGroupsComeFromTheParquetStatistics) {
  auto plan = PlanOf("part");
  ASSERT_NE(plan, nullptr);
  // Partition 1: three files of offsets 0..99 (5, 6, 7 missing), 100..199,
  // 200..299, written in 40-row row groups.
  auto rgs = plan->RowGroups(1);
  ASSERT_TRUE(rgs.ok());
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& r : **rgs) ranges.emplace_back(r.first_offset, r.last_offset);
  EXPECT_EQ(ranges,
            (std::vector<std::pair<int64_t, int64_t>>{
                {0, 42}, {43, 82}, {83, 99}, {100, 139}, {140, 179}, {180, 199}, {200, 239}, {240, 279}, {280, 299}}));
  auto at = plan->Locate(1, 150);
  ASSERT_TRUE(at.ok() && at->has_value());
  EXPECT_EQ((*at)->first_offset, 140);
  EXPECT_EQ((*at)->rows, 40);
  EXPECT_EQ(plan->files()[(*at)->file].part_lo, 1);
  // Offset 6 is in a gap: the row group holding the next offset, 8.
  at = plan->Locate(1, 6);
  ASSERT_TRUE(at.ok() && at->has_value());
  EXPECT_EQ((*at)->first_offset, 0);
}

TEST_F(ReadPlanIndex, ReadersStartAnywhereAndShareOnePlan) {
  auto plan = PlanOf("part");
  ASSERT_NE(plan, nullptr);
  auto all = ByPartition(ReadAll("part", {}));
  // Two readers over the same plan at once, each from its own position.
  std::vector<std::vector<Row>> got(2);
  std::vector<RecordReader::DecodeStats> stats(2);
  const std::vector<std::pair<int32_t, int64_t>> starts = {{1, 250}, {3, 149}};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 2; ++i) {
    threads.emplace_back([&, i]() {
      ReadOptions opt;
      opt.partitions = std::set<int32_t>{starts[i].first};
      opt.start_offsets = {{starts[i].first, starts[i].second}};
      auto reader = RecordReader::Make(plan, opt);
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      RecordBatch b;
      while (true) {
        auto more = (*reader)->Next(&b);
        ASSERT_TRUE(more.ok()) << more.status().ToString();
        if (!*more) break;
        for (const auto& r : b.records) {
          got[i].push_back(Row{r.partition, r.offset, r.timestamp_ms, std::string(*r.key), std::string(*r.value), {}});
        }
      }
      stats[i] = (*reader)->decode_stats();
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(got[0].size(), 50u);  // 250..299
  EXPECT_EQ(got[0].front().offset, 250);
  EXPECT_EQ(got[0].back().offset, 299);
  EXPECT_EQ(*got[0].front().value, *all[1][247].value);  // 5, 6, 7 missing before it
  // Only the row groups from the start on were decoded: 240..279, 280..299.
  EXPECT_EQ(stats[0].row_groups, 2);
  ASSERT_EQ(got[1].size(), 150u);  // 149, 151..299 (150 is missing)
  EXPECT_EQ(got[1].front().offset, 149);
  EXPECT_EQ(got[1][1].offset, 151);
  EXPECT_EQ(stats[1].row_groups, 5);  // 120..159 (holding 149) and the four after it
}

TEST_F(ReadPlanIndex, CacheSharesPlansOfTheSameSnapshotAndRange) {
  ReadPlanCache cache(2);
  auto table = Load("part");
  auto a = cache.Get(table, {});
  auto b = cache.Get(table, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  ReadOptions ranged;
  ranged.from_offset = 100;
  auto c = cache.Get(table, ranged);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->get(), a->get());
  EXPECT_LT((*c)->files().size(), (*a)->files().size());  // pruned by the range
  EXPECT_EQ(cache.size(), 2u);
  ReadOptions other;
  other.partitions = std::set<int32_t>{2};
  auto o2 = cache.Get(table, other);
  ASSERT_TRUE(o2.ok());
  EXPECT_EQ(cache.size(), 2u);  // the oldest dropped
  // Start offsets are the readers' business: the same plan.
  ReadOptions started;
  started.partitions = std::set<int32_t>{2};
  started.start_offsets = {{2, 150}};
  auto d = cache.Get(table, started);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->get(), o2->get());
  EXPECT_EQ(cache.size(), 2u);
  auto again = cache.Get(table, {});
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->get(), a->get());
}

// Two source topics in one table (make_reader_fixture.py: topics "a" and "b",
// partitions 0 and 1, offsets 0..29 each, value "<topic>:<p>:<o>").
std::vector<Row> TopicRows(const std::string& topic) {
  std::vector<Row> out;
  for (int32_t p = 0; p < 2; ++p) {
    for (int64_t o = 0; o < 30; ++o) {
      out.push_back(Row{p,
                        o,
                        1'700'000'000'000 + 10 * o + p,
                        std::nullopt,
                        topic + ":" + std::to_string(p) + ":" + std::to_string(o),
                        {}});
    }
  }
  return out;
}

std::vector<Row> SortedByPosition(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.partition, a.offset) < std::tie(b.partition, b.offset);
  });
  return rows;
}

TEST_F(ReaderFixture, TableOfSeveralTopicsNeedsASourceTopic) {
  for (const char* which : {"topics_part", "topics_mixed"}) {
    SCOPED_TRACE(which);
    auto plan = ReadPlan::Make(Load(which), {});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    // topics_mixed: "b" is only in the file whose bounds differ, found by reading its topic column.
    EXPECT_EQ((*plan)->topics(), (std::vector<std::string>{"a", "b"}));
    auto reader = RecordReader::Make(*plan, {});
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(reader.status().message().find("holds topics a, b: choose one with --source-topic"), std::string::npos)
        << reader.status().ToString();
    // A summary of all of it would merge two logs: refused the same way.
    auto sum = Summarize(Load(which), {});
    ASSERT_FALSE(sum.ok());
    EXPECT_EQ(sum.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(ReaderFixture, SourceTopicPrunesFilesByPartitionValueAndReadsOnlyItsRows) {
  for (const std::string topic : {"a", "b"}) {
    SCOPED_TRACE(topic);
    ReadOptions opt;
    opt.source_topic = topic;
    auto plan = ReadPlan::Make(Load("topics_part"), opt);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    // One file per (partition, topic): only the topic's two are planned.
    ASSERT_EQ((*plan)->files().size(), 2u);
    for (const auto& f : (*plan)->files()) EXPECT_FALSE(f.other_topics) << f.task.file->path;
    EXPECT_TRUE((*plan)->topics().empty());
    EXPECT_EQ((*plan)->source_topic(), topic);
    EXPECT_EQ((*plan)->partitions(), (std::vector<int32_t>{0, 1}));
    // Offsets 0..29 in both topics' partitions: same positions, no duplicates.
    auto reader = RecordReader::Make(*plan, {});
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto rows = ReadAll("topics_part", opt);
    EXPECT_EQ(rows, TopicRows(topic));
    auto wm = (*plan)->Watermarks(1);
    ASSERT_TRUE(wm.ok() && wm->has_value());
    EXPECT_EQ((*wm)->low, 0);
    EXPECT_EQ((*wm)->high, 30);
  }
}

TEST_F(ReaderFixture, SourceTopicFiltersRowsOfAFileHoldingSeveralTopics) {
  // topics_mixed: file 1 holds a and b (bounds a..b), file 2 only a (bounds a..a).
  ReadOptions b;
  b.source_topic.emplace("b");
  auto plan_b = ReadPlan::Make(Load("topics_mixed"), b);
  ASSERT_TRUE(plan_b.ok()) << plan_b.status().ToString();
  ASSERT_EQ((*plan_b)->files().size(), 1u);  // the a-only file pruned by its bounds
  EXPECT_TRUE((*plan_b)->files()[0].other_topics);
  auto rows_b = ReadAll("topics_mixed", b);
  EXPECT_EQ(SortedByPosition(rows_b), TopicRows("b"));
  ExpectOffsetOrderPerPartition(rows_b);

  // Topic a was appended twice (both files): one row per offset, the later
  // file's kept, and rows of b never taken for duplicates of a.
  ReadOptions a;
  a.source_topic.emplace("a");
  auto plan_a = ReadPlan::Make(Load("topics_mixed"), a);
  ASSERT_TRUE(plan_a.ok());
  ASSERT_EQ((*plan_a)->files().size(), 2u);
  auto reader = RecordReader::Make(*plan_a, a);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<Row> rows_a;
  RecordBatch batch;
  while (true) {
    auto more = (*reader)->Next(&batch);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    for (const auto& r : batch.records) {
      ASSERT_TRUE(r.topic.has_value());
      EXPECT_EQ(*r.topic, "a");
      rows_a.push_back(Row{r.partition, r.offset, r.timestamp_ms, std::nullopt, std::string(*r.value), {}});
    }
  }
  EXPECT_EQ(rows_a, TopicRows("a"));
  EXPECT_EQ((*reader)->duplicate_stats().duplicates, 60);  // a's second append, not b's rows
  EXPECT_EQ((*reader)->duplicate_stats().differing, 0);

  // A summary of one topic: its partitions and offsets alone.
  auto sum = Summarize(Load("topics_mixed"), b);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->summary.records(), 60);
  EXPECT_EQ(sum->duplicates.duplicates, 0);
  EXPECT_EQ(sum->summary.partitions().at(0).max_offset, 29);
}

TEST_F(ReaderFixture, SourceTopicOfATableWithoutTopicColumnMustBeItsOwn) {
  ReadOptions own;
  own.source_topic.emplace("t");  // the table property thaw.source.topic
  auto rows = ReadAll("part", own);
  EXPECT_EQ(static_cast<int64_t>(rows.size()), info_["records"].get<int64_t>());
  ReadOptions other;
  other.source_topic.emplace("x");
  auto plan = ReadPlan::Make(Load("part"), other);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("holds only topic 't'"), std::string::npos) << plan.status().ToString();
  // A reader cannot select another topic than its plan's.
  auto shared = ReadPlan::Make(Load("topics_part"), [] {
    ReadOptions o;
    o.source_topic.emplace("a");
    return o;
  }());
  ASSERT_TRUE(shared.ok());
  ReadOptions b;
  b.source_topic.emplace("b");
  EXPECT_FALSE(RecordReader::Make(*shared, b).ok());
  EXPECT_TRUE(RecordReader::Make(*shared, {}).ok());  // the plan's selection
}

TEST_F(ReaderFixture, PlanCacheKeysBySourceTopic) {
  ReadPlanCache cache(4);
  auto table = Load("topics_part");
  ReadOptions a, b;
  a.source_topic.emplace("a");
  b.source_topic.emplace("b");
  auto pa = cache.Get(table, a), pb = cache.Get(table, b);
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_NE(pa->get(), pb->get());
  EXPECT_EQ((*pa)->source_topic(), "a");
  EXPECT_EQ((*pb)->source_topic(), "b");
  EXPECT_EQ(cache.Get(table, a)->get(), pa->get());
}

}  // namespace
}  // namespace thaw::records
