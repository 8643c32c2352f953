#include "thaw/kafka/protocol/errors.h"

#include <gtest/gtest.h>

#include <set>

namespace thaw::kafka {
namespace {

TEST(KafkaErrors, CodesAndNamesAreKafkas) {
  // Wire values from Kafka's Errors.java (4.1.2).
  EXPECT_EQ(ToInt(ErrorCode::kUnknownServerError), -1);
  EXPECT_EQ(ToInt(ErrorCode::kNone), 0);
  EXPECT_EQ(ToInt(ErrorCode::kOffsetOutOfRange), 1);
  EXPECT_EQ(ToInt(ErrorCode::kUnknownTopicOrPartition), 3);
  EXPECT_EQ(ToInt(ErrorCode::kNotLeaderOrFollower), 6);
  EXPECT_EQ(ToInt(ErrorCode::kRebalanceInProgress), 27);
  EXPECT_EQ(ToInt(ErrorCode::kUnsupportedVersion), 35);
  EXPECT_EQ(ToInt(ErrorCode::kInvalidRequest), 42);
  EXPECT_EQ(ToInt(ErrorCode::kKafkaStorageError), 56);
  EXPECT_EQ(ToInt(ErrorCode::kMemberIdRequired), 79);
  EXPECT_EQ(ToInt(ErrorCode::kUnknownTopicId), 100);
  EXPECT_EQ(ToInt(ErrorCode::kStaleMemberEpoch), 113);
  EXPECT_EQ(ErrorName(ErrorCode::kUnknownTopicOrPartition), "UNKNOWN_TOPIC_OR_PARTITION");
  EXPECT_EQ(ErrorName(ErrorCode::kFencedLeaderEpoch), "FENCED_LEADER_EPOCH");
  EXPECT_EQ(ErrorName(int16_t{16}), "NOT_COORDINATOR");
  EXPECT_EQ(ErrorName(int16_t{9999}), "UNKNOWN_ERROR_CODE");
}

TEST(KafkaErrors, EveryCodeHasADistinctName) {
  std::set<std::string_view> names;
  int n = 0;
#define THAW_COUNT(name, code, text)        \
  names.insert(ErrorName(ErrorCode::name)); \
  ++n;
  THAW_KAFKA_ERROR_CODES(THAW_COUNT)
#undef THAW_COUNT
  EXPECT_EQ(names.size(), static_cast<size_t>(n));
  EXPECT_EQ(names.count("UNKNOWN_ERROR_CODE"), 0u);
  EXPECT_GE(n, 130);
}

TEST(KafkaErrors, StatusMap) {
  EXPECT_EQ(ToKafkaError(Status::OK()), ErrorCode::kNone);
  EXPECT_EQ(ToKafkaError(Status::NotFound("topic t")), ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(ToKafkaError(Status::Invalid("bad")), ErrorCode::kInvalidRequest);
  EXPECT_EQ(ToKafkaError(Status::Corrupt("bad parquet")), ErrorCode::kCorruptMessage);
  EXPECT_EQ(ToKafkaError(Status::Unsupported("x")), ErrorCode::kInvalidRequest);
  EXPECT_EQ(ToKafkaError(Status::IOError("s3 down")), ErrorCode::kKafkaStorageError);
  EXPECT_EQ(ToKafkaError(Status::Aborted("unproven")), ErrorCode::kRequestTimedOut);
  EXPECT_EQ(ToKafkaError(Status::Internal("bug")), ErrorCode::kUnknownServerError);
  EXPECT_EQ(ToKafkaError(Status(StatusCode::kCommitConflict, "race")), ErrorCode::kUnknownServerError);
  EXPECT_EQ(ToKafkaError(Status(StatusCode::kCommitStateUnknown, "lost")), ErrorCode::kUnknownServerError);
  EXPECT_EQ(ToKafkaError(Status(StatusCode::kPermissionDenied, "403")), ErrorCode::kKafkaStorageError);
}

}  // namespace
}  // namespace thaw::kafka
