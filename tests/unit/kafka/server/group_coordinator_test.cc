// Semantic tests of the classic group coordinator: real coroutines, real
// timers (timeouts of a few hundred ms), the coordinator's strand on its own
// two-thread io_context and the callers on the test thread's io_context.
#include "thaw/kafka/server/group_coordinator.h"

#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <filesystem>
#include <random>
#include <thread>

namespace thaw::kafka::server {

void PrintTo(GroupError e, std::ostream* os) { *os << GroupErrorName(e); }

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

class GroupCoordinatorTest : public ::testing::Test {
 protected:
  GroupCoordinatorTest() : coord_guard_(coord_io_.get_executor()), guard_(io_.get_executor()) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { coord_io_.run(); });
  }
  ~GroupCoordinatorTest() override {
    StopCoordinator();
    coord_guard_.reset();
    coord_io_.stop();
    for (auto& t : threads_) t.join();
  }

  static GroupCoordinatorOptions Options() {
    GroupCoordinatorOptions o;
    o.initial_rebalance_delay = 300ms;  // margin for a loaded machine: joins a few ms apart land in it
    o.min_session_timeout = 10ms;
    o.max_session_timeout = 60s;
    return o;
  }

  void StartCoordinator(GroupCoordinatorOptions options = Options()) {
    auto c = GroupCoordinator::Make(coord_io_.get_executor(), std::move(options));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    coord_ = std::move(*c);
  }
  void StopCoordinator() {
    if (!coord_) return;
    Status st = Await(coord_->Stop());
    EXPECT_TRUE(st.ok()) << st.ToString();
    coord_.reset();
  }

  template <typename T>
  std::shared_ptr<std::optional<T>> Spawn(asio::awaitable<T> aw) {
    auto out = std::make_shared<std::optional<T>>();
    asio::co_spawn(io_, std::move(aw), [out](std::exception_ptr e, T v) {
      if (e) std::rethrow_exception(e);
      *out = std::move(v);
    });
    return out;
  }
  template <typename Pred>
  bool RunUntil(Pred pred, std::chrono::milliseconds timeout = 5s) {
    const auto deadline = Clock::now() + timeout;
    while (!pred() && Clock::now() < deadline) io_.run_one_for(5ms);
    return pred();
  }
  void RunFor(std::chrono::milliseconds d) {
    const auto deadline = Clock::now() + d;
    while (Clock::now() < deadline) io_.run_one_until(deadline);
  }
  template <typename T>
  T Await(asio::awaitable<T> aw, std::chrono::milliseconds timeout = 5s) {
    auto p = Spawn(std::move(aw));
    if (!RunUntil([&] { return p->has_value(); }, timeout)) {
      ADD_FAILURE() << "call did not answer within " << timeout.count() << " ms";
      return T{};
    }
    return std::move(**p);
  }
  template <typename T>
  T Get(const std::shared_ptr<std::optional<T>>& p, std::chrono::milliseconds timeout = 5s) {
    if (!RunUntil([&] { return p->has_value(); }, timeout)) {
      ADD_FAILURE() << "call did not answer within " << timeout.count() << " ms";
      return T{};
    }
    return **p;
  }

  static JoinGroupRequest JoinReq(const std::string& member_id, const std::string& client, int16_t version = 3) {
    JoinGroupRequest r;
    r.api_version = version;
    r.group_id = "g";
    r.session_timeout_ms = 10000;
    r.rebalance_timeout_ms = 1000;
    r.member_id = member_id;
    r.protocol_type = "consumer";
    r.protocols = {{"range", "sub-" + client}};
    r.client_id = client;
    r.client_host = "/127.0.0.1";
    return r;
  }
  static SyncGroupRequest SyncReq(const JoinGroupResult& j, std::vector<SyncGroupAssignment> assignments = {}) {
    SyncGroupRequest r;
    r.api_version = 3;
    r.group_id = "g";
    r.generation_id = j.generation_id;
    r.member_id = j.member_id;
    r.assignments = std::move(assignments);
    return r;
  }
  static HeartbeatRequest HbReq(const JoinGroupResult& j) {
    return HeartbeatRequest{"g", j.generation_id, j.member_id, std::nullopt};
  }
  static OffsetCommitRequest CommitReq(int32_t generation, std::string member, int64_t offset,
                                       std::string group = "g") {
    OffsetCommitRequest r;
    r.group_id = std::move(group);
    r.generation_id = generation;
    r.member_id = std::move(member);
    r.topics = {{"orders", {{0, offset, 3, "m"}}}};
    return r;
  }
  static GroupError CommitError(const OffsetCommitResult& r) {
    EXPECT_EQ(r.topics.size(), 1u);
    if (r.topics.empty() || r.topics[0].partitions.empty()) return GroupError::kUnknownServerError;
    return r.topics[0].partitions[0].error;
  }
  DescribedGroup Describe(const std::string& id = "g", int16_t version = 5) {
    auto v = Await(coord_->DescribeGroups({id}, version));
    EXPECT_EQ(v.size(), 1u);
    return v.empty() ? DescribedGroup{} : v[0];
  }

  // Two members a (leader: joins first) and b join and sync: a Stable generation.
  struct TwoMembers {
    JoinGroupResult a, b;
  };
  TwoMembers FormGroup(JoinGroupRequest ra = JoinReq("", "a"), JoinGroupRequest rb = JoinReq("", "b")) {
    auto pa = Spawn(coord_->JoinGroup(ra));
    RunFor(30ms);  // a is first: the leader
    auto pb = Spawn(coord_->JoinGroup(rb));
    TwoMembers t{Get(pa), Get(pb)};
    EXPECT_EQ(t.a.error, GroupError::kNone);
    EXPECT_EQ(t.b.error, GroupError::kNone);
    auto sb = Spawn(coord_->SyncGroup(SyncReq(t.b)));
    RunFor(20ms);
    EXPECT_FALSE(sb->has_value()) << "a follower's SyncGroup waits for the leader's";
    auto sa = Await(coord_->SyncGroup(SyncReq(t.a, {{t.a.member_id, "assign-a"}, {t.b.member_id, "assign-b"}})));
    EXPECT_EQ(sa.error, GroupError::kNone);
    EXPECT_EQ(sa.assignment, "assign-a");
    EXPECT_EQ(Get(sb).assignment, "assign-b");
    return t;
  }

  // Heartbeats every `interval` until the answer is not NONE.
  asio::awaitable<GroupError> HeartbeatUntilError(HeartbeatRequest r, std::chrono::milliseconds interval) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    for (;;) {
      GroupError e = co_await coord_->Heartbeat(r);
      if (e != GroupError::kNone) co_return e;
      t.expires_after(interval);
      co_await t.async_wait(asio::use_awaitable);
    }
  }

  asio::io_context coord_io_;
  asio::executor_work_guard<asio::io_context::executor_type> coord_guard_;
  std::vector<std::thread> threads_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::unique_ptr<GroupCoordinator> coord_;
};

