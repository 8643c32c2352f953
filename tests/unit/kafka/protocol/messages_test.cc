// The generated codec (tools/kafka_codegen.py): every message of every
// generated API round-trips in every valid version; hand-checked encodings of
// flexible, tagged, nullable and header cases; bounds on untrusted input.
#include "thaw/kafka/protocol/messages.h"

#include <gtest/gtest.h>

#include <set>

#include "test_hex.h"
#include "thaw/kafka/protocol/messages_testing.h"

namespace thaw::kafka {
namespace {

using thaw::testing::Hex;

using thaw::testing::Unhex;

template <typename M>
std::string Encode(const M& m, int16_t version) {
  WireWriter w;
  m.Write(w, version);
  EXPECT_TRUE(w.status().ok()) << w.status().ToString();
  return w.Take();
}

template <typename M>
Result<M> Decode(std::string_view bytes, int16_t version) {
  M m;
  WireReader r(bytes);
  RETURN_NOT_OK(m.Read(r, version));
  RETURN_NOT_OK(r.ExpectDone(M::kName));
  return m;
}

// Fills every field the version carries with non-default values, encodes,
// decodes, and expects the same message and the same bytes back. For the
// first seed, every strict prefix of the encoding must fail to decode with a
// kCorrupt status (never crash, never succeed).
template <typename M>
void RoundTripEveryVersion(int* checked) {
  for (int16_t v = M::kMinVersion; v <= M::kMaxVersion; ++v) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      M m;
      uint64_t rng = seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(v);
      msg::testing::FillForTest(m, v, rng, 0);
      std::string bytes = Encode(m, v);
      auto back = Decode<M>(bytes, v);
      ASSERT_TRUE(back.ok()) << M::kName << " v" << v << " seed " << seed << ": " << back.status().ToString();
      EXPECT_TRUE(*back == m) << M::kName << " v" << v << " seed " << seed << " decoded differently";
      EXPECT_EQ(Hex(Encode(*back, v)), Hex(bytes)) << M::kName << " v" << v;
      if (seed == 1) {
        for (size_t cut = 0; cut < bytes.size(); ++cut) {
          M t;
          WireReader r(std::string_view(bytes).substr(0, cut));
          Status st = t.Read(r, v);
          ASSERT_FALSE(st.ok()) << M::kName << " v" << v << " decoded from " << cut << " of " << bytes.size()
                                << " bytes";
          EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.ToString();
        }
      }
      ++*checked;
    }
  }
}

TEST(KafkaMessages, EveryGeneratedMessageRoundTripsInEveryVersion) {
  int checked = 0;
  std::set<int16_t> keys;
  msg::ForEachApi([&]<typename Req, typename Resp>() {
    keys.insert(Req::kApiKey);
    EXPECT_EQ(Req::kApiKey, Resp::kApiKey);
    RoundTripEveryVersion<Req>(&checked);
    RoundTripEveryVersion<Resp>(&checked);
  });
  RoundTripEveryVersion<msg::RequestHeader>(&checked);
  RoundTripEveryVersion<msg::ResponseHeader>(&checked);
  // Every API of the table was visited, and there are as many as CMake listed.
  EXPECT_EQ(keys.size(), GeneratedApis().size());
  EXPECT_GT(checked, 1000);
}

TEST(KafkaMessages, ApiTableHasSpecRanges) {
  const ApiSpec* fetch = FindApiSpec(1);
  ASSERT_NE(fetch, nullptr);
  EXPECT_STREQ(fetch->name, "Fetch");
  EXPECT_EQ(fetch->min_version, 4);
  EXPECT_EQ(fetch->max_version, 18);
  EXPECT_EQ(fetch->first_flexible, 12);
  const ApiSpec* sasl = FindApiSpec(17);
  ASSERT_NE(sasl, nullptr);
  EXPECT_EQ(sasl->first_flexible, -1);  // SaslHandshake is never flexible
  const ApiSpec* api_versions = FindApiSpec(18);
  ASSERT_NE(api_versions, nullptr);
  EXPECT_EQ(api_versions->min_version, 0);
  EXPECT_EQ(api_versions->max_version, 4);
  EXPECT_EQ(FindApiSpec(9999), nullptr);
  int16_t prev = -1;
  for (const ApiSpec& a : GeneratedApis()) {
    EXPECT_GT(a.key, prev) << "table sorted by key";
    prev = a.key;
  }
}

