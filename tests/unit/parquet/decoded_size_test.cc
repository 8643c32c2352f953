// ParquetFile::row_group_decoded_bytes: what decoding a row group allocates,
// estimated from the footer, against what Arrow really allocates, for the
// encodings real writers produce: dictionary-encoded values (with and
// without Parquet's size statistics), plain random values, highly
// compressible text. The footer's uncompressed size is the wrong measure
// for the first two, and the tests say by how much.
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

#include "thaw/parquet/parquet_file.h"
#include "thaw/storage/file_io.h"

namespace thaw::pq {
namespace {

constexpr int64_t kRows = 20000;
constexpr size_t kValue = 1024;

enum class Values { kFewDistinct, kRandom, kJson };

std::string MakeValue(Values kind, int64_t i, std::mt19937_64& rng) {
  std::string v(kValue, 'x');
  switch (kind) {
    case Values::kFewDistinct:
      v[0] = static_cast<char>('a' + i % 8);  // 8 distinct values
      break;
    case Values::kRandom:
      for (auto& c : v) c = static_cast<char>(rng());
      break;
    case Values::kJson: {
      v = "{\"order_id\": " + std::to_string(i) + ", \"status\": \"shipped\", \"items\": [";
      while (v.size() + 40 < kValue) v += "{\"sku\": \"SKU-" + std::to_string(rng() % 50) + "\", \"qty\": 1},";
      v += "{}]}";
      break;
    }
  }
  return v;
}

std::string WriteFile(Values kind, bool size_statistics, bool dictionary) {
  arrow::Int64Builder off;
  arrow::BinaryBuilder val;
  std::mt19937_64 rng(7);
  for (int64_t i = 0; i < kRows; ++i) {
    EXPECT_TRUE(off.Append(i).ok());
    EXPECT_TRUE(val.Append(MakeValue(kind, i, rng)).ok());
  }
  auto schema = arrow::schema({arrow::field("offset", arrow::int64(), false), arrow::field("value", arrow::binary())});
  auto table = arrow::Table::Make(schema, {*off.Finish(), *val.Finish()});
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("thaw_decoded_size_" + std::to_string(getpid()) + "_" + std::to_string(static_cast<int>(kind)) +
        std::to_string(size_statistics) + std::to_string(dictionary) + ".parquet"))
          .string();
  parquet::WriterProperties::Builder props;
  props.compression(parquet::Compression::ZSTD);
  if (!dictionary) props.disable_dictionary();
  props.set_size_statistics_level(size_statistics ? parquet::SizeStatisticsLevel::ColumnChunk
                                                  : parquet::SizeStatisticsLevel::None);
  auto out = arrow::io::FileOutputStream::Open(path);
  EXPECT_TRUE(out.ok());
  EXPECT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, kRows, props.build()).ok());
  EXPECT_TRUE((*out)->Close().ok());
  return path;
}

struct Measured {
  int64_t estimate = 0;
  int64_t decoded = 0;       // Arrow's buffers after decoding the row group
  int64_t uncompressed = 0;  // the footer's total_byte_size
};

Measured Measure(const std::string& path) {
  storage::LocalFileIO io;
  auto pf = ParquetFile::Open(io, path);
  EXPECT_TRUE(pf.ok()) << pf.status().ToString();
  Measured m;
  m.estimate = (*pf)->row_group_decoded_bytes(0, {});
  auto reader = (*pf)->Read({0}, {0, 1}, kRows);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    EXPECT_TRUE((*reader)->ReadNext(&b).ok());
    if (!b) break;
    m.decoded += arrow::util::TotalBufferSize(*b);
  }
  auto md = parquet::ReadMetaData(*arrow::io::ReadableFile::Open(path));
  m.uncompressed = md->RowGroup(0)->total_byte_size();
  std::filesystem::remove(path);
  return m;
}

void ExpectClose(const Measured& m, const char* what) {
  EXPECT_GE(m.estimate, m.decoded * 9 / 10) << what << ": estimate " << m.estimate << ", decoded " << m.decoded;
  EXPECT_LE(m.estimate, m.decoded * 3 / 2) << what << ": estimate " << m.estimate << ", decoded " << m.decoded;
}

TEST(DecodedSizeTest, DictionaryEncodedValuesBySizeStatistics) {
  auto m = Measure(WriteFile(Values::kFewDistinct, /*size_statistics=*/true, /*dictionary=*/true));
  // The bug this guards against: the footer says a few bytes a row.
  EXPECT_LT(m.uncompressed * 20, m.decoded) << "the fixture no longer dictionary-encodes";
  ExpectClose(m, "dictionary + size statistics");
}

TEST(DecodedSizeTest, DictionaryEncodedValuesWithoutSizeStatisticsByMinMax) {
  auto m = Measure(WriteFile(Values::kFewDistinct, /*size_statistics=*/false, /*dictionary=*/true));
  EXPECT_LT(m.uncompressed * 20, m.decoded);
  ExpectClose(m, "dictionary, min/max only");
}

TEST(DecodedSizeTest, PlainRandomValues) {
  ExpectClose(Measure(WriteFile(Values::kRandom, /*size_statistics=*/false, /*dictionary=*/false)), "plain random");
}

TEST(DecodedSizeTest, CompressibleJsonValues) {
  ExpectClose(Measure(WriteFile(Values::kJson, /*size_statistics=*/true, /*dictionary=*/true)), "json");
  ExpectClose(Measure(WriteFile(Values::kJson, /*size_statistics=*/false, /*dictionary=*/false)), "json, plain");
}

TEST(DecodedSizeTest, ProjectionCountsOnlyTheColumnsRead) {
  const std::string path = WriteFile(Values::kFewDistinct, true, true);
  storage::LocalFileIO io;
  auto pf = ParquetFile::Open(io, path);
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  const int64_t offsets = (*pf)->row_group_decoded_bytes(0, {0});
  const int64_t all = (*pf)->row_group_decoded_bytes(0, {});
  EXPECT_GE(offsets, kRows * 8);
  EXPECT_LT(offsets * 50, all);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace thaw::pq
