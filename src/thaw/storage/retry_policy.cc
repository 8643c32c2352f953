#include "thaw/storage/retry_policy.h"

#include <algorithm>
#include <string_view>

namespace thaw::storage {

bool IsTransient(const RequestError& e) {
  switch (e.error_type) {
    case aws_error::kAccessDenied:
    case aws_error::kResourceNotFound:
    case aws_error::kInvalidSignature:
    case aws_error::kSignatureDoesNotMatch:
    case aws_error::kInvalidAccessKeyId:
      return false;
    case aws_error::kInternalFailure:
    case aws_error::kServiceUnavailable:
    case aws_error::kThrottling:
    case aws_error::kSlowDown:
    case aws_error::kRequestTimeout:
    case aws_error::kNetworkConnection:
    case aws_error::kRequestTimeTooSkewed:  // the SDK corrects its clock skew and re-signs
      return true;
    default:
      break;
  }
  const std::string& n = e.exception_name;
  if (n == "SlowDown" || n == "Throttling" || n == "ThrottlingException" || n == "TooManyRequests" ||
      n == "TooManyRequestsException" || n == "RequestTimeout" || n == "InternalError" || n == "ServiceUnavailable" ||
      n == "RequestLimitExceeded" || n == "RequestThrottled") {
    return true;
  }
  // A 429 from an S3-compatible store arrives as an unknown error the SDK does not retry; its
  // name is only in the message ("Unable to parse ExceptionName: TooManyRequests ...").
  for (std::string_view marker : {"TooManyRequests", "SlowDown", "Throttl"}) {
    if (e.message.find(marker) != std::string::npos) return true;
  }
  if (n == "AccessDenied" || n == "NoSuchKey" || n == "NoSuchBucket" || n == "InvalidAccessKeyId" ||
      n == "SignatureDoesNotMatch" || n == "ExpiredToken") {
    return false;
  }
  return e.sdk_retryable;
}

int64_t RetryPolicy::CeilingMs(int64_t retries_done) const {
  int64_t ceiling = base_delay_ms;
  for (int64_t i = 0; i < retries_done && ceiling < max_delay_ms; ++i) ceiling *= 2;
  return std::min(ceiling, max_delay_ms);
}

int64_t RetryPolicy::DelayMs(int64_t retries_done, uint64_t random) const {
  const int64_t ceiling = CeilingMs(retries_done);
  return ceiling <= 0 ? 0 : static_cast<int64_t>(random % static_cast<uint64_t>(ceiling + 1));
}

}  // namespace thaw::storage
