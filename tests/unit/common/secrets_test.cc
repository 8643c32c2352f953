// Secret keys and references (common/secrets.h).
#include "thaw/common/secrets.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace thaw {
namespace {

TEST(Secrets, KeysOfKafkaAndObjectStores) {
  for (const char* k : {"sasl.password", "sasl.jaas.config", "ssl.key.password", "s3.secret-access-key",
                        "token", "adls.sas-token.acct", "credential", "SASL.USERNAME"}) {
    EXPECT_TRUE(IsSecretKey(k)) << k;
  }
  for (const char* k : {"bootstrap.servers", "acks", "s3.endpoint", "client.id"}) EXPECT_FALSE(IsSecretKey(k)) << k;
}

TEST(Secrets, FileAndEnvironmentReferencesOfSecretKeysOnly) {
  const auto dir = std::filesystem::temp_directory_path() / ("thaw_secrets_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "pw") << "s3cr3t\n";
  auto v = ResolveSecretReference("sasl.password", "@" + (dir / "pw").string(), "-X");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, "s3cr3t");
  ::setenv("THAW_TEST_SECRET", "from-env", 1);
  v = ResolveSecretReference("sasl.password", "${env:THAW_TEST_SECRET}", "-X");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "from-env");
  // Not a secret key: the value as given, '@' and all.
  v = ResolveSecretReference("client.id", "@" + (dir / "pw").string(), "-X");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->front(), '@');
  // A plain secret stays itself.
  v = ResolveSecretReference("sasl.password", "plain", "-X");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "plain");

  auto bad = ResolveSecretReference("sasl.password", "@" + (dir / "missing").string(), "-F c.properties");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("-F c.properties: sasl.password=@"), std::string::npos);
  EXPECT_NE(bad.status().message().find("cannot read the file"), std::string::npos);
  ::unsetenv("THAW_TEST_UNSET");
  bad = ResolveSecretReference("sasl.password", "${env:THAW_TEST_UNSET}", "-X");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the environment variable THAW_TEST_UNSET is not set"), std::string::npos);
  std::ofstream(dir / "empty") << "";
  EXPECT_FALSE(ResolveSecretReference("sasl.password", "@" + (dir / "empty").string(), "-X").ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace thaw
