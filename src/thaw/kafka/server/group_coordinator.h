// The classic-protocol consumer group coordinator of `thaw serve` (Kafka's
// JoinGroup / SyncGroup / Heartbeat / LeaveGroup / OffsetCommit / OffsetFetch /
// DescribeGroups / ListGroups / DeleteGroups semantics, as Kafka's own
// GroupCoordinator implements them for groups of protocol type "consumer" or
// any other classic protocol type).
//
// Thaw is the coordinator of every group (FindCoordinator always answers this
// node), so NOT_COORDINATOR is never returned. The coordinator relays the
// members' opaque protocol metadata and the leader's assignments; it never
// looks inside them (the leader client runs the assignor).
//
// The request/result structs below are plain structs, independent of the
// generated wire messages: the server's handlers translate between the two.
// Field meanings are those of Kafka's JoinGroupRequest.json etc.
//
// Concurrency: every method is a coroutine that can be awaited from any
// executor. The coordinator owns one strand; each call hops onto it, runs
// there (all group state is touched only on the strand), and resumes the
// caller on the caller's own executor. JoinGroup and SyncGroup may wait
// (until the rebalance completes / until the leader's assignment arrives);
// the others answer at once. Timers (session expiry, rebalance timeout,
// initial rebalance delay) are steady_timers on the strand.
//
// Committed offsets persist in an OffsetStore (SQLite, DIR/groups.sqlite) and
// are loaded by Make(); group membership is not persisted: after a restart
// the members rejoin, as after a coordinator move in Kafka.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/kafka/protocol/errors.h"

namespace thaw::kafka::server {

class OffsetStore;

// The coordinator answers with Kafka's own error codes (errors.h): NONE,
// UNKNOWN_SERVER_ERROR (the offset store failed; logged with the reason),
// OFFSET_METADATA_TOO_LARGE, COORDINATOR_NOT_AVAILABLE (after Stop()),
// ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL, INVALID_GROUP_ID,
// UNKNOWN_MEMBER_ID, INVALID_SESSION_TIMEOUT, REBALANCE_IN_PROGRESS,
// NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, MEMBER_ID_REQUIRED,
// GROUP_MAX_SIZE_REACHED, FENCED_INSTANCE_ID. Never NOT_COORDINATOR: Thaw
// coordinates every group.
using GroupError = kafka::ErrorCode;

struct GroupCoordinatorOptions {
  // Directory of the offset store (DIR/groups.sqlite, created if missing).
  // Empty: offsets are kept in memory only (tests; `thaw serve` without --state).
  std::string state_dir;
  // group.initial.rebalance.delay.ms: how long the first rebalance of an empty
  // group waits for more members (extended by each new member up to the
  // rebalance timeout), so a group starting together gets one generation.
  std::chrono::milliseconds initial_rebalance_delay{3000};
  // group.min.session.timeout.ms / group.max.session.timeout.ms: JoinGroup with
  // a session timeout outside [min, max] gets INVALID_SESSION_TIMEOUT.
  std::chrono::milliseconds min_session_timeout{6000};
  std::chrono::milliseconds max_session_timeout{1800000};
  // group.max.size: a join beyond it gets GROUP_MAX_SIZE_REACHED.
  int32_t max_group_size = INT32_MAX;
  // Kafka's GroupCoordinator.NewMemberJoinTimeoutMs: a new member waiting in a
  // JoinGroup is dropped after this long without completing (a client that
  // went away mid-join does not hold the rebalance until its timeout).
  std::chrono::milliseconds new_member_join_timeout{300000};
  // offset.metadata.max.bytes: a commit whose metadata is longer gets
  // OFFSET_METADATA_TOO_LARGE for that partition.
  int32_t offset_metadata_max_bytes = 4096;
};

// ---------------------------------------------------------------- JoinGroup

struct JoinGroupProtocol {
  std::string name;      // assignor name: "range", "roundrobin", "cooperative-sticky", ...
  std::string metadata;  // opaque subscription bytes
};

struct JoinGroupRequest {
  int16_t api_version = 0;  // decides MEMBER_ID_REQUIRED (v4+)
  std::string group_id;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = -1;             // v0 lacks it: the handler passes -1 (= session timeout)
  std::string member_id;                         // empty for a new member
  std::optional<std::string> group_instance_id;  // static membership (v5+)
  std::string protocol_type;                     // "consumer" for consumers
  std::vector<JoinGroupProtocol> protocols;
  std::optional<std::string> reason;  // v8+, logged only
  // From the request header and the connection (DescribeGroups shows them).
  std::string client_id;
  std::string client_host;
};

struct JoinGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string metadata;  // the member's metadata for the chosen protocol
};