TEST_F(GroupCoordinatorTest, TwoMembersJoinOneGenerationAndTheLeaderGetsAllMetadata) {
  StartCoordinator();
  auto pa = Spawn(coord_->JoinGroup(JoinReq("", "a")));
  RunFor(30ms);
  EXPECT_EQ(Describe().state, "PreparingRebalance");
  EXPECT_FALSE(pa->has_value()) << "the first join waits for the initial rebalance delay";
  auto pb = Spawn(coord_->JoinGroup(JoinReq("", "b")));
  JoinGroupResult a = Get(pa), b = Get(pb);
  ASSERT_EQ(a.error, GroupError::kNone);
  ASSERT_EQ(b.error, GroupError::kNone);
  EXPECT_EQ(a.generation_id, 1);
  EXPECT_EQ(b.generation_id, 1);
  EXPECT_EQ(a.member_id.rfind("a-", 0), 0u) << a.member_id;  // <client.id>-<uuid>
  EXPECT_EQ(a.member_id.size(), 2u + 36u);
  EXPECT_NE(a.member_id, b.member_id);
  EXPECT_EQ(a.leader, a.member_id);
  EXPECT_EQ(b.leader, a.member_id);
  EXPECT_EQ(a.protocol_name, "range");
  EXPECT_EQ(a.protocol_type, "consumer");
  ASSERT_EQ(a.members.size(), 2u);
  EXPECT_EQ(a.members[0].member_id, a.member_id);
  EXPECT_EQ(a.members[0].metadata, "sub-a");
  EXPECT_EQ(a.members[1].member_id, b.member_id);
  EXPECT_EQ(a.members[1].metadata, "sub-b");
  EXPECT_TRUE(b.members.empty()) << "followers get no member list";
  EXPECT_EQ(Describe().state, "CompletingRebalance");
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(b))), GroupError::kNone);

  auto sb = Spawn(coord_->SyncGroup(SyncReq(b)));
  RunFor(30ms);
  EXPECT_FALSE(sb->has_value());
  // The leader leaves its own assignment out: it gets an empty one.
  auto sa = Await(coord_->SyncGroup(SyncReq(a, {{b.member_id, "for-b"}})));
  EXPECT_EQ(sa.error, GroupError::kNone);
  EXPECT_EQ(sa.assignment, "");
  EXPECT_EQ(sa.protocol_name, "range");
  SyncGroupResult rb = Get(sb);
  EXPECT_EQ(rb.error, GroupError::kNone);
  EXPECT_EQ(rb.assignment, "for-b");

  DescribedGroup d = Describe();
  EXPECT_EQ(d.state, "Stable");
  EXPECT_EQ(d.protocol_type, "consumer");
  EXPECT_EQ(d.protocol_data, "range");
  ASSERT_EQ(d.members.size(), 2u);
  EXPECT_EQ(d.members[1].client_id, "b");
  EXPECT_EQ(d.members[1].client_host, "/127.0.0.1");
  EXPECT_EQ(d.members[1].metadata, "sub-b");
  EXPECT_EQ(d.members[1].assignment, "for-b");
  // A late SyncGroup in Stable returns the stored assignment.
  EXPECT_EQ(Await(coord_->SyncGroup(SyncReq(b))).assignment, "for-b");
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(a))), GroupError::kNone);
}

