// DataFileWriter: Kafka records written as Parquet data files in the
// canonical layout, read back by Thaw's own Parquet reader and by pyarrow
// (check_data_file.py, run with $THAW_PYTHON), which also recomputes the
// Iceberg metrics from the rows: the DataFile's counts, sizes, bounds and
// split offsets must equal them. Row groups are cut by size.
#include "thaw/parquet/data_file_writer.h"

#include <arrow/api.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <parquet/file_reader.h>
#include <parquet/page_index.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "thaw/parquet/parquet_file.h"

namespace thaw::parquet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Rec {
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  records::TimestampType type = records::TimestampType::kCreateTime;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  int64_t Payload() const {
    int64_t n = (key ? key->size() : 0) + (value ? value->size() : 0);
    for (const auto& [k, v] : headers) n += k.size() + (v ? v->size() : 0);
    return n;
  }
};

// A RecordBatch viewing `recs` (which must outlive it).
records::RecordBatch BatchOf(const std::vector<Rec>& recs) {
  records::RecordBatch b;
  for (const auto& r : recs) {
    records::Record out;
    out.partition = r.partition;
    out.offset = r.offset;
    out.timestamp_ms = r.timestamp_ms;
    out.timestamp_type = r.type;
    if (r.key) out.key = std::string_view(*r.key);
    if (r.value) out.value = std::string_view(*r.value);
    out.header_begin = static_cast<uint32_t>(b.headers.size());
    for (const auto& [k, v] : r.headers) {
      records::Header h{k, std::nullopt};
      if (v) h.value = std::string_view(*v);
      b.headers.push_back(h);
    }
    out.header_count = static_cast<uint32_t>(r.headers.size());
    b.records.push_back(out);
  }
  return b;
}

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

// As check_data_file.py prints bytes: hex, or length + sha256 when large.
json Enc(const std::optional<std::string>& s) {
  if (!s) return nullptr;
  if (s->size() <= 4096) return Hex(*s);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s->data(), s->size(), md, &len, EVP_sha256(), nullptr);
  return json{{"len", s->size()}, {"sha256", Hex(std::string_view(reinterpret_cast<char*>(md), len))}};
}

