// libFuzzer target: a Kafka request frame (without its 4-byte size) from an
// untrusted client. The request header and the body of any generated API and
// version must decode or fail with a Status, never crash or allocate beyond
// the frame; a decoded request re-encodes to bytes that decode and re-encode
// to the same bytes.
// Seeds: fuzz/corpus/kafka_request (frames recorded from kcat and the Java
// client by tests/unit/kafka/protocol/capture_requests.py).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "thaw/kafka/protocol/messages.h"

namespace {

using thaw::kafka::WireReader;
using thaw::kafka::WireWriter;
namespace msg = thaw::kafka::msg;

template <typename M>
void DecodeBody(WireReader& r, int16_t version) {
  M m;
  if (!m.Read(r, version).ok()) return;
  WireWriter w;
  m.Write(w, version);
  if (!w.status().ok()) return;  // e.g. a string too long for a classic version cannot happen after a read
  // Bytes, not values, are compared: a float64 NaN never equals itself.
  M again;
  WireReader r2(w.data());
  if (!again.Read(r2, version).ok() || !r2.done()) std::abort();
  WireWriter w2;
  again.Write(w2, version);
  if (w2.data() != w.data()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view frame(reinterpret_cast<const char*>(data), size);
  WireReader peek(frame);
  int16_t key = 0, version = 0;
  if (!peek.ReadInt16(&key, "api key").ok() || !peek.ReadInt16(&version, "api version").ok()) return 0;
  WireReader r(frame);
  msg::RequestHeader header;
  if (!header.Read(r, msg::RequestHeaderVersion(key, version)).ok()) return 0;
  msg::VisitApi(key, [&]<typename Req, typename Resp>() {
    if (version < Req::kMinVersion || version > Req::kMaxVersion) return;
    // The same bytes as a request and, to cover the response decoders too, as a response.
    WireReader body = r;
    DecodeBody<Req>(body, version);
    WireReader as_response = r;
    DecodeBody<Resp>(as_response, version);
  });
  return 0;
}