TEST_F(GroupCoordinatorTest, AThirdMemberTriggersARebalanceThatEveryoneRejoins) {
  StartCoordinator();
  auto [a, b] = FormGroup();
  auto pc = Spawn(coord_->JoinGroup(JoinReq("", "c")));
  RunFor(30ms);
  EXPECT_FALSE(pc->has_value()) << "the new member waits for the known members to rejoin";
  EXPECT_EQ(Describe().state, "PreparingRebalance");
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(a))), GroupError::kRebalanceInProgress);
  EXPECT_EQ(Await(coord_->SyncGroup(SyncReq(a))).error, GroupError::kRebalanceInProgress);
  auto pa = Spawn(coord_->JoinGroup(JoinReq(a.member_id, "a")));
  RunFor(30ms);
  EXPECT_FALSE(pa->has_value()) << "b has not rejoined yet";
  auto pb = Spawn(coord_->JoinGroup(JoinReq(b.member_id, "b")));
  JoinGroupResult a2 = Get(pa), b2 = Get(pb), c = Get(pc);
  for (const auto* r : {&a2, &b2, &c}) {
    EXPECT_EQ(r->error, GroupError::kNone);
    EXPECT_EQ(r->generation_id, 2);
    EXPECT_EQ(r->leader, a.member_id) << "the leader stays the leader";
  }
  EXPECT_EQ(a2.members.size(), 3u);
  EXPECT_TRUE(c.members.empty());
  // The old generation is over.
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(a))), GroupError::kIllegalGeneration);
  EXPECT_EQ(Await(coord_->SyncGroup(SyncReq(b))).error, GroupError::kIllegalGeneration);
}

TEST_F(GroupCoordinatorTest, AMemberThatStopsHeartbeatingIsRemovedAndTheOthersRebalance) {
  StartCoordinator();
  auto ra = JoinReq("", "a"), rb = JoinReq("", "b");
  ra.session_timeout_ms = rb.session_timeout_ms = 300;
  auto [a, b] = FormGroup(ra, rb);
  const auto start = Clock::now();
  // a heartbeats every 50 ms; b says nothing.
  GroupError e = Await(HeartbeatUntilError(HbReq(a), 50ms), 5s);
  EXPECT_EQ(e, GroupError::kRebalanceInProgress);
  EXPECT_GE(Clock::now() - start, 250ms) << "b was removed before its session timeout";
  auto a2 = Await(coord_->JoinGroup([&] {
    auto r = ra;
    r.member_id = a.member_id;
    return r;
  }()));
  EXPECT_EQ(a2.error, GroupError::kNone);
  EXPECT_EQ(a2.generation_id, 2);
  ASSERT_EQ(a2.members.size(), 1u);
  EXPECT_EQ(a2.members[0].member_id, a.member_id);
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(b))), GroupError::kUnknownMemberId);
}

TEST_F(GroupCoordinatorTest, MembersThatDoNotRejoinWithinTheRebalanceTimeoutAreDropped) {
  StartCoordinator();
  auto ra = JoinReq("", "a"), rb = JoinReq("", "b");
  ra.rebalance_timeout_ms = rb.rebalance_timeout_ms = 300;  // sessions stay 10 s
  auto [a, b] = FormGroup(ra, rb);
  auto rc = JoinReq("", "c");
  rc.rebalance_timeout_ms = 300;
  auto pc = Spawn(coord_->JoinGroup(rc));
  RunFor(20ms);
  ra.member_id = a.member_id;
  const auto start = Clock::now();
  auto pa = Spawn(coord_->JoinGroup(ra));
  JoinGroupResult a2 = Get(pa), c = Get(pc);
  EXPECT_GE(Clock::now() - start, 200ms) << "the join completed before the rebalance timeout";
  EXPECT_EQ(a2.error, GroupError::kNone);
  EXPECT_EQ(a2.generation_id, 2);
  EXPECT_EQ(c.generation_id, 2);
  ASSERT_EQ(a2.members.size(), 2u);
  EXPECT_EQ(a2.members[1].member_id, c.member_id);
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(b))), GroupError::kUnknownMemberId);
}

TEST_F(GroupCoordinatorTest, MembersThatDoNotSyncWithinTheRebalanceTimeoutAreDropped) {
  StartCoordinator();
  auto ra = JoinReq("", "a"), rb = JoinReq("", "b");
  ra.rebalance_timeout_ms = rb.rebalance_timeout_ms = 300;  // sessions stay 10 s
  auto pa = Spawn(coord_->JoinGroup(ra));
  RunFor(20ms);
  auto pb = Spawn(coord_->JoinGroup(rb));
  JoinGroupResult a = Get(pa), b = Get(pb);
  ASSERT_EQ(b.error, GroupError::kNone);
  ASSERT_EQ(Await(coord_->SyncGroup(SyncReq(a, {{a.member_id, "x"}, {b.member_id, "y"}}))).error, GroupError::kNone);
  // b heartbeats (so its session never expires) but never sends SyncGroup.
  const auto start = Clock::now();
  EXPECT_EQ(Await(HeartbeatUntilError(HbReq(b), 50ms), 5s), GroupError::kUnknownMemberId);
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(a))), GroupError::kRebalanceInProgress);
  ra.member_id = a.member_id;
  auto a2 = Await(coord_->JoinGroup(ra));
  EXPECT_EQ(a2.generation_id, 2);
  EXPECT_EQ(a2.members.size(), 1u);
}

