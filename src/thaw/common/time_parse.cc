#include "thaw/common/time_parse.h"

#include <charconv>
#include <regex>
#include <string>

#include "thaw/common/civil_time.h"

namespace thaw {


Result<int64_t> ParseTimeMs(std::string_view text, std::string_view flag) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && p == text.data() + text.size()) return v;
  static const std::regex kIso(
      R"(^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$)");
  std::cmatch m;
  std::string s(text);
  if (!std::regex_match(s.c_str(), m, kIso)) {
    return Status::Invalid("{} '{}' is not a time: use epoch milliseconds or ISO-8601 such as 2024-05-01T12:00:00Z",
                           flag, text);
  }
  auto num = [&](int i) { return m[i].matched ? std::stoll(m[i].str()) : 0LL; };
  int64_t mon = num(2), day = num(3), hh = num(4), mm = num(5), ss = num(6);
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60) {
    return Status::Invalid("{} '{}' is not a valid date/time", flag, text);
  }
  int64_t ms = (DaysFromCivil(num(1), static_cast<unsigned>(mon), static_cast<unsigned>(day)) * 86400 +
                hh * 3600 + mm * 60 + ss) * 1000;
  if (m[7].matched) {
    std::string frac = m[7].str();
    frac.resize(3, '0');
    ms += std::stoll(frac.substr(0, 3));
  }
  if (m[8].matched && m[8].str() != "Z") {
    std::string tz = m[8].str();
    int sign = tz[0] == '-' ? -1 : 1;
    std::string digits;
    for (char c : tz) if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    int64_t off = std::stoll(digits.substr(0, 2)) * 60 + std::stoll(digits.substr(2, 2));
    ms -= sign * off * 60'000;
  }
  return ms;
}

}  // namespace thaw
