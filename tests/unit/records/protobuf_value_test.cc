// Protobuf values through a schema registry (records/protobuf_value.h): the
// .proto text parsed with libprotobuf, the mapping to an Iceberg struct,
// framed values decoded into Arrow and encoded back byte for byte, values
// that do not decode (another message type, an enum number without a name,
// a uint64 above 2^63-1, a malformed body), schema evolution by name, and
// the refusals naming the field.
#include "thaw/records/protobuf_value.h"
#include "thaw/records/struct_fields.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include "test_hex.h"

namespace thaw::records {
namespace {

using thaw::testing::Hex;
using thaw::testing::Unhex;

constexpr char kV1[] = R"(syntax = "proto3";
package shop;
enum Kind { NEW = 0; PAID = 1; }
message Order {
  message Line { string sku = 1; uint64 qty = 2; }
  int64 id = 1;
  Kind kind = 2;
  repeated Line lines = 3;
  optional string note = 4;
}
message Refund { int64 order_id = 1; }
)";

// v2: a field in the nested message and one at the end.
constexpr char kV2[] = R"(syntax = "proto3";
package shop;
enum Kind { NEW = 0; PAID = 1; }
message Order {
  message Line { string sku = 1; uint64 qty = 2; double price = 3; }
  int64 id = 1;
  Kind kind = 2;
  repeated Line lines = 3;
  optional string note = 4;
  map<string, int32> counts = 5;
}
message Refund { int64 order_id = 1; }
)";

std::string Framed(std::string_view body_hex, std::string_view indexes_hex = "00") {
  return Unhex("0000000007" + std::string(indexes_hex) + std::string(body_hex));
}

std::shared_ptr<arrow::StructArray> Decode(const ProtobufValueSchema& s, const std::vector<std::string>& values,
                                           std::vector<std::string>* errors = nullptr) {
  std::unique_ptr<arrow::ArrayBuilder> b;
  EXPECT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), s.arrow_type(), &b).ok());
  auto* sb = static_cast<arrow::StructBuilder*>(b.get());
  for (const auto& v : values) {
    Status st = s.DecodeFramed(v, sb);
    if (errors) errors->push_back(st.ok() ? "ok" : st.message());
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(sb->Finish(&out).ok());
  EXPECT_TRUE(out->ValidateFull().ok());
  return std::static_pointer_cast<arrow::StructArray>(out);
}

// Each framed value decoded with its own codec into one array of `type`.
std::shared_ptr<arrow::StructArray> DecodeEach(
    const std::shared_ptr<arrow::DataType>& type,
    const std::vector<std::pair<const ProtobufValueSchema*, std::string>>& values) {
  std::unique_ptr<arrow::ArrayBuilder> b;
  EXPECT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), type, &b).ok());
  auto* sb = static_cast<arrow::StructBuilder*>(b.get());
  for (const auto& [codec, v] : values) {
    Status st = codec->DecodeFramed(v, sb);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(sb->Finish(&out).ok());
  EXPECT_TRUE(out->ValidateFull().ok());
  return std::static_pointer_cast<arrow::StructArray>(out);
}

TEST(ProtobufValue, MapsDecodesAndEncodesBack) {
  const int32_t first[] = {0};
  auto s = ProtobufValueSchema::Make(kV1, first, 100);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->message_name(), "shop.Order");
  EXPECT_EQ((*s)->iceberg_type()->ToString(),
            "struct<id: long, kind: string, lines: list<struct<sku: string, qty: long>>, note: string>");
  // {id: 150, kind: PAID, lines: [{sku: "x", qty: 2}], note: ""} and {} (all defaults, note absent).
  const std::string full = Framed("089601" "1001" "1a05" "0a0178" "1002" "2200");
  const std::string empty = Framed("");
  auto a = Decode(**s, {full, empty});
  ASSERT_EQ(a->length(), 2);
  EXPECT_EQ(a->ToString(), arrow::json::ArrayFromJSONString(a->type(), R"([
      {"id": 150, "kind": "PAID", "lines": [{"sku": "x", "qty": 2}], "note": ""},
      {"id": 0, "kind": "NEW", "lines": [], "note": null}])").ValueOrDie()->ToString());
  std::string out;
  StructFields fields;  // one per column, across its rows (as the record reader keeps it)
  ASSERT_TRUE((*s)->EncodeFramed(*a, 0, 7, &out, &fields).ok());
  EXPECT_EQ(Hex(out), Hex(full));
  out.clear();
  ASSERT_TRUE((*s)->EncodeFramed(*a, 1, 7, &out, &fields).ok());
  EXPECT_EQ(Hex(out), Hex(empty));
}

