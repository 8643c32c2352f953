#include "thaw/storage/store_options.h"

#include <gtest/gtest.h>

namespace thaw::storage {
namespace {

TEST(ParseStoreLocation, SplitsEverySupportedScheme) {
  for (std::string scheme : {"s3", "s3a", "s3n", "S3"}) {
    auto loc = ParseStoreLocation(scheme + "://bucket/warehouse/db/t/metadata/v1.metadata.json");
    ASSERT_TRUE(loc.ok()) << loc.status().message();
    EXPECT_EQ(loc->kind, StoreKind::kS3);
    EXPECT_EQ(loc->bucket, "bucket");
    EXPECT_EQ(loc->key, "warehouse/db/t/metadata/v1.metadata.json");
    EXPECT_EQ(loc->ArrowPath(), "bucket/warehouse/db/t/metadata/v1.metadata.json");
  }
  auto gs = ParseStoreLocation("gs://b/x/y.parquet");
  ASSERT_TRUE(gs.ok());
  EXPECT_EQ(gs->kind, StoreKind::kGcs);
  EXPECT_EQ(gs->ArrowPath(), "b/x/y.parquet");
  for (std::string scheme : {"abfs", "abfss"}) {
    auto az = ParseStoreLocation(scheme + "://lake@myacct.dfs.core.windows.net/wh/t/data/f.parquet");
    ASSERT_TRUE(az.ok()) << az.status().message();
    EXPECT_EQ(az->kind, StoreKind::kAzure);
    EXPECT_EQ(az->bucket, "lake");
    EXPECT_EQ(az->account, "myacct");
    EXPECT_EQ(az->account_host, "myacct.dfs.core.windows.net");
    EXPECT_EQ(az->ArrowPath(), "lake/wh/t/data/f.parquet");
  }
  // A double slash after the bucket (some writers produce it) is not part of the key.
  EXPECT_EQ(ParseStoreLocation("s3://b//k")->key, "k");
}

TEST(ParseStoreLocation, LocalPathsAndFileUris) {
  for (std::string l : {"/abs/path/v1.metadata.json", "rel/path.json", "file:/x/y", "file:///x/y", "c:/dir/f"}) {
    auto loc = ParseStoreLocation(l);
    ASSERT_TRUE(loc.ok()) << l << ": " << loc.status().message();
    EXPECT_EQ(loc->kind, StoreKind::kLocal) << l;
  }
  EXPECT_EQ(ParseStoreLocation("file:///x/y")->path, "/x/y");
  EXPECT_EQ(ParseStoreLocation("file:/x/y")->path, "/x/y");
}

TEST(ParseStoreLocation, UnsupportedSchemeNamesItAndTheSupportedOnes) {
  for (std::string l : {"hdfs://nn:8020/wh/t", "wasbs://c@a.blob.core.windows.net/x", "oss://b/k", "http://h/x"}) {
    auto loc = ParseStoreLocation(l);
    ASSERT_FALSE(loc.ok()) << l;
    EXPECT_EQ(loc.status().code(), StatusCode::kUnsupported);
    const std::string scheme = l.substr(0, l.find(':'));
    EXPECT_NE(loc.status().message().find("'" + scheme + "'"), std::string::npos) << loc.status().message();
    for (const char* s : {"s3://", "s3a://", "s3n://", "gs://", "abfs://", "abfss://", "file://"}) {
      EXPECT_NE(loc.status().message().find(s), std::string::npos) << s;
    }
  }
}

TEST(ParseStoreLocation, ObjectLocationsNeedBucketAndKey) {
  EXPECT_EQ(ParseStoreLocation("s3://bucket").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStoreLocation("s3://bucket/").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStoreLocation("s3:///key").status().code(), StatusCode::kInvalidArgument);
  auto az = ParseStoreLocation("abfss://myacct.dfs.core.windows.net/x");
  EXPECT_EQ(az.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(az.status().message().find("CONTAINER@ACCOUNT"), std::string::npos);
}

TEST(S3SettingsFrom, MapsEveryPropertyName) {
  PropertyMap p = {{"s3.endpoint", "http://127.0.0.1:9000/"},
                   {"s3.region", "eu-west-1"},
                   {"client.region", "us-west-2"},
                   {"s3.access-key-id", "AKIA1"},
                   {"s3.secret-access-key", "sekret"},
                   {"s3.session-token", "tok"},
                   {"s3.path-style-access", "true"},
                   {"s3.connect-timeout", "2.5"},
                   {"s3.request-timeout", "30"},
                   {"s3.role-arn", "arn:aws:iam::1:role/r"},
                   {"s3.role-session-name", "thaw"},
                   {"client.assume-role.external-id", "ext"},
                   {"s3.proxy-uri", "http://proxy:3128"}};
  auto s = S3SettingsFrom(p);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->endpoint_override, "127.0.0.1:9000");
  EXPECT_EQ(s->scheme, "http");
  EXPECT_EQ(s->region, "eu-west-1");  // s3.region wins over client.region
  EXPECT_EQ(s->access_key, "AKIA1");
  EXPECT_EQ(s->secret_key, "sekret");
  EXPECT_EQ(s->session_token, "tok");
  EXPECT_FALSE(s->force_virtual_addressing);
  EXPECT_DOUBLE_EQ(s->connect_timeout_s, 2.5);
  EXPECT_DOUBLE_EQ(s->request_timeout_s, 30);
  EXPECT_EQ(s->role_arn, "arn:aws:iam::1:role/r");
  EXPECT_EQ(s->role_session_name, "thaw");
  EXPECT_EQ(s->external_id, "ext");
  EXPECT_EQ(s->proxy_uri, "http://proxy:3128");
  EXPECT_FALSE(s->default_chain());
}

TEST(S3SettingsFrom, ClientPrefixedFallbacksAndDefaults) {
  auto s = S3SettingsFrom({{"client.region", "us-west-2"},
                           {"client.access-key-id", "AK"},
                           {"client.secret-access-key", "SK"},
                           {"client.session-token", "ST"},
                           {"client.assume-role.arn", "arn:r"},
                           {"client.assume-role.session-name", "n"}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->region, "us-west-2");
  EXPECT_EQ(s->access_key, "AK");
  EXPECT_EQ(s->secret_key, "SK");
  EXPECT_EQ(s->session_token, "ST");
  EXPECT_EQ(s->role_arn, "arn:r");
  EXPECT_EQ(s->role_session_name, "n");

  auto d = S3SettingsFrom({});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->default_chain());
  EXPECT_EQ(d->scheme, "https");
  EXPECT_TRUE(d->endpoint_override.empty());
  EXPECT_LT(d->connect_timeout_s, 0);

  EXPECT_EQ(S3SettingsFrom({{"s3.endpoint", "minio:9000"}})->scheme, "https");
  EXPECT_EQ(S3SettingsFrom({{"s3.endpoint", "minio:9000"}})->endpoint_override, "minio:9000");
  EXPECT_TRUE(S3SettingsFrom({{"s3.anonymous", "true"}})->anonymous);
  EXPECT_FALSE(S3SettingsFrom({{"s3.anonymous", "true"}})->default_chain());
}

TEST(S3SettingsFrom, AddressingStyle) {
  EXPECT_TRUE(S3SettingsFrom({{"s3.force-virtual-addressing", "true"}})->force_virtual_addressing);
  EXPECT_TRUE(S3SettingsFrom({{"s3.path-style-access", "false"}})->force_virtual_addressing);
  EXPECT_FALSE(S3SettingsFrom({{"s3.path-style-access", "true"}})->force_virtual_addressing);
  auto both = S3SettingsFrom({{"s3.path-style-access", "true"}, {"s3.force-virtual-addressing", "true"}});
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
}

TEST(S3SettingsFrom, BadValuesAreNamed) {
  auto half = S3SettingsFrom({{"s3.access-key-id", "AK"}});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("s3.secret-access-key"), std::string::npos);
  auto other_half = S3SettingsFrom({{"s3.secret-access-key", "SK"}});
  ASSERT_FALSE(other_half.ok());
  EXPECT_NE(other_half.status().message().find("s3.access-key-id"), std::string::npos);
  EXPECT_EQ(other_half.status().message().find("SK"), std::string::npos);  // never the secret

