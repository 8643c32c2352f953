// MetadataText (iceberg/metadata_text.h): the text of a metadata document
// with its snapshots' pieces kept between commits is exactly dump()'s, and
// FromJson's reuse shares the base's parsed snapshots (same id, time and
// manifest list) without letting a changed one through.
#include "thaw/iceberg/metadata_text.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "thaw/iceberg/table_metadata.h"
#include "thaw/iceberg/table_update.h"

namespace thaw::iceberg {
namespace {

using json = nlohmann::json;

json Resource(const std::string& name) {
  std::ifstream in(std::string(THAW_SOURCE_DIR) + "/tests/unit/iceberg/resources/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

json Snapshot(int64_t id, std::optional<int64_t> parent, int64_t seq, const std::string& next_offsets) {
  json s = {{"snapshot-id", id},
            {"sequence-number", seq},
            {"timestamp-ms", 1000 * seq},
            {"manifest-list", "/wh/t/metadata/snap-" + std::to_string(id) + ".avro"},
            {"summary", {{"operation", "append"}, {"thaw.archive.next-offsets", next_offsets}}},
            {"schema-id", 0}};
  if (parent) s["parent-snapshot-id"] = *parent;
  return s;
}

TEST(MetadataText, WritesWhatDumpWritesAcrossCommits) {
  json md = Resource("v2_two_snapshots.metadata.json");
  MetadataText text;
  EXPECT_EQ(text.Dump(md), md.dump());
  const size_t first = text.cached_snapshots();
  EXPECT_EQ(first, md["snapshots"].size());
  // Appends, with keys and values that need escaping.
  for (int64_t i = 1; i <= 5; ++i) {
    md["snapshots"].push_back(Snapshot(9000 + i, std::nullopt, 100 + i, "{\"t\\u00e9\":{\"0\":" + std::to_string(i) + "}}"));
    md["properties"]["k\"ey\n" + std::to_string(i)] = "v\xc3\xa9";
    EXPECT_EQ(text.Dump(md), md.dump()) << "after append " << i;
  }
  EXPECT_EQ(text.cached_snapshots(), first + 5);
  // Removals drop their pieces; a removed id added again with other content is written anew.
  json& snaps = md["snapshots"];
  snaps.erase(snaps.begin(), snaps.begin() + 3);
  EXPECT_EQ(text.Dump(md), md.dump());
  EXPECT_EQ(text.cached_snapshots(), snaps.size());
  snaps.push_back(Snapshot(9001, std::nullopt, 200, "{}"));
  EXPECT_EQ(text.Dump(md), md.dump());
  // An id twice, a snapshot without an id, no snapshots array at all.
  snaps.push_back(Snapshot(9001, std::nullopt, 201, "{\"x\":1}"));
  snaps.push_back(json{{"summary", json::object()}});
  EXPECT_EQ(text.Dump(md), md.dump());
  md.erase("snapshots");
  EXPECT_EQ(text.Dump(md), md.dump());
  EXPECT_EQ(text.cached_snapshots(), 0u);
  EXPECT_EQ(text.Dump(json::array({1, 2})), "[1,2]");
}

TEST(TableMetadataFromJson, SharesTheBasesSnapshotsAndParsesChangedOnes) {
  json doc = Resource("v2_two_snapshots.metadata.json");
  auto base = TableMetadata::FromJson(doc, "base");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  ASSERT_EQ(base->snapshots.size(), 2u);
  doc["snapshots"].push_back(Snapshot(777, base->snapshots[1]->snapshot_id, 99, "{\"t\":{\"0\":5}}"));
  auto next = TableMetadata::FromJson(doc, "next", &*base);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ(next->snapshots.size(), 3u);
  EXPECT_EQ(next->snapshots[0].get(), base->snapshots[0].get());
  EXPECT_EQ(next->snapshots[1].get(), base->snapshots[1].get());
  EXPECT_EQ(next->snapshots[2]->summary.at("thaw.archive.next-offsets"), "{\"t\":{\"0\":5}}");
  // Same id, another manifest list (not a snapshot of this lineage): parsed, not shared.
  doc["snapshots"][0]["manifest-list"] = "/elsewhere/snap.avro";
  auto other = TableMetadata::FromJson(doc, "other", &*base);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->snapshots[0].get(), base->snapshots[0].get());
  EXPECT_EQ(other->snapshots[0]->manifest_list, "/elsewhere/snap.avro");
  EXPECT_EQ(other->snapshots[1].get(), base->snapshots[1].get());
  // The same document parsed from its text gives the same snapshots.
  auto parsed = TableMetadata::Parse(doc.dump(), "text");
  ASSERT_TRUE(parsed.ok());
  for (size_t i = 0; i < parsed->snapshots.size(); ++i) {
    EXPECT_EQ(parsed->snapshots[i]->snapshot_id, other->snapshots[i]->snapshot_id);
    EXPECT_EQ(parsed->snapshots[i]->summary, other->snapshots[i]->summary);
    EXPECT_EQ(parsed->snapshots[i]->manifest_list, other->snapshots[i]->manifest_list);
  }
}

}  // namespace
}  // namespace thaw::iceberg
