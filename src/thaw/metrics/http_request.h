// The request line of the metrics listener's HTTP/1.1 requests
// ("GET /metrics HTTP/1.1"), parsed from the bytes up to the blank line
// (endpoint.cc bounds them to 8 KiB first). Pure, for the fuzz target.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace thaw::metrics {

struct RequestLine {
  std::string method, target;
};

// nullopt unless the first line is METHOD SP TARGET SP VERSION with a
// target that starts with '/'.
inline std::optional<RequestLine> ParseRequestLine(std::string_view head) {
  const std::string_view line = head.substr(0, head.find("\r\n"));
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return std::nullopt;
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return std::nullopt;
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.front() != '/') return std::nullopt;
  if (line.substr(sp2 + 1).rfind("HTTP/", 0) != 0) return std::nullopt;
  return RequestLine{std::string(line.substr(0, sp1)), std::string(target)};
}

}  // namespace thaw::metrics