// Appendix D: ints and longs little-endian.
template <typename T>
std::string LE(T v) {
  std::string s(sizeof(T), '\0');
  for (size_t i = 0; i < sizeof(T); ++i) s[i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  return s;
}

iceberg::Schema Canonical(bool with_topic) {
  auto s = iceberg::Schema::FromJson(json::parse(CanonicalSchemaJson(with_topic)));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

class DataFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/thaw_data_file_writer_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // check_data_file.py's JSON for `path`; null (test skipped) without THAW_PYTHON.
  static json PyArrowView(const std::string& path) {
    const char* python = std::getenv("THAW_PYTHON");
    if (python == nullptr || *python == '\0') return nullptr;
    const fs::path script = fs::path(THAW_SOURCE_DIR) / "tests/unit/parquet/check_data_file.py";
    const std::string cmd = std::string("'") + python + "' '" + script.string() + "' '" + path + "'";
    FILE* pipe = popen(cmd.c_str(), "r");
    EXPECT_NE(pipe, nullptr);
    if (!pipe) return json::object();
    std::string out;
    char buf[65536];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    const int rc = pclose(pipe);
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << "\n" << out;
    auto j = json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out;
    return j.is_discarded() ? json::object() : j;
  }

  template <typename T>
  static json IdMap(const std::map<int32_t, T>& m, bool hex = false) {
    json j = json::object();
    for (const auto& [id, v] : m) {
      if constexpr (std::is_same_v<T, std::string>) {
        j[std::to_string(id)] = hex ? Hex(v) : v;
      } else {
        j[std::to_string(id)] = v;
      }
    }
    return j;
  }

  fs::path dir_;
  storage::LocalFileIO io_;
};

std::vector<Rec> RichRecords() {
  std::vector<Rec> recs;
  recs.push_back({3,
                  100,
                  1700000000123,
                  records::TimestampType::kCreateTime,
                  "k1",
                  "v1",
                  {{"a", "1"}, {"a", std::nullopt}, {"b", ""}, {"a", "3"}}});
  recs.push_back({3, 101, 1700000000100, records::TimestampType::kCreateTime, std::nullopt, "no key", {}});
  recs.push_back({3, 102, 1700000000200, records::TimestampType::kCreateTime, "", std::nullopt, {}});  // tombstone
  recs.push_back({3,
                  103,
                  1700000000050,
                  records::TimestampType::kCreateTime,
                  std::nullopt,
                  std::nullopt,
                  {{"only-null", std::nullopt}}});
  std::string big(10 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  recs.push_back({3, 105, 1700000000999, records::TimestampType::kLogAppendTime, "big", big, {{"h", "v"}}});
  for (int i = 0; i < 60; ++i) {
    recs.push_back({3,
                    106 + 2 * i,
                    1700000001000 + i,
                    records::TimestampType::kCreateTime,
                    "key-" + std::to_string(i),
                    std::string(20000 + i, static_cast<char>('a' + i % 26)),
                    {{"seq", std::to_string(i)}}});
  }
  recs.push_back({3, 300, -1, records::TimestampType::kCreateTime, "no timestamp", "x", {}});
  return recs;
}

TEST(CanonicalSchemaTest, IdsTypesAndTopic) {
  auto s = Canonical(false);
  ASSERT_EQ(s.fields().size(), 7u);
  const char* names[] = {"kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_timestamp_type", "key",
                         "value",           "headers"};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(s.fields()[i].id, i + 1);
    EXPECT_EQ(s.fields()[i].name, names[i]);
    EXPECT_EQ(s.fields()[i].required, i < 4) << names[i];
  }
  EXPECT_EQ(s.fields()[2].type->id, iceberg::TypeId::kTimestampTz);
  ASSERT_NE(s.FindById(8), nullptr);
  EXPECT_TRUE(s.FindById(8)->required);
  EXPECT_EQ(s.FindById(9)->type->id, iceberg::TypeId::kString);
  EXPECT_TRUE(s.FindById(9)->required);
  EXPECT_EQ(s.FindById(10)->type->id, iceberg::TypeId::kBinary);
  EXPECT_FALSE(s.FindById(10)->required);
  EXPECT_EQ(s.FindById(11), nullptr);
  auto t = Canonical(true);
  ASSERT_EQ(t.fields().size(), 8u);
  EXPECT_EQ(t.fields()[7].id, 11);
  EXPECT_EQ(t.fields()[7].name, "kafka_topic");
  EXPECT_TRUE(t.fields()[7].required);
  EXPECT_EQ(t.fields()[7].type->id, iceberg::TypeId::kString);
}

TEST_F(DataFileWriterTest, WritesCanonicalFileWithMetrics) {
  const auto recs = RichRecords();
  const auto batch = BatchOf(recs);
  const std::string location = (dir_ / "data/kafka_partition=3/00000-0-x.parquet").string();
  DataFileWriterOptions opt;
  opt.row_group_bytes = 256 << 10;
  iceberg::Datum p;
  p.kind = iceberg::Datum::kInt;
  p.i = 3;
  auto w = DataFileWriter::Make(io_, location, Canonical(false), 0, {p}, opt);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Append(batch, 0, 30).ok());
  ASSERT_TRUE((*w)->Append(batch, 30, batch.size()).ok());
  int64_t payload = 0;
  for (const auto& r : recs) payload += r.Payload();
  EXPECT_EQ((*w)->appended_bytes(), payload);
  EXPECT_EQ((*w)->record_count(), static_cast<int64_t>(recs.size()));
  EXPECT_GT((*w)->written_bytes(), 0);  // row groups written before the footer
  EXPECT_FALSE(fs::exists(location)) << "the file must exist only once finished";
  auto df = (*w)->Finish();
  ASSERT_TRUE(df.ok()) << df.status().ToString();
  ASSERT_TRUE(fs::exists(location));
  EXPECT_EQ(df->path, location);
  EXPECT_EQ(df->format, "parquet");
  EXPECT_EQ(df->content, iceberg::FileContent::kData);
  EXPECT_EQ(df->spec_id, 0);
  ASSERT_EQ(df->partition.size(), 1u);
  EXPECT_EQ(df->partition[0], p);
  EXPECT_EQ(df->record_count, static_cast<int64_t>(recs.size()));
  EXPECT_EQ(df->file_size, static_cast<int64_t>(fs::file_size(location)));
  // Only the target is left in the directory (no temporary file).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "data/kafka_partition=3"), fs::directory_iterator()), 1);
  // No bounds for key, value and headers.
  for (int32_t id : {5, 6, 7, 8, 9, 10, 11}) {
    EXPECT_FALSE(df->lower_bounds.count(id)) << id;
    EXPECT_FALSE(df->upper_bounds.count(id)) << id;
  }
  // Counts for every leaf column, none for the list and struct themselves.
  for (int32_t id : {1, 2, 3, 4, 5, 6, 9, 10}) {
    EXPECT_TRUE(df->value_counts.count(id)) << id;
    EXPECT_TRUE(df->column_sizes.count(id)) << id;
  }
  EXPECT_FALSE(df->value_counts.count(7));
  EXPECT_FALSE(df->value_counts.count(8));
  // The page index: an offset index for every column of every row group,
  // and a column index of the offset column.
  {
    auto file = ::parquet::ParquetFileReader::OpenFile(location);
    auto index = file->GetPageIndexReader();
    ASSERT_NE(index, nullptr);
    for (int rg = 0; rg < file->metadata()->num_row_groups(); ++rg) {
      auto rgi = index->RowGroup(rg);
      ASSERT_NE(rgi, nullptr) << "row group " << rg;
      for (int c = 0; c < file->metadata()->num_columns(); ++c) EXPECT_NE(rgi->GetOffsetIndex(c), nullptr) << c;
      EXPECT_NE(rgi->GetColumnIndex(1), nullptr);  // kafka_offset (leaf 1)
    }
  }

  // Thaw's own reader: columns by field id, the rows as written.
  {
    auto pf = pq::ParquetFile::Open(io_, location);
    ASSERT_TRUE(pf.ok()) << pf.status().ToString();
    EXPECT_EQ((*pf)->num_rows(), static_cast<int64_t>(recs.size()));
    EXPECT_EQ((*pf)->num_row_groups(), static_cast<int>(df->split_offsets.size()));
    std::vector<int> cols;
    for (int32_t id = 1; id <= 7; ++id) {
      cols.push_back((*pf)->TopLevelField(id, ""));
      ASSERT_GE(cols.back(), 0) << "field id " << id;
    }
    ASSERT_EQ((*pf)->LeafColumn({{7, ""}, {8, ""}, {10, ""}}), 7);
    std::vector<int> groups;
    for (int g = 0; g < (*pf)->num_row_groups(); ++g) groups.push_back(g);
    auto reader = (*pf)->Read(groups, cols, 1000);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    size_t row = 0;
    std::shared_ptr<arrow::RecordBatch> rb;
    while ((*reader)->ReadNext(&rb).ok() && rb) {
      for (int c = 0; c < rb->num_columns(); ++c) EXPECT_EQ(pq::FieldIdOf(*rb->schema()->field(c)), c + 1);
      auto off = std::static_pointer_cast<arrow::Int64Array>(rb->column(1));
      auto ts = std::static_pointer_cast<arrow::TimestampArray>(rb->column(2));
      auto key = std::static_pointer_cast<arrow::BinaryArray>(rb->column(4));
      auto val = std::static_pointer_cast<arrow::BinaryArray>(rb->column(5));
      for (int64_t i = 0; i < rb->num_rows(); ++i, ++row) {
        ASSERT_LT(row, recs.size());
        EXPECT_EQ(off->Value(i), recs[row].offset);
        EXPECT_EQ(ts->Value(i), recs[row].timestamp_ms * 1000);
        EXPECT_EQ(key->IsNull(i), !recs[row].key.has_value()) << row;
        if (recs[row].key) {
          EXPECT_EQ(key->GetView(i), *recs[row].key);
        }
        EXPECT_EQ(val->IsNull(i), !recs[row].value.has_value()) << row;
        if (recs[row].value) {
          EXPECT_EQ(val->GetView(i), *recs[row].value);
        }
      }
    }
    EXPECT_EQ(row, recs.size());
  }

  // pyarrow: field ids, types, rows, and the metrics recomputed from the rows.
  json py = PyArrowView(location);
  if (py.is_null()) GTEST_SKIP() << "THAW_PYTHON is not set";
  ASSERT_TRUE(py.contains("rows"));
  EXPECT_EQ(py["field_ids"], (json{{"kafka_partition", 1},
                                   {"kafka_offset", 2},
                                   {"kafka_timestamp", 3},
                                   {"kafka_timestamp_type", 4},
                                   {"key", 5},
                                   {"value", 6},
                                   {"headers", 7},
                                   {"headers.element", 8},
                                   {"headers.element.key", 9},
                                   {"headers.element.value", 10}}));
  EXPECT_EQ(py["timestamp_type"], "timestamp[us, tz=UTC]");
  EXPECT_NE(py["parquet_types"]["kafka_timestamp"].get<std::string>().find("isAdjustedToUTC=true"), std::string::npos)
      << py["parquet_types"].dump();
  ASSERT_EQ(py["rows"].size(), recs.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    const auto& got = py["rows"][i];
    EXPECT_EQ(got["partition"], r.partition);
    EXPECT_EQ(got["offset"], r.offset);
    EXPECT_EQ(got["timestamp_us"], r.timestamp_ms * 1000);
    EXPECT_EQ(got["timestamp_type"], static_cast<int>(r.type));
    EXPECT_EQ(got["key"], Enc(r.key)) << i;
    EXPECT_EQ(got["value"], Enc(r.value)) << i;
    json headers = json::array();  // an empty list, not null, when there are none
    for (const auto& [k, v] : r.headers) headers.push_back({k, Enc(v)});
    EXPECT_EQ(got["headers"], headers) << i;
  }
  const json& rc = py["recomputed"];
  EXPECT_EQ(rc["record_count"], df->record_count);
  EXPECT_EQ(IdMap(df->value_counts), rc["value_counts"]);
  EXPECT_EQ(IdMap(df->null_value_counts), rc["null_value_counts"]);
  EXPECT_EQ(IdMap(df->value_counts), py["footer"]["value_counts"]);
  EXPECT_EQ(IdMap(df->null_value_counts), py["footer"]["null_value_counts"]);
  EXPECT_EQ(IdMap(df->column_sizes), py["footer"]["column_sizes"]);
  EXPECT_EQ(IdMap(df->lower_bounds, true), rc["lower_bounds"]);
  EXPECT_EQ(IdMap(df->upper_bounds, true), rc["upper_bounds"]);
  // The recomputed counts are not trivially equal: rows without headers
  // count one null level in each header leaf.
  EXPECT_EQ(df->null_value_counts.at(9), 3);
  EXPECT_EQ(df->null_value_counts.at(10), 3 + 2);

  // Row groups: cut by size, zstd, no dictionary for key and value; split
  // offsets are their starts.
  const json& groups = py["row_groups"];
  ASSERT_EQ(groups.size(), df->split_offsets.size());
  ASSERT_GT(groups.size(), 3u);
  size_t row = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    EXPECT_EQ(groups[g]["start"], df->split_offsets[g]);
    const int64_t n = groups[g]["num_rows"];
    ASSERT_GT(n, 0);
    // Every record but the group's last was appended below the limit.
    int64_t before_last = 0;
    for (int64_t i = 0; i + 1 < n; ++i) before_last += recs[row + i].Payload();
    EXPECT_LT(before_last, opt.row_group_bytes) << "row group " << g;
    if (g + 1 < groups.size()) {
      EXPECT_GE(before_last + recs[row + n - 1].Payload(), opt.row_group_bytes - 64 * n) << "row group " << g;
    }
    for (auto& [path, col] : groups[g]["columns"].items()) {
      EXPECT_EQ(col["compression"], "ZSTD") << path;
      if (path == "key" || path == "value") {
        for (const auto& e : col["encodings"]) EXPECT_EQ(e.get<std::string>().find("DICTIONARY"), std::string::npos);
      }
    }
    row += n;
  }
  EXPECT_EQ(row, recs.size());
  // The 10 MiB record closes its row group.
  size_t big_row = 4, seen = 0;
  bool ends_group = false;
  for (const auto& g : groups) {
    seen += g["num_rows"].get<size_t>();
    if (seen == big_row + 1) ends_group = true;
  }
  EXPECT_TRUE(ends_group);
}

