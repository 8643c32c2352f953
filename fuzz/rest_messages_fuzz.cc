// libFuzzer target: REST catalog and OAuth2 response bodies (untrusted: they
// come from the network) must parse or fail with a Status, never throw or crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "thaw/catalog/rest_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rest = thaw::catalog::rest;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)rest::ParseConfigResponse(body, "fuzz config");
  (void)rest::ParseListNamespaces(body, "fuzz namespaces");
  (void)rest::ParseListTables(body, {"ns"}, "fuzz tables");
  (void)rest::ParseLoadTable(body, "fuzz load");
  (void)rest::ParseTokenResponse(body, "fuzz token");
  (void)rest::ParseErrorResponse(body);
  (void)rest::ParseTokenError(body);
  return 0;
}
