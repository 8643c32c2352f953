// libFuzzer target: the request line of the metrics listener
// (metrics/http_request.h), from bytes any local process may send.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "thaw/metrics/http_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view head(reinterpret_cast<const char*>(data), size);
  auto line = thaw::metrics::ParseRequestLine(head);
  if (line && (line->method.empty() || line->target.empty() || line->target[0] != '/')) std::abort();
  return 0;
}