TEST_F(GroupCoordinatorTest, LeaveTriggersARebalanceAndTheLeaderRoleMoves) {
  StartCoordinator();
  auto [a, b] = FormGroup();
  // v0-2 style: one member; the leader leaves.
  LeaveGroupResult l = Await(coord_->LeaveGroup({"g", {{a.member_id, std::nullopt, "bye"}}}));
  EXPECT_EQ(l.error, GroupError::kNone);
  ASSERT_EQ(l.members.size(), 1u);
  EXPECT_EQ(l.members[0].error, GroupError::kNone);
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(b))), GroupError::kRebalanceInProgress);
  auto b2 = Await(coord_->JoinGroup(JoinReq(b.member_id, "b")));
  EXPECT_EQ(b2.error, GroupError::kNone);
  EXPECT_EQ(b2.generation_id, 2);
  EXPECT_EQ(b2.leader, b.member_id);
  EXPECT_EQ(b2.members.size(), 1u);
  // Leaving twice, or an unknown member, or an unknown group: UNKNOWN_MEMBER_ID per member.
  l = Await(
      coord_->LeaveGroup({"g", {{a.member_id, std::nullopt, std::nullopt}, {"nobody", std::nullopt, std::nullopt}}}));
  ASSERT_EQ(l.members.size(), 2u);
  EXPECT_EQ(l.members[0].error, GroupError::kUnknownMemberId);
  EXPECT_EQ(l.members[1].error, GroupError::kUnknownMemberId);
  l = Await(coord_->LeaveGroup({"other", {{"x", std::nullopt, std::nullopt}}}));
  EXPECT_EQ(l.error, GroupError::kNone);
  EXPECT_EQ(l.members[0].error, GroupError::kUnknownMemberId);
  EXPECT_EQ(Await(coord_->LeaveGroup({"", {}})).error, GroupError::kInvalidGroupId);
  // The last member leaves: the group is Empty, a new generation.
  ASSERT_TRUE(Await(coord_->SyncGroup(SyncReq(b2, {{b.member_id, "x"}}))).error == GroupError::kNone);
  l = Await(coord_->LeaveGroup({"g", {{b.member_id, std::nullopt, std::nullopt}}}));
  EXPECT_EQ(l.members[0].error, GroupError::kNone);
  RunUntil([&] { return Describe().state == "Empty"; }, 1s);
  EXPECT_EQ(Describe().state, "Empty");
  EXPECT_TRUE(Describe().members.empty());
}

TEST_F(GroupCoordinatorTest, MemberIdRequiredRoundTrip) {
  StartCoordinator();
  auto first = Await(coord_->JoinGroup(JoinReq("", "a", /*version=*/4)));
  EXPECT_EQ(first.error, GroupError::kMemberIdRequired);
  EXPECT_EQ(first.member_id.rfind("a-", 0), 0u) << first.member_id;
  EXPECT_EQ(first.generation_id, -1);
  auto second = Await(coord_->JoinGroup(JoinReq(first.member_id, "a", 4)));
  EXPECT_EQ(second.error, GroupError::kNone);
  EXPECT_EQ(second.member_id, first.member_id);
  EXPECT_EQ(second.leader, first.member_id);
  EXPECT_EQ(second.generation_id, 1);
  // A made-up member id is not accepted.
  EXPECT_EQ(Await(coord_->JoinGroup(JoinReq("a-made-up", "a", 4))).error, GroupError::kUnknownMemberId);
  // And an unknown group with a member id: UNKNOWN_MEMBER_ID (e.g. after a restart).
  auto r = JoinReq("a-old", "a", 4);
  r.group_id = "fresh";
  EXPECT_EQ(Await(coord_->JoinGroup(r)).error, GroupError::kUnknownMemberId);
}

TEST_F(GroupCoordinatorTest, APendingMemberThatNeverRejoinsHoldsTheRebalanceOnlyForItsSessionTimeout) {
  StartCoordinator();
  auto [a, b] = FormGroup();
  auto rp = JoinReq("", "p", 4);
  rp.session_timeout_ms = 300;
  auto pending = Await(coord_->JoinGroup(rp));
  ASSERT_EQ(pending.error, GroupError::kMemberIdRequired);
  // A metadata change by b starts a rebalance; a and b rejoin but p never comes back.
  auto rb = JoinReq(b.member_id, "b");
  rb.protocols[0].metadata = "sub-b-2";
  const auto start = Clock::now();
  auto pb = Spawn(coord_->JoinGroup(rb));
  auto pa = Spawn(coord_->JoinGroup(JoinReq(a.member_id, "a")));
  JoinGroupResult a2 = Get(pa), b2 = Get(pb);
  EXPECT_GE(Clock::now() - start, 250ms) << "the join did not wait for the pending member";
  EXPECT_EQ(a2.generation_id, 2);
  ASSERT_EQ(a2.members.size(), 2u);
  EXPECT_EQ(a2.members[1].metadata, "sub-b-2");
  EXPECT_EQ(b2.error, GroupError::kNone);
}