TEST_F(DataFileWriterTest, TopicColumnAndEmptyFile) {
  std::vector<Rec> recs = {{0, 7, 1000, records::TimestampType::kCreateTime, "k", "v", {}},
                           {0, 9, 900, records::TimestampType::kLogAppendTime, std::nullopt, "w", {}}};
  const auto batch = BatchOf(recs);
  const std::string location = (dir_ / "t.parquet").string();
  DataFileWriterOptions opt;
  opt.topic = "orders";
  auto w = DataFileWriter::Make(io_, location, Canonical(true), 0, {}, opt);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Append(batch, 0, batch.size()).ok());
  auto df = (*w)->Finish();
  ASSERT_TRUE(df.ok()) << df.status().ToString();
  EXPECT_EQ(df->lower_bounds.at(11), "orders");
  EXPECT_EQ(df->upper_bounds.at(11), "orders");
  EXPECT_EQ(df->value_counts.at(11), 2);
  EXPECT_EQ(df->lower_bounds.at(3), LE<int64_t>(900000));
  EXPECT_EQ(df->upper_bounds.at(2), LE<int64_t>(9));
  EXPECT_EQ(df->lower_bounds.at(4), LE<int32_t>(0));
  EXPECT_EQ(df->upper_bounds.at(4), LE<int32_t>(1));
  json py = PyArrowView(location);
  if (!py.is_null()) {
    EXPECT_EQ(py["field_ids"]["kafka_topic"], 11);
    EXPECT_EQ(py["rows"][1]["topic"], "orders");
    EXPECT_EQ(IdMap(df->lower_bounds, true), py["recomputed"]["lower_bounds"]);
    EXPECT_EQ(IdMap(df->value_counts), py["recomputed"]["value_counts"]);
  }

  // A file of no records is valid, with zero counts and no bounds.
  const std::string empty = (dir_ / "empty.parquet").string();
  auto e = DataFileWriter::Make(io_, empty, Canonical(false), 0, {}, {});
  ASSERT_TRUE(e.ok());
  auto edf = (*e)->Finish();
  ASSERT_TRUE(edf.ok()) << edf.status().ToString();
  EXPECT_EQ(edf->record_count, 0);
  EXPECT_EQ(edf->value_counts.at(2), 0);
  EXPECT_TRUE(edf->lower_bounds.empty());
  auto pf = pq::ParquetFile::Open(io_, empty);
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  EXPECT_EQ((*pf)->num_rows(), 0);
}

