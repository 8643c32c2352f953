// ACLs as the handlers apply them (handlers/authorize.h), on logs of fake
// topics: Metadata leaves out what the principal may not DESCRIBE and
// answers TOPIC_AUTHORIZATION_FAILED for it named, served or not; Fetch
// needs READ, ListOffsets and OffsetForLeaderEpoch DESCRIBE; FindCoordinator
// DESCRIBE on the group; the group APIs READ / DESCRIBE / DELETE on the group
// and OffsetCommit / OffsetFetch the topics too (against a real in-memory
// group coordinator); without ACLs everything is allowed.
#include "thaw/kafka/server/handlers/authorize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "thaw/kafka/server/group_coordinator.h"
#include "thaw/kafka/server/handlers/handlers.h"

namespace thaw::kafka::server {
namespace {

// A Fetch partition's records as the wire carries them: its own bytes,
// then the batches it references.
std::string RecordsOf(const msg::FetchResponse::PartitionData& p) {
  std::string out = p.records.value_or("");
  for (const auto& b : p.records_shared) out += *b;
  return out;
}

class FakeLog : public TopicLog {
 public:
  FakeLog(std::string name, uint8_t id) : name_(std::move(name)) { id_.bytes[15] = id; }
  const std::string& name() const override { return name_; }
  Uuid topic_id() const override { return id_; }
  int32_t partition_count() const override { return 1; }
  Result<PartitionOffsets> Offsets(int32_t) override { return PartitionOffsets{0, 10, 0}; }
  Result<std::optional<OffsetAndTime>> OffsetForTime(int32_t, int64_t) override {
    return std::optional<OffsetAndTime>();
  }
  Result<std::optional<OffsetAndTime>> MaxTimestamp(int32_t) override { return std::optional<OffsetAndTime>(); }
  Result<FetchResult> Fetch(int32_t, int64_t, int64_t) override {
    FetchResult r;
    r.offsets = {0, 10, 0};
    r.batches.push_back(std::make_shared<const std::string>("batch"));
    r.bytes = 5;
    return r;
  }
  void ReadAhead(int32_t, int64_t, int64_t) override {}
  int32_t LeaderEpoch(int32_t) const override { return 0; }
  int32_t LeaderEpochAt(int32_t, int64_t) const override { return 0; }
  Result<std::pair<int32_t, int64_t>> EndOffsetForEpoch(int32_t, int32_t) override {
    return std::pair<int32_t, int64_t>{0, 10};
  }
  ErrorCode CheckLeaderEpoch(int32_t, int32_t) const override { return ErrorCode::kNone; }
  Status RefreshIfChanged() override { return Status::OK(); }

 private:
  std::string name_;
  Uuid id_;
};

class FakeLogs : public TopicLogs {
 public:
  explicit FakeLogs(std::vector<std::shared_ptr<TopicLog>> logs) : logs_(std::move(logs)) {}
  std::shared_ptr<TopicLog> Find(std::string_view name) const override {
    for (const auto& l : logs_) {
      if (l->name() == name) return l;
    }
    return nullptr;
  }
  std::shared_ptr<TopicLog> FindById(const Uuid& id) const override {
    for (const auto& l : logs_) {
      if (l->topic_id() == id) return l;
    }
    return nullptr;
  }
  std::vector<std::shared_ptr<TopicLog>> All() const override { return logs_; }
  Status RefreshAll() override { return Status::OK(); }

