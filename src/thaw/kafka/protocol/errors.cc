#include "thaw/kafka/protocol/errors.h"

// A StatusCode missing from ToKafkaError's switch is a compile error, not a warning.
#pragma GCC diagnostic error "-Wswitch"

namespace thaw::kafka {

std::string_view ErrorName(ErrorCode code) {
  switch (code) {
#define THAW_KAFKA_ERROR_NAME(name, code, text) \
  case ErrorCode::name:                         \
    return text;
    THAW_KAFKA_ERROR_CODES(THAW_KAFKA_ERROR_NAME)
#undef THAW_KAFKA_ERROR_NAME
  }
  return "UNKNOWN_ERROR_CODE";
}

ErrorCode ToKafkaError(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return ErrorCode::kNone;
    case StatusCode::kInvalidArgument:
      return ErrorCode::kInvalidRequest;
    case StatusCode::kNotFound:
      return ErrorCode::kUnknownTopicOrPartition;
    case StatusCode::kCorrupt:
      return ErrorCode::kCorruptMessage;
    case StatusCode::kUnsupported:
      return ErrorCode::kInvalidRequest;
    case StatusCode::kIOError:
      return ErrorCode::kKafkaStorageError;
    case StatusCode::kCommitConflict:
      return ErrorCode::kUnknownServerError;
    case StatusCode::kCommitStateUnknown:
      return ErrorCode::kUnknownServerError;
    case StatusCode::kPermissionDenied:
      return ErrorCode::kKafkaStorageError;
    case StatusCode::kAlreadyExists:
      return ErrorCode::kTopicAlreadyExists;
    case StatusCode::kAborted:
      return ErrorCode::kRequestTimedOut;
    case StatusCode::kInternal:
      return ErrorCode::kUnknownServerError;
  }
  return ErrorCode::kUnknownServerError;  // not a StatusCode value (memory corruption)
}

ErrorCode ToKafkaError(const Status& status) { return ToKafkaError(status.code()); }

}  // namespace thaw::kafka
