// ACLs as the handlers apply them (handlers/authorize.h), on logs of fake
// topics: Metadata leaves out what the principal may not DESCRIBE and
// answers TOPIC_AUTHORIZATION_FAILED for it named, served or not; Fetch
// needs READ, ListOffsets and OffsetForLeaderEpoch DESCRIBE; FindCoordinator
// DESCRIBE on the group; without ACLs everything is allowed.
#include "thaw/kafka/server/handlers/authorize.h"

#include <gtest/gtest.h>

#include <map>

#include "thaw/kafka/server/handlers/handlers.h"

namespace thaw::kafka::server {
namespace {

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
  void ReadAhead(int32_t, int64_t) override {}
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
constexpr int16_t kTopicDenied = static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);

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
  ~HandlerAcls() override { pool_.join(); }

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
  EXPECT_TRUE(r.responses[0].partitions[0].records.value_or("").empty());
  EXPECT_EQ(r.responses[1].partitions[0].error_code, 0);
  EXPECT_EQ(r.responses[1].partitions[0].records.value_or(""), "batch");
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

}  // namespace
}  // namespace thaw::kafka::server