 private:
  std::vector<std::shared_ptr<TopicLog>> logs_;
};

constexpr int16_t kMetadataKey = 3, kFetchKey = 1, kListOffsetsKey = 2, kFindCoordinatorKey = 10;
constexpr int16_t kOffsetCommitKey = 8, kOffsetFetchKey = 9, kJoinGroupKey = 11, kDescribeGroupsKey = 15,
                  kListGroupsKey = 16, kDeleteGroupsKey = 42;
constexpr int16_t kTopicDenied = static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);
constexpr int16_t kGroupDenied = static_cast<int16_t>(ErrorCode::kGroupAuthorizationFailed);

class HandlerAcls : public ::testing::Test {
 protected:
  HandlerAcls() : logs_({std::make_shared<FakeLog>("A", 1), std::make_shared<FakeLog>("B", 2)}), pool_(1) {
    broker_.topics = &logs_;
    broker_.blocking = &pool_;
    // Without SASL every connection is User:ANONYMOUS.
    auto acl = Authorizer::Parse(
        "allow User:ANONYMOUS READ topic A\n"
        "allow User:ANONYMOUS READ group g\n",
        "test");
    EXPECT_TRUE(acl.ok()) << acl.status().message();
    acl_ = *acl;
  }
  ~HandlerAcls() override {
    if (coordinator_) {
      asio::io_context io;
      asio::co_spawn(io, coordinator_->Stop(), asio::detached);
      io.run();
      coordinator_.reset();
    }
    coordinator_guard_.reset();
    coordinator_thread_.join();
    pool_.join();
  }

  void StartCoordinator() {
    auto c = GroupCoordinator::Make(coordinator_io_.get_executor(), GroupCoordinatorOptions{});
    ASSERT_TRUE(c.ok()) << c.status().message();
    coordinator_ = std::move(*c);
    broker_.groups = coordinator_.get();
  }

  void UseAcls(std::string_view text) {
    auto acl = Authorizer::Parse(text, "test");
    ASSERT_TRUE(acl.ok()) << acl.status().message();
    acl_ = *acl;
  }

  msg::OffsetCommitResponse Commit(const std::string& group, const std::vector<std::pair<std::string, int64_t>>& at,
                                   bool with_acl = true) {
    msg::OffsetCommitRequest req;
    req.group_id = group;
    for (const auto& [topic, offset] : at) {
      auto& t = req.topics.emplace_back();
      t.name = topic;
      t.partitions.emplace_back().committed_offset = offset;
    }
    return Call(HandleOffsetCommit, kOffsetCommitKey, 8, req, with_acl);
  }

  template <typename Resp, typename Req>
  Resp Call(asio::awaitable<Resp> (*handler)(RequestContext&, const Req&), int16_t key, int16_t version, const Req& req,
            bool with_acl = true) {
    RequestContext ctx{broker_, key, version, 1, "test", "127.0.0.1:1"};
    ctx.acl = with_acl ? acl_.get() : nullptr;
    asio::io_context io;
    std::optional<Resp> out;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { out = co_await handler(ctx, req); }, asio::detached);
    io.run();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : Resp{};
  }

  static std::vector<std::pair<std::string, int16_t>> Topics(const msg::MetadataResponse& r) {
    std::vector<std::pair<std::string, int16_t>> out;
    for (const auto& t : r.topics) out.emplace_back(t.name.value_or("<null>"), t.error_code);
    return out;
  }

  FakeLogs logs_;
  asio::thread_pool pool_;
  asio::io_context coordinator_io_;
  asio::executor_work_guard<asio::io_context::executor_type> coordinator_guard_{coordinator_io_.get_executor()};
  std::thread coordinator_thread_{[this] { coordinator_io_.run(); }};
  std::unique_ptr<GroupCoordinator> coordinator_;
  Broker broker_;
  std::shared_ptr<const Authorizer> acl_;
};

TEST_F(HandlerAcls, PrincipalWithoutSaslIsAnonymous) {
  RequestContext ctx{broker_, 0, 0, 0, "", ""};
  EXPECT_EQ(Principal(ctx), kAnonymousPrincipal);
  EXPECT_TRUE(Authorized(ctx, AclOperation::kRead, AclResourceType::kTopic, "B"));  // no ACLs: allowed
  ctx.acl = acl_.get();
  EXPECT_TRUE(Authorized(ctx, AclOperation::kDescribe, AclResourceType::kTopic, "A"));
  EXPECT_FALSE(Authorized(ctx, AclOperation::kDescribe, AclResourceType::kTopic, "B"));
}