TEST(KafkaMessages, HeaderVersions) {
  // ApiVersions v3+ is flexible: request header v2, but the response header stays v0.
  EXPECT_EQ(msg::RequestHeaderVersion(18, 2), 1);
  EXPECT_EQ(msg::RequestHeaderVersion(18, 3), 2);
  EXPECT_EQ(msg::ResponseHeaderVersion(18, 3), 0);
  EXPECT_EQ(msg::ResponseHeaderVersion(18, 4), 0);
  // Fetch: flexible from 12.
  EXPECT_EQ(msg::RequestHeaderVersion(1, 11), 1);
  EXPECT_EQ(msg::RequestHeaderVersion(1, 12), 2);
  EXPECT_EQ(msg::ResponseHeaderVersion(1, 11), 0);
  EXPECT_EQ(msg::ResponseHeaderVersion(1, 12), 1);
  // SaslHandshake never is.
  EXPECT_EQ(msg::RequestHeaderVersion(17, 1), 1);
  EXPECT_EQ(msg::ResponseHeaderVersion(17, 1), 0);
}

TEST(KafkaMessages, RequestHeaderClientIdIsNeverCompact) {
  msg::RequestHeader h;
  h.request_api_key = 18;
  h.request_api_version = 3;
  h.correlation_id = 1;
  h.client_id = "rdkafka";
  // v2: int16-length client id, then the (empty) tagged-field section.
  EXPECT_EQ(Hex(Encode(h, 2)),
            "0012"
            "0003"
            "00000001"
            "0007"
            "72646b61666b61"
            "00");
  EXPECT_EQ(Hex(Encode(h, 1)),
            "0012"
            "0003"
            "00000001"
            "0007"
            "72646b61666b61");
  h.client_id.reset();
  EXPECT_EQ(Hex(Encode(h, 1)), "0012000300000001ffff");
  auto back = Decode<msg::RequestHeader>(Unhex("0012000300000001ffff"), 1);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->client_id.has_value());
}

TEST(KafkaMessages, FlexibleRequestUsesCompactStrings) {
  msg::ApiVersionsRequest req;
  req.client_software_name = "kcat";
  req.client_software_version = "1.7";
  EXPECT_EQ(Hex(Encode(req, 3)),
            "05"
            "6b636174"
            "04"
            "312e37"
            "00");
  EXPECT_EQ(Hex(Encode(req, 2)), "");  // v0-2 have no fields at all
}

TEST(KafkaMessages, NullVersusEmptyArrays) {
  msg::MetadataRequest all;  // Topics null: all topics (v1+)
  all.topics.reset();
  msg::MetadataRequest none;  // Topics empty: no topics
  none.topics.emplace();
  EXPECT_EQ(Hex(Encode(all, 1)), "ffffffff");
  EXPECT_EQ(Hex(Encode(none, 1)), "00000000");
  // v0 cannot carry null: written empty (v0 empty means all topics).
  EXPECT_EQ(Hex(Encode(all, 0)), "00000000");
  // v9+ compact arrays: 0 is null, 1 is empty; then AllowAutoTopicCreation (true),
  // IncludeClusterAuthorizedOperations, IncludeTopicAuthorizedOperations and the tagged-field count.
  EXPECT_EQ(Hex(Encode(all, 9)),
            "00"
            "01"
            "00"
            "00"
            "00");
  EXPECT_EQ(Hex(Encode(none, 9)),
            "01"
            "01"
            "00"
            "00"
            "00");
  auto back = Decode<msg::MetadataRequest>(Unhex("0001000000"), 9);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->topics.has_value());
  back = Decode<msg::MetadataRequest>(Unhex("0101000000"), 9);
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->topics.has_value());
  EXPECT_TRUE(back->topics->empty());
  // A null in v0, where Topics is not nullable, is corrupt.
  auto bad = Decode<msg::MetadataRequest>(Unhex("ffffffff"), 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MetadataRequest.Topics is null"), std::string::npos) << bad.status().message();
}

TEST(KafkaMessages, NullVersusEmptyStrings) {
  msg::MetadataResponse::MetadataResponseBroker b;
  b.node_id = 1;
  b.host = "h";
  b.port = 9092;
  b.rack.reset();
  WireWriter w;
  b.Write(w, 1);
  EXPECT_EQ(Hex(w.data()),
            "00000001"
            "000168"
            "00002384"
            "ffff");
  b.rack = "";
  WireWriter w2;
  b.Write(w2, 9);
  EXPECT_EQ(Hex(w2.data()),
            "00000001"
            "0268"
            "00002384"
            "01"
            "00");
}

