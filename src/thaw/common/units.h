// Durations and byte sizes as users write them on the command line and in
// --config files (serve's --refresh 5s and --cache-size 256MiB; archive's
// --commit-interval and --target-file-size):
//   durations  500ms, 5s, 10m (or 10min), 2h, 7d, 1w; decimals too (1.5s).
//              A bare number is refused with a hint (is 3000 seconds or
//              milliseconds?), except 0 and, for options documented as a
//              Kafka *.ms setting (BareNumber::kMilliseconds), milliseconds
//   sizes      4096, 64KiB, 256MiB, 1GiB (binary), 64KB, 1GB (powers of
//              ten); a lone k/m/g is refused (m is minutes in a duration).
//              A bare number is `bare_unit` bytes
// `flag` names the option in errors.
#pragma once

#include <cstdint>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw {

enum class BareNumber { kRefused, kMilliseconds };
Result<int64_t> ParseDurationMs(std::string_view text, std::string_view flag,
                                BareNumber bare = BareNumber::kRefused);
Result<int64_t> ParseByteSize(std::string_view text, std::string_view flag, int64_t bare_unit = 1);

}  // namespace thaw