TEST_F(HandlerAcls, MetadataHidesWhatCannotBeDescribed) {
  msg::MetadataRequest all;
  all.topics = std::nullopt;
  using V = std::vector<std::pair<std::string, int16_t>>;
  EXPECT_EQ(Topics(Call(HandleMetadata, kMetadataKey, 12, all)), (V{{"A", 0}}));
  EXPECT_EQ(Topics(Call(HandleMetadata, kMetadataKey, 12, all, false)), (V{{"A", 0}, {"B", 0}}));
  // v0: an empty list is every topic.
  msg::MetadataRequest v0;
  EXPECT_EQ(Topics(Call(HandleMetadata, kMetadataKey, 0, v0)), (V{{"A", 0}}));

  // Named: B and an unknown topic look the same, TOPIC_AUTHORIZATION_FAILED.
  msg::MetadataRequest named;
  for (const char* n : {"A", "B", "nope"}) named.topics->emplace_back().name = n;
  auto r = Call(HandleMetadata, kMetadataKey, 12, named);
  EXPECT_EQ(Topics(r), (V{{"A", 0}, {"B", kTopicDenied}, {"nope", kTopicDenied}}));
  EXPECT_TRUE(r.topics[1].partitions.empty());
  EXPECT_TRUE(r.topics[1].topic_id.IsZero());
  EXPECT_EQ(Topics(Call(HandleMetadata, kMetadataKey, 12, named, false)),
            (V{{"A", 0}, {"B", 0}, {"nope", static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition)}}));

  // By id: B's id is denied without its name; an unknown id stays unknown.
  msg::MetadataRequest by_id;
  by_id.topics->emplace_back().name = std::nullopt;
  by_id.topics->back().topic_id = logs_.Find("B")->topic_id();
  by_id.topics->emplace_back().name = std::nullopt;
  by_id.topics->back().topic_id.bytes[0] = 9;
  r = Call(HandleMetadata, kMetadataKey, 12, by_id);
  EXPECT_EQ(Topics(r), (V{{"<null>", kTopicDenied}, {"<null>", static_cast<int16_t>(ErrorCode::kUnknownTopicId)}}));
  EXPECT_EQ(r.topics[0].topic_id, logs_.Find("B")->topic_id());
}

TEST_F(HandlerAcls, FetchNeedsRead) {
  auto acl = Authorizer::Parse("allow User:ANONYMOUS DESCRIBE topic A\nallow User:ANONYMOUS READ topic B\n", "t");
  ASSERT_TRUE(acl.ok());
  acl_ = *acl;
  msg::FetchRequest req;
  req.max_wait_ms = 0;
  for (const char* n : {"A", "B", "nope"}) {
    auto& t = req.topics.emplace_back();
    t.topic = n;
    t.partitions.emplace_back().partition_max_bytes = 1 << 20;
  }
  auto r = Call(HandleFetch, kFetchKey, 12, req);
  ASSERT_EQ(r.responses.size(), 3u);
  EXPECT_EQ(r.responses[0].partitions[0].error_code, kTopicDenied);  // DESCRIBE is not READ
  EXPECT_TRUE(RecordsOf(r.responses[0].partitions[0]).empty());
  EXPECT_EQ(r.responses[1].partitions[0].error_code, 0);
  EXPECT_EQ(RecordsOf(r.responses[1].partitions[0]), "batch");
  EXPECT_EQ(r.responses[2].partitions[0].error_code, kTopicDenied);  // unknown, but denied first

  // By id (v13+): an unknown id names nothing to check.
  msg::FetchRequest by_id;
  by_id.max_wait_ms = 0;
  by_id.topics.emplace_back().topic_id = logs_.Find("A")->topic_id();
  by_id.topics.back().partitions.emplace_back().partition_max_bytes = 1 << 20;
  by_id.topics.emplace_back().topic_id.bytes[0] = 9;
  by_id.topics.back().partitions.emplace_back().partition_max_bytes = 1 << 20;
  r = Call(HandleFetch, kFetchKey, 13, by_id);
  EXPECT_EQ(r.responses[0].partitions[0].error_code, kTopicDenied);
  EXPECT_EQ(r.responses[1].partitions[0].error_code, static_cast<int16_t>(ErrorCode::kUnknownTopicId));
}