TEST_F(GroupCoordinatorTest, InconsistentProtocolsAreRefusedAndTheMostVotedCommonProtocolWins) {
  StartCoordinator();
  auto ra = JoinReq("", "a");
  ra.protocols = {{"range", "ma-r"}, {"roundrobin", "ma-rr"}};
  auto pa = Spawn(coord_->JoinGroup(ra));
  RunFor(20ms);
  auto rb = JoinReq("", "b");
  rb.protocols = {{"cooperative-sticky", "mb"}};
  EXPECT_EQ(Await(coord_->JoinGroup(rb)).error, GroupError::kInconsistentGroupProtocol);
  auto rt = JoinReq("", "t");
  rt.protocol_type = "connect";
  rt.protocols = {{"range", "x"}};
  EXPECT_EQ(Await(coord_->JoinGroup(rt)).error, GroupError::kInconsistentGroupProtocol);
  auto rn = JoinReq("", "n");
  rn.protocols.clear();
  EXPECT_EQ(Await(coord_->JoinGroup(rn)).error, GroupError::kInconsistentGroupProtocol);
  // b and c prefer roundrobin: it wins over a's range (2 votes to 1).
  rb.protocols = {{"roundrobin", "mb-rr"}, {"range", "mb-r"}};
  auto rc = JoinReq("", "c");
  rc.protocols = {{"roundrobin", "mc-rr"}, {"range", "mc-r"}};
  auto pb = Spawn(coord_->JoinGroup(rb));
  auto pc = Spawn(coord_->JoinGroup(rc));
  JoinGroupResult a = Get(pa), b = Get(pb), c = Get(pc);
  ASSERT_EQ(a.error, GroupError::kNone);
  EXPECT_EQ(a.protocol_name, "roundrobin");
  EXPECT_EQ(c.protocol_name, "roundrobin");
  ASSERT_EQ(a.members.size(), 3u);
  EXPECT_EQ(a.members[0].metadata, "ma-rr") << "the leader gets each member's metadata for the chosen protocol";
  EXPECT_EQ(a.members[1].metadata, "mb-rr");
  // SyncGroup v5 checks the protocol type and name.
  auto s = SyncReq(b);
  s.protocol_type = "consumer";
  s.protocol_name = "range";
  EXPECT_EQ(Await(coord_->SyncGroup(s)).error, GroupError::kInconsistentGroupProtocol);
}

TEST_F(GroupCoordinatorTest, InvalidRequestsAreRefused) {
  StartCoordinator();
  auto r = JoinReq("", "a");
  r.session_timeout_ms = 5;
  EXPECT_EQ(Await(coord_->JoinGroup(r)).error, GroupError::kInvalidSessionTimeout);
  r.session_timeout_ms = 70000;
  EXPECT_EQ(Await(coord_->JoinGroup(r)).error, GroupError::kInvalidSessionTimeout);
  r = JoinReq("", "a");
  r.group_id = "";
  EXPECT_EQ(Await(coord_->JoinGroup(r)).error, GroupError::kInvalidGroupId);
  EXPECT_EQ(Await(coord_->Heartbeat({"nogroup", 1, "m", std::nullopt})), GroupError::kUnknownMemberId);
  SyncGroupRequest s;
  s.group_id = "nogroup";
  s.member_id = "m";
  EXPECT_EQ(Await(coord_->SyncGroup(s)).error, GroupError::kUnknownMemberId);
}

TEST_F(GroupCoordinatorTest, GroupMaxSizeIsEnforced) {
  auto o = Options();
  o.max_group_size = 1;
  StartCoordinator(o);
  auto pa = Spawn(coord_->JoinGroup(JoinReq("", "a")));
  RunFor(20ms);
  EXPECT_EQ(Await(coord_->JoinGroup(JoinReq("", "b"))).error, GroupError::kGroupMaxSizeReached);
  EXPECT_EQ(Get(pa).error, GroupError::kNone);
}

TEST_F(GroupCoordinatorTest, KnownMemberJoinWhileStable) {
  StartCoordinator();
  auto [a, b] = FormGroup();
  // A follower rejoining with unchanged metadata gets the current generation, no rebalance.
  auto same = Await(coord_->JoinGroup(JoinReq(b.member_id, "b")));
  EXPECT_EQ(same.error, GroupError::kNone);
  EXPECT_EQ(same.generation_id, 1);
  EXPECT_EQ(Describe().state, "Stable");
  // A follower with new metadata (a cooperative-sticky rejoin) starts a rebalance.
  auto rb = JoinReq(b.member_id, "b");
  rb.protocols[0].metadata = "sub-b-owned";
  auto pb = Spawn(coord_->JoinGroup(rb));
  RunFor(30ms);
  EXPECT_EQ(Describe().state, "PreparingRebalance");
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(a))), GroupError::kRebalanceInProgress);
  auto a2 = Await(coord_->JoinGroup(JoinReq(a.member_id, "a")));
  EXPECT_EQ(a2.generation_id, 2);
  EXPECT_EQ(Get(pb).generation_id, 2);
  ASSERT_EQ(a2.members.size(), 2u);
  EXPECT_EQ(a2.members[1].metadata, "sub-b-owned");
  // A repeated join during CompletingRebalance with the same metadata repeats the answer.
  auto again = Await(coord_->JoinGroup(JoinReq(a.member_id, "a")));
  EXPECT_EQ(again.generation_id, 2);
  EXPECT_EQ(again.members.size(), 2u);
  EXPECT_EQ(Describe().state, "CompletingRebalance");
}