struct JoinGroupResult {
  GroupError error = GroupError::kNone;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;  // the group's (v7+ response field)
  std::optional<std::string> protocol_name;  // the chosen protocol; nullopt on error
  std::string leader;                        // leader's member id ("" on error)
  bool skip_assignment = false;              // v9+; always false (no KIP-848 migration)
  // The member id to use: the new one with MEMBER_ID_REQUIRED (v4+, the client
  // rejoins with it) or on success; on other errors the request's (or "").
  std::string member_id;
  std::vector<JoinGroupMember> members;  // every member for the leader; empty for followers
};

// ---------------------------------------------------------------- SyncGroup

struct SyncGroupAssignment {
  std::string member_id;
  std::string assignment;  // opaque bytes
};

struct SyncGroupRequest {
  int16_t api_version = 0;
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::optional<std::string> protocol_type;      // v5+: checked against the group's when set
  std::optional<std::string> protocol_name;      // v5+: likewise
  std::vector<SyncGroupAssignment> assignments;  // the leader's; followers send none
};

struct SyncGroupResult {
  GroupError error = GroupError::kNone;
  std::optional<std::string> protocol_type;  // v5+
  std::optional<std::string> protocol_name;  // v5+
  std::string assignment;                    // this member's (empty if the leader gave none)
};

// ---------------------------------------------------------------- Heartbeat

struct HeartbeatRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
};

// --------------------------------------------------------------- LeaveGroup

struct LeaveGroupMember {
  std::string member_id;  // may be empty (or stale) when group_instance_id is set
  std::optional<std::string> group_instance_id;
  std::optional<std::string> reason;  // logged only
};

struct LeaveGroupRequest {
  std::string group_id;
  // v0-2: the handler passes one entry with the request's MemberId; v3+: the Members array.
  std::vector<LeaveGroupMember> members;
};

struct LeaveGroupMemberResult {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  GroupError error = GroupError::kNone;
};

struct LeaveGroupResult {
  // Group-level error (invalid group id, stopped coordinator). For v0-2 the
  // handler answers `error != kNone ? error : members[0].error`, as Kafka does.
  GroupError error = GroupError::kNone;
  std::vector<LeaveGroupMemberResult> members;  // one per request member, same order
};

// ------------------------------------------------------------- OffsetCommit

struct OffsetCommitPartition {
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t leader_epoch = -1;            // v6+
  std::optional<std::string> metadata;  // null is stored as ""
};

struct OffsetCommitTopic {
  std::string name;  // the handler answers UNKNOWN_TOPIC_OR_PARTITION itself for topics it does not serve
  std::vector<OffsetCommitPartition> partitions;
};

struct OffsetCommitRequest {
  std::string group_id;  // "" is accepted (Kafka allows it for offset APIs)
  // -1 and "" for a simple (assign-mode) consumer, allowed when the group has
  // no members; otherwise the member's current generation and id.
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::vector<OffsetCommitTopic> topics;
};

struct OffsetCommitPartitionResult {
  int32_t partition = 0;
  GroupError error = GroupError::kNone;
};

struct OffsetCommitTopicResult {
  std::string name;
  std::vector<OffsetCommitPartitionResult> partitions;
};

struct OffsetCommitResult {
  // Same topics and partitions as the request, same order. A group-level error
  // (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, ...) is
  // repeated on every partition, as Kafka's response has no top-level error.
  // The commit is durable (in the store) before this is returned.
  std::vector<OffsetCommitTopicResult> topics;
};

// -------------------------------------------------------------- OffsetFetch

struct OffsetFetchTopic {
  std::string name;
  std::vector<int32_t> partitions;
};

struct OffsetFetchRequest {
  std::string group_id;
  // nullopt: every partition of the group with a committed offset (v2+ null Topics).
  std::optional<std::vector<OffsetFetchTopic>> topics;
};

struct OffsetFetchPartitionResult {
  int32_t partition = 0;
  int64_t committed_offset = -1;  // -1: none committed
  int32_t committed_leader_epoch = -1;
  std::string metadata;  // "" when none (Kafka's NO_METADATA)
  GroupError error = GroupError::kNone;
};

struct OffsetFetchTopicResult {
  std::string name;
  std::vector<OffsetFetchPartitionResult> partitions;
};

