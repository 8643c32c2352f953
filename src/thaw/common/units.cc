#include "thaw/common/units.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string>

namespace thaw {

namespace {

// Splits "12.5MiB" into the number and its unit; the number is a
// non-negative integer or decimal.
bool SplitNumber(std::string_view text, double* value, std::string_view* unit) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + i, *value);
  if (ec != std::errc() || p != text.data() + i) return false;
  *unit = text.substr(i);
  while (!unit->empty() && unit->front() == ' ') unit->remove_prefix(1);
  return true;
}

}  // namespace

Result<int64_t> ParseDurationMs(std::string_view text, std::string_view flag, BareNumber bare) {
  double v = 0;
  std::string_view unit;
  if (!SplitNumber(text, &v, &unit)) {
    return Status::Invalid("{} '{}' is not a duration: write e.g. 500ms, 5s, 10m, 2h, 7d or 1w", flag, text);
  }
  double ms_per = 0;
  if (unit.empty() && (v == 0 || bare == BareNumber::kMilliseconds)) {
    ms_per = 1;
  } else if (unit.empty()) {
    return Status::Invalid("{} '{}' has no unit: write {}s for seconds, {}ms for milliseconds (units: ms, s, m, h, "
                           "d, w)",
                           flag, text, text, text);
  } else if (unit == "s") {
    ms_per = 1000;
  } else if (unit == "ms") {
    ms_per = 1;
  } else if (unit == "m" || unit == "min") {
    ms_per = 60e3;
  } else if (unit == "h") {
    ms_per = 3600e3;
  } else if (unit == "d") {
    ms_per = 86400e3;
  } else if (unit == "w") {
    ms_per = 7 * 86400e3;
  } else {
    return Status::Invalid("{} '{}': unknown unit '{}' (use ms, s, m, h, d or w)", flag, text, unit);
  }
  const double ms = v * ms_per;
  if (ms > 1e15) return Status::Invalid("{} '{}' is too long", flag, text);
  return static_cast<int64_t>(ms);
}

Result<int64_t> ParseByteSize(std::string_view text, std::string_view flag, int64_t bare_unit) {
  double v = 0;
  std::string_view unit;
  if (!SplitNumber(text, &v, &unit)) {
    return Status::Invalid("{} '{}' is not a size: write e.g. 64MiB, 1GiB or a number of bytes", flag, text);
  }
  double per = 0;
  if (unit.empty()) {
    per = static_cast<double>(bare_unit);
  } else if (unit.size() == 1 && std::string_view("kKmMgG").find(unit[0]) != std::string_view::npos) {
    // 'm' is minutes in a duration; in a size a lone letter would have to
    // guess between binary and decimal.
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    const std::string number(text.substr(0, text.size() - 1));
    return Status::Invalid("{} '{}': a size's unit is {}iB (binary) or {}B (decimal), not '{}': write {}{}iB or {}{}B",
                           flag, text, u, u, unit, number, u, number, u);
  } else if (unit == "B" || unit == "b") {
    per = 1;
  } else if (unit == "KiB") {
    per = 1024.0;
  } else if (unit == "MiB") {
    per = 1024.0 * 1024;
  } else if (unit == "GiB") {
    per = 1024.0 * 1024 * 1024;
  } else if (unit == "KB" || unit == "kB") {
    per = 1e3;
  } else if (unit == "MB") {
    per = 1e6;
  } else if (unit == "GB") {
    per = 1e9;
  } else {
    return Status::Invalid("{} '{}': unknown unit '{}' (use B, KiB, MiB, GiB, KB, MB or GB)", flag, text, unit);
  }
  const double bytes = v * per;
  if (bytes >= static_cast<double>(std::numeric_limits<int64_t>::max() / 2)) {
    return Status::Invalid("{} '{}' is too large", flag, text);
  }
  return static_cast<int64_t>(bytes);
}

}  // namespace thaw
