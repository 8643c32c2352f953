#include "thaw/cli/kafka_args.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "thaw/cli/table_args.h"
#include "thaw/kafka/ca_bundle.h"

namespace thaw::cli {
namespace {

std::string WriteFile(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()));
  std::ofstream(p) << text;
  return p.string();
}

TEST(PropertiesFile, JavaSyntax) {
  auto f = WriteFile("props", "# a comment\n! another\n\n  security.protocol = SASL_SSL\nsasl.mechanism:PLAIN\n"
                              "linger.ms 5\nclient.id=a\\\n    b\nssl.ca.location=/x\\u0041\\ty\r\nempty=\n");
  auto r = ReadPropertiesFile(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<std::pair<std::string, std::string>> want = {{"security.protocol", "SASL_SSL"},
                                                           {"sasl.mechanism", "PLAIN"},
                                                           {"linger.ms", "5"},
                                                           {"client.id", "ab"},
                                                           {"ssl.ca.location", "/xA\ty"},
                                                           {"empty", ""}};
  EXPECT_EQ(*r, want);
  std::filesystem::remove(f);
}

TEST(PropertiesFile, JaasPlainBecomesSaslUsernameAndPassword) {
  auto f = WriteFile("jaas", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                             "username=\"alice\" password=\"s3 cret\";\n");
  auto r = ReadPropertiesFile(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<std::pair<std::string, std::string>> want = {{"sasl.username", "alice"}, {"sasl.password", "s3 cret"}};
  EXPECT_EQ(*r, want);
  f = WriteFile("jaas", "a=b\nsasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required;\n");
  r = ReadPropertiesFile(f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("-F " + f + " line 2: sasl.jaas.config with "
                                      "com.sun.security.auth.module.Krb5LoginModule"),
            std::string::npos)
      << r.status().message();
  std::filesystem::remove(f);
}

TEST(PropertiesFile, ErrorsNameFileAndLine) {
  auto f = WriteFile("bad", "a=b\n=novalue\n");
  auto r = ReadPropertiesFile(f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("-F " + f + " line 2: '=novalue' has no property name"), std::string::npos)
      << r.status().message();
  std::filesystem::remove(f);
  r = ReadPropertiesFile(f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(KafkaArgs, AliasesAndPrecedence) {
  auto f = WriteFile("kprops", "bootstrap.servers=from-file:9092\nacks=1\nlinger.ms=7\n");
  for (const char* alias : {"-b", "--brokers", "--bootstrap-server"}) {
    CLI::App app{"t"};
    KafkaArgs k;
    k.Register(&app);
    std::vector<std::string> args = {"t", alias, "cli:9092", "-F", f, "-X", "acks=all"};
    std::vector<const char*> c;
    for (const auto& a : args) c.push_back(a.c_str());
    app.parse(static_cast<int>(c.size()), c.data());
    auto r = k.Resolve();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->brokers, "cli:9092") << alias;
    EXPECT_EQ(r->properties.at("acks"), "all");  // -X overrides -F
    EXPECT_EQ(r->properties.at("linger.ms"), "7");
    EXPECT_EQ(r->properties.count("bootstrap.servers"), 0u);
  }
  KafkaArgs k;
  k.properties_file = f;
  auto r = k.Resolve();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->brokers, "from-file:9092");  // no --brokers: the file's bootstrap.servers
  k.properties = {"bootstrap.servers=from-x:1"};
  EXPECT_EQ(k.Resolve()->brokers, "from-x:1");
  k.properties = {"novalue"};
  EXPECT_FALSE(k.Resolve().ok());
  // librdkafka judges names and values before anything connects; the error says where the setting came from.
  k.properties = {"no.such.property=1"};
  auto bad = k.Resolve();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("-X: Kafka client property 'no.such.property'"), std::string::npos)
      << bad.status().message();
  k.properties = {};
  auto g = WriteFile("kbad", "acks=sometimes\n");
  k.properties_file = g;
  bad = k.Resolve();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("-F " + g + ": Kafka client property 'acks'"), std::string::npos)
      << bad.status().message();
  std::filesystem::remove(g);
  std::filesystem::remove(f);
}

TEST(Partitions, OneSyntax) {
  EXPECT_EQ(*ParsePartitions("0,3-5"), (std::set<int32_t>{0, 3, 4, 5}));
  EXPECT_EQ(*ParsePartitions("7"), (std::set<int32_t>{7}));
  for (const char* bad : {"", "a", "1,", "-1", "5-3", "1-", "0-100000", "99999999999", "1 ,2"}) {
    auto r = ParsePartitions(bad, "--partitions");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("--partitions '"), std::string::npos);
    }
  }
  CLI::App app{"t"};
  std::set<int32_t> ps;
  AddPartitionsOption(&app, "--partitions,--partition", &ps, "");
  std::vector<const char*> args = {"t", "--partition", "1", "--partitions", "3-4,9"};
  app.parse(static_cast<int>(args.size()), args.data());
  EXPECT_EQ(ps, (std::set<int32_t>{1, 3, 4, 9}));
  CLI::App app2{"t"};
  AddPartitionsOption(&app2, "--partitions", &ps, "");
  std::vector<const char*> bad = {"t", "--partitions", "x"};
  EXPECT_THROW(app2.parse(static_cast<int>(bad.size()), bad.data()), CLI::ValidationError);
}

TEST(KafkaArgs, TlsWithoutACaFileUsesTheSystemBundleAsAFile) {
  // librdkafka's own default CA loading crashes in this process (ca_bundle.h).
  KafkaArgs a;
  a.brokers = "h:9093";
  a.properties = {"security.protocol=SASL_SSL"};
  auto c = a.Resolve();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->properties.at("ssl.ca.location"), kafka::SystemCaFile());
  a.properties = {"security.protocol=ssl", "ssl.ca.location=/etc/thaw/ca.pem"};
  c = a.Resolve();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->properties.at("ssl.ca.location"), "/etc/thaw/ca.pem");
  a.properties = {"security.protocol=SASL_PLAINTEXT"};
  c = a.Resolve();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->properties.count("ssl.ca.location"), 0u);
}

}  // namespace
}  // namespace thaw::cli