TEST_F(HandlerAcls, ListOffsetsNeedsDescribe) {
  auto acl = Authorizer::Parse("allow User:ANONYMOUS DESCRIBE topic A\n", "t");
  ASSERT_TRUE(acl.ok());
  acl_ = *acl;
  msg::ListOffsetsRequest req;
  for (const char* n : {"A", "B"}) {
    auto& t = req.topics.emplace_back();
    t.name = n;
    t.partitions.emplace_back().timestamp = -1;
  }
  auto r = Call(HandleListOffsets, kListOffsetsKey, 7, req);
  ASSERT_EQ(r.topics.size(), 2u);
  EXPECT_EQ(r.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(r.topics[0].partitions[0].offset, 10);
  EXPECT_EQ(r.topics[1].partitions[0].error_code, kTopicDenied);
  EXPECT_EQ(r.topics[1].partitions[0].offset, -1);
}

TEST_F(HandlerAcls, FindCoordinatorNeedsDescribeOnTheGroup) {
  msg::FindCoordinatorRequest req;
  req.key_type = 0;
  req.coordinator_keys = {"g", "h"};
  auto r = Call(HandleFindCoordinator, kFindCoordinatorKey, 4, req);
  ASSERT_EQ(r.coordinators.size(), 2u);
  EXPECT_EQ(r.coordinators[0].error_code, 0);
  EXPECT_EQ(r.coordinators[0].node_id, 0);
  EXPECT_EQ(r.coordinators[1].error_code, static_cast<int16_t>(ErrorCode::kGroupAuthorizationFailed));
  EXPECT_EQ(r.coordinators[1].node_id, -1);
  msg::FindCoordinatorRequest old;
  old.key = "h";
  auto r0 = Call(HandleFindCoordinator, kFindCoordinatorKey, 3, old);
  EXPECT_EQ(r0.error_code, static_cast<int16_t>(ErrorCode::kGroupAuthorizationFailed));
  EXPECT_EQ(Call(HandleFindCoordinator, kFindCoordinatorKey, 3, old, false).error_code, 0);
}

TEST_F(HandlerAcls, GroupsNeedReadOrDescribeOnTheGroupAndTopics) {
  StartCoordinator();
  UseAcls(
      "allow User:ANONYMOUS READ topic A\n"
      "allow User:ANONYMOUS DESCRIBE topic B\n"
      "allow User:ANONYMOUS READ group g\n");
  // Offsets committed without ACLs: g on A and B, h on A.
  for (const auto& t : Commit("g", {{"A", 5}, {"B", 7}}, false).topics) EXPECT_EQ(t.partitions[0].error_code, 0);
  EXPECT_EQ(Commit("h", {{"A", 3}}, false).topics[0].partitions[0].error_code, 0);

  // OffsetCommit: READ on the group, then on each topic (B is DESCRIBE only;
  // an unknown topic is denied before it is found unknown).
  auto c = Commit("g", {{"A", 6}, {"B", 8}, {"nope", 1}});
  ASSERT_EQ(c.topics.size(), 3u);
  EXPECT_EQ(c.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(c.topics[1].partitions[0].error_code, kTopicDenied);
  EXPECT_EQ(c.topics[2].partitions[0].error_code, kTopicDenied);
  c = Commit("h", {{"A", 4}});
  EXPECT_EQ(c.topics[0].partitions[0].error_code, kGroupDenied);

  // OffsetFetch v8: every topic leaves out what may not be described; named,
  // it is TOPIC_AUTHORIZATION_FAILED; a group not allowed has only the error.
  UseAcls(
      "allow User:ANONYMOUS READ topic A\n"
      "allow User:ANONYMOUS READ group g\n");
  msg::OffsetFetchRequest f;
  f.groups.emplace_back().group_id = "g";
  f.groups.back().topics = std::nullopt;
  f.groups.emplace_back().group_id = "h";
  f.groups.back().topics = std::nullopt;
  auto r = Call(HandleOffsetFetch, kOffsetFetchKey, 8, f);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].error_code, 0);
  ASSERT_EQ(r.groups[0].topics.size(), 1u);
  EXPECT_EQ(r.groups[0].topics[0].name, "A");
  EXPECT_EQ(r.groups[0].topics[0].partitions[0].committed_offset, 6);
  EXPECT_EQ(r.groups[1].error_code, kGroupDenied);
  EXPECT_TRUE(r.groups[1].topics.empty());
  // Without ACLs both topics are there (B's offset is still 7: the denied commit did nothing).
  auto open = Call(HandleOffsetFetch, kOffsetFetchKey, 8, f, false);
  ASSERT_EQ(open.groups[0].topics.size(), 2u);
  EXPECT_EQ(open.groups[0].topics[1].partitions[0].committed_offset, 7);

  msg::OffsetFetchRequest named;
  named.groups.emplace_back().group_id = "g";
  for (const char* n : {"B", "A"}) {
    auto& t = named.groups.back().topics->emplace_back();
    t.name = n;
    t.partition_indexes = {0};
  }
  r = Call(HandleOffsetFetch, kOffsetFetchKey, 8, named);
  ASSERT_EQ(r.groups[0].topics.size(), 2u);
  EXPECT_EQ(r.groups[0].topics[0].name, "B");  // in request order
  EXPECT_EQ(r.groups[0].topics[0].partitions[0].error_code, kTopicDenied);
  EXPECT_EQ(r.groups[0].topics[0].partitions[0].committed_offset, -1);
  EXPECT_EQ(r.groups[0].topics[1].partitions[0].error_code, 0);
  EXPECT_EQ(r.groups[0].topics[1].partitions[0].committed_offset, 6);
  // v1 has no top-level error: a denied group's error is on each partition.
  msg::OffsetFetchRequest v1;
  v1.group_id = "h";
  auto& t1 = v1.topics->emplace_back();
  t1.name = "A";
  t1.partition_indexes = {0};
  auto r1 = Call(HandleOffsetFetch, kOffsetFetchKey, 1, v1);
  ASSERT_EQ(r1.topics.size(), 1u);
  EXPECT_EQ(r1.topics[0].partitions[0].error_code, kGroupDenied);

  // DescribeGroups in request order; ListGroups only what may be described
  // (everything with DESCRIBE on the cluster); DeleteGroups needs DELETE.
  msg::DescribeGroupsRequest d;
  d.groups = {"h", "g"};
  auto dr = Call(HandleDescribeGroups, kDescribeGroupsKey, 5, d);
  ASSERT_EQ(dr.groups.size(), 2u);
  EXPECT_EQ(dr.groups[0].group_id, "h");
  EXPECT_EQ(dr.groups[0].error_code, kGroupDenied);
  EXPECT_EQ(dr.groups[1].group_id, "g");
  EXPECT_EQ(dr.groups[1].error_code, 0);
  auto names = [&](bool with_acl) {
    std::vector<std::string> out;
    for (const auto& g : Call(HandleListGroups, kListGroupsKey, 4, msg::ListGroupsRequest{}, with_acl).groups) {
      out.push_back(g.group_id);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(names(true), (std::vector<std::string>{"g"}));
  EXPECT_EQ(names(false), (std::vector<std::string>{"g", "h"}));
  msg::DeleteGroupsRequest del;
  del.groups_names = {"g"};
  EXPECT_EQ(Call(HandleDeleteGroups, kDeleteGroupsKey, 2, del).results[0].error_code, kGroupDenied);
  UseAcls("allow User:ANONYMOUS DESCRIBE cluster\nallow User:ANONYMOUS DELETE group g\n");
  EXPECT_EQ(names(true), (std::vector<std::string>{"g", "h"}));
  EXPECT_EQ(Call(HandleDeleteGroups, kDeleteGroupsKey, 2, del).results[0].error_code, 0);

  // JoinGroup: READ on the group (DELETE is not READ).
  msg::JoinGroupRequest j;
  j.group_id = "g";
  j.session_timeout_ms = 10000;
  j.protocol_type = "consumer";
  auto jr = Call(HandleJoinGroup, kJoinGroupKey, 7, j);
  EXPECT_EQ(jr.error_code, kGroupDenied);
  EXPECT_EQ(jr.generation_id, -1);
}

}  // namespace
}  // namespace thaw::kafka::server