  auto b = S3SettingsFrom({{"s3.path-style-access", "maybe"}});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("s3.path-style-access"), std::string::npos);
  auto t = S3SettingsFrom({{"s3.connect-timeout", "5s"}});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("s3.connect-timeout"), std::string::npos);
  EXPECT_EQ(S3SettingsFrom({{"s3.endpoint", "ftp://h"}}).status().code(), StatusCode::kInvalidArgument);
  auto rs = S3SettingsFrom({{"s3.remote-signing-enabled", "true"}});
  EXPECT_EQ(rs.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(rs.status().message().find("vend credentials"), std::string::npos);
}

TEST(GcsSettingsFrom, MapsEveryPropertyName) {
  auto g = GcsSettingsFrom({{"gcs.project-id", "proj"},
                            {"gcs.oauth2.token", "ya29.x"},
                            {"gcs.oauth2.token-expires-at", "1700000000000"},
                            {"gcs.service.host", "http://localhost:4443"},
                            {"gcs.default-location", "EU"}});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->project_id, "proj");
  EXPECT_EQ(g->oauth2_token, "ya29.x");
  EXPECT_EQ(g->token_expires_at_ms, 1700000000000);
  EXPECT_EQ(g->endpoint_override, "localhost:4443");
  EXPECT_EQ(g->scheme, "http");
  EXPECT_EQ(g->default_bucket_location, "EU");
  EXPECT_FALSE(g->anonymous);
  EXPECT_TRUE(GcsSettingsFrom({{"gcs.no-auth", "true"}})->anonymous);
  EXPECT_EQ(GcsSettingsFrom({{"gcs.oauth2.token-expires-at", "soon"}}).status().code(), StatusCode::kInvalidArgument);
}

