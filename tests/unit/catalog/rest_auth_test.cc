// SigV4 signing and OAuth2 token lifetimes of the REST catalog client.
#include "thaw/catalog/rest_auth.h"

#include <gtest/gtest.h>

namespace thaw::catalog {
namespace {

const SigV4Credentials kAwsExample{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};

// AWS's published SigV4 test suite, case "get-vanilla".
TEST(SigV4, AwsTestSuiteGetVanilla) {
  HttpRequest r;
  r.method = "GET";
  r.url = "https://example.amazonaws.com/";
  r.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  auto sig = SignSigV4(r, kAwsExample, "20150830T123600Z", "us-east-1", "service");
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sig->signature, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(
      sig->authorization,
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
      "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

// AWS's test suite, "get-vanilla-query-order-key-case": query pairs sorted.
TEST(SigV4, AwsTestSuiteQueryOrder) {
  HttpRequest r;
  r.url = "https://example.amazonaws.com/?Param2=value2&Param1=value1";
  r.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  auto sig = SignSigV4(r, kAwsExample, "20150830T123600Z", "us-east-1", "service");
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(sig->signature, "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

// A REST catalog commit-like request: POST with a body, a session token, a
// port in Host, a %1F-separated namespace and an encoded prefix in the path
// (encoded again in the canonical URI), and an encoded query value. Expected
// values computed with botocore 1.44.8's SigV4Auth (canonical_request,
// string_to_sign, signature) on the same request.
TEST(SigV4, RestCatalogPostMatchesBotocore) {
  std::string body = R"({"namespace":["a","b"],"properties":{}})";
  HttpRequest r;
  r.method = "POST";
  r.url =
      "https://glue.eu-west-1.amazonaws.com:8443/iceberg/v1/cat%2Fx/namespaces/a%1Fb/"
      "tables?pageToken=t%2B1&pageSize=10";
  r.body = body;
  r.headers = {{"Host", "glue.eu-west-1.amazonaws.com:8443"},
               {"X-Amz-Date", "20261130T101500Z"},
               {"X-Amz-Security-Token", "session-token-EXAMPLE"},
               {"Content-Type", "application/json"},
               {"X-Amz-Content-SHA256", Sha256Hex(body)}};
  SigV4Credentials creds = kAwsExample;
  creds.session_token = "session-token-EXAMPLE";
  auto sig = SignSigV4(r, creds, "20261130T101500Z", "eu-west-1", "glue");
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(sig->canonical_request,
            "POST\n/iceberg/v1/cat%252Fx/namespaces/a%251Fb/tables\npageSize=10&pageToken=t%2B1\n"
            "content-type:application/json\nhost:glue.eu-west-1.amazonaws.com:8443\n"
            "x-amz-content-sha256:9f5081f189782fbeec0701d3739a93a5412196c1c7397173834755d1f6cec17b\n"
            "x-amz-date:20261130T101500Z\nx-amz-security-token:session-token-EXAMPLE\n\n"
            "content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token\n"
            "9f5081f189782fbeec0701d3739a93a5412196c1c7397173834755d1f6cec17b");
  EXPECT_EQ(sig->string_to_sign,
            "AWS4-HMAC-SHA256\n20261130T101500Z\n20261130/eu-west-1/glue/aws4_request\n"
            "6b48d52ce4589fd4f57935c329dc447fefe16c2e812232e194ac7b677a4e5737");
  EXPECT_EQ(sig->signature, "69c9f5e0aeed21a00c1fcee516d14e3fb2a0fef3026b18209ea644caa356380b");
}

TEST(SigV4, RejectsMalformedDate) {
  HttpRequest r;
  r.url = "https://example.amazonaws.com/";
  EXPECT_FALSE(SignSigV4(r, kAwsExample, "2015-08-30", "us-east-1", "service").ok());
}

TEST(SigV4, ProviderSignsAndMovesBearerToOriginalAuthorization) {
  storage::PropertyMap props = {{"token", "tok-secret"},
                                {"rest.sigv4-enabled", "true"},
                                {"rest.signing-region", "us-west-2"},
                                {"rest.access-key-id", "AKIDEXAMPLE"},
                                {"rest.secret-access-key", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}};
  auto http = HttpClient::Make();
  ASSERT_TRUE(http.ok());
  auto auth = MakeRestAuth("http://127.0.0.1:1", props, http->get());
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  HttpRequest r;
  r.url = "http://127.0.0.1:1/v1/config";
  ASSERT_TRUE((*auth)->Apply(r).ok());
  std::map<std::string, std::string> h(r.headers.begin(), r.headers.end());
  EXPECT_EQ(h["Original-Authorization"], "Bearer tok-secret");
  EXPECT_EQ(h["Host"], "127.0.0.1:1");
  ASSERT_TRUE(h.count("Authorization"));
  EXPECT_TRUE(h["Authorization"].starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"));
  EXPECT_NE(h["Authorization"].find("/us-west-2/execute-api/aws4_request"), std::string::npos);
  // The signature covers the relocated bearer token.
  EXPECT_NE(h["Authorization"].find("original-authorization"), std::string::npos);
  // Descriptions name where the keys came from, never a key.
  std::string d = (*auth)->Describe();
  EXPECT_NE(d.find("rest.access-key-id"), std::string::npos);
  EXPECT_EQ(d.find("wJalr"), std::string::npos);
  EXPECT_EQ(d.find("tok-secret"), std::string::npos);
}

TEST(SigV4, MissingRegionOrKeysIsAClearError) {
  auto http = HttpClient::Make();
  ASSERT_TRUE(http.ok());
  storage::PropertyMap props = {
      {"rest.sigv4-enabled", "true"}, {"rest.access-key-id", "AKID"}, {"rest.secret-access-key", "s"}};
  ::unsetenv("AWS_REGION");
  ::unsetenv("AWS_DEFAULT_REGION");
  auto auth = MakeRestAuth("http://h", props, http->get());
  ASSERT_FALSE(auth.ok());
  EXPECT_NE(auth.status().message().find("rest.signing-region"), std::string::npos);
}

TEST(TokenLifetime, RefreshesAheadOfExpiry) {
  using namespace std::chrono;
  TokenLifetime t;
  t.obtained = steady_clock::time_point(seconds(1000));
  t.expires_in = seconds(3600);  // margin capped at 60 s
  EXPECT_EQ(t.RefreshAt(), steady_clock::time_point(seconds(1000 + 3600 - 60)));
  EXPECT_FALSE(t.NeedsRefresh(steady_clock::time_point(seconds(1000 + 3539))));
  EXPECT_TRUE(t.NeedsRefresh(steady_clock::time_point(seconds(1000 + 3540))));
  t.expires_in = seconds(30);  // short-lived: a tenth of the lifetime
  EXPECT_EQ(t.RefreshAt(), steady_clock::time_point(seconds(1000 + 27)));
  EXPECT_TRUE(t.NeedsRefresh(steady_clock::time_point(seconds(1000 + 28))));
  t.expires_in = seconds(0);  // already expired
  EXPECT_TRUE(t.NeedsRefresh(t.obtained));
  t.expires_in.reset();  // no expires_in: used until the server says 401
  EXPECT_FALSE(t.NeedsRefresh(steady_clock::time_point(hours(1'000'000))));
}

TEST(RestAuth, BearerTokenHeaderAndDescriptionWithoutValue) {
  auto http = HttpClient::Make();
  ASSERT_TRUE(http.ok());
  auto auth = MakeRestAuth("http://h", {{"token", "abc123"}}, http->get());
  ASSERT_TRUE(auth.ok());
  HttpRequest r;
  ASSERT_TRUE((*auth)->Apply(r).ok());
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].second, "Bearer abc123");
  EXPECT_EQ((*auth)->Describe().find("abc123"), std::string::npos);
  EXPECT_NE((*auth)->Describe().find("'token'"), std::string::npos);
}

TEST(HttpHelpers, RedactUrlDropsQueryAndUserinfo) {
  EXPECT_EQ(RedactUrl("http://u:pw@h:1/v1/x?token=s#f"), "http://h:1/v1/x");
  EXPECT_EQ(RedactUrl("https://h/v1/config?warehouse=w"), "https://h/v1/config");
  EXPECT_EQ(RedactUrl("https://h"), "https://h");
}

TEST(HttpHelpers, PercentAndFormEncoding) {
  EXPECT_EQ(PercentEncode("a b/c~d.e_f-g\x1f"), "a%20b%2Fc~d.e_f-g%1F");
  EXPECT_EQ(FormEncode({{"grant_type", "client_credentials"}, {"client_secret", "s&=+"}}),
            "grant_type=client_credentials&client_secret=s%26%3D%2B");
}

TEST(HttpHelpers, BackoffIsBoundedExponentialWithJitter) {
  HttpOptions o;
  o.initial_backoff = std::chrono::milliseconds(100);
  o.max_backoff = std::chrono::milliseconds(1000);
  std::mt19937_64 rng(7);
  for (int attempt = 1; attempt <= 10; ++attempt) {
    int64_t ceiling = std::min<int64_t>(100LL << (attempt - 1), 1000);
    int64_t max_seen = 0;
    for (int i = 0; i < 200; ++i) {
      auto d = BackoffDelay(attempt, o, rng).count();
      EXPECT_GE(d, 0);
      EXPECT_LE(d, ceiling);
      max_seen = std::max(max_seen, d);
    }
    EXPECT_GT(max_seen, ceiling / 2) << "attempt " << attempt;  // the ceiling grows and is used
  }
  EXPECT_TRUE(IsRetryableStatus(429));
  EXPECT_TRUE(IsRetryableStatus(503));
  EXPECT_FALSE(IsRetryableStatus(500));  // may have acted: not retried blindly
}

}  // namespace
}  // namespace thaw::catalog
