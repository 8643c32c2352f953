// The schema registry client's settings (Confluent's property names), its
// error statuses and its bounded cache; the requests themselves are tested
// against a real registry in tests/integration/test_schema_registry.py.
#include "thaw/registry/client.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "thaw/common/secrets.h"

namespace thaw::registry {
namespace {

Result<RegistryOptions> Options(storage::PropertyMap p) { return RegistryOptions::FromProperties(p, "-X"); }

TEST(RegistryOptions, UrlsAndDefaults) {
  auto o = Options({{"url", "http://a:8081/, https://b:8081"}});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->urls, (std::vector<std::string>{"http://a:8081", "https://b:8081"}));
  EXPECT_TRUE(o->basic_user_info.empty());
  EXPECT_EQ(o->max_retries, 3);
  EXPECT_EQ(Options({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Options({{"url", "ftp://a"}}).status().code(), StatusCode::kInvalidArgument);
}

TEST(RegistryOptions, BasicAuthFromUserInfoOrUrl) {
  auto o = Options({{"url", "http://a:8081"}, {"basic.auth.user.info", "alice:s3cret"}});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->basic_user_info, "alice:s3cret");
  auto u = Options({{"url", "http://alice:p%40ss@a:8081"}, {"basic.auth.credentials.source", "URL"}});
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->basic_user_info, "alice:p@ss");
  EXPECT_EQ(u->urls, std::vector<std::string>{"http://a:8081"});
  // Userinfo in the URL without source=URL is dropped, never sent nor shown.
  auto d = Options({{"url", "http://alice:pw@a:8081"}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->urls, std::vector<std::string>{"http://a:8081"});
  EXPECT_TRUE(d->basic_user_info.empty());
  auto bad = Options({{"url", "http://a"}, {"basic.auth.user.info", "nocolon"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find("nocolon"), std::string::npos) << bad.status().ToString();
  EXPECT_EQ(Options({{"url", "http://a"}, {"basic.auth.credentials.source", "SASL_INHERIT"}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Options({{"url", "http://a"}, {"basic.auth.credentials.source", "URL"}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(RegistryOptions, SecretsAsReferencesAndOtherSettings) {
  ::setenv("THAW_TEST_REGISTRY_USER_INFO", "bob:pw", 1);
  auto o = Options({{"url", "http://a"},
                    {"basic.auth.user.info", "${env:THAW_TEST_REGISTRY_USER_INFO}"},
                    {"timeout", "7"},
                    {"max.retries", "1"},
                    {"retries.wait.ms", "5"},
                    {"cache.capacity", "10"},
                    {"ssl.ca.location", "/etc/ca.pem"}});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->basic_user_info, "bob:pw");
  EXPECT_EQ(o->request_timeout.count(), 7000);
  EXPECT_EQ(o->max_retries, 1);
  EXPECT_EQ(o->retry_wait.count(), 5);
  EXPECT_EQ(o->cache_capacity, 10u);
  EXPECT_EQ(o->ca_file, "/etc/ca.pem");
  auto t = Options({{"url", "http://a"}, {"bearer.auth.token", "tok"}});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->bearer_token, "tok");
  EXPECT_EQ(Options({{"url", "http://a"}, {"bearer.auth.token", "t"}, {"basic.auth.user.info", "a:b"}}).status().code(),
            StatusCode::kInvalidArgument);
  auto unknown = Options({{"url", "http://a"}, {"basic.auth.userinfo", "a:b"}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown schema registry setting 'basic.auth.userinfo'"),
            std::string::npos);
  EXPECT_EQ(Options({{"url", "http://a"}, {"max.retries", "-1"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsSecretKey("basic.auth.user.info"));
  EXPECT_TRUE(IsSecretKey("bearer.auth.token"));
}

TEST(RegistryErrors, StatusPerHttpStatus) {
  auto nf = RegistryHttpError("GET http://r/schemas/ids/9", 404, R"({"error_code":40403,"message":"Schema not found"})",
                              "sent no credentials");
  EXPECT_EQ(nf.code(), StatusCode::kNotFound);
  EXPECT_EQ(nf.message(), "schema registry: GET http://r/schemas/ids/9: HTTP 404, error 40403: Schema not found");
  EXPECT_EQ(RegistryHttpError("w", 409, R"({"error_code":409,"message":"incompatible"})", "").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RegistryHttpError("w", 422, "{}", "").code(), StatusCode::kInvalidArgument);
  auto denied =
      RegistryHttpError("w", 401, R"({"error_code":401,"message":"Unauthorized"})", "sent basic auth as user 'a'");
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("user 'a'"), std::string::npos);
  EXPECT_EQ(RegistryHttpError("w", 500, "oops", "").code(), StatusCode::kIOError);
}

TEST(RegistryCache, BoundedLeastRecentlyUsed) {
  LruCache<int, std::string> cache(2);
  cache.Put(1, "a");
  cache.Put(2, "b");
  EXPECT_EQ(cache.Get(1), "a");  // 1 is now the most recent
  cache.Put(3, "c");             // evicts 2
  EXPECT_FALSE(cache.Get(2).has_value());
  EXPECT_EQ(cache.Get(1), "a");
  EXPECT_EQ(cache.Get(3), "c");
  EXPECT_EQ(cache.size(), 2u);
  cache.Put(3, "d");
  EXPECT_EQ(cache.Get(3), "d");
  LruCache<int, int> none(0);
  none.Put(1, 1);
  EXPECT_FALSE(none.Get(1).has_value());
}

TEST(RegistryClient, UnreachableRegistryIsAnIOErrorNamingTheUrl) {
  RegistryOptions o;
  o.urls = {"http://127.0.0.1:1"};
  o.basic_user_info = "alice:topsecret";
  o.max_retries = 1;
  o.retry_wait = std::chrono::milliseconds(1);
  auto client = SchemaRegistry::Make(o);
  ASSERT_TRUE(client.ok());
  auto s = (*client)->SchemaById(1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kIOError);
  EXPECT_NE(s.status().message().find("GET http://127.0.0.1:1/schemas/ids/1"), std::string::npos)
      << s.status().ToString();
  EXPECT_NE(s.status().message().find("is the registry running"), std::string::npos);
  EXPECT_EQ(s.status().message().find("topsecret"), std::string::npos);
}

}  // namespace
}  // namespace thaw::registry
