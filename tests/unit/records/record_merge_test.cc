// clang-format off
// Arrow's headers first: they use Arrow's RETURN_NOT_OK, which Thaw's status.h replaces.
#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_primitive.h>

#include "thaw/records/record_merge.h"
// clang-format on

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "thaw/records/spill.h"

namespace thaw::records {
namespace {

// An input over records held in memory, handed out `per_chunk` at a time.
class VectorInput : public MergeInput {
 public:
  VectorInput(std::vector<std::pair<int64_t, std::string>> rows, size_t per_chunk)
      : rows_(std::move(rows)), per_chunk_(per_chunk) {}
  Result<bool> Next(RecordChunk* out) override {
    out->records.clear();
    out->headers.clear();
    out->keepalive.clear();
    if (pos_ >= rows_.size()) return false;
    auto values = std::make_shared<std::vector<std::string>>();
    for (size_t i = pos_; i < std::min(rows_.size(), pos_ + per_chunk_); ++i)
      values->push_back(rows_[i].second);
    for (size_t i = 0; i < values->size(); ++i) {
      Record r;
      r.offset = rows_[pos_ + i].first;
      r.value = (*values)[i];
      r.header_begin = static_cast<uint32_t>(out->headers.size());
      out->headers.push_back(Header{"h", std::string_view((*values)[i])});
      r.header_count = 1;
      out->records.push_back(r);
    }
    pos_ += values->size();
    out->keepalive.push_back(values);
    return true;
  }
  std::string Describe() const override { return "vector input"; }

 private:
  std::vector<std::pair<int64_t, std::string>> rows_;
  size_t per_chunk_;
  size_t pos_ = 0;
};

std::vector<std::pair<int64_t, std::string>> Drain(KWayMerger& m, DuplicateStats* dups,
                                                   size_t max = 3) {
  std::vector<std::pair<int64_t, std::string>> got;
  RecordChunk chunk;
  while (true) {
    auto more = m.Next(max, &chunk, dups);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    EXPECT_LE(chunk.records.size(), max);
    for (const auto& r : chunk.records) {
      // Views stay valid through the chunk's keepalive; headers follow their record.
      EXPECT_EQ(r.header_count, 1u);
      if (r.header_count == 1) EXPECT_EQ(*chunk.headers[r.header_begin].value, *r.value);
      got.emplace_back(r.offset, std::string(*r.value));
    }
  }
  return got;
}

TEST(KWayMerger, MergesInOffsetOrderAndKeepsTheHighestRankedDuplicate) {
  std::vector<KWayMerger::Input> in;
  in.push_back({std::make_unique<VectorInput>(
                    std::vector<std::pair<int64_t, std::string>>{
                        {0, "a0"}, {3, "a3"}, {6, "a6"}, {9, "old9"}},
                    2),
                /*rank=*/1});
  in.push_back({std::make_unique<VectorInput>(
                    std::vector<std::pair<int64_t, std::string>>{
                        {1, "b1"}, {4, "b4"}, {6, "new6"}, {9, "old9"}, {10, "b10"}},
                    1),
                /*rank=*/5});
  in.push_back(
      {std::make_unique<VectorInput>(std::vector<std::pair<int64_t, std::string>>{}, 4), 0});
  in.push_back({std::make_unique<VectorInput>(
                    std::vector<std::pair<int64_t, std::string>>{
                        {2, "c2"}, {5, "c5"}, {6, "low6"}, {7, "c7"}, {8, "c8"}},
                    3),
                /*rank=*/0});
  auto m = KWayMerger::Make(std::move(in));
  ASSERT_TRUE(m.ok());
  DuplicateStats dups;
  auto got = Drain(**m, &dups);
  std::vector<std::pair<int64_t, std::string>> want = {
      {0, "a0"},   {1, "b1"}, {2, "c2"}, {3, "a3"},   {4, "b4"},  {5, "c5"},
      {6, "new6"}, {7, "c7"}, {8, "c8"}, {9, "old9"}, {10, "b10"}};
  EXPECT_EQ(got, want);
  // Offset 6 three times (two differ from the winner), offset 9 twice with equal contents.
  EXPECT_EQ(dups.duplicates, 3);
  EXPECT_EQ(dups.differing, 2);
}

TEST(KWayMerger, EqualRanksKeepTheEarlierInput) {
  std::vector<KWayMerger::Input> in;
  in.push_back(
      {std::make_unique<VectorInput>(std::vector<std::pair<int64_t, std::string>>{{1, "first"}}, 1),
       2});
  in.push_back({std::make_unique<VectorInput>(
                    std::vector<std::pair<int64_t, std::string>>{{1, "second"}}, 1),
                2});
  auto m = KWayMerger::Make(std::move(in));
  ASSERT_TRUE(m.ok());
  DuplicateStats dups;
  auto got = Drain(**m, &dups);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second, "first");
  EXPECT_EQ(dups.duplicates, 1);
  EXPECT_EQ(dups.differing, 1);
}

TEST(KWayMerger, AnInputOutOfOrderIsAnErrorNotASilentMisorder) {
  std::vector<KWayMerger::Input> in;
  in.push_back({std::make_unique<VectorInput>(
                    std::vector<std::pair<int64_t, std::string>>{{5, "x"}, {2, "y"}}, 1),
                0});
  auto m = KWayMerger::Make(std::move(in));
  ASSERT_TRUE(m.ok());
  DuplicateStats dups;
  RecordChunk chunk;
  Status st = Status::OK();
  while (true) {
    auto more = (*m)->Next(10, &chunk, &dups);
    if (!more.ok()) {
      st = more.status();
      break;
    }
    if (!*more) break;
  }
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("offset 2 follows offset 5"), std::string::npos) << st.ToString();
}

