// When and how long to retry a failed object-store request: exponential
// backoff with full jitter, bounded. Arrow-free; object_store.cc plugs it
// into arrow::fs::S3RetryStrategy.
#pragma once

#include <cstdint>
#include <string>

namespace thaw::storage {

// Aws::Client::CoreErrors values that arrive as S3RetryStrategy's error_type
// (the AWS SDK's public enum, aws/core/client/CoreErrors.h).
namespace aws_error {
inline constexpr int kInternalFailure = 1;
inline constexpr int kServiceUnavailable = 12;
inline constexpr int kThrottling = 13;
inline constexpr int kAccessDenied = 15;
inline constexpr int kResourceNotFound = 16;
inline constexpr int kSlowDown = 19;
inline constexpr int kRequestTimeTooSkewed = 20;
inline constexpr int kInvalidSignature = 21;
inline constexpr int kSignatureDoesNotMatch = 22;
inline constexpr int kInvalidAccessKeyId = 23;
inline constexpr int kRequestTimeout = 24;
inline constexpr int kNetworkConnection = 99;
}  // namespace aws_error

// A failed request as the SDK describes it.
struct RequestError {
  int error_type = -1;         // aws_error value
  std::string exception_name;  // "SlowDown", "InternalError", "AccessDenied", ...
  std::string message;
  bool sdk_retryable = false;  // the SDK's own verdict (5xx, 429, throttling, connection errors)
};

// Transient: 5xx, 429/SlowDown/throttling, connection resets and timeouts.
// Never: access denied, not found, bad signatures or keys (retrying cannot help).
bool IsTransient(const RequestError& e);

struct RetryPolicy {
  int max_attempts = 6;         // tries in all, the first included
  int64_t base_delay_ms = 100;  // the first retry waits up to this
  int64_t max_delay_ms = 5000;  // no wait is longer

  // `retries_done`: retries already made for this request (0 after the first failure).
  bool ShouldRetry(const RequestError& e, int64_t retries_done) const {
    return retries_done + 1 < max_attempts && IsTransient(e);
  }
  // Full jitter: uniform in [0, min(max_delay, base * 2^retries_done)], from `random` (any 64-bit value).
  int64_t DelayMs(int64_t retries_done, uint64_t random) const;
  // The ceiling DelayMs draws under.
  int64_t CeilingMs(int64_t retries_done) const;
};

}  // namespace thaw::storage