TEST_F(DataFileWriterTest, AbortAndDestroyLeaveNothing) {
  const auto recs = RichRecords();
  const auto batch = BatchOf(recs);
  DataFileWriterOptions opt;
  opt.row_group_bytes = 64 << 10;  // row groups already written when aborted
  {
    auto w = DataFileWriter::Make(io_, (dir_ / "a.parquet").string(), Canonical(false), 0, {}, opt);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(batch, 0, batch.size()).ok());
    EXPECT_GT((*w)->written_bytes(), 0);  // row groups were written
    (*w)->Abort();
    EXPECT_FALSE((*w)->Finish().ok());
  }
  {
    auto w = DataFileWriter::Make(io_, (dir_ / "b.parquet").string(), Canonical(false), 0, {}, opt);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(batch, 0, 10).ok());
  }  // destroyed unfinished
  EXPECT_TRUE(fs::is_empty(dir_)) << (fs::directory_iterator(dir_)->path().string());
}

TEST_F(DataFileWriterTest, RefusesNonCanonicalSchemas) {
  auto j = json::parse(CanonicalSchemaJson(false));
  j["fields"].push_back({{"id", 12}, {"name", "extra"}, {"required", false}, {"type", "string"}});
  auto extra = iceberg::Schema::FromJson(j);
  ASSERT_TRUE(extra.ok());
  auto w = DataFileWriter::Make(io_, (dir_ / "x.parquet").string(), *extra, 0, {}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(w.status().message().find("'extra' (field id 12)"), std::string::npos) << w.status().ToString();

  j = json::parse(CanonicalSchemaJson(false));
  j["fields"][1]["type"] = "int";
  auto wrong = iceberg::Schema::FromJson(j);
  ASSERT_TRUE(wrong.ok());
  w = DataFileWriter::Make(io_, (dir_ / "x.parquet").string(), *wrong, 0, {}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("kafka_offset"), std::string::npos) << w.status().ToString();

  DataFileWriterOptions topic;
  topic.topic = "t";
  w = DataFileWriter::Make(io_, (dir_ / "x.parquet").string(), Canonical(false), 0, {}, topic);
  ASSERT_FALSE(w.ok());
  w = DataFileWriter::Make(io_, (dir_ / "x.parquet").string(), Canonical(true), 0, {}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace thaw::parquet
