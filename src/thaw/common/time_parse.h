// Parses user-supplied times (--from-time, --to-time, --as-of, ...) into epoch
// milliseconds, UTC. Accepted forms (docs/cli.md#times):
//   2024-05-01                         midnight UTC
//   2024-05-01T12:00[:00[.fff]][Z|+hh:mm|+hhmm|-hh:mm]   (a space may replace T; no offset = UTC)
//   1714564800000ms                    epoch milliseconds, explicit
//   1714564800s                        epoch seconds, explicit
//   1714564800000                      a bare number is epoch milliseconds, except
//                                      10 or 11 digits (epoch seconds from 2001 to 5138,
//                                      which as milliseconds would be 1970): refused, with a hint
// Calendar validity (2026-02-31), clock fields (25:00, +99:99) and the range
// 0000-01-01 .. 9999-12-31T23:59:59.999Z are checked; the result times 1000
// (microseconds) always fits in 64 bits.
#pragma once

#include <cstdint>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw {

// The range ParseTimeMs accepts: years 0000 through 9999, UTC.
inline constexpr int64_t kMinTimeMs = -62'167'219'200'000;  // 0000-01-01T00:00:00Z
inline constexpr int64_t kMaxTimeMs = 253'402'300'799'999;  // 9999-12-31T23:59:59.999Z

// `flag` names the option in error messages ("--to-time '...' ...").
Result<int64_t> ParseTimeMs(std::string_view text, std::string_view flag);

}  // namespace thaw
