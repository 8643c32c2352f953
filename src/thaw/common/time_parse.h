// Parses user-supplied times: epoch milliseconds or ISO-8601
// (2024-05-01, 2024-05-01T12:00:00[.fff][Z|+hh:mm]).
#pragma once

#include <cstdint>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw {

Result<int64_t> ParseTimeMs(std::string_view text, std::string_view flag);

}  // namespace thaw
