#include "thaw/kafka/scram.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "thaw/kafka/server/sasl.h"

namespace thaw::kafka {
namespace {

// RFC 7677 section 3: the SCRAM-SHA-256 exchange of user "user", password "pencil".
TEST(ScramClient, Rfc7677TestVector) {
  scram::Client c{"SCRAM-SHA-256", "user", "pencil", "rOprNGfwEbeRWgbNEkqO", {}, {}};
  EXPECT_EQ(c.First(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  auto final_message =
      c.Final("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
  ASSERT_TRUE(final_message.ok()) << final_message.status().message();
  EXPECT_EQ(*final_message,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  EXPECT_TRUE(c.Verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").ok());
  Status wrong = c.Verify("v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("signature does not match"), std::string::npos);
  EXPECT_NE(c.Verify("e=invalid-proof").message().find("invalid-proof"), std::string::npos);
}

TEST(ScramClient, RefusesAServerFirstThatDoesNotExtendItsNonce) {
  scram::Client c{"SCRAM-SHA-512", "user", "pencil", "abc", {}, {}};
  c.First();
  EXPECT_FALSE(c.Final("r=xyz123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096").ok());
  EXPECT_FALSE(c.Final("r=abc123,s=***,i=4096").ok());
  EXPECT_FALSE(c.Final("r=abc123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0").ok());
}

// Against Thaw's own server side (kafka/server/sasl.h), both mechanisms,
// as the tiered proxy meets it.
TEST(ScramClient, AgainstTheServerSession) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("thaw_sasl_client_" + std::to_string(::getpid()))).string();
  ASSERT_TRUE(server::SaslUsers::AddUser(path, "thaw-upstream", "hunter2").ok());
  auto users = server::SaslUsers::Load(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(users.ok()) << users.status().message();
  for (const char* mechanism : {"SCRAM-SHA-256", "SCRAM-SHA-512"}) {
    for (const bool right : {true, false}) {
      server::SaslSession session(*users);
      ASSERT_TRUE(session.Start(mechanism));
      scram::Client c{mechanism, "thaw-upstream", right ? "hunter2" : "hunter3", "clientnonce", {}, {}};
      bool done = false;
      auto server_first = session.Step(c.First(), &done);
      ASSERT_TRUE(server_first.ok()) << server_first.status().message();
      auto client_final = c.Final(*server_first);
      ASSERT_TRUE(client_final.ok()) << client_final.status().message();
      auto server_final = session.Step(*client_final, &done);
      if (!right) {
        EXPECT_FALSE(server_final.ok());
        continue;
      }
      ASSERT_TRUE(server_final.ok()) << server_final.status().message();
      EXPECT_TRUE(done);
      EXPECT_EQ(session.principal(), "User:thaw-upstream");
      EXPECT_TRUE(c.Verify(*server_final).ok());
    }
  }
}

}  // namespace
}  // namespace thaw::kafka