TEST_F(GroupCoordinatorTest, StaticMemberReplacementFencesTheOldMemberId) {
  StartCoordinator();
  auto ra = JoinReq("", "a", 5);
  ra.group_instance_id = "instance-a";
  auto [a, b] = FormGroup(ra, JoinReq("", "b", 3));
  EXPECT_EQ(a.member_id.rfind("instance-a-", 0), 0u) << "a static member's id starts with its instance id";
  // The same instance restarts: empty member id, same instance id, same metadata.
  auto fresh = Await(coord_->JoinGroup(ra));
  ASSERT_EQ(fresh.error, GroupError::kNone);
  EXPECT_NE(fresh.member_id, a.member_id);
  EXPECT_EQ(fresh.generation_id, 1) << "no rebalance for a static member's restart";
  EXPECT_EQ(fresh.leader, a.member_id) << "the old leader id, so the new instance does not reassign";
  EXPECT_EQ(Describe().state, "Stable");
  auto s = SyncReq(fresh);
  s.group_instance_id = "instance-a";
  auto sync = Await(coord_->SyncGroup(s));
  EXPECT_EQ(sync.error, GroupError::kNone);
  EXPECT_EQ(sync.assignment, "assign-a") << "the new instance takes the old one's assignment";
  // The old member id is fenced everywhere.
  HeartbeatRequest old_hb{"g", 1, a.member_id, "instance-a"};
  EXPECT_EQ(Await(coord_->Heartbeat(old_hb)), GroupError::kFencedInstanceId);
  auto old_sync = SyncReq(a);
  old_sync.group_instance_id = "instance-a";
  EXPECT_EQ(Await(coord_->SyncGroup(old_sync)).error, GroupError::kFencedInstanceId);
  auto old_join = ra;
  old_join.member_id = a.member_id;
  EXPECT_EQ(Await(coord_->JoinGroup(old_join)).error, GroupError::kFencedInstanceId);
  auto old_commit = CommitReq(1, a.member_id, 10);
  old_commit.group_instance_id = "instance-a";
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(old_commit))), GroupError::kFencedInstanceId);
  LeaveGroupResult l = Await(coord_->LeaveGroup({"g", {{a.member_id, "instance-a", std::nullopt}}}));
  EXPECT_EQ(l.members[0].error, GroupError::kFencedInstanceId);
  HeartbeatRequest new_hb{"g", 1, fresh.member_id, "instance-a"};
  EXPECT_EQ(Await(coord_->Heartbeat(new_hb)), GroupError::kNone);
  // LeaveGroup v3+ by instance id alone removes the current member: a rebalance.
  l = Await(coord_->LeaveGroup({"g", {{"", "instance-a", std::nullopt}}}));
  EXPECT_EQ(l.members[0].error, GroupError::kNone);
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(b))), GroupError::kRebalanceInProgress);
}

TEST_F(GroupCoordinatorTest, StaticMemberRejoiningWithNewMetadataRebalances) {
  StartCoordinator();
  auto ra = JoinReq("", "a", 5);
  ra.group_instance_id = "instance-a";
  auto [a, b] = FormGroup(ra, JoinReq("", "b", 3));
  ra.protocols[0].metadata = "sub-a-new";
  auto pa = Spawn(coord_->JoinGroup(ra));
  RunFor(30ms);
  EXPECT_EQ(Describe().state, "PreparingRebalance");
  auto b2 = Await(coord_->JoinGroup(JoinReq(b.member_id, "b")));
  JoinGroupResult a2 = Get(pa);
  EXPECT_EQ(a2.generation_id, 2);
  EXPECT_NE(a2.member_id, a.member_id);
  EXPECT_EQ(a2.leader, a2.member_id) << "the leader role follows the instance";
  ASSERT_EQ(a2.members.size(), 2u);
  EXPECT_EQ(a2.members[0].group_instance_id, "instance-a");
  EXPECT_EQ(a2.members[0].metadata, "sub-a-new");
  EXPECT_EQ(b2.generation_id, 2);
}

