// ParquetFile::ReadRows: rows [from, to) of a row group, skipping the data
// pages of flat columns that hold none of them, must be exactly the rows a
// whole read gives over that range -- for every range, at page boundaries and
// inside pages, with nested (list of struct) and nullable columns, with and
// without dictionaries, in any projection order.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/byte_size.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "thaw/parquet/parquet_file.h"
#include "thaw/storage/file_io.h"

namespace thaw::pq {
namespace {

constexpr int64_t kRows = 6000;
constexpr int64_t kRowGroup = 4000;  // two row groups: 4000 + 2000

std::string WriteFile(bool dictionary) {
  std::mt19937_64 rng(11);
  arrow::Int64Builder off;
  arrow::BinaryBuilder key, val;
  auto header_type = arrow::struct_({arrow::field("key", arrow::utf8(), false), arrow::field("value", arrow::binary())});
  auto pool = arrow::default_memory_pool();
  auto hkey = std::make_shared<arrow::StringBuilder>(pool);
  auto hval = std::make_shared<arrow::BinaryBuilder>(pool);
  auto hstruct = std::make_shared<arrow::StructBuilder>(header_type, pool,
                                                        std::vector<std::shared_ptr<arrow::ArrayBuilder>>{hkey, hval});
  arrow::ListBuilder headers(pool, hstruct, arrow::list(arrow::field("element", header_type, false)));
  for (int64_t i = 0; i < kRows; ++i) {
    EXPECT_TRUE(off.Append(1000 + i).ok());
    if (i % 7 == 3) {
      EXPECT_TRUE(key.AppendNull().ok());
    } else {
      EXPECT_TRUE(key.Append("k" + std::to_string(i % 50)).ok());
    }
    // Values of 50..1500 bytes: pages of a few dozen rows each.
    std::string v(50 + rng() % 1450, static_cast<char>('a' + i % 5));
    if (!dictionary) v += std::to_string(rng());
    EXPECT_TRUE(val.Append(v).ok());
    if (i % 5 == 0) {
      EXPECT_TRUE(headers.AppendNull().ok());
    } else {
      EXPECT_TRUE(headers.Append().ok());
      for (int64_t h = 0; h < i % 3; ++h) {
        EXPECT_TRUE(hstruct->Append().ok());
        EXPECT_TRUE(hkey->Append("h" + std::to_string(h)).ok());
        if (h == 1) {
          EXPECT_TRUE(hval->AppendNull().ok());
        } else {
          EXPECT_TRUE(hval->Append(std::to_string(i)).ok());
        }
      }
    }
  }
  auto schema = arrow::schema({arrow::field("offset", arrow::int64(), false), arrow::field("key", arrow::binary()),
                               arrow::field("value", arrow::binary()),
                               arrow::field("headers", arrow::list(arrow::field("element", header_type, false)))});
  auto table = arrow::Table::Make(schema, {*off.Finish(), *key.Finish(), *val.Finish(), *headers.Finish()});
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("thaw_read_rows_" + std::to_string(getpid()) + (dictionary ? "_dict" : "") + ".parquet"))
                               .string();
  parquet::WriterProperties::Builder props;
  props.compression(parquet::Compression::ZSTD)->data_pagesize(8 << 10)->write_batch_size(16);
  if (!dictionary) props.disable_dictionary();
  auto out = arrow::io::FileOutputStream::Open(path);
  EXPECT_TRUE(out.ok());
  EXPECT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, kRowGroup, props.build()).ok());
  EXPECT_TRUE((*out)->Close().ok());
  return path;
}

// Every row of row group `rg`, projected, read the ordinary way.
std::shared_ptr<arrow::Table> ReadWhole(ParquetFile& pf, int rg, const std::vector<int>& fields) {
  auto reader = pf.Read({rg}, fields, 1000);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  auto table = (*reader)->ToTable();
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return *table;
}

