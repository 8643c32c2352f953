// Reading JSON bodies from servers (the REST catalog's, the schema
// registry's) without exceptions: parse to a discarded value on bad input,
// look members up, quote a value shortly in an error message.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace thaw::json {

using Json = nlohmann::json;

// A discarded value (is_discarded()) when `body` is not JSON.
inline Json Parse(std::string_view body) { return Json::parse(body.begin(), body.end(), nullptr, false); }

// The member `key` of object `j`; null when absent or `j` is no object.
inline const Json* Member(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(std::string(key));
  return it == j.end() ? nullptr : &*it;
}

// A JSON text for error messages, cut short.
inline std::string Excerpt(const Json& j) {
  std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

}  // namespace thaw::json
