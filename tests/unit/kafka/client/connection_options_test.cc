// The upstream client properties of `thaw serve --upstream -X/-F`
// (kafka/client/connection.h ApplyProperty).
#include <gtest/gtest.h>

#include "thaw/kafka/client/connection.h"

namespace thaw::kafka::client {
namespace {

TEST(ConnectionOptions, KafkaNamesSetTheOptions) {
  ConnectionOptions o;
  ASSERT_TRUE(ApplyProperty("socket.connection.setup.timeout.ms", "2500", "-X", &o).ok());
  ASSERT_TRUE(ApplyProperty("request.timeout.ms", "60000", "-X", &o).ok());
  ASSERT_TRUE(ApplyProperty("receive.message.max.bytes", "2097152", "-X", &o).ok());
  ASSERT_TRUE(ApplyProperty("client.id", "thaw-east", "-X", &o).ok());
  ASSERT_TRUE(ApplyProperty("security.protocol", "plaintext", "-X", &o).ok());
  EXPECT_EQ(o.connect_timeout.count(), 2500);
  EXPECT_EQ(o.request_timeout.count(), 60000);
  EXPECT_EQ(o.max_frame_bytes, 2097152);
  EXPECT_EQ(o.client_id, "thaw-east");
}

TEST(ConnectionOptions, WhatItCannotHonourIsRefusedByName) {
  ConnectionOptions o;
  Status st = ApplyProperty("ssl.truststore.location", "/ca.jks", "-F client.properties", &o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("-F client.properties: 'ssl.truststore.location' is not an upstream property"),
            std::string::npos)
      << st.message();
  st = ApplyProperty("security.protocol", "SASL_GSSAPI", "-X", &o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"), std::string::npos) << st.message();
  st = ApplyProperty("sasl.mechanism", "OAUTHBEARER", "-X", &o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"), std::string::npos) << st.message();
  st = ApplyProperty("request.timeout.ms", "30s", "-X", &o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("request.timeout.ms=30s: give a whole number 100..3600000"), std::string::npos)
      << st.message();
  EXPECT_FALSE(ApplyProperty("receive.message.max.bytes", "1000", "-X", &o).ok());  // below 1 MiB
  EXPECT_EQ(o.request_timeout.count(), 30000);  // a refused value changes nothing
}

TEST(ConnectionOptions, SaslPropertiesForThawsOwnConnection) {
  ConnectionOptions o;
  ASSERT_TRUE(ApplyProperty("security.protocol", "sasl_ssl", "-X", &o).ok());
  EXPECT_TRUE(o.tls.enabled);
  EXPECT_TRUE(o.sasl.enabled);
  Status st = PrepareTls(&o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("set -X sasl.mechanism"), std::string::npos) << st.message();
  ASSERT_TRUE(ApplyProperty("sasl.mechanisms", "SCRAM-SHA-512", "-X", &o).ok());
  st = PrepareTls(&o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("set -X sasl.username and -X sasl.password"), std::string::npos) << st.message();
  ::setenv("THAW_TEST_UPSTREAM_PASSWORD", "s3cret", 1);
  ASSERT_TRUE(ApplyProperty("sasl.username", "thaw", "-X", &o).ok());
  ASSERT_TRUE(ApplyProperty("sasl.password", "${env:THAW_TEST_UPSTREAM_PASSWORD}", "-X", &o).ok());
  EXPECT_EQ(o.sasl.password, "s3cret");
  EXPECT_TRUE(PrepareTls(&o).ok());
  ConnectionOptions plain_sasl;
  ASSERT_TRUE(ApplyProperty("security.protocol", "SASL_PLAINTEXT", "-X", &plain_sasl).ok());
  EXPECT_FALSE(plain_sasl.tls.enabled);
  ConnectionOptions stray;
  ASSERT_TRUE(ApplyProperty("sasl.username", "thaw", "-X", &stray).ok());
  st = PrepareTls(&stray);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not SASL_PLAINTEXT or SASL_SSL"), std::string::npos) << st.message();
}

TEST(ConnectionOptions, SslPropertiesMakeAContextOrSayWhatIsWrong) {
  ConnectionOptions o;
  ASSERT_TRUE(ApplyProperty("ssl.ca.location", "/nonexistent/ca.pem", "-X", &o).ok());
  Status st = PrepareTls(&o);  // ssl.* without security.protocol=SSL
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("security.protocol is not SSL or SASL_SSL"), std::string::npos) << st.message();
  ASSERT_TRUE(ApplyProperty("security.protocol", "ssl", "-X", &o).ok());
  st = PrepareTls(&o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ssl.ca.location /nonexistent/ca.pem: not a readable PEM CA file"), std::string::npos)
      << st.message();
  ConnectionOptions system_cas;
  ASSERT_TRUE(ApplyProperty("security.protocol", "SSL", "-X", &system_cas).ok());
  ASSERT_TRUE(PrepareTls(&system_cas).ok());
  EXPECT_NE(system_cas.tls.context, nullptr);
  EXPECT_TRUE(system_cas.tls.verify_hostname);
  ASSERT_TRUE(ApplyProperty("ssl.endpoint.identification.algorithm", "none", "-X", &system_cas).ok());
  EXPECT_FALSE(system_cas.tls.verify_hostname);
  EXPECT_FALSE(ApplyProperty("ssl.endpoint.identification.algorithm", "strict", "-X", &system_cas).ok());
  ConnectionOptions plain;
  ASSERT_TRUE(PrepareTls(&plain).ok());
  EXPECT_EQ(plain.tls.context, nullptr);
}

}  // namespace
}  // namespace thaw::kafka::client
