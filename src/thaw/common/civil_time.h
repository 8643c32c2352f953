// Calendar arithmetic on days since 1970-01-01 (proleptic Gregorian, UTC),
// shared by partition transforms, JSON rendering and time parsing; the
// calendar itself is Howard Hinnant's date library (date/date.h).
#pragma once

#include <cstdint>

#include <date/date.h>

namespace thaw {

// Floor division (rounds toward negative infinity), for pre-1970 instants.
constexpr int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The Gregorian calendar repeats every 400 years (146097 days); shifting by
// whole cycles keeps date's 16-bit year in range for any 64-bit day count.
inline constexpr int64_t kDaysPer400Years = 146097;

// Days since the epoch -> year, month (1-12), day (1-31).
constexpr void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  const int64_t cycles = FloorDiv(z, kDaysPer400Years);
  const date::year_month_day ymd{
      date::sys_days{date::days{static_cast<date::days::rep>(z - cycles * kDaysPer400Years)}}};
  *y = static_cast<int>(ymd.year()) + cycles * 400;
  *m = static_cast<unsigned>(ymd.month());
  *d = static_cast<unsigned>(ymd.day());
}

// Year, month (1-12), day (1-31) -> days since the epoch.
constexpr int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  const int64_t cycles = FloorDiv(y, 400);
  const date::year_month_day ymd{date::year{static_cast<int>(y - cycles * 400)}, date::month{m}, date::day{d}};
  return date::sys_days{ymd}.time_since_epoch().count() + cycles * kDaysPer400Years;
}

}  // namespace thaw
