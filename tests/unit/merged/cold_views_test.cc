// `:cold_suffix` views' request surgery (merged/cold_views.h): views become
// probes of their base topics on the way up, the probes' answers become the
// views' on the way back, and Metadata gains the views and Thaw's broker.
#include <gtest/gtest.h>

#include "thaw/merged/cold_views.h"

namespace thaw::merged {
namespace {

namespace msg = kafka::msg;
using kafka::ErrorCode;

ColdViews Views() { return ColdViews({{"orders.cold", "orders"}}, "thaw-host", 19192); }

msg::FetchRequest::FetchPartition FetchPart(int32_t p, int64_t offset) {
  msg::FetchRequest::FetchPartition part;
  part.partition = p;
  part.fetch_offset = offset;
  part.partition_max_bytes = 1 << 20;
  part.current_leader_epoch = 7;
  return part;
}

TEST(ColdViews, AFetchOfAViewAsksTheBaseTopicForNoBytes) {
  msg::FetchRequest req;
  req.max_wait_ms = 500;
  req.topics.emplace_back().topic = "orders.cold";
  req.topics.back().partitions = {FetchPart(0, 5), FetchPart(1, 9)};
  const ProbePlan plan = PrepareFetch(Views(), req);
  ASSERT_EQ(req.topics.size(), 1u);
  EXPECT_EQ(req.topics[0].topic, "orders");
  ASSERT_EQ(req.topics[0].partitions.size(), 2u);
  for (const auto& p : req.topics[0].partitions) {
    EXPECT_EQ(p.partition_max_bytes, 0);
    EXPECT_EQ(p.current_leader_epoch, -1);  // the view's epochs are not the base's
  }
  EXPECT_TRUE(plan.only_views);
  EXPECT_EQ(req.max_wait_ms, 0);  // views alone: the probe must not wait
  ASSERT_EQ(plan.probes.size(), 2u);
  EXPECT_TRUE(plan.probes[0].added);

  // The upstream's answers: partition 0 readable (out of range: the table
  // serves it), partition 1 not authorized.
  msg::FetchResponse resp;
  auto& t = resp.responses.emplace_back();
  t.topic = "orders";
  t.partitions.emplace_back().partition_index = 0;
  t.partitions.back().error_code = static_cast<int16_t>(ErrorCode::kOffsetOutOfRange);
  t.partitions.back().records = std::string("probe bytes");
  t.partitions.emplace_back().partition_index = 1;
  t.partitions.back().error_code = static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);
  MoveProbeAnswers(plan, resp);
  ASSERT_EQ(resp.responses.size(), 1u);  // the probe-only base entry is gone
  EXPECT_EQ(resp.responses[0].topic, "orders.cold");
  ASSERT_EQ(resp.responses[0].partitions.size(), 2u);
  EXPECT_EQ(resp.responses[0].partitions[0].error_code, static_cast<int16_t>(ErrorCode::kOffsetOutOfRange));
  EXPECT_FALSE(resp.responses[0].partitions[0].records.has_value());  // the probe's bytes are not the view's
  EXPECT_EQ(resp.responses[0].partitions[1].error_code, static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed));
}

