#include "thaw/storage/retry_policy.h"

#include <gtest/gtest.h>

#include <random>

namespace thaw::storage {
namespace {

RequestError Err(int type, std::string name = "", bool sdk = false) { return {type, std::move(name), "", sdk}; }

TEST(RetryPolicy, TransientErrorsAreRetried) {
  for (int t : {aws_error::kInternalFailure, aws_error::kServiceUnavailable, aws_error::kThrottling,
                aws_error::kSlowDown, aws_error::kRequestTimeout, aws_error::kNetworkConnection}) {
    EXPECT_TRUE(IsTransient(Err(t))) << t;
  }
  // S3's own error names, whatever type the SDK gives them (UNKNOWN = 100).
  for (const char* n : {"SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "Throttling"}) {
    EXPECT_TRUE(IsTransient(Err(100, n))) << n;
  }
  // A 429 from an S3-compatible store: UNKNOWN, not retryable for the SDK, the name only in the message.
  EXPECT_TRUE(
      IsTransient({100, "", "Unable to parse ExceptionName: TooManyRequests Message: Too many requests", false}));
  EXPECT_TRUE(IsTransient(Err(100, "TooManyRequests")));
  // An unrecognised error the SDK itself calls retryable (a 5xx without a body, say).
  EXPECT_TRUE(IsTransient(Err(100, "", /*sdk=*/true)));
}

TEST(RetryPolicy, PermanentErrorsAreNot) {
  for (int t : {aws_error::kAccessDenied, aws_error::kResourceNotFound, aws_error::kInvalidAccessKeyId,
                aws_error::kSignatureDoesNotMatch, aws_error::kInvalidSignature}) {
    EXPECT_FALSE(IsTransient(Err(t, "", /*sdk=*/true))) << t;
  }
  for (const char* n : {"AccessDenied", "NoSuchKey", "NoSuchBucket", "InvalidAccessKeyId", "ExpiredToken"}) {
    EXPECT_FALSE(IsTransient(Err(100, n, /*sdk=*/true))) << n;
  }
  EXPECT_FALSE(IsTransient(Err(100)));
}

TEST(RetryPolicy, BoundedNumberOfTries) {
  RetryPolicy p;  // 6 tries: the first and 5 retries
  auto slow = Err(aws_error::kSlowDown);
  int retries = 0;
  while (p.ShouldRetry(slow, retries)) ++retries;
  EXPECT_EQ(retries, 5);
  EXPECT_FALSE(p.ShouldRetry(Err(aws_error::kAccessDenied), 0));
  RetryPolicy one{1, 100, 5000};
  EXPECT_FALSE(one.ShouldRetry(slow, 0));
}

TEST(RetryPolicy, ExponentialCeilingCappedAndFullJitter) {
  RetryPolicy p;  // base 100 ms, cap 5 s
  EXPECT_EQ(p.CeilingMs(0), 100);
  EXPECT_EQ(p.CeilingMs(1), 200);
  EXPECT_EQ(p.CeilingMs(4), 1600);
  EXPECT_EQ(p.CeilingMs(6), 5000);
  EXPECT_EQ(p.CeilingMs(1000), 5000);  // no overflow
  std::mt19937_64 rng(42);
  for (int n = 0; n < 8; ++n) {
    int64_t lo = INT64_MAX, hi = 0, total = 0;
    const int draws = 4000;
    for (int i = 0; i < draws; ++i) {
      int64_t d = p.DelayMs(n, rng());
      lo = std::min(lo, d);
      hi = std::max(hi, d);
      total += d;
    }
    EXPECT_GE(lo, 0);
    EXPECT_LE(hi, p.CeilingMs(n));
    EXPECT_LE(hi, p.max_delay_ms);
    // Full jitter: spread over the whole range, mean near half the ceiling.
    EXPECT_LT(lo, p.CeilingMs(n) / 10 + 1) << n;
    EXPECT_GT(hi, p.CeilingMs(n) * 9 / 10) << n;
    EXPECT_NEAR(static_cast<double>(total) / draws, p.CeilingMs(n) / 2.0, p.CeilingMs(n) * 0.05) << n;
  }
  EXPECT_EQ(p.DelayMs(3, 0), 0);
  EXPECT_EQ(p.DelayMs(3, 800), 800);
}

}  // namespace
}  // namespace thaw::storage
