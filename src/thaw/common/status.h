// Status and Result<T>: the one error-carrying type used across Thaw.
//
// Every fallible function returns [[nodiscard]] Status or Result<T>. Errors
// carry a code (used to map onto Kafka error codes and exit codes) and a
// message that says what failed, where, and what to do about it.
#pragma once

#include <fmt/format.h>

#include <cassert>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace thaw {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,     // bad user input (flags, expressions)
  kNotFound,            // table, snapshot, file, column missing
  kCorrupt,             // bytes that do not parse (Avro, Parquet, JSON, Puffin)
  kUnsupported,         // valid input using a feature Thaw does not implement
  kIOError,             // the OS or network failed
  kCommitConflict,      // optimistic commit lost a race: reload and re-apply
  kCommitStateUnknown,  // a commit's outcome is unknown (5xx, lost response): never delete its files
  kPermissionDenied,    // a catalog or object store refused the credentials (401/403)
  kAlreadyExists,       // a table or namespace to create is there already
  kAborted,   // work not proven durable (aborted transaction, unproven delivery): redo it from the last commit
  kInternal,  // a bug in Thaw
};

const char* StatusCodeName(StatusCode code);

// OK is a null pointer: making, copying and dropping an OK status costs
// nothing (hot loops return one per value), as Arrow's Status does.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code),
        message_(code == StatusCode::kOk && message.empty() ? nullptr
                                                             : std::make_unique<std::string>(std::move(message))) {}
  Status(const Status& o) : code_(o.code_), message_(o.message_ ? std::make_unique<std::string>(*o.message_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) {
      code_ = o.code_;
      message_ = o.message_ ? std::make_unique<std::string>(*o.message_) : nullptr;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return {}; }
  template <typename... Args>
  static Status Invalid(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status NotFound(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status Corrupt(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kCorrupt, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status Unsupported(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kUnsupported, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status IOError(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kIOError, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status CommitConflict(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kCommitConflict, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status CommitStateUnknown(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kCommitStateUnknown, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status PermissionDenied(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kPermissionDenied, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status AlreadyExists(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kAlreadyExists, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status Aborted(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kAborted, fmt::format(f, std::forward<Args>(args)...)};
  }
  template <typename... Args>
  static Status Internal(fmt::format_string<Args...> f, Args&&... args) {
    return {StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }
  std::string ToString() const;

  // Prefixes the message with context ("reading manifest X: ...").
  Status WithContext(std::string_view context) const {
    if (ok()) return *this;
    return {code_, fmt::format("{}: {}", context, message())};
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::unique_ptr<std::string> message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(implicit)
    assert(!std::get<Status>(v_).ok() && "Result constructed from OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& operator*() & { return std::get<T>(v_); }
  const T& operator*() const& { return std::get<T>(v_); }
  T&& operator*() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T ValueOrDie() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }

 private:
  std::variant<T, Status> v_;
};

namespace internal {
// What RETURN_NOT_OK tests and returns. A Status as it is; a Result (Thaw's,
// or Arrow's) its status; any other status type unchanged -- arrow::Status,
// when Arrow's inline code, which uses RETURN_NOT_OK for itself, is compiled
// after this header -- so the macro works whatever the include order.
inline Status StatusOf(Status s) { return s; }
template <typename R>
requires requires(const R& r) { r.status(); }
auto StatusOf(const R& r) { return r.status(); }
template <typename S>
requires(!requires(const S& s) { s.status(); }) S StatusOf(S s) { return s; }
}  // namespace internal

}  // namespace thaw

#define THAW_CONCAT_INNER(a, b) a##b
#define THAW_CONCAT(a, b) THAW_CONCAT_INNER(a, b)

// Arrow's status.h defines RETURN_NOT_OK for its own use only when it is not
// yet defined; Thaw's definition wins whatever the include order, and passes
// an arrow::Status on unchanged (see internal::StatusOf).
#undef RETURN_NOT_OK
#define RETURN_NOT_OK(expr)                             \
  do {                                                  \
    auto _thaw_st = ::thaw::internal::StatusOf((expr)); \
    if (!_thaw_st.ok()) return _thaw_st;                \
  } while (0)

#define THAW_ASSIGN_OR_RAISE_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                              \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(*tmp)

#define ASSIGN_OR_RAISE(lhs, rexpr) THAW_ASSIGN_OR_RAISE_IMPL(THAW_CONCAT(_thaw_res_, __COUNTER__), lhs, rexpr)

// The same two for coroutines (asio::awaitable<Status> / <Result<T>>), which
// must co_return.
#define CO_RETURN_NOT_OK(expr)                          \
  do {                                                  \
    auto _thaw_st = ::thaw::internal::StatusOf((expr)); \
    if (!_thaw_st.ok()) co_return _thaw_st;             \
  } while (0)

#define THAW_CO_ASSIGN_OR_RAISE_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) co_return tmp.status();              \
  lhs = std::move(*tmp)

#define CO_ASSIGN_OR_RAISE(lhs, rexpr) \
  THAW_CO_ASSIGN_OR_RAISE_IMPL(THAW_CONCAT(_thaw_co_res_, __COUNTER__), lhs, rexpr)
