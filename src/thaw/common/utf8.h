// UTF-8 validation (RFC 3629): no overlong forms, no surrogates, nothing past
// U+10FFFF. Used where bytes are shown as text when they are text (inspect's
// JSON records, as kcat -J shows them) and as base64 otherwise.
#pragma once

#include <string_view>

namespace thaw {

[[nodiscard]] bool IsValidUtf8(std::string_view bytes);

}  // namespace thaw