TEST_F(GroupCoordinatorTest, OffsetCommitAndFetchInAssignMode) {
  StartCoordinator();
  // A simple consumer: generation -1, no member id, a group nobody joined.
  OffsetCommitRequest c = CommitReq(-1, "", 42, "simple");
  c.topics.push_back({"users", {{1, 7, -1, std::nullopt}, {2, 8, -1, std::string(5000, 'x')}}});
  OffsetCommitResult r = Await(coord_->OffsetCommit(c));
  ASSERT_EQ(r.topics.size(), 2u);
  EXPECT_EQ(r.topics[0].name, "orders");
  EXPECT_EQ(r.topics[0].partitions[0].error, GroupError::kNone);
  EXPECT_EQ(r.topics[1].partitions[0].partition, 1);
  EXPECT_EQ(r.topics[1].partitions[0].error, GroupError::kNone);
  EXPECT_EQ(r.topics[1].partitions[1].error, GroupError::kOffsetMetadataTooLarge);

  OffsetFetchResult f = Await(coord_->OffsetFetch({"simple", std::vector<OffsetFetchTopic>{{"orders", {0, 5}}}}));
  EXPECT_EQ(f.error, GroupError::kNone);
  ASSERT_EQ(f.topics.size(), 1u);
  ASSERT_EQ(f.topics[0].partitions.size(), 2u);
  EXPECT_EQ(f.topics[0].partitions[0].committed_offset, 42);
  EXPECT_EQ(f.topics[0].partitions[0].committed_leader_epoch, 3);
  EXPECT_EQ(f.topics[0].partitions[0].metadata, "m");
  EXPECT_EQ(f.topics[0].partitions[1].partition, 5);
  EXPECT_EQ(f.topics[0].partitions[1].committed_offset, -1);
  EXPECT_EQ(f.topics[0].partitions[1].committed_leader_epoch, -1);
  EXPECT_EQ(f.topics[0].partitions[1].metadata, "");
  // Null topics: every committed partition; the oversized one was not stored.
  f = Await(coord_->OffsetFetch({"simple", std::nullopt}));
  ASSERT_EQ(f.topics.size(), 2u);
  EXPECT_EQ(f.topics[0].name, "orders");
  EXPECT_EQ(f.topics[1].name, "users");
  ASSERT_EQ(f.topics[1].partitions.size(), 1u);
  EXPECT_EQ(f.topics[1].partitions[0].committed_offset, 7);
  // An unknown group: -1 everywhere, no error; null topics: nothing.
  f = Await(coord_->OffsetFetch({"unknown", std::vector<OffsetFetchTopic>{{"orders", {0}}}}));
  EXPECT_EQ(f.error, GroupError::kNone);
  EXPECT_EQ(f.topics[0].partitions[0].committed_offset, -1);
  EXPECT_TRUE(Await(coord_->OffsetFetch({"unknown", std::nullopt})).topics.empty());
  // The commit made a group that exists in state Empty.
  EXPECT_EQ(Describe("simple").state, "Empty");
  // A commit with a generation to a group that does not exist: ILLEGAL_GENERATION.
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(3, "m", 1, "nogroup")))), GroupError::kIllegalGeneration);
}

TEST_F(GroupCoordinatorTest, OffsetCommitInGroupModeChecksMemberAndGeneration) {
  StartCoordinator();
  auto [a, b] = FormGroup();
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(0, a.member_id, 5)))), GroupError::kIllegalGeneration);
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(1, "stranger", 5)))), GroupError::kUnknownMemberId);
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(-1, "", 5)))), GroupError::kUnknownMemberId)
      << "a simple consumer may not commit for a group with members";
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(1, a.member_id, 5)))), GroupError::kNone);
  auto f = Await(coord_->OffsetFetch({"g", std::vector<OffsetFetchTopic>{{"orders", {0}}}}));
  EXPECT_EQ(f.topics[0].partitions[0].committed_offset, 5);
  // PreparingRebalance: commits of the current generation are still accepted.
  auto pc = Spawn(coord_->JoinGroup(JoinReq("", "c")));
  RunFor(30ms);
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(1, b.member_id, 6)))), GroupError::kNone);
  // CompletingRebalance: REBALANCE_IN_PROGRESS.
  auto pa = Spawn(coord_->JoinGroup(JoinReq(a.member_id, "a")));
  auto pb = Spawn(coord_->JoinGroup(JoinReq(b.member_id, "b")));
  JoinGroupResult a2 = Get(pa);
  Get(pb);
  Get(pc);
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(2, a.member_id, 7)))), GroupError::kRebalanceInProgress);
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(1, a.member_id, 7)))), GroupError::kIllegalGeneration);
  f = Await(coord_->OffsetFetch({"g", std::vector<OffsetFetchTopic>{{"orders", {0}}}}));
  EXPECT_EQ(f.topics[0].partitions[0].committed_offset, 6);
  (void)a2;
}

