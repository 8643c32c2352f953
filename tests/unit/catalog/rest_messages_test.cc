// REST catalog / OAuth2 response bodies from an untrusted server: wrong JSON
// types are reported as kCorrupt naming the request and the field, never thrown.
#include "thaw/catalog/rest_messages.h"

#include <gtest/gtest.h>

#include <string>

namespace thaw::catalog::rest {
namespace {

// A minimal valid v2 table metadata with `location` spliced in.
std::string Metadata(const std::string& location) {
  return R"({"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1",)" + location +
         R"("last-sequence-number":0,"last-updated-ms":1602638573590,"last-column-id":1,"current-schema-id":0,
"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}],
"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,
"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],"snapshots":[]})";
}

std::string LoadBody(const std::string& extra, const std::string& location = R"("location":"s3://b/t",)") {
  return R"({"metadata-location":"s3://b/t/metadata/1.json","metadata":)" + Metadata(location) + extra + "}";
}

void ExpectCorrupt(const Status& s, const std::string& fragment) {
  EXPECT_EQ(s.code(), StatusCode::kCorrupt) << s.ToString();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.ToString();
}

TEST(RestMessages, ValidLoadTableKeepsEveryPart) {
  auto r = ParseLoadTable(LoadBody(R"(,"config":{"s3.endpoint":"http://h:9000","n":5},
"storage-credentials":[{"prefix":"s3://b/t","config":{"s3.access-key-id":"AK"}}])"),
                          "loading table 'db.t'");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->metadata_location, "s3://b/t/metadata/1.json");
  EXPECT_EQ(r->location, "s3://b/t");
  EXPECT_EQ(r->config.at("s3.endpoint"), "http://h:9000");
  EXPECT_EQ(r->config.at("n"), "5");  // non-string values as JSON text
  ASSERT_EQ(r->storage_credentials.size(), 1u);
  EXPECT_EQ(r->storage_credentials[0].prefix, "s3://b/t");
  EXPECT_EQ(r->storage_credentials[0].config.at("s3.access-key-id"), "AK");
}

TEST(RestMessages, LoadTableWrongTypesAreCorrupt) {
  const std::string what = "loading table 'db.t'";
  ExpectCorrupt(ParseLoadTable(LoadBody(R"(,"config":[1])"), what).status(), "'config' is not a JSON object");
  ExpectCorrupt(ParseLoadTable(LoadBody(R"(,"config":"x")"), what).status(), what);
  ExpectCorrupt(ParseLoadTable(LoadBody(R"(,"storage-credentials":{"prefix":"s3://"})"), what).status(),
                "'storage-credentials' is not a list");
  ExpectCorrupt(ParseLoadTable(LoadBody(R"(,"storage-credentials":[5])"), what).status(), "no 'prefix'");
  ExpectCorrupt(ParseLoadTable(LoadBody(R"(,"storage-credentials":[{"prefix":"s3://b","config":[1]}])"), what).status(),
                "storage credential 's3://b': 'config' is not a JSON object");
  ExpectCorrupt(
      ParseLoadTable(R"({"metadata-location":5,"metadata":)" + Metadata(R"("location":"s3://b/t",)") + "}", what)
          .status(),
      "'metadata-location' is not a string");
  // A non-string table location is the metadata parser's to reject; it must not throw either.
  auto bad_location = ParseLoadTable(LoadBody("", R"("location":5,)"), what);
  EXPECT_EQ(bad_location.status().code(), StatusCode::kCorrupt) << bad_location.status().ToString();
  ExpectCorrupt(ParseLoadTable(R"({"metadata":[1]})", what).status(), "no table metadata");
  ExpectCorrupt(ParseLoadTable("not json", what).status(), "no table metadata");
}

TEST(RestMessages, ConfigWrongTypesAreCorrupt) {
  auto ok = ParseConfigResponse(
      R"({"defaults":{"a":"1"},"overrides":{"prefix":"p"},"idempotency-key-lifetime":"PT1H"})", "GET /v1/config");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->defaults.at("a"), "1");
  EXPECT_EQ(ok->overrides.at("prefix"), "p");
  EXPECT_TRUE(ok->idempotency_keys);
  ExpectCorrupt(ParseConfigResponse(R"({"defaults":[1]})", "GET /v1/config").status(),
                "GET /v1/config: 'defaults' is not a JSON object");
  ExpectCorrupt(ParseConfigResponse(R"({"overrides":"uri"})", "GET /v1/config").status(), "'overrides'");
  ExpectCorrupt(ParseConfigResponse("[]", "GET /v1/config").status(), "not a JSON object");
}

TEST(RestMessages, ListWrongTypesAreCorrupt) {
  auto page = ParseListNamespaces(R"({"namespaces":[["a"],["a","b"]],"next-page-token":"t2"})", "listing");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->namespaces.size(), 2u);
  EXPECT_EQ(page->next_page_token, "t2");
  ExpectCorrupt(ParseListNamespaces(R"({"namespaces":[["a"]],"next-page-token":7})", "listing").status(),
                "'next-page-token' is not a string");
  ExpectCorrupt(ParseListNamespaces(R"({"namespaces":["a"]})", "listing").status(), "not a list of strings");
  ExpectCorrupt(ParseListNamespaces(R"({"namespaces":{}})", "listing").status(), "no 'namespaces' list");

  auto tables = ParseListTables(R"({"identifiers":[{"name":"t"},{"namespace":["x"],"name":"u"}]})", {"db"}, "tables");
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  EXPECT_EQ(tables->identifiers[0].ns, std::vector<std::string>{"db"});
  EXPECT_EQ(tables->identifiers[1].ns, std::vector<std::string>{"x"});
  ExpectCorrupt(ParseListTables(R"({"identifiers":[{"name":5}]})", {"db"}, "tables").status(), "has no name");
  ExpectCorrupt(ParseListTables(R"({"identifiers":[{"name":"t","namespace":"db"}]})", {"db"}, "tables").status(),
                "table 't': a namespace is not a list");
  ExpectCorrupt(ParseListTables(R"({"identifiers":[],"next-page-token":{}})", {"db"}, "tables").status(),
                "'next-page-token'");
}

TEST(RestMessages, TokenWrongTypesAreCorrupt) {
  auto t = ParseTokenResponse(R"({"access_token":"abc","expires_in":3600})", "POST /token");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->access_token, "abc");
  EXPECT_EQ(t->expires_in, std::chrono::seconds(3600));
  auto no_expiry = ParseTokenResponse(R"({"access_token":"abc"})", "POST /token");
  ASSERT_TRUE(no_expiry.ok());
  EXPECT_FALSE(no_expiry->expires_in.has_value());
  // Huge lifetimes are clamped, not overflowed.
  auto huge = ParseTokenResponse(R"({"access_token":"abc","expires_in":1e300})", "POST /token");
  ASSERT_TRUE(huge.ok()) << huge.status().ToString();
  EXPECT_EQ(huge->expires_in, kMaxTokenLifetime);
  auto huge_int = ParseTokenResponse(R"({"access_token":"abc","expires_in":18446744073709551615})", "POST /token");
  ASSERT_TRUE(huge_int.ok()) << huge_int.status().ToString();
  EXPECT_EQ(huge_int->expires_in, kMaxTokenLifetime);
  // A string of digits is accepted (Azure AD's v1 endpoint sends one); other strings are not.
  auto quoted = ParseTokenResponse(R"({"access_token":"abc","expires_in":"3599"})", "POST /token");
  ASSERT_TRUE(quoted.ok()) << quoted.status().message();
  EXPECT_EQ(quoted->expires_in, std::chrono::seconds(3599));
  ExpectCorrupt(ParseTokenResponse(R"({"access_token":"abc","expires_in":"soon"})", "POST /token").status(),
                "POST /token: the OAuth2 token response's expires_in is not a number");
  ExpectCorrupt(ParseTokenResponse(R"({"access_token":"abc","expires_in":-5})", "POST /token").status(),
                "not a non-negative number");
  ExpectCorrupt(ParseTokenResponse(R"({"access_token":7})", "POST /token").status(), "no access_token");
}

TEST(RestMessages, ErrorBodies) {
  EXPECT_EQ(ParseErrorResponse(R"({"error":{"message":"gone","type":"NoSuchTableException","code":404}})"),
            "NoSuchTableException: gone");
  EXPECT_EQ(ParseErrorResponse(R"({"error":{"message":5,"type":["x"]}})"), "");
  EXPECT_EQ(ParseErrorResponse("<html><title>502 Bad Gateway</title></html>"), "502 Bad Gateway");
  EXPECT_EQ(ParseErrorResponse("line1\nline2"), "line1 line2");
  EXPECT_EQ(ParseTokenError(R"({"error":"invalid_client","error_description":"bad secret"})"), "bad secret");
  EXPECT_EQ(ParseTokenError(R"({"error":"invalid_client","error_description":5})"), "invalid_client");
  EXPECT_EQ(ParseTokenError(R"({"error":{"message":"nope"}})"), "nope");
  EXPECT_EQ(ParseTokenError("[1]"), "");
}

}  // namespace
}  // namespace thaw::catalog::rest
