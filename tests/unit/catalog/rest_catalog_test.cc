// Pure logic of the REST catalog client: config merge, namespace encoding,
// vended storage-credential choice, idempotency keys.
#include "thaw/catalog/rest_catalog.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace thaw::catalog::rest {
namespace {

TEST(RestConfig, OverridesBeatClientPropertiesWhichBeatDefaults) {
  storage::PropertyMap defaults = {{"clients", "4"}, {"warehouse", "server-default"}, {"s3.region", "us-east-1"}};
  storage::PropertyMap client = {{"warehouse", "mine"}, {"uri", "http://h"}, {"prefix", "client-prefix"}};
  storage::PropertyMap overrides = {{"prefix", "ws-123"}, {"s3.region", "eu-west-1"}};
  auto m = MergeConfig(defaults, client, overrides);
  EXPECT_EQ(m["clients"], "4");            // default only
  EXPECT_EQ(m["warehouse"], "mine");       // client beats default
  EXPECT_EQ(m["prefix"], "ws-123");        // override beats client
  EXPECT_EQ(m["s3.region"], "eu-west-1");  // override beats default
  EXPECT_EQ(m["uri"], "http://h");
}

TEST(RestNamespace, LevelsEncodedAndJoinedBySeparator) {
  EXPECT_EQ(EncodeNamespace({"db"}, "%1F"), "db");
  EXPECT_EQ(EncodeNamespace({"a", "b", "c"}, "%1F"), "a%1Fb%1Fc");
  // Levels with reserved characters stay one level.
  EXPECT_EQ(EncodeNamespace({"a.b", "c d", "e/f"}, "%1F"), "a.b%1Fc%20d%1Fe%2Ff");
  EXPECT_EQ(EncodeNamespace({"a", "b"}, "%2E"), "a%2Eb");
  EXPECT_EQ(EncodeNamespace({}, "%1F"), "");
}

TEST(RestStorageCredentials, LongestMatchingPrefixWins) {
  std::vector<StorageCredential> creds = {
      {"s3://bucket/", {{"s3.access-key-id", "bucket-wide"}}},
      {"s3://bucket/warehouse/db/t", {{"s3.access-key-id", "table"}}},
      {"s3://bucket/warehouse/", {{"s3.access-key-id", "warehouse"}}},
      {"s3://other/", {{"s3.access-key-id", "other"}}},
  };
  auto* c = ChooseStorageCredential("s3://bucket/warehouse/db/t/metadata/v1.json", creds);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->config.at("s3.access-key-id"), "table");
  c = ChooseStorageCredential("s3://bucket/warehouse/db/u", creds);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->config.at("s3.access-key-id"), "warehouse");
  EXPECT_EQ(ChooseStorageCredential("gs://bucket/x", creds), nullptr);
}

TEST(RestStorageCredentials, TableIOPropertiesLayering) {
  storage::PropertyMap catalog = {
      {"s3.endpoint", "http://minio:9000"}, {"s3.access-key-id", "catalog-key"}, {"s3.region", "us-east-1"}};
  storage::PropertyMap table_config = {{"s3.access-key-id", "config-key"}, {"s3.session-token", "config-tok"}};
  std::vector<StorageCredential> creds = {{"s3://b/wh/", {{"s3.access-key-id", "vended"}, {"s3.session-token", "v"}}},
                                          {"s3://b/elsewhere/", {{"s3.access-key-id", "wrong"}}}};
  auto p = TableIOProperties(catalog, table_config, creds, "s3://b/wh/db/t");
  EXPECT_EQ(p["s3.endpoint"], "http://minio:9000");  // from the catalog
  EXPECT_EQ(p["s3.access-key-id"], "vended");        // credential beats config beats catalog
  EXPECT_EQ(p["s3.session-token"], "v");
  EXPECT_EQ(p["s3.region"], "us-east-1");
  auto q = TableIOProperties(catalog, table_config, creds, "s3://b/other/t");
  EXPECT_EQ(q["s3.access-key-id"], "config-key");  // no credential matches: the config's
}

TEST(RestIdempotency, KeysAreUuidV7AndDistinct) {
  std::regex uuid7("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto k = NewIdempotencyKey();
    EXPECT_TRUE(std::regex_match(k, uuid7)) << k;
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace thaw::catalog::rest