TEST(ColdViews, ABaseTopicTheClientAlsoAskedIsNotAskedTwice) {
  msg::FetchRequest req;
  req.max_wait_ms = 500;
  req.topics.emplace_back().topic = "orders";
  req.topics.back().partitions = {FetchPart(0, 100)};
  req.topics.emplace_back().topic = "orders.cold";
  req.topics.back().partitions = {FetchPart(0, 5)};
  const ProbePlan plan = PrepareFetch(Views(), req);
  ASSERT_EQ(req.topics.size(), 1u);
  ASSERT_EQ(req.topics[0].partitions.size(), 1u);
  EXPECT_EQ(req.topics[0].partitions[0].partition_max_bytes, 1 << 20);  // the client's own, untouched
  EXPECT_FALSE(plan.only_views);
  EXPECT_EQ(req.max_wait_ms, 500);
  msg::FetchResponse resp;
  auto& t = resp.responses.emplace_back();
  t.topic = "orders";
  t.partitions.emplace_back().partition_index = 0;
  t.partitions.back().records = std::string("client bytes");
  MoveProbeAnswers(plan, resp);
  ASSERT_EQ(resp.responses.size(), 2u);
  EXPECT_EQ(resp.responses[0].topic, "orders");
  EXPECT_EQ(resp.responses[0].partitions[0].records, std::string("client bytes"));
  EXPECT_EQ(resp.responses[1].topic, "orders.cold");
  EXPECT_EQ(resp.responses[1].partitions[0].error_code, 0);
}

TEST(ColdViews, RequestsWithoutViewsAreUntouched) {
  msg::FetchRequest req;
  req.topics.emplace_back().topic = "payments";
  req.topics.back().partitions = {FetchPart(3, 1)};
  const msg::FetchRequest before = req;
  EXPECT_TRUE(PrepareFetch(Views(), req).probes.empty());
  EXPECT_EQ(req, before);
  msg::ListOffsetsRequest lo;
  lo.topics.emplace_back().name = "payments";
  lo.topics.back().partitions.emplace_back().partition_index = 0;
  const msg::ListOffsetsRequest lo_before = lo;
  EXPECT_TRUE(PrepareListOffsets(Views(), lo).probes.empty());
  EXPECT_EQ(lo, lo_before);
}

TEST(ColdViews, ListOffsetsOfAViewProbesTheBaseForItsLatest) {
  msg::ListOffsetsRequest req;
  req.topics.emplace_back().name = "orders.cold";
  auto& p = req.topics.back().partitions.emplace_back();
  p.partition_index = 2;
  p.timestamp = 1700000000000;
  const ProbePlan plan = PrepareListOffsets(Views(), req);
  ASSERT_EQ(req.topics.size(), 1u);
  EXPECT_EQ(req.topics[0].name, "orders");
  EXPECT_EQ(req.topics[0].partitions[0].timestamp, -1);
  msg::ListOffsetsResponse resp;
  resp.topics.emplace_back().name = "orders";
  resp.topics.back().partitions.emplace_back().partition_index = 2;
  resp.topics.back().partitions.back().offset = 12345;
  MoveProbeAnswers(plan, resp);
  ASSERT_EQ(resp.topics.size(), 1u);
  EXPECT_EQ(resp.topics[0].name, "orders.cold");
  EXPECT_EQ(resp.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(resp.topics[0].partitions[0].offset, -1);  // the caller answers from the table
}

TEST(ColdViews, MetadataNamingAViewAsksItsBaseAndNeverTheView) {
  msg::MetadataRequest req;
  req.topics.emplace();
  req.topics->emplace_back().name = "orders.cold";
  req.topics->emplace_back().name = "payments";
  const MetadataPlan plan = PrepareMetadata(Views(), 12, req);
  EXPECT_TRUE(plan.request_changed);
  EXPECT_FALSE(plan.all_topics);
  std::set<std::string> names;
  for (const auto& t : *req.topics) names.insert(*t.name);
  // The probe: the upstream never hears of the view.
  EXPECT_EQ(names, (std::set<std::string>{"orders", "payments"}));
  EXPECT_EQ(plan.added_bases, std::set<std::string>{"orders"});

  msg::MetadataRequest all;
  all.topics.reset();  // v1+: null is every topic
  const MetadataPlan every = PrepareMetadata(Views(), 12, all);
  EXPECT_TRUE(every.all_topics);
  EXPECT_FALSE(every.request_changed);
  msg::MetadataRequest v0;  // v0: an empty list is every topic
  EXPECT_TRUE(PrepareMetadata(Views(), 0, v0).all_topics);
}

}  // namespace
}  // namespace thaw::merged
