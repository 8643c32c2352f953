// SASL exchanges (kafka/server/sasl.h): PLAIN and SCRAM against salted
// credentials, with a SCRAM client computed here from RFC 5802's formulas.
#include "thaw/kafka/server/sasl.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace thaw::kafka::server {
namespace {

std::string B64(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  out.resize(static_cast<size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                                 reinterpret_cast<const unsigned char*>(raw.data()),
                                                 static_cast<int>(raw.size()))));
  return out;
}

std::string Unb64(const std::string& b64) {
  std::string out(b64.size() / 4 * 3 + 1, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
  for (size_t i = b64.size(); i > 0 && b64[i - 1] == '='; --i) --n;
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Hmac256(const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

struct UsersFile {
  std::string path = (std::filesystem::temp_directory_path() / ("thaw_sasl_" + std::to_string(::getpid()))).string();
  ~UsersFile() { std::filesystem::remove(path); }
};

std::string Attr(const std::string& msg, char key) {
  const std::string prefix = std::string(1, key) + "=";
  size_t at = msg.find(prefix);
  while (at != std::string::npos && at != 0 && msg[at - 1] != ',') at = msg.find(prefix, at + 1);
  const size_t end = msg.find(',', at);
  return msg.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
}

TEST(Sasl, ScramSha256ExchangeAndItsFailures) {
  UsersFile f;
  ASSERT_TRUE(SaslUsers::AddUser(f.path, "alice", "pencil").ok());
  auto users = SaslUsers::Load(f.path);
  ASSERT_TRUE(users.ok()) << users.status().message();
  for (const bool right : {true, false}) {
    SaslSession s(*users);
    ASSERT_TRUE(s.Start("SCRAM-SHA-256"));
    bool done = false;
    const std::string first_bare = "n=alice,r=clientnonce";
    auto server_first = s.Step("n,," + first_bare, &done);
    ASSERT_TRUE(server_first.ok()) << server_first.status().message();
    EXPECT_FALSE(done);
    const std::string salt = Unb64(Attr(*server_first, 's'));
    const int iterations = std::stoi(Attr(*server_first, 'i'));
    ASSERT_EQ(Attr(*server_first, 'r').rfind("clientnonce", 0), 0u);
    std::string salted(32, '\0');
    const std::string pw = right ? "pencil" : "pen";
    PKCS5_PBKDF2_HMAC(pw.data(), static_cast<int>(pw.size()), reinterpret_cast<const unsigned char*>(salt.data()),
                      static_cast<int>(salt.size()), iterations, EVP_sha256(), 32,
                      reinterpret_cast<unsigned char*>(salted.data()));
    const std::string client_key = Hmac256(salted, "Client Key");
    unsigned char stored[32];
    unsigned int n = 0;
    EVP_Digest(client_key.data(), client_key.size(), stored, &n, EVP_sha256(), nullptr);
    const std::string without_proof = "c=biws,r=" + Attr(*server_first, 'r');
    const std::string auth = first_bare + "," + *server_first + "," + without_proof;
    const std::string sig = Hmac256(std::string(reinterpret_cast<char*>(stored), n), auth);
    std::string proof(32, '\0');
    for (size_t i = 0; i < 32; ++i) proof[i] = static_cast<char>(client_key[i] ^ sig[i]);
    auto final = s.Step(without_proof + ",p=" + B64(proof), &done);
    if (right) {
      ASSERT_TRUE(final.ok()) << final.status().message();
      EXPECT_TRUE(done);
      EXPECT_EQ(s.principal(), "User:alice");
      EXPECT_EQ(*final, "v=" + B64(Hmac256(Hmac256(salted, "Server Key"), auth)));  // the server proves itself
    } else {
      EXPECT_FALSE(final.ok());
      EXPECT_FALSE(s.authenticated());
    }
  }
}

TEST(Sasl, PlainChecksTheSaltedCredentialAndUnknownUsersFail) {
  UsersFile f;
  ASSERT_TRUE(SaslUsers::AddUser(f.path, "bob", "hunter2").ok());
  auto users = SaslUsers::Load(f.path);
  ASSERT_TRUE(users.ok());
  std::ifstream in(f.path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("hunter2"), std::string::npos);  // no password at rest
  bool done = false;
  SaslSession ok(*users);
  ASSERT_TRUE(ok.Start("PLAIN"));
  ASSERT_TRUE(ok.Step(std::string("\0bob\0hunter2", 12), &done).ok());
  EXPECT_TRUE(done && ok.authenticated());
  for (const std::string token : {std::string("\0bob\0hunter3", 12), std::string("\0eve\0hunter2", 12),
                                  std::string("bob"), std::string("alice\0bob\0hunter2", 17)}) {
    SaslSession s(*users);
    ASSERT_TRUE(s.Start("PLAIN"));
    EXPECT_FALSE(s.Step(token, &done).ok());
    EXPECT_FALSE(s.authenticated());
  }
  SaslSession s(*users);
  EXPECT_FALSE(s.Start("GSSAPI"));
  EXPECT_FALSE(s.Step("x", &done).ok());  // no mechanism chosen
}

}  // namespace
}  // namespace thaw::kafka::server
