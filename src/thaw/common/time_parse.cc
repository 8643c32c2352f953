#include "thaw/common/time_parse.h"

#include <charconv>
#include <chrono>
#include <string>

#include <date/date.h>

namespace thaw {

namespace {

constexpr std::string_view kForms =
    "use ISO-8601 such as 2024-05-01 or 2024-05-01T12:00:00Z (or +02:00), or epoch milliseconds such as "
    "1714564800000ms (epoch seconds: 1714564800s)";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly n digits at *pos.
bool Fixed(std::string_view s, size_t* pos, size_t n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

Status OutOfRange(std::string_view flag, std::string_view text) {
  return Status::Invalid("{} '{}' is out of range: times must lie between 0000-01-01 and 9999-12-31T23:59:59.999Z "
                         "(epoch milliseconds {} .. {}); leave the option out for no bound",
                         flag, text, kMinTimeMs, kMaxTimeMs);
}

// "123", "-5", "1714564800s", "1714564800000ms".
Result<int64_t> ParseEpoch(std::string_view text, std::string_view flag) {
  std::string_view num = text;
  enum { kBare, kMillis, kSeconds } unit = kBare;
  if (num.size() > 2 && num.substr(num.size() - 2) == "ms") {
    unit = kMillis;
    num.remove_suffix(2);
  } else if (num.size() > 1 && num.back() == 's') {
    unit = kSeconds;
    num.remove_suffix(1);
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec == std::errc::result_out_of_range) return OutOfRange(flag, text);
  if (ec != std::errc() || p != num.data() + num.size()) {
    return Status::Invalid("{} '{}' is not a time: {}", flag, text, kForms);
  }
  const size_t digits = num.size() - (num[0] == '-');
  if (unit == kBare && (digits == 10 || digits == 11)) {
    return Status::Invalid("{} '{}' looks like epoch seconds ({} digits), which read as milliseconds would be in "
                           "January 1970: write {}s for seconds, or {}000 / {}000ms for milliseconds",
                           flag, text, digits, num, num, num);
  }
  if (unit == kSeconds) {
    int64_t ms = 0;
    if (__builtin_mul_overflow(v, int64_t{1000}, &ms)) return OutOfRange(flag, text);
    v = ms;
  }
  if (v < kMinTimeMs || v > kMaxTimeMs) return OutOfRange(flag, text);
  return v;
}

}  // namespace

Result<int64_t> ParseTimeMs(std::string_view text, std::string_view flag) {
  using namespace std::chrono;
  if (text.empty()) return Status::Invalid("{} is empty: {}", flag, kForms);
  const bool numeric = IsDigit(text[0]) || (text[0] == '-' && text.size() > 1 && IsDigit(text[1]));
  // A date starts with four digits and a dash; anything else numeric-looking is an epoch number.
  const bool iso = text.size() >= 5 && IsDigit(text[0]) && IsDigit(text[1]) && IsDigit(text[2]) &&
                   IsDigit(text[3]) && text[4] == '-';
  if (numeric && !iso) return ParseEpoch(text, flag);
  if (!iso) {
    return Status::Invalid("{} '{}' is not a time: use epoch milliseconds or ISO-8601 such as 2024-05-01T12:00:00Z",
                           flag, text);
  }

  auto bad = [&](std::string_view why) {
    return Status::Invalid("{} '{}' is not a time ({}): {}", flag, text, why, kForms);
  };
  size_t pos = 0;
  int y = 0, mo = 0, d = 0;
  if (!Fixed(text, &pos, 4, &y) || pos >= text.size() || text[pos++] != '-' || !Fixed(text, &pos, 2, &mo) ||
      pos >= text.size() || text[pos++] != '-' || !Fixed(text, &pos, 2, &d)) {
    return bad("expected a date YYYY-MM-DD");
  }
  const date::year_month_day ymd{date::year{y}, date::month{static_cast<unsigned>(mo)},
                                 date::day{static_cast<unsigned>(d)}};
  if (!ymd.month().ok()) return bad(fmt::format("there is no month {:02}", mo));
  if (!ymd.ok()) {
    const auto last = date::year_month_day_last{ymd.year(), date::month_day_last{ymd.month()}}.day();
    return bad(fmt::format("{:04}-{:02} has days 01 to {:02}", y, mo, static_cast<unsigned>(last)));
  }
  int hh = 0, mm = 0, ss = 0;
  int64_t frac_ms = 0;
  int offset_min = 0;
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == 't' || text[pos] == ' ')) {
    ++pos;
    if (!Fixed(text, &pos, 2, &hh) || pos >= text.size() || text[pos++] != ':' || !Fixed(text, &pos, 2, &mm)) {
      return bad("expected a time of day hh:mm[:ss[.fff]] after the date");
    }
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!Fixed(text, &pos, 2, &ss)) return bad("expected two digits of seconds");
      if (pos < text.size() && text[pos] == '.') {
        ++pos;
        size_t n = 0;
        int64_t scale = 100;
        while (pos < text.size() && IsDigit(text[pos])) {
          if (n < 3) frac_ms += (text[pos] - '0') * scale;  // digits past milliseconds are truncated
          scale /= 10;
          ++n;
          ++pos;
        }
        if (n == 0 || n > 9) return bad("a fraction of a second has 1 to 9 digits");
      }
    }
    if (hh > 23) return bad(fmt::format("hour {:02} is past 23", hh));
    if (mm > 59) return bad(fmt::format("minute {:02} is past 59", mm));
    if (ss > 59) return bad(fmt::format("second {:02} is past 59 (leap seconds are not counted)", ss));
    if (pos < text.size()) {
      const char c = text[pos];
      if (c == 'Z' || c == 'z') {
        ++pos;
      } else if (c == '+' || c == '-') {
        ++pos;
        int oh = 0, om = 0;
        if (!Fixed(text, &pos, 2, &oh)) return bad("an offset is +hh:mm, +hhmm or +hh");
        if (pos < text.size() && text[pos] == ':') ++pos;
        if (pos < text.size() && !Fixed(text, &pos, 2, &om)) return bad("an offset is +hh:mm, +hhmm or +hh");
        if (om > 59 || oh * 60 + om > 18 * 60) {
          return bad(fmt::format("offset {}{:02}:{:02} is not between -18:00 and +18:00 with minutes below 60", c,
                                 oh, om));
        }
        offset_min = (c == '-' ? -1 : 1) * (oh * 60 + om);
      }
    }
  }
  if (pos != text.size()) return bad(fmt::format("unexpected '{}'", text.substr(pos)));
  // Years 0000..9999 and offsets within a day: no overflow is possible here.
  const date::sys_time<milliseconds> t = date::sys_days{ymd} + hours{hh} + minutes{mm} + seconds{ss} +
                                   milliseconds{frac_ms} - minutes{offset_min};
  const int64_t ms = t.time_since_epoch().count();
  if (ms < kMinTimeMs || ms > kMaxTimeMs) return OutOfRange(flag, text);
  return ms;
}

}  // namespace thaw