TEST(ProtobufValue, ValuesThatDoNotDecodeAppendNothing) {
  const int32_t first[] = {0};
  auto s = ProtobufValueSchema::Make(kV1, first, 100);
  ASSERT_TRUE(s.ok());
  std::vector<std::string> errors;
  auto a = Decode(**s,
                  {Framed("0801", "0202"),             // Refund's indexes [1]
                   Framed("1005"),                     // kind 5: no name
                   Framed("1a0b" "10ffffffffffffffffff01"),  // qty 2^64-1
                   Framed("0a"),                       // truncated
                   Unhex("00000000"),                  // short framing
                   Framed("0807")},
                  &errors);
  EXPECT_EQ(a->length(), 1);
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_EQ(errors[0], "Protobuf value of another message type (indexes differ from shop.Order's)");
  EXPECT_EQ(errors[1], "kind: enum number 5 has no name in shop.Kind");
  EXPECT_EQ(errors[2], "lines.qty: uint64 value 18446744073709551615 does not fit a long");
  EXPECT_EQ(errors[3], "not a shop.Order message (1 bytes)");
  EXPECT_NE(errors[4].find("fewer than the 5 of Confluent's header"), std::string::npos) << errors[4];
  EXPECT_EQ(errors[5], "ok");
}

TEST(ProtobufValue, EvolvesByNameAndOlderSchemasStillEncode) {
  const int32_t first[] = {0};
  auto v1 = ProtobufValueSchema::Make(kV1, first, 100);
  ASSERT_TRUE(v1.ok());
  auto missing = ProtobufValueSchema::Resolve(kV2, "shop.Order", (*v1)->iceberg_type());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "field 'lines.element.price' of the writer schema is not in the table");
  int32_t next = 200;
  auto grown = ProtobufValueSchema::Evolve((*v1)->iceberg_type(), kV2, "shop.Order", &next);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  EXPECT_EQ((*grown)->ToString(),
            "struct<id: long, kind: string, lines: list<struct<sku: string, qty: long, price: double>>, note: string, "
            "counts: map<string, int>>");
  auto r1 = ProtobufValueSchema::Resolve(kV1, "shop.Order", *grown);
  auto r2 = ProtobufValueSchema::Resolve(kV2, "shop.Order", *grown);
  ASSERT_TRUE(r1.ok() && r2.ok()) << r1.status().ToString() << r2.status().ToString();
  const std::string old_value = Framed("0801" "1a03" "0a0161");
  // v2: lines [{sku: "b", price: 0.5}], counts {"k": 3}.
  const std::string new_value = Framed("0802" "1a0c" "0a0162" "19000000000000e03f" "2a05" "0a016b1003");
  auto decoded = DecodeEach((*r1)->arrow_type(), {{r1->get(), old_value}, {r2->get(), new_value}});
  const auto& a = *decoded;
  std::string e1, e2;
  ASSERT_TRUE((*r1)->EncodeFramed(a, 0, 7, &e1, nullptr).ok());
  ASSERT_TRUE((*r2)->EncodeFramed(a, 1, 7, &e2, nullptr).ok());
  EXPECT_EQ(Hex(e1), Hex(old_value));
  EXPECT_EQ(Hex(e2), Hex(new_value));
}