TEST(AzureSettingsFrom, MapsEveryPropertyName) {
  auto loc = *ParseStoreLocation("abfss://lake@acct.dfs.core.windows.net/wh/f.parquet");
  auto a = AzureSettingsFrom({{"adls.account-name", "acct"},
                              {"adls.account-key", "a2V5"},
                              {"adls.tenant-id", "t"},
                              {"adls.client-id", "c"},
                              {"adls.client-secret", "s"},
                              {"adls.blob-storage-authority", ".blob.example"},
                              {"adls.dfs-storage-authority", ".dfs.example"},
                              {"adls.blob-storage-scheme", "http"},
                              {"adls.dfs-storage-scheme", "http"}},
                             loc);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->account_name, "acct");
  EXPECT_EQ(a->account_key, "a2V5");
  EXPECT_EQ(a->tenant_id, "t");
  EXPECT_EQ(a->client_id, "c");
  EXPECT_EQ(a->client_secret, "s");
  EXPECT_EQ(a->blob_storage_authority, ".blob.example");
  EXPECT_EQ(a->dfs_storage_authority, ".dfs.example");
  EXPECT_EQ(a->blob_storage_scheme, "http");
  EXPECT_EQ(a->dfs_storage_scheme, "http");

  // Iceberg Java's per-account SAS token (keyed by the account host) wins over pyiceberg's plain one.
  auto sas =
      AzureSettingsFrom({{"adls.sas-token", "plain"}, {"adls.sas-token.acct.dfs.core.windows.net", "host"}}, loc);
  EXPECT_EQ(sas->sas_token, "host");
  EXPECT_EQ(AzureSettingsFrom({{"adls.sas-token", "plain"}}, loc)->sas_token, "plain");
  EXPECT_EQ(AzureSettingsFrom(
                {{"adls.auth.shared-key.account.name", "acct"}, {"adls.auth.shared-key.account.key", "k2"}}, loc)
                ->account_key,
            "k2");
  auto wrong = AzureSettingsFrom({{"adls.account-name", "other"}, {"adls.account-key", "k"}}, loc);
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AzureSettingsFrom({{"adls.client-secret", "s"}}, loc).status().code(), StatusCode::kInvalidArgument);
}