TEST(SameContent, ComparesKeyValueHeadersAndTimestamp) {
  Record a;
  a.key = "k";
  a.value = "v";
  a.timestamp_ms = 0;
  std::vector<Header> ha = {{"h", "1"}};
  Record b = a;
  std::vector<Header> hb = ha;
  EXPECT_TRUE(SameContent(a, ha, b, hb));
  b.timestamp_ms = -1;  // null timestamp differs from a real 0
  EXPECT_FALSE(SameContent(a, ha, b, hb));
  b = a;
  b.key.reset();
  EXPECT_FALSE(SameContent(a, ha, b, hb));
  b = a;
  hb[0].value.reset();
  EXPECT_FALSE(SameContent(a, ha, b, hb));
  hb = {};
  EXPECT_FALSE(SameContent(a, ha, b, hb));
}

TEST(Spill, RunsRoundTripInGatheredOrderAndTheDirectoryIsRemoved) {
  const std::string base = ::testing::TempDir();
  std::string dir_path;
  {
    auto dir = SpillDir::Make(base);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_path = (*dir)->path();
    struct stat st;
    ASSERT_EQ(::stat(dir_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    // Two batches; the run takes rows from both in a given order.
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    auto schema =
        arrow::schema({arrow::field("off", arrow::int64()), arrow::field("v", arrow::binary())});
    for (int b = 0; b < 2; ++b) {
      arrow::Int64Builder ob;
      arrow::BinaryBuilder vb;
      for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(ob.Append(b * 10 + i).ok());
        ASSERT_TRUE(vb.Append("v" + std::to_string(b * 10 + i)).ok());
      }
      batches.push_back(arrow::RecordBatch::Make(schema, 3, {*ob.Finish(), *vb.Finish()}));
    }
    auto table = GatherRows(batches, {{1, 2}, {0, 0}, {1, 0}, {0, 2}});
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    const std::string path = (*dir)->NewFileName();
    auto written = WriteRun(path, **table, 3);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    EXPECT_GT(*written, 0);
    auto run = RunReader::Open(path);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_FALSE(std::filesystem::exists(path));  // unlinked once open
    std::vector<int64_t> offs;
    int batches_read = 0;
    while (true) {
      auto b = (*run)->Next();
      ASSERT_TRUE(b.ok());
      if (!*b) break;
      ++batches_read;
      const auto& col = static_cast<const arrow::Int64Array&>(*(*b)->column(0));
      for (int64_t i = 0; i < col.length(); ++i) offs.push_back(col.Value(i));
    }
    EXPECT_EQ(offs, (std::vector<int64_t>{12, 0, 10, 2}));
    EXPECT_EQ(batches_read, 2);  // batches of 3 rows
    std::filesystem::create_directories(dir_path + "/left-over");
  }
  EXPECT_FALSE(std::filesystem::exists(dir_path));
}

TEST(Spill, ARunOpenedPerBatchHoldsNoDescriptorAndIsRemovedAtTheEnd) {
  auto dir = SpillDir::Make(::testing::TempDir());
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  auto schema = arrow::schema({arrow::field("off", arrow::int64())});
  arrow::Int64Builder ob;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ob.Append(i).ok());
  auto batch = arrow::RecordBatch::Make(schema, 5, {*ob.Finish()});
  auto table = GatherRows({batch}, {{0, 4}, {0, 3}, {0, 2}, {0, 1}, {0, 0}});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  const std::string path = (*dir)->NewFileName();
  ASSERT_TRUE(WriteRun(path, **table, 2).ok());
  auto count_fds = [] {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  const int before = count_fds();
  auto run = RunReader::Open(path, /*keep_open=*/false);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  std::vector<int64_t> offs;
  while (true) {
    EXPECT_EQ(count_fds(), before);  // nothing held between batches
    EXPECT_TRUE(std::filesystem::exists(path));
    auto b = (*run)->Next();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    if (!*b) break;
    const auto& col = static_cast<const arrow::Int64Array&>(*(*b)->column(0));
    for (int64_t i = 0; i < col.length(); ++i) offs.push_back(col.Value(i));
  }
  EXPECT_EQ(offs, (std::vector<int64_t>{4, 3, 2, 1, 0}));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Spill, AnUnusableDirectorySaysWhatToDo) {
  auto dir = SpillDir::Make("/nonexistent/thaw-spill-test");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("--spill-dir"), std::string::npos)
      << dir.status().ToString();
}

}  // namespace
}  // namespace thaw::records