TEST(ProtobufValue, RefusalsNameTheProblem) {
  const int32_t first[] = {0};
  EXPECT_EQ(ProtobufValueSchema::Make("syntax = \"proto3\"; message {", first, 100).status().message(),
            "Protobuf schema: line 1 column 28: Expected message name.");
  auto recursive = ProtobufValueSchema::Make(
      "syntax = \"proto3\"; message Node { int32 v = 1; Node next = 2; }", first, 100);
  EXPECT_EQ(recursive.status().message(),
            "Protobuf value schema: next (Node) is recursive, which Iceberg cannot hold");
  auto import = ProtobufValueSchema::Make(
      "syntax = \"proto3\"; import \"other.proto\"; message M { int32 v = 1; }", first, 100);
  EXPECT_NE(import.status().message().find("schema references"), std::string::npos) << import.status().message();
  // The well-known types import from libprotobuf's own pool.
  auto wkt = ProtobufValueSchema::Make(
      "syntax = \"proto3\"; import \"google/protobuf/timestamp.proto\"; message M { google.protobuf.Timestamp at = 1; }",
      first, 100);
  ASSERT_TRUE(wkt.ok()) << wkt.status().ToString();
  EXPECT_EQ((*wkt)->iceberg_type()->ToString(), "struct<at: struct<seconds: long, nanos: int>>");
  const int32_t out_of_range[] = {3};
  EXPECT_EQ(ProtobufValueSchema::Make(kV1, out_of_range, 100).status().message(),
            "message index 3 is out of range (2 messages in the schema)");
  // A field of another type.
  const int32_t refund[] = {1};
  auto r = ProtobufValueSchema::Make(kV1, refund, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ProtobufValueSchema::Resolve(
                "syntax = \"proto3\"; package shop; message Refund { string order_id = 1; }", "shop.Refund",
                (*r)->iceberg_type())
                .status()
                .message(),
            "field 'order_id' is long in the table but string in the writer schema");
}

TEST(ProtobufValue, ALaterSchemaWidensInt32ToInt64) {
  constexpr char v1[] = R"(syntax = "proto3";
package w;
message M { int32 n = 1; repeated sint32 xs = 2; }
)";
  constexpr char v2[] = R"(syntax = "proto3";
package w;
message M { int64 n = 1; repeated sint64 xs = 2; }
)";
  const int32_t first[] = {0};
  auto t1 = ProtobufValueSchema::Make(v1, first, 100);
  ASSERT_TRUE(t1.ok());
  auto wider = ProtobufValueSchema::Resolve(v2, "w.M", (*t1)->iceberg_type());
  ASSERT_FALSE(wider.ok());
  EXPECT_EQ(wider.status().code(), StatusCode::kNotFound) << wider.status().ToString();
  int32_t next = 200;
  auto grown = ProtobufValueSchema::Evolve((*t1)->iceberg_type(), v2, "w.M", &next);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  EXPECT_EQ((*grown)->ToString(), "struct<n: long, xs: list<long>>");
  auto r1 = ProtobufValueSchema::Resolve(v1, "w.M", *grown);
  auto r2 = ProtobufValueSchema::Resolve(v2, "w.M", *grown);
  ASSERT_TRUE(r1.ok() && r2.ok()) << r1.status().ToString() << r2.status().ToString();
  // v1 {n: -1, xs: [-2]} (an int32's -1 is ten varint bytes, as an int64's); v2 {n: 2^40, xs: [2^33]}.
  const std::string old_value = Framed("08ffffffffffffffffff01" "120103");
  const std::string new_value = Framed("088080808080" "20" "12058080808040");
  auto decoded = DecodeEach((*r1)->arrow_type(), {{r1->get(), old_value}, {r2->get(), new_value}});
  const auto& a = *decoded;
  EXPECT_EQ(a.ToString(), arrow::json::ArrayFromJSONString(a.type(), R"([
      {"n": -1, "xs": [-2]}, {"n": 1099511627776, "xs": [8589934592]}])").ValueOrDie()->ToString());
  std::string e1, e2, e3;
  ASSERT_TRUE((*r1)->EncodeFramed(a, 0, 7, &e1, nullptr).ok());
  ASSERT_TRUE((*r2)->EncodeFramed(a, 1, 7, &e2, nullptr).ok());
  EXPECT_EQ(Hex(e1), Hex(old_value));
  EXPECT_EQ(Hex(e2), Hex(new_value));
  EXPECT_FALSE((*r1)->EncodeFramed(a, 1, 7, &e3, nullptr).ok()) << "2^40 does not fit int32";
}

}  // namespace
}  // namespace thaw::records
