#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "thaw/storage/file_io.h"
#include "thaw/storage/file_io_registry.h"

namespace thaw::storage {
namespace {

namespace fs = std::filesystem;

class LocalFileIOTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("thaw_local_io_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> Entries(const fs::path& d) {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
  LocalFileIO io_;
};

TEST_F(LocalFileIOTest, CreateAppearsOnlyOnClose) {
  const fs::path target = dir_ / "data" / "sub" / "f.parquet";  // parents are created
  auto out = io_.Create("file://" + target.string());
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_TRUE((*out)->Write("hello ", 6).ok());
  ASSERT_TRUE((*out)->Write("world", 5).ok());
  EXPECT_FALSE(fs::exists(target));                     // not visible before Close
  EXPECT_EQ(Entries(target.parent_path()).size(), 1u);  // the temp file
  ASSERT_TRUE((*out)->Close().ok());
  EXPECT_EQ(Slurp(target), "hello world");
  EXPECT_EQ(Entries(target.parent_path()), std::vector<std::string>{"f.parquet"});
  EXPECT_FALSE((*out)->Write("x", 1).ok());
  EXPECT_EQ(*io_.ReadAll(target.string()), "hello world");
}

TEST_F(LocalFileIOTest, CloseReplacesAnExistingFile) {
  const fs::path target = dir_ / "f";
  std::ofstream(target) << "old";
  auto out = io_.Create(target.string());
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE((*out)->Write("new", 3).ok());
  EXPECT_EQ(Slurp(target), "old");
  ASSERT_TRUE((*out)->Close().ok());
  EXPECT_EQ(Slurp(target), "new");
}

TEST_F(LocalFileIOTest, AbortAndDestructionLeaveNothing) {
  {
    auto out = io_.Create((dir_ / "aborted").string());
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE((*out)->Write("partial", 7).ok());
    (*out)->Abort();
    EXPECT_FALSE((*out)->Close().ok());
  }
  {
    auto out = io_.Create((dir_ / "dropped").string());
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE((*out)->Write("partial", 7).ok());
  }  // destroyed without Close
  EXPECT_TRUE(Entries(dir_).empty());
}

TEST_F(LocalFileIOTest, Delete) {
  const fs::path target = dir_ / "f";
  std::ofstream(target) << "x";
  ASSERT_TRUE(io_.Delete("file:" + target.string()).ok());
  EXPECT_FALSE(fs::exists(target));
  auto again = io_.Delete(target.string());
  EXPECT_EQ(again.code(), StatusCode::kNotFound);
  EXPECT_NE(again.message().find(target.string()), std::string::npos);
}

TEST_F(LocalFileIOTest, StatsCountReads) {
  const fs::path target = dir_ / "f";
  std::ofstream(target) << std::string(1000, 'a');
  EXPECT_EQ(io_.stats().requests, 0);
  ASSERT_TRUE(io_.ReadAll(target.string()).ok());
  auto f = io_.Open(target.string());
  ASSERT_TRUE(f.ok());
  char buf[10];
  ASSERT_TRUE((*f)->ReadAt(990, 10, buf).ok());
  EXPECT_FALSE((*f)->ReadAt(995, 10, buf).ok());  // past the end: no request
  IOStats s = io_.stats();
  EXPECT_EQ(s.requests, 2);
  EXPECT_EQ(s.bytes_read, 1010);
  EXPECT_EQ(s.retries, 0);
}

TEST_F(LocalFileIOTest, ListIsRecursiveWithSizesAndTimes) {
  fs::create_directories(dir_ / "data" / "p=0");
  fs::create_directories(dir_ / "empty");
  std::ofstream(dir_ / "a.json") << "abc";
  std::ofstream(dir_ / "data" / "p=0" / "f.parquet") << std::string(1234, 'x');
  fs::create_symlink(dir_ / "a.json", dir_ / "link");  // not a regular file: not listed
  for (std::string prefix : {dir_.string(), dir_.string() + "/", "file://" + dir_.string()}) {
    auto listed = io_.List(prefix);
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    std::map<std::string, int64_t> got;
    for (const auto& f : *listed) {
      got[f.location] = f.size;
      auto mtime = fs::last_write_time(LocalFileIO::ToPath(f.location));
      auto sys = std::chrono::file_clock::to_sys(mtime);
      EXPECT_NEAR(
          static_cast<double>(f.mtime_ms),
          static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count()),
          1.0);
    }
    std::string base = prefix.back() == '/' ? prefix.substr(0, prefix.size() - 1) : prefix;
    std::map<std::string, int64_t> want{{base + "/a.json", 3}, {base + "/data/p=0/f.parquet", 1234}};
    EXPECT_EQ(got, want) << prefix;
  }
  auto missing = io_.List((dir_ / "nope").string());
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
  auto file = io_.List((dir_ / "a.json").string());
  EXPECT_FALSE(file.ok());
}

TEST(FileIOFor, LocalAndUnsupported) {
  auto local = FileIOFor("/tmp/x/v1.metadata.json", {});
  ASSERT_TRUE(local.ok());
  EXPECT_NE(dynamic_cast<LocalFileIO*>(local->get()), nullptr);
  EXPECT_EQ(local->get(), FileIOFor("file:///tmp/y", {{"s3.endpoint", "x"}})->get());
  auto bad = FileIOFor("hdfs://nn/wh/t/metadata/v1.metadata.json", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(bad.status().message().find("'hdfs'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("s3a://"), std::string::npos);
}

}  // namespace
}  // namespace thaw::storage
