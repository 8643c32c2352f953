// libFuzzer target: what a broker answers to Thaw's SCRAM client
// (kafka/scram.h Client: server-first, then server-final), split at 0xff.
// Nothing may crash, and no made-up server-final may verify.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "thaw/kafka/scram.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t cut = rest.find('\xff');
  const std::string_view server_first = rest.substr(0, cut);
  const std::string_view server_final = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
  thaw::kafka::scram::Client c{data[0] % 2 ? "SCRAM-SHA-512" : "SCRAM-SHA-256", "thaw", "pw", "n0nce", {}, {}};
  c.First();
  auto final_message = c.Final(server_first);
  if (!final_message.ok()) return 0;
  // The signature is an HMAC under a key derived from the password: a
  // fuzzer-made server-final does not carry it.
  if (c.Verify(server_final).ok()) std::abort();
  return 0;
}