TEST_F(GroupCoordinatorTest, CommittedOffsetsSurviveARestart) {
  const fs::path dir = fs::temp_directory_path() / ("thaw-groups-" + std::to_string(std::random_device{}()));
  auto o = Options();
  o.state_dir = dir.string();
  StartCoordinator(o);
  auto [a, b] = FormGroup();
  ASSERT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(1, a.member_id, 1234)))), GroupError::kNone);
  ASSERT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(-1, "", 99, "simple")))), GroupError::kNone);
  StopCoordinator();
  EXPECT_TRUE(fs::exists(dir / "groups.sqlite"));

  StartCoordinator(o);
  auto f = Await(coord_->OffsetFetch({"g", std::nullopt}));
  ASSERT_EQ(f.topics.size(), 1u);
  EXPECT_EQ(f.topics[0].partitions[0].committed_offset, 1234);
  EXPECT_EQ(f.topics[0].partitions[0].committed_leader_epoch, 3);
  EXPECT_EQ(f.topics[0].partitions[0].metadata, "m");
  f = Await(coord_->OffsetFetch({"simple", std::vector<OffsetFetchTopic>{{"orders", {0}}}}));
  EXPECT_EQ(f.topics[0].partitions[0].committed_offset, 99);
  // Membership is not persisted: the group is Empty, old members must rejoin.
  EXPECT_EQ(Describe().state, "Empty");
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(a))), GroupError::kUnknownMemberId);
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(1, a.member_id, 5)))), GroupError::kUnknownMemberId);
  // Deleting the group deletes its offsets durably.
  auto del = Await(coord_->DeleteGroups({"simple"}));
  ASSERT_EQ(del.size(), 1u);
  EXPECT_EQ(del[0].error, GroupError::kNone);
  StopCoordinator();
  StartCoordinator(o);
  EXPECT_TRUE(Await(coord_->OffsetFetch({"simple", std::nullopt})).topics.empty());
  EXPECT_EQ(Await(coord_->OffsetFetch({"g", std::nullopt})).topics.size(), 1u);
  StopCoordinator();
  fs::remove_all(dir);
}

TEST_F(GroupCoordinatorTest, DescribeListAndDeleteGroups) {
  StartCoordinator();
  ASSERT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(-1, "", 1, "offsets-only")))), GroupError::kNone);
  auto pa = Spawn(coord_->JoinGroup(JoinReq("", "a")));
  RunFor(30ms);
  auto states = [&](std::vector<std::string> filter) {
    std::vector<std::string> ids;
    for (const auto& g : Await(coord_->ListGroups(std::move(filter), {}))) ids.push_back(g.group_id + ":" + g.state);
    return ids;
  };
  EXPECT_EQ(states({}), (std::vector<std::string>{"g:PreparingRebalance", "offsets-only:Empty"}));
  JoinGroupResult a = Get(pa);
  EXPECT_EQ(states({"completingrebalance"}), (std::vector<std::string>{"g:CompletingRebalance"}));
  ASSERT_EQ(Await(coord_->SyncGroup(SyncReq(a, {{a.member_id, "x"}}))).error, GroupError::kNone);
  EXPECT_EQ(states({"Stable"}), (std::vector<std::string>{"g:Stable"}));
  EXPECT_EQ(states({"Empty", "Dead"}), (std::vector<std::string>{"offsets-only:Empty"}));
  auto listed = Await(coord_->ListGroups({}, {"Classic"}));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].protocol_type, "consumer");
  EXPECT_EQ(listed[0].group_type, "classic");
  EXPECT_EQ(listed[1].protocol_type, "");
  EXPECT_TRUE(Await(coord_->ListGroups({}, {"consumer"})).empty()) << "no KIP-848 groups";

  auto del = Await(coord_->DeleteGroups({"g", "offsets-only", "missing"}));
  ASSERT_EQ(del.size(), 3u);
  EXPECT_EQ(del[0].error, GroupError::kNonEmptyGroup);
  EXPECT_EQ(del[1].error, GroupError::kNone);
  EXPECT_EQ(del[2].error, GroupError::kGroupIdNotFound);
  EXPECT_EQ(Describe("offsets-only", 5).state, "Dead");
  EXPECT_EQ(Describe("offsets-only", 5).error, GroupError::kNone);
  EXPECT_EQ(Describe("offsets-only", 6).error, GroupError::kGroupIdNotFound);
  EXPECT_EQ(states({}), (std::vector<std::string>{"g:Stable"}));
}

TEST_F(GroupCoordinatorTest, StopAnswersWaitingCallsAndLaterOnes) {
  StartCoordinator();
  auto [a, b] = FormGroup();
  auto pc = Spawn(coord_->JoinGroup(JoinReq("", "c")));
  RunFor(30ms);
  ASSERT_FALSE(pc->has_value());
  ASSERT_TRUE(Await(coord_->Stop()).ok());
  EXPECT_EQ(Get(pc).error, GroupError::kCoordinatorNotAvailable);
  EXPECT_EQ(Await(coord_->Heartbeat(HbReq(a))), GroupError::kCoordinatorNotAvailable);
  EXPECT_EQ(Await(coord_->OffsetFetch({"g", std::nullopt})).error, GroupError::kCoordinatorNotAvailable);
  EXPECT_EQ(CommitError(Await(coord_->OffsetCommit(CommitReq(1, a.member_id, 5)))),
            GroupError::kCoordinatorNotAvailable);
  EXPECT_TRUE(Await(coord_->Stop()).ok()) << "Stop is idempotent";
}

}  // namespace
}  // namespace thaw::kafka::server
