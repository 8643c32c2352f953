// Kafka protocol error codes (every code of Kafka 4.1.2's Errors.java, by its
// wire value) and the one map from Thaw's StatusCode to a Kafka code.
#pragma once

#include <cstdint>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw::kafka {

// X(enumerator, code, Kafka's name)
#define THAW_KAFKA_ERROR_CODES(X)                                                     \
  X(kUnknownServerError, -1, "UNKNOWN_SERVER_ERROR")                                  \
  X(kNone, 0, "NONE")                                                                 \
  X(kOffsetOutOfRange, 1, "OFFSET_OUT_OF_RANGE")                                      \
  X(kCorruptMessage, 2, "CORRUPT_MESSAGE")                                            \
  X(kUnknownTopicOrPartition, 3, "UNKNOWN_TOPIC_OR_PARTITION")                        \
  X(kInvalidFetchSize, 4, "INVALID_FETCH_SIZE")                                       \
  X(kLeaderNotAvailable, 5, "LEADER_NOT_AVAILABLE")                                   \
  X(kNotLeaderOrFollower, 6, "NOT_LEADER_OR_FOLLOWER")                                \
  X(kRequestTimedOut, 7, "REQUEST_TIMED_OUT")                                         \
  X(kBrokerNotAvailable, 8, "BROKER_NOT_AVAILABLE")                                   \
  X(kReplicaNotAvailable, 9, "REPLICA_NOT_AVAILABLE")                                 \
  X(kMessageTooLarge, 10, "MESSAGE_TOO_LARGE")                                        \
  X(kStaleControllerEpoch, 11, "STALE_CONTROLLER_EPOCH")                              \
  X(kOffsetMetadataTooLarge, 12, "OFFSET_METADATA_TOO_LARGE")                         \
  X(kNetworkException, 13, "NETWORK_EXCEPTION")                                       \
  X(kCoordinatorLoadInProgress, 14, "COORDINATOR_LOAD_IN_PROGRESS")                   \
  X(kCoordinatorNotAvailable, 15, "COORDINATOR_NOT_AVAILABLE")                        \
  X(kNotCoordinator, 16, "NOT_COORDINATOR")                                           \
  X(kInvalidTopicException, 17, "INVALID_TOPIC_EXCEPTION")                            \
  X(kRecordListTooLarge, 18, "RECORD_LIST_TOO_LARGE")                                 \
  X(kNotEnoughReplicas, 19, "NOT_ENOUGH_REPLICAS")                                    \
  X(kNotEnoughReplicasAfterAppend, 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND")            \
  X(kInvalidRequiredAcks, 21, "INVALID_REQUIRED_ACKS")                                \
  X(kIllegalGeneration, 22, "ILLEGAL_GENERATION")                                     \
  X(kInconsistentGroupProtocol, 23, "INCONSISTENT_GROUP_PROTOCOL")                    \
  X(kInvalidGroupId, 24, "INVALID_GROUP_ID")                                          \
  X(kUnknownMemberId, 25, "UNKNOWN_MEMBER_ID")                                        \
  X(kInvalidSessionTimeout, 26, "INVALID_SESSION_TIMEOUT")                            \
  X(kRebalanceInProgress, 27, "REBALANCE_IN_PROGRESS")                                \
  X(kInvalidCommitOffsetSize, 28, "INVALID_COMMIT_OFFSET_SIZE")                       \
  X(kTopicAuthorizationFailed, 29, "TOPIC_AUTHORIZATION_FAILED")                      \
  X(kGroupAuthorizationFailed, 30, "GROUP_AUTHORIZATION_FAILED")                      \
  X(kClusterAuthorizationFailed, 31, "CLUSTER_AUTHORIZATION_FAILED")                  \
  X(kInvalidTimestamp, 32, "INVALID_TIMESTAMP")                                       \
  X(kUnsupportedSaslMechanism, 33, "UNSUPPORTED_SASL_MECHANISM")                      \
  X(kIllegalSaslState, 34, "ILLEGAL_SASL_STATE")                                      \
  X(kUnsupportedVersion, 35, "UNSUPPORTED_VERSION")                                   \
  X(kTopicAlreadyExists, 36, "TOPIC_ALREADY_EXISTS")                                  \
  X(kInvalidPartitions, 37, "INVALID_PARTITIONS")                                     \
  X(kInvalidReplicationFactor, 38, "INVALID_REPLICATION_FACTOR")                      \
  X(kInvalidReplicaAssignment, 39, "INVALID_REPLICA_ASSIGNMENT")                      \
  X(kInvalidConfig, 40, "INVALID_CONFIG")                                             \
  X(kNotController, 41, "NOT_CONTROLLER")                                             \
  X(kInvalidRequest, 42, "INVALID_REQUEST")                                           \
  X(kUnsupportedForMessageFormat, 43, "UNSUPPORTED_FOR_MESSAGE_FORMAT")               \
  X(kPolicyViolation, 44, "POLICY_VIOLATION")                                         \
  X(kOutOfOrderSequenceNumber, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER")                    \
  X(kDuplicateSequenceNumber, 46, "DUPLICATE_SEQUENCE_NUMBER")                        \
  X(kInvalidProducerEpoch, 47, "INVALID_PRODUCER_EPOCH")                              \
  X(kInvalidTxnState, 48, "INVALID_TXN_STATE")                                        \
  X(kInvalidProducerIdMapping, 49, "INVALID_PRODUCER_ID_MAPPING")                     \
  X(kInvalidTransactionTimeout, 50, "INVALID_TRANSACTION_TIMEOUT")                    \
  X(kConcurrentTransactions, 51, "CONCURRENT_TRANSACTIONS")                           \
  X(kTransactionCoordinatorFenced, 52, "TRANSACTION_COORDINATOR_FENCED")              \
  X(kTransactionalIdAuthorizationFailed, 53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED") \
  X(kSecurityDisabled, 54, "SECURITY_DISABLED")                                       \
  X(kOperationNotAttempted, 55, "OPERATION_NOT_ATTEMPTED")                            \
  X(kKafkaStorageError, 56, "KAFKA_STORAGE_ERROR")                                    \
  X(kLogDirNotFound, 57, "LOG_DIR_NOT_FOUND")                                         \
  X(kSaslAuthenticationFailed, 58, "SASL_AUTHENTICATION_FAILED")                      \
  X(kUnknownProducerId, 59, "UNKNOWN_PRODUCER_ID")                                    \
  X(kReassignmentInProgress, 60, "REASSIGNMENT_IN_PROGRESS")                          \
  X(kDelegationTokenAuthDisabled, 61, "DELEGATION_TOKEN_AUTH_DISABLED")               \
  X(kDelegationTokenNotFound, 62, "DELEGATION_TOKEN_NOT_FOUND")                       \
  X(kDelegationTokenOwnerMismatch, 63, "DELEGATION_TOKEN_OWNER_MISMATCH")             \
  X(kDelegationTokenRequestNotAllowed, 64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED")    \
  X(kDelegationTokenAuthorizationFailed, 65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED") \
  X(kDelegationTokenExpired, 66, "DELEGATION_TOKEN_EXPIRED")                          \
  X(kInvalidPrincipalType, 67, "INVALID_PRINCIPAL_TYPE")                              \
  X(kNonEmptyGroup, 68, "NON_EMPTY_GROUP")                                            \
  X(kGroupIdNotFound, 69, "GROUP_ID_NOT_FOUND")                                       \
  X(kFetchSessionIdNotFound, 70, "FETCH_SESSION_ID_NOT_FOUND")                        \
  X(kInvalidFetchSessionEpoch, 71, "INVALID_FETCH_SESSION_EPOCH")                     \
  X(kListenerNotFound, 72, "LISTENER_NOT_FOUND")                                      \
  X(kTopicDeletionDisabled, 73, "TOPIC_DELETION_DISABLED")                            \
  X(kFencedLeaderEpoch, 74, "FENCED_LEADER_EPOCH")                                    \
  X(kUnknownLeaderEpoch, 75, "UNKNOWN_LEADER_EPOCH")                                  \
  X(kUnsupportedCompressionType, 76, "UNSUPPORTED_COMPRESSION_TYPE")                  \
  X(kStaleBrokerEpoch, 77, "STALE_BROKER_EPOCH")                                      \
  X(kOffsetNotAvailable, 78, "OFFSET_NOT_AVAILABLE")                                  \
  X(kMemberIdRequired, 79, "MEMBER_ID_REQUIRED")                                      \
  X(kPreferredLeaderNotAvailable, 80, "PREFERRED_LEADER_NOT_AVAILABLE")               \
  X(kGroupMaxSizeReached, 81, "GROUP_MAX_SIZE_REACHED")                               \
  X(kFencedInstanceId, 82, "FENCED_INSTANCE_ID")                                      \
  X(kEligibleLeadersNotAvailable, 83, "ELIGIBLE_LEADERS_NOT_AVAILABLE")               \
  X(kElectionNotNeeded, 84, "ELECTION_NOT_NEEDED")                                    \
  X(kNoReassignmentInProgress, 85, "NO_REASSIGNMENT_IN_PROGRESS")                     \
  X(kGroupSubscribedToTopic, 86, "GROUP_SUBSCRIBED_TO_TOPIC")                         \
  X(kInvalidRecord, 87, "INVALID_RECORD")                                             \
  X(kUnstableOffsetCommit, 88, "UNSTABLE_OFFSET_COMMIT")                              \
  X(kThrottlingQuotaExceeded, 89, "THROTTLING_QUOTA_EXCEEDED")                        \
  X(kProducerFenced, 90, "PRODUCER_FENCED")                                           \
  X(kResourceNotFound, 91, "RESOURCE_NOT_FOUND")                                      \
  X(kDuplicateResource, 92, "DUPLICATE_RESOURCE")                                     \
  X(kUnacceptableCredential, 93, "UNACCEPTABLE_CREDENTIAL")                           \
  X(kInconsistentVoterSet, 94, "INCONSISTENT_VOTER_SET")                              \
  X(kInvalidUpdateVersion, 95, "INVALID_UPDATE_VERSION")                              \
  X(kFeatureUpdateFailed, 96, "FEATURE_UPDATE_FAILED")                                \
  X(kPrincipalDeserializationFailure, 97, "PRINCIPAL_DESERIALIZATION_FAILURE")        \
  X(kSnapshotNotFound, 98, "SNAPSHOT_NOT_FOUND")                                      \
  X(kPositionOutOfRange, 99, "POSITION_OUT_OF_RANGE")                                 \
  X(kUnknownTopicId, 100, "UNKNOWN_TOPIC_ID")                                         \
  X(kDuplicateBrokerRegistration, 101, "DUPLICATE_BROKER_REGISTRATION")               \
  X(kBrokerIdNotRegistered, 102, "BROKER_ID_NOT_REGISTERED")                          \
  X(kInconsistentTopicId, 103, "INCONSISTENT_TOPIC_ID")                               \
  X(kInconsistentClusterId, 104, "INCONSISTENT_CLUSTER_ID")                           \
  X(kTransactionalIdNotFound, 105, "TRANSACTIONAL_ID_NOT_FOUND")                      \
  X(kFetchSessionTopicIdError, 106, "FETCH_SESSION_TOPIC_ID_ERROR")                   \
  X(kIneligibleReplica, 107, "INELIGIBLE_REPLICA")                                    \
  X(kNewLeaderElected, 108, "NEW_LEADER_ELECTED")                                     \
  X(kOffsetMovedToTieredStorage, 109, "OFFSET_MOVED_TO_TIERED_STORAGE")               \
  X(kFencedMemberEpoch, 110, "FENCED_MEMBER_EPOCH")                                   \
  X(kUnreleasedInstanceId, 111, "UNRELEASED_INSTANCE_ID")                             \
  X(kUnsupportedAssignor, 112, "UNSUPPORTED_ASSIGNOR")                                \
  X(kStaleMemberEpoch, 113, "STALE_MEMBER_EPOCH")                                     \
  X(kMismatchedEndpointType, 114, "MISMATCHED_ENDPOINT_TYPE")                         \
  X(kUnsupportedEndpointType, 115, "UNSUPPORTED_ENDPOINT_TYPE")                       \
  X(kUnknownControllerId, 116, "UNKNOWN_CONTROLLER_ID")                               \
  X(kUnknownSubscriptionId, 117, "UNKNOWN_SUBSCRIPTION_ID")                           \
  X(kTelemetryTooLarge, 118, "TELEMETRY_TOO_LARGE")                                   \
  X(kInvalidRegistration, 119, "INVALID_REGISTRATION")                                \
  X(kTransactionAbortable, 120, "TRANSACTION_ABORTABLE")                              \
  X(kInvalidRecordState, 121, "INVALID_RECORD_STATE")                                 \
  X(kShareSessionNotFound, 122, "SHARE_SESSION_NOT_FOUND")                            \
  X(kInvalidShareSessionEpoch, 123, "INVALID_SHARE_SESSION_EPOCH")                    \
  X(kFencedStateEpoch, 124, "FENCED_STATE_EPOCH")                                     \
  X(kInvalidVoterKey, 125, "INVALID_VOTER_KEY")                                       \
  X(kDuplicateVoter, 126, "DUPLICATE_VOTER")                                          \
  X(kVoterNotFound, 127, "VOTER_NOT_FOUND")                                           \
  X(kInvalidRegularExpression, 128, "INVALID_REGULAR_EXPRESSION")                     \
  X(kRebootstrapRequired, 129, "REBOOTSTRAP_REQUIRED")                                \
  X(kStreamsInvalidTopology, 130, "STREAMS_INVALID_TOPOLOGY")                         \
  X(kStreamsInvalidTopologyEpoch, 131, "STREAMS_INVALID_TOPOLOGY_EPOCH")              \
  X(kStreamsTopologyFenced, 132, "STREAMS_TOPOLOGY_FENCED")                           \
  X(kShareSessionLimitReached, 133, "SHARE_SESSION_LIMIT_REACHED")

enum class ErrorCode : int16_t {
#define THAW_KAFKA_ERROR_ENUM(name, code, text) name = code,
  THAW_KAFKA_ERROR_CODES(THAW_KAFKA_ERROR_ENUM)
#undef THAW_KAFKA_ERROR_ENUM
};

// Kafka's name ("UNKNOWN_TOPIC_OR_PARTITION"); "UNKNOWN_ERROR_CODE" for a
// value Kafka 4.1.2 does not define (a newer peer's code).
std::string_view ErrorName(ErrorCode code);
inline std::string_view ErrorName(int16_t code) { return ErrorName(static_cast<ErrorCode>(code)); }

inline int16_t ToInt(ErrorCode code) { return static_cast<int16_t>(code); }

// The one map from a failed Status to the Kafka error code a response
// carries when a handler has no more specific code for the failure:
//   kOk              NONE
//   kInvalidArgument INVALID_REQUEST               (the client asked for something malformed)
//   kNotFound        UNKNOWN_TOPIC_OR_PARTITION    (topic, partition or table missing)
//   kCorrupt         CORRUPT_MESSAGE               (bytes that do not parse: fatal to Java's poll,
//                                                   not retried forever as a storage error would be)
//   kUnsupported     INVALID_REQUEST               ("sent to an incompatible broker", in Kafka's words)
//   kIOError         KAFKA_STORAGE_ERROR           (the table's storage failed; clients retry)
//   kCommitConflict  UNKNOWN_SERVER_ERROR
//   kCommitStateUnknown UNKNOWN_SERVER_ERROR
//   kPermissionDenied KAFKA_STORAGE_ERROR          (the catalog or object store refused Thaw's
//                                                   credentials: Thaw's problem, not the client's)
//   kAborted         REQUEST_TIMED_OUT             (outcome not proven; clients retry)
//   kInternal        UNKNOWN_SERVER_ERROR
// The switch has no default, so a new StatusCode does not compile until it is mapped here.
ErrorCode ToKafkaError(const Status& status);
ErrorCode ToKafkaError(StatusCode code);

}  // namespace thaw::kafka
