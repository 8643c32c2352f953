// Java-style properties text (what kcat -F, the Kafka CLI tools'
// --command-config and the Java clients read): `key=value`, `key: value` or
// `key value`; `#` and `!` start comment lines; a trailing backslash
// continues a line; \t \n \r \f \uXXXX and \<char> escapes. Keys in file
// order. `sasl.jaas.config` with PlainLoginModule or ScramLoginModule (the
// Java clients' way to give SASL credentials) becomes librdkafka's
// sasl.username and sasl.password. Errors name `source` and the line.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

namespace thaw {

Result<std::vector<std::pair<std::string, std::string>>> ParseProperties(std::string_view text,
                                                                        std::string_view source);

}  // namespace thaw
