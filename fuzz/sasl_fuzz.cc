// libFuzzer target: the SASL tokens a client sends before it is
// authenticated (kafka/server/sasl.h). The first byte picks the mechanism,
// the rest is split at 0xff into the SaslAuthenticate tokens of one
// exchange. Nothing may crash, and nothing but the right password may
// authenticate.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

#include "thaw/kafka/server/sasl.h"

namespace {

std::shared_ptr<thaw::kafka::server::SaslUsers> Users() {
  static std::shared_ptr<thaw::kafka::server::SaslUsers> users = [] {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("thaw_sasl_fuzz_" + std::to_string(::getpid()))).string();
    if (!thaw::kafka::server::SaslUsers::AddUser(path, "alice", "correct horse").ok()) std::abort();
    auto loaded = thaw::kafka::server::SaslUsers::Load(path);
    std::filesystem::remove(path);
    if (!loaded.ok()) std::abort();
    return *loaded;
  }();
  return users;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* kMechanisms[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};
  thaw::kafka::server::SaslSession session(Users());
  if (!session.Start(kMechanisms[data[0] % 3])) std::abort();
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  while (!rest.empty() && !session.authenticated()) {
    const size_t cut = rest.find('\xff');
    const std::string_view token = rest.substr(0, cut);
    bool done = false;
    auto answer = session.Step(token, &done);
    if (!answer.ok()) break;
    // PLAIN with the right password is the only way in without a valid proof.
    if (done && data[0] % 3 == 0 && token.find("correct horse") == std::string_view::npos) std::abort();
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
  }
  return 0;
}