TEST(AzureSettingsFrom, ConnectionStrings) {
  auto loc = *ParseStoreLocation("abfss://lake@devstoreaccount1.dfs.core.windows.net/wh/f.parquet");
  auto azurite = AzureSettingsFrom({{"adls.connection-string",
                                     "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Zm9v;"
                                     "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"}},
                                   loc);
  ASSERT_TRUE(azurite.ok()) << azurite.status().message();
  EXPECT_EQ(azurite->account_key, "Zm9v");
  EXPECT_EQ(azurite->blob_storage_authority, "127.0.0.1:10000");
  EXPECT_EQ(azurite->blob_storage_scheme, "http");
  EXPECT_EQ(azurite->dfs_storage_scheme, "http");

  auto cloud = AzureSettingsFrom(
      {{"adls.connection-string.devstoreaccount1.dfs.core.windows.net",
        "AccountName=devstoreaccount1;SharedAccessSignature=sv=1&sig=abc;EndpointSuffix=core.chinacloudapi.cn"}},
      loc);
  ASSERT_TRUE(cloud.ok()) << cloud.status().message();
  EXPECT_EQ(cloud->sas_token, "sv=1&sig=abc");
  EXPECT_EQ(cloud->dfs_storage_authority, ".dfs.core.chinacloudapi.cn");

  auto other = AzureSettingsFrom({{"adls.connection-string", "AccountName=x;AccountKey=k"}}, loc);
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AzureSettingsFrom({{"adls.connection-string", "garbage"}}, loc).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(RelevantProperties, KeepsOnlyTheStoresOwnKeys) {
  PropertyMap p = {{"s3.endpoint", "e"},  {"client.region", "r"}, {"gcs.project-id", "g"}, {"adls.account-key", "k"},
                   {"uri", "http://cat"}, {"token", "t"},         {"warehouse", "w"}};
  EXPECT_EQ(RelevantProperties(StoreKind::kS3, p), (PropertyMap{{"s3.endpoint", "e"}, {"client.region", "r"}}));
  EXPECT_EQ(RelevantProperties(StoreKind::kGcs, p), (PropertyMap{{"gcs.project-id", "g"}}));
  EXPECT_EQ(RelevantProperties(StoreKind::kAzure, p), (PropertyMap{{"adls.account-key", "k"}}));
  EXPECT_TRUE(RelevantProperties(StoreKind::kLocal, p).empty());
}

TEST(RedactProperties, MasksEverySecret) {
  PropertyMap p = {{"s3.endpoint", "http://h:1"},
                   {"s3.access-key-id", "AKIAVISIBLE"},
                   {"s3.secret-access-key", "SECRET1"},
                   {"s3.session-token", "SECRET2"},
                   {"gcs.oauth2.token", "SECRET3"},
                   {"adls.account-key", "SECRET4"},
                   {"adls.sas-token.a.dfs.x", "SECRET5"},
                   {"adls.connection-string", "SECRET6"},
                   {"adls.client-secret", "SECRET7"},
                   {"token", "SECRET8"},
                   {"credential", "SECRET9"}};
  std::string text = RedactProperties(p);
  for (int i = 1; i <= 9; ++i) EXPECT_EQ(text.find("SECRET" + std::to_string(i)), std::string::npos) << text;
  EXPECT_NE(text.find("s3.endpoint=http://h:1"), std::string::npos);
  EXPECT_NE(text.find("s3.secret-access-key=***"), std::string::npos);
}

}  // namespace
}  // namespace thaw::storage
