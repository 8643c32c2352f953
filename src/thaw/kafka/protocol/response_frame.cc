#include "thaw/kafka/protocol/response_frame.h"

#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/protocol/wire.h"

namespace thaw::kafka {

std::string EncodeResponseHead(int32_t correlation_id, int16_t header_version, size_t body_size) {
  msg::ResponseHeader header;
  header.correlation_id = correlation_id;
  WireWriter w;
  w.WriteInt32(0);  // the size, set below
  header.Write(w, header_version);
  std::string out = std::move(w).Take();
  const uint32_t size = static_cast<uint32_t>(out.size() - 4 + body_size);
  out[0] = static_cast<char>(size >> 24);
  out[1] = static_cast<char>(size >> 16);
  out[2] = static_cast<char>(size >> 8);
  out[3] = static_cast<char>(size);
  return out;
}

}  // namespace thaw::kafka
