#include "thaw/storage/object_store.h"

#include <arrow/status.h>
#include <gtest/gtest.h>

#include "thaw/storage/file_io_registry.h"

namespace thaw::storage {
namespace {

PropertyMap Keys(const std::string& key) {
  return {{"s3.endpoint", "http://127.0.0.1:1"},
          {"s3.access-key-id", key},
          {"s3.secret-access-key", "TopSecretValue-" + key},
          {"s3.region", "us-east-1"}};
}

TEST(FileIOFor, OneObjectStoreFileIOPerCredentialSet) {
  auto a = FileIOFor("s3://bucket/wh/t/metadata/v1.metadata.json", Keys("A"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_NE(dynamic_cast<ArrowFileIO*>(a->get()), nullptr);
  // Same credentials, another bucket, an s3a:// location, unrelated catalog properties: the same FileIO.
  PropertyMap with_catalog_keys = Keys("A");
  with_catalog_keys["uri"] = "http://catalog:8181";
  with_catalog_keys["warehouse"] = "wh";
  EXPECT_EQ(a->get(), FileIOFor("s3://other/x.parquet", Keys("A"))->get());
  EXPECT_EQ(a->get(), FileIOFor("s3a://bucket/x.parquet", with_catalog_keys)->get());
  // Other credentials (a table's vended ones, say): another FileIO.
  auto b = FileIOFor("s3://bucket/x.parquet", Keys("B"));
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a->get(), b->get());
  EXPECT_EQ(dynamic_cast<ArrowFileIO*>(a->get())->kind(), StoreKind::kS3);
  // The description names the endpoint and where the keys came from, never the keys.
  const std::string& d = dynamic_cast<ArrowFileIO*>(a->get())->description();
  EXPECT_NE(d.find("127.0.0.1:1"), std::string::npos) << d;
  EXPECT_EQ(d.find("TopSecretValue"), std::string::npos) << d;
}

TEST(FileIOFor, BadPropertiesFailBeforeAnyRequest) {
  auto r = FileIOFor("s3://bucket/k", {{"s3.access-key-id", "AK"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("s3.secret-access-key"), std::string::npos);
}

TEST(FileIOFor, GcsAndAdls) {
  auto g = FileIOFor("gs://bucket/wh/f.parquet", {{"gcs.no-auth", "true"}, {"gcs.service.host", "http://127.0.0.1:1"}});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(dynamic_cast<ArrowFileIO*>(g->get())->kind(), StoreKind::kGcs);
  auto z = FileIOFor("abfss://lake@acct.dfs.core.windows.net/wh/f.parquet", {{"adls.account-key", "a2V5a2V5"}});
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(dynamic_cast<ArrowFileIO*>(z->get())->kind(), StoreKind::kAzure);
  // Another storage account: another FileIO.
  auto z2 = FileIOFor("abfss://lake@acct2.dfs.core.windows.net/wh/f.parquet", {{"adls.account-key", "a2V5a2V5"}});
  ASSERT_TRUE(z2.ok());
  EXPECT_NE(z->get(), z2->get());
}

class ErrorStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto io = FileIOFor("s3://b/k", Keys("C"));
    ASSERT_TRUE(io.ok());
    io_ = dynamic_cast<ArrowFileIO*>(io->get());
  }
  ArrowFileIO* io_ = nullptr;
};

TEST_F(ErrorStatusTest, NotFoundAndPermissionDenied) {
  auto nf =
      io_->ErrorStatus(arrow::Status::IOError("Path does not exist 'b/wh/x.parquet'"), "s3://b/wh/x.parquet", "open");
  EXPECT_EQ(nf.code(), StatusCode::kNotFound);
  EXPECT_NE(nf.message().find("s3://b/wh/x.parquet"), std::string::npos);
  auto denied = io_->ErrorStatus(
      arrow::Status::IOError("When reading information for key 'wh/x' in bucket 'b': AWS Error ACCESS_DENIED during "
                             "HeadObject operation: No response body."),
      "s3://b/wh/x", "open");
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("s3://b/wh/x"), std::string::npos);
  EXPECT_NE(denied.message().find("ACCESS_DENIED"), std::string::npos);
  EXPECT_EQ(io_->ErrorStatus(arrow::Status::IOError("AWS Error UNKNOWN (HTTP status 403) during GetObject"), "s3://b/k",
                             "read")
                .code(),
            StatusCode::kPermissionDenied);
}

TEST_F(ErrorStatusTest, TransientErrorsSayTheyWereRetried) {
  auto st = io_->ErrorStatus(arrow::Status::IOError("AWS Error SLOW_DOWN during GetObject operation: Please reduce"),
                             "s3://b/wh/x", "read");
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_NE(st.message().find("s3://b/wh/x"), std::string::npos);
  EXPECT_NE(st.message().find("after 6 tries"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("SLOW_DOWN"), std::string::npos);
}

TEST_F(ErrorStatusTest, SecretsAreMasked) {
  auto st =
      io_->ErrorStatus(arrow::Status::IOError(
                           "signing with TopSecretValue-C failed at https://a.blob.core.windows.net/c?sv=1&sig=AbC%2B "
                           "(HTTP status 500)"),
                       "s3://b/k", "read");
  EXPECT_EQ(st.message().find("TopSecretValue"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("AbC%2B"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("sig=***"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace thaw::storage
