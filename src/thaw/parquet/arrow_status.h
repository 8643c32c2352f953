// The one boundary between Arrow/Parquet error handling and Thaw's Status:
// arrow::Status is converted, and parquet::ParquetException (which the
// Parquet reader throws on corrupt pages and footers) is caught, here only.
#pragma once

#include <arrow/status.h>
#include <parquet/exception.h>

#include <exception>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw::pq {

inline Status FromArrow(const arrow::Status& st, std::string_view context) {
  if (st.ok()) return Status::OK();
  StatusCode code = StatusCode::kCorrupt;
  if (st.IsIOError())
    code = StatusCode::kIOError;
  else if (st.IsNotImplemented())
    code = StatusCode::kUnsupported;
  else if (st.IsOutOfMemory())
    code = StatusCode::kIOError;
  return Status(code, fmt::format("{}: {}", context, st.message()));
}

// Runs `fn` (returning thaw::Status or Result) and converts any exception
// the Parquet library throws into a kCorrupt status naming `context`.
template <typename Fn>
auto CatchParquet(std::string_view context, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const ::parquet::ParquetException& e) {
    return Status::Corrupt("{}: {}", context, e.what());
  } catch (const std::exception& e) {
    return Status::Corrupt("{}: {}", context, e.what());
  }
}

}  // namespace thaw::pq

// ASSIGN_OR_RAISE for arrow::Result, adding context to the error.
#define ARROW_ASSIGN_OR_RAISE_CTX(lhs, rexpr, context)                             \
  auto THAW_CONCAT(_ar_, __LINE__) = (rexpr);                                      \
  if (!THAW_CONCAT(_ar_, __LINE__).ok())                                           \
    return ::thaw::pq::FromArrow(THAW_CONCAT(_ar_, __LINE__).status(), (context)); \
  lhs = std::move(THAW_CONCAT(_ar_, __LINE__)).ValueUnsafe()