void CheckRange(ParquetFile& pf, int rg, const std::vector<int>& fields, const arrow::Table& whole, int64_t from,
                int64_t to) {
  SCOPED_TRACE("rows [" + std::to_string(from) + ", " + std::to_string(to) + ") of row group " + std::to_string(rg));
  auto reader = pf.ReadRows(rg, fields, from, to);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto got = (*reader)->ToTable();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ((*got)->num_rows(), to - from);
  ASSERT_EQ((*got)->num_columns(), whole.num_columns());
  auto want = whole.Slice(from, to - from);
  for (int c = 0; c < whole.num_columns(); ++c) {
    EXPECT_EQ((*got)->schema()->field(c)->name(), whole.schema()->field(c)->name());
    EXPECT_TRUE((*got)->column(c)->Equals(*want->column(c))) << "column " << whole.schema()->field(c)->name();
  }
}

class ReadRowsTest : public ::testing::TestWithParam<bool> {};

TEST_P(ReadRowsTest, EveryRangeIsTheWholeReadsRowsOverIt) {
  const std::string path = WriteFile(GetParam());
  storage::LocalFileIO io;
  auto pf = ParquetFile::Open(io, path);
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  ASSERT_EQ((*pf)->num_row_groups(), 2);
  for (const std::vector<int>& fields : std::vector<std::vector<int>>{{0, 1, 2, 3}, {2, 0}, {3}}) {
    for (int rg = 0; rg < 2; ++rg) {
      const int64_t rows = (*pf)->row_group_num_rows(rg);
      auto whole = ReadWhole(**pf, rg, fields);
      ASSERT_EQ(whole->num_rows(), rows);
      std::vector<std::pair<int64_t, int64_t>> ranges = {{0, rows}, {0, 1}, {rows - 1, rows}, {rows / 2, rows / 2},
                                                         {17, 18},  {0, rows / 3}, {rows / 3, rows}};
      std::mt19937_64 rng(static_cast<uint64_t>(rg * 10 + fields.size()));
      for (int k = 0; k < 25; ++k) {
        int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows + 1));
        int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows + 1));
        ranges.emplace_back(std::min(a, b), std::max(a, b));
      }
      for (const auto& [from, to] : ranges) CheckRange(**pf, rg, fields, *whole, from, to);
    }
  }
  std::filesystem::remove(path);
}

TEST_P(ReadRowsTest, OnlyThePagesHoldingTheRowsAreDecoded) {
  const std::string path = WriteFile(GetParam());
  storage::LocalFileIO io;
  auto pf = ParquetFile::Open(io, path);
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  // The value column alone, and with the nested headers (read whole, sliced).
  for (const std::vector<int>& fields : std::vector<std::vector<int>>{{2}, {3, 2}}) {
    auto whole = ReadWhole(**pf, 0, fields);
    auto one = (*pf)->ReadRows(0, fields, kRowGroup / 2, kRowGroup / 2 + 1);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    auto got = (*one)->ToTable();
    ASSERT_TRUE(got.ok());
    const int value = fields.size() == 1 ? 0 : 1;
    // The buffers behind the one row: its page (a few dozen rows), not the
    // row group's (a dictionary column keeps its dictionary, the same either way).
    const int64_t whole_bytes = arrow::util::TotalBufferSize(*whole->column(value));
    const int64_t got_bytes = arrow::util::TotalBufferSize(*(*got)->column(value));
    EXPECT_LT(got_bytes * 10, whole_bytes) << got_bytes << " of " << whole_bytes;
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Dictionary, ReadRowsTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "dictionary" : "plain"; });

TEST(ReadRowsErrors, RangesOutsideTheRowGroupAreRefused) {
  const std::string path = WriteFile(false);
  storage::LocalFileIO io;
  auto pf = ParquetFile::Open(io, path);
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  EXPECT_FALSE((*pf)->ReadRows(0, {0}, -1, 10).ok());
  EXPECT_FALSE((*pf)->ReadRows(0, {0}, 10, 9).ok());
  EXPECT_FALSE((*pf)->ReadRows(0, {0}, 0, kRowGroup + 1).ok());
  EXPECT_FALSE((*pf)->ReadRows(2, {0}, 0, 1).ok());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace thaw::pq