struct OffsetFetchResult {
  GroupError error = GroupError::kNone;  // top-level (v2+); COORDINATOR_NOT_AVAILABLE after Stop()
  // Requested topics/partitions in request order (unknown ones with -1), or,
  // for a null topic list, every committed partition sorted by topic and partition.
  std::vector<OffsetFetchTopicResult> topics;
};

// ----------------------------------------------------- Describe/List/Delete

struct DescribedMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  std::string metadata;    // the chosen protocol's metadata; empty unless the group is Stable
  std::string assignment;  // empty unless the group is Stable
};

struct DescribedGroup {
  // NONE, or (api_version >= 6) GROUP_ID_NOT_FOUND for an unknown group (before
  // v6: NONE with state "Dead"), or COORDINATOR_NOT_AVAILABLE after Stop().
  // An empty group id is a valid id here, as in Kafka.
  GroupError error = GroupError::kNone;
  std::string group_id;
  std::string state;          // "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"
  std::string protocol_type;  // "" when unknown
  std::string protocol_data;  // the chosen protocol's name; "" unless Stable (as Kafka)
  std::vector<DescribedMember> members;
};

struct ListedGroup {
  std::string group_id;
  std::string protocol_type;
  std::string state;  // as DescribedGroup::state
  std::string group_type = "classic";
};

struct DeleteGroupResult {
  std::string group_id;
  GroupError error = GroupError::kNone;  // NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, COORDINATOR_NOT_AVAILABLE
};

// ---------------------------------------------------------------- the coordinator

class GroupCoordinator {
 public:
  // Opens the offset store (options.state_dir), loads every committed offset
  // (groups with offsets exist in state Empty), and makes the strand over
  // `executor`. The io_context behind `executor` must outlive the coordinator.
  // An OffsetCommit holds the strand's thread for one fsync (p50 4 ms on the
  // dev VM, bench/offset_commit_bench.cc): give the coordinator an io_context
  // thread of its own rather than one that also serves connections.
  static Result<std::unique_ptr<GroupCoordinator>> Make(asio::any_io_executor executor,
                                                        GroupCoordinatorOptions options);
  // Call Stop() first: without it, calls still waiting keep the state alive
  // until they are answered or their io_context is destroyed.
  ~GroupCoordinator();
  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  // Waits until the group's rebalance completes (all known members rejoined,
  // or the rebalance timeout expired, or the initial delay of a new group ran
  // out), then answers with the new generation. Errors answer at once.
  asio::awaitable<JoinGroupResult> JoinGroup(JoinGroupRequest request);
  // The leader's call stores the assignments and answers every waiting member;
  // a follower waits for the leader (or for the next rebalance: REBALANCE_IN_PROGRESS).
  asio::awaitable<SyncGroupResult> SyncGroup(SyncGroupRequest request);
  asio::awaitable<GroupError> Heartbeat(HeartbeatRequest request);
  asio::awaitable<LeaveGroupResult> LeaveGroup(LeaveGroupRequest request);
  asio::awaitable<OffsetCommitResult> OffsetCommit(OffsetCommitRequest request);
  asio::awaitable<OffsetFetchResult> OffsetFetch(OffsetFetchRequest request);
  asio::awaitable<std::vector<DescribedGroup>> DescribeGroups(std::vector<std::string> group_ids, int16_t api_version);
  // `states_filter`: Kafka state names, compared case-insensitively; empty = all.
  // `types_filter` (v5+): "classic"/"consumer", case-insensitive; empty = all (only "classic" groups exist).
  asio::awaitable<std::vector<ListedGroup>> ListGroups(std::vector<std::string> states_filter,
                                                       std::vector<std::string> types_filter);
  // Deletes empty groups and their committed offsets (durably).
  asio::awaitable<std::vector<DeleteGroupResult>> DeleteGroups(std::vector<std::string> group_ids);

  // Clean shutdown: cancels every timer, answers waiting JoinGroups and
  // SyncGroups with COORDINATOR_NOT_AVAILABLE (as Kafka answers them when the
  // coordinator goes away: the client rediscovers the coordinator and rejoins),
  // closes the offset store (every commit was already durable) and makes later
  // calls answer COORDINATOR_NOT_AVAILABLE. Idempotent.
  asio::awaitable<Status> Stop();

  class Impl;  // in group_coordinator.cc

 private:
  explicit GroupCoordinator(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// Kafka's name of an error ("ILLEGAL_GENERATION"), for logs and tests.
inline std::string_view GroupErrorName(GroupError error) { return kafka::ErrorName(error); }

}  // namespace thaw::kafka::server