TEST(KafkaMessages, TaggedFieldsAscendingAndUnknownOnesKept) {
  msg::ApiVersionsResponse resp;
  resp.error_code = 0;
  resp.throttle_time_ms = 0;
  resp.finalized_features_epoch = 5;  // tag 1
  resp.zk_migration_ready = true;     // tag 3
  resp.unknown_tagged_fields = {{4, "xy"}, {9, ""}};
  std::string bytes = Encode(resp, 3);
  // error 0, ApiKeys empty (compact 1), throttle 0, then 4 tagged fields in tag order 1, 3, 4, 9.
  EXPECT_EQ(Hex(bytes),
            "0000"
            "01"
            "00000000"
            "04"
            "01"
            "08"
            "0000000000000005"
            "03"
            "01"
            "01"
            "04"
            "02"
            "7879"
            "09"
            "00");
  auto back = Decode<msg::ApiVersionsResponse>(bytes, 3);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->finalized_features_epoch, 5);
  EXPECT_TRUE(back->zk_migration_ready);
  ASSERT_EQ(back->unknown_tagged_fields.size(), 2u);
  EXPECT_EQ(back->unknown_tagged_fields[0].tag, 4u);
  EXPECT_EQ(back->unknown_tagged_fields[0].data, "xy");
  EXPECT_EQ(Hex(Encode(*back, 3)), Hex(bytes));
  // Defaults are not written: an untouched response has no tagged fields.
  EXPECT_EQ(Hex(Encode(msg::ApiVersionsResponse{}, 3)),
            "0000"
            "01"
            "00000000"
            "00");
  // v2 is not flexible: tagged fields are not on the wire at all.
  EXPECT_EQ(Hex(Encode(resp, 2)),
            "0000"
            "00000000"
            "00000000");
}

TEST(KafkaMessages, UnknownTagInNestedStructIsKept) {
  // FetchRequest v12 partition with an unknown tag 42 carrying 3 bytes.
  msg::FetchRequest::FetchPartition p;
  p.partition = 7;
  p.fetch_offset = 100;
  p.unknown_tagged_fields = {{42, "abc"}};
  WireWriter w;
  p.Write(w, 12);
  msg::FetchRequest::FetchPartition back;
  WireReader r(w.data());
  ASSERT_TRUE(back.Read(r, 12).ok());
  EXPECT_TRUE(r.done());
  EXPECT_EQ(back, p);
}

TEST(KafkaMessages, TaggedStructFieldOnlyWhenNotDefault) {
  msg::FetchResponse::PartitionData d;
  d.partition_index = 0;
  d.records = std::string("RECORDS");
  WireWriter plain;
  d.Write(plain, 12);
  d.diverging_epoch.epoch = 3;
  d.diverging_epoch.end_offset = 9;
  WireWriter tagged;
  d.Write(tagged, 12);
  // Same prefix; the tagged section grows from "00" to one field: tag 0, size 13 (int32 + int64 + its own "00").
  ASSERT_GT(tagged.size(), plain.size());
  EXPECT_EQ(Hex(tagged.data().substr(tagged.size() - 16)),
            "01"
            "00"
            "0d"
            "00000003"
            "0000000000000009"
            "00");
  msg::FetchResponse::PartitionData back;
  WireReader r(tagged.data());
  ASSERT_TRUE(back.Read(r, 12).ok());
  EXPECT_EQ(back.diverging_epoch.epoch, 3);
  EXPECT_EQ(back.records, "RECORDS");
}

TEST(KafkaMessages, NullableStruct) {
  msg::ConsumerGroupHeartbeatResponse resp;
  resp.member_id = "m";
  resp.assignment.reset();
  std::string bytes = Encode(resp, 0);
  EXPECT_EQ(Hex(bytes.substr(bytes.size() - 2)), "ff00");  // null assignment (-1), no tagged fields
  auto back = Decode<msg::ConsumerGroupHeartbeatResponse>(bytes, 0);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->assignment.has_value());
  resp.assignment = msg::ConsumerGroupHeartbeatResponse::Assignment{};
  back = Decode<msg::ConsumerGroupHeartbeatResponse>(Encode(resp, 0), 0);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->assignment.has_value());
}

