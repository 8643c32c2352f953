// The start of a Kafka response frame: its size prefix and response header,
// for a body of a known size sent after it (a gather write: the body is
// never copied behind the header). The server (kafka/server/connection.cc),
// the tiered proxy and Thaw's client codec (kafka/client/connection.h) use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace thaw::kafka {

// Size prefix + ResponseHeader (at `header_version`) of a frame whose body
// is `body_size` bytes.
std::string EncodeResponseHead(int32_t correlation_id, int16_t header_version, size_t body_size);

}  // namespace thaw::kafka
