#include "thaw/archive/archive_state.h"

#include <gtest/gtest.h>

namespace thaw::archive {
namespace {

TEST(ArchiveState, EncodesAndDecodesNextOffsets) {
  TopicOffsets in{{"orders", {{0, 10}, {2, 0}, {11, 1234567890123}}}, {"b.c", {{1, 5}}}};
  std::string text = EncodeNextOffsets(in);
  EXPECT_EQ(text, R"({"b.c":{"1":5},"orders":{"0":10,"2":0,"11":1234567890123}})");
  auto out = DecodeNextOffsets(text);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, in);
  EXPECT_EQ(EncodeNextOffsets({}), "{}");
}

TEST(ArchiveState, RejectsMalformedNextOffsets) {
  for (const char* bad :
       {"", "[1]", "{\"t\": 1}", "{\"t\": {\"x\": 1}}", "{\"t\": {\"-1\": 1}}", "{\"t\": {\"0\": -1}}",
        "{\"t\": {\"0\": \"5\"}}", "{\"t\": {\"0\": 1.5}}", "{\"\": {}}", "{\"t\": {\"0 \": 1}}", "{\"t\""}) {
    auto r = DecodeNextOffsets(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << bad;
    EXPECT_NE(r.status().message().find(kNextOffsetsKey), std::string::npos) << r.status().message();
  }
}

std::shared_ptr<const iceberg::Snapshot> Snap(int64_t id, std::optional<int64_t> parent, std::map<std::string, std::string> summary) {
  iceberg::Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = parent;
  s.summary = std::move(summary);
  return std::make_shared<const iceberg::Snapshot>(std::move(s));
}

TEST(ArchiveState, ReadNextOffsetsWalksMainsAncestry) {
  iceberg::TableMetadata md;
  md.location = "/w/t";
  EXPECT_TRUE(ReadNextOffsets(md)->empty());  // a new table
  md.snapshots.push_back(Snap(1, std::nullopt, {{"operation", "append"}, {kNextOffsetsKey, R"({"t":{"0":5}})"}}));
  md.snapshots.push_back(Snap(2, 1, {{"operation", "append"}, {kNextOffsetsKey, R"({"t":{"0":9,"1":3}})"}}));
  // Maintenance without the property (not copied forward): the parent's counts.
  md.snapshots.push_back(Snap(3, 2, {{"operation", "replace"}}));
  // A branch's snapshot (not on main) with further offsets is ignored.
  md.snapshots.push_back(Snap(4, 3, {{"operation", "append"}, {kNextOffsetsKey, R"({"t":{"0":100}})"}}));
  md.refs["main"] = {3, "branch"};
  md.refs["b"] = {4, "branch"};
  md.current_snapshot_id = 3;
  auto r = ReadNextOffsets(md);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (TopicOffsets{{"t", {{0, 9}, {1, 3}}}}));

  md.refs["main"] = {4, "branch"};
  EXPECT_EQ(*ReadNextOffsets(md), (TopicOffsets{{"t", {{0, 100}}}}));

  // No main ref (v1 style): the current snapshot.
  md.refs.clear();
  md.current_snapshot_id = 1;
  EXPECT_EQ(*ReadNextOffsets(md), (TopicOffsets{{"t", {{0, 5}}}}));

  // Expired ancestors end the walk: nothing known.
  md.snapshots.erase(md.snapshots.begin(), md.snapshots.begin() + 2);  // 1 and 2 gone
  md.current_snapshot_id = 3;
  EXPECT_TRUE(ReadNextOffsets(md)->empty());
}

TEST(ArchiveState, ReadNextOffsetsReportsACorruptPropertyWithItsSnapshot) {
  iceberg::TableMetadata md;
  md.location = "/w/t";
  md.snapshots.push_back(Snap(7, std::nullopt, {{kNextOffsetsKey, "{oops"}}));
  md.refs["main"] = {7, "branch"};
  auto r = ReadNextOffsets(md);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(r.status().message().find("snapshot 7"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("/w/t"), std::string::npos) << r.status().message();
}

TEST(ArchiveState, ReadNextOffsetsStopsOnAParentCycle) {
  iceberg::TableMetadata md;
  md.snapshots.push_back(Snap(1, 2, {}));
  md.snapshots.push_back(Snap(2, 1, {}));
  md.refs["main"] = {1, "branch"};
  auto r = ReadNextOffsets(md);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace thaw::archive