TEST(KafkaMessages, DefaultsComeFromTheSpec) {
  msg::FetchResponse::PartitionData d;
  EXPECT_EQ(d.last_stable_offset, -1);
  EXPECT_EQ(d.log_start_offset, -1);
  EXPECT_EQ(d.preferred_read_replica, -1);
  EXPECT_FALSE(d.records.has_value());
  msg::MetadataRequest m;
  EXPECT_TRUE(m.allow_auto_topic_creation);  // "default": "true"
  msg::RequestHeader h;
  EXPECT_EQ(h.client_id, "");  // nullable without a default: empty, as in Kafka
  msg::FetchRequest f;
  EXPECT_EQ(f.max_bytes, 0x7fffffff);  // hex default
  EXPECT_EQ(f.replica_id, -1);
}

TEST(KafkaMessages, HugeArrayCountInAMessageFails) {
  // MetadataRequest v4: Topics count 2^31-1, then 3 bytes.
  auto bad = Decode<msg::MetadataRequest>(Unhex("7fffffff000000"), 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(bad.status().message().find("MetadataRequest.Topics has 2147483647 elements"), std::string::npos)
      << bad.status().message();
  // Compact count in v12 (uvarint 0xffffffff = 2^32-1 -> 2^32-2 elements).
  bad = Decode<msg::MetadataRequest>(Unhex("ffffffff0f0000"), 12);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorrupt);
}

TEST(KafkaMessages, TaggedFieldWithWrongSizeIsCorrupt) {
  // ApiVersionsResponse v3, tag 1 (int64) declared 4 bytes long.
  auto bad = Decode<msg::ApiVersionsResponse>(Unhex("00000100000000"
                                                    "01"
                                                    "01"
                                                    "04"
                                                    "00000005"),
                                              3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(bad.status().message().find("FinalizedFeaturesEpoch"), std::string::npos) << bad.status().message();
}

TEST(KafkaMessages, RecordsAreWrittenAsOneBlock) {
  msg::FetchResponse resp;
  auto& t = resp.responses.emplace_back();
  t.topic = "t";
  auto& p = t.partitions.emplace_back();
  p.records = std::string(1 << 20, 'r');
  std::string bytes = Encode(resp, 11);
  auto back = Decode<msg::FetchResponse>(bytes, 11);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->responses.at(0).partitions.at(0).records->size(), size_t{1} << 20);
}

// Batches by reference (a served topic's cache): the same bytes on the wire
// as the same batches copied in, in every version from v4, with and without
// bytes of the field's own before them; pieces point into the batches
// themselves (nothing copied on the way to the socket).
TEST(KafkaMessages, SharedRecordsEncodeAsIfCopied) {
  auto a = std::make_shared<const std::string>(std::string(300, 'a'));
  auto b = std::make_shared<const std::string>(std::string(70000, 'b'));
  for (int16_t v = 4; v <= msg::FetchResponse::kMaxVersion; ++v) {
    for (bool own : {false, true}) {
      msg::FetchResponse shared, copied;
      for (msg::FetchResponse* r : {&shared, &copied}) {
        auto& t = r->responses.emplace_back();
        t.topic = "t";
        t.partitions.emplace_back().partition_index = 3;
        t.partitions.emplace_back().partition_index = 4;  // no records at all: null or empty as before
      }
      auto& sp = shared.responses[0].partitions[0];
      sp.records = own ? std::string("own") : std::string();
      sp.records_shared = {a, b};
      copied.responses[0].partitions[0].records = (own ? std::string("own") : std::string()) + *a + *b;
      WireWriter w;
      shared.Write(w, v);
      ASSERT_TRUE(w.status().ok());
      size_t pieces = 0, total = 0;
      bool in_place = false;
      w.ForEachPiece([&](std::string_view piece) {
        ++pieces;
        total += piece.size();
        in_place |= piece.data() == b->data();
      });
      EXPECT_TRUE(in_place) << "v" << v;
      EXPECT_GE(pieces, 3u);
      EXPECT_EQ(total, w.size());
      const std::string bytes = w.Take();
      EXPECT_EQ(Hex(bytes), Hex(Encode(copied, v))) << "v" << v << (own ? " with own bytes" : "");
      auto back = Decode<msg::FetchResponse>(bytes, v);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(*back->responses[0].partitions[0].records, *copied.responses[0].partitions[0].records);
      EXPECT_TRUE(back->responses[0].partitions[0].records_shared.empty());
    }
  }
}

}  // namespace
}  // namespace thaw::kafka
