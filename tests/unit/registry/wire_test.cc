// Confluent's wire framing and the schema registry's response bodies: bytes
// from topics and from the network, so every malformed input is a kCorrupt
// Status naming what is wrong, never a throw or an out-of-bounds read.
#include "thaw/registry/wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace thaw::registry {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

void ExpectCorrupt(const Status& s, const std::string& fragment) {
  EXPECT_EQ(s.code(), StatusCode::kCorrupt) << s.ToString();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.ToString();
}

TEST(RegistryFraming, AvroHeaderIsMagicAndBigEndianId) {
  std::string framed = Bytes({0, 0, 0, 1, 2, 'a', 'b'});
  auto f = ParseFraming(framed, false);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->schema_id, 258);
  EXPECT_TRUE(f->message_indexes.empty());
  EXPECT_EQ(f->body_offset, 5u);
  EXPECT_EQ(Frame(258, {}, false, "ab"), framed);
}

TEST(RegistryFraming, EmptyBodyAndLargestId) {
  auto f = ParseFraming(Bytes({0, 0x7f, 0xff, 0xff, 0xff}), false);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->schema_id, 0x7fffffff);
  EXPECT_EQ(f->body_offset, 5u);
}

TEST(RegistryFraming, ShortOrWrongMagicIsCorrupt) {
  ExpectCorrupt(ParseFraming(std::string_view(), false).status(), "0 bytes");
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 1}), false).status(), "4 bytes");
  ExpectCorrupt(ParseFraming(std::string_view("{\"a\":1}"), false).status(), "0x7b");
}

TEST(RegistryFraming, ProtobufFirstMessageIsOneZeroByte) {
  std::string framed = Bytes({0, 0, 0, 0, 7, 0, 0x08, 0x01});
  auto f = ParseFraming(framed, true);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->schema_id, 7);
  EXPECT_EQ(f->message_indexes, std::vector<int32_t>{0});
  EXPECT_EQ(f->body_offset, 6u);
  EXPECT_EQ(Frame(7, std::vector<int32_t>{0}, true, Bytes({0x08, 0x01})), framed);
  EXPECT_EQ(Frame(7, {}, true, Bytes({0x08, 0x01})), framed);
}

TEST(RegistryFraming, ProtobufIndexesAreZigzagVarints) {
  // [1, 2]: count 2 -> 4, 1 -> 2, 2 -> 4 (Confluent's MessageIndexes.toByteArray).
  std::string framed = Bytes({0, 0, 0, 0, 3, 4, 2, 4, 0x0a});
  auto f = ParseFraming(framed, true);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->message_indexes, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(f->body_offset, 8u);
  EXPECT_EQ(Frame(3, std::vector<int32_t>{1, 2}, true, Bytes({0x0a})), framed);
  // [0, 0] is not the shortcut: written out.
  EXPECT_EQ(Frame(3, std::vector<int32_t>{0, 0}, true, ""), Bytes({0, 0, 0, 0, 3, 4, 0, 0}));
  // An index of 64 takes two varint bytes (zigzag 128).
  std::string big = Frame(3, std::vector<int32_t>{64}, true, "x");
  EXPECT_EQ(big, Bytes({0, 0, 0, 0, 3, 2, 0x80, 0x01, 'x'}));
  auto g = ParseFraming(big, true);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->message_indexes, std::vector<int32_t>{64});
  EXPECT_EQ(g->body_offset, 8u);
}

TEST(RegistryFraming, ProtobufRoundTripsManyPaths) {
  for (std::vector<int32_t> path : {std::vector<int32_t>{5}, {0, 1}, {300, 0, 70000}, {2147483647}}) {
    std::string framed = Frame(42, path, true, "body");
    auto f = ParseFraming(framed, true);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->message_indexes, path);
    EXPECT_EQ(framed.substr(f->body_offset), "body");
  }
}

TEST(RegistryFraming, ProtobufMalformedIndexesAreCorrupt) {
  // No index bytes at all.
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 0, 1}), true).status(), "ends inside its message indexes");
  // Count 2 but one index.
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 0, 1, 4, 2}), true).status(), "ends inside");
  // A varint cut short.
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 0, 1, 2, 0x80}), true).status(), "ends inside");
  // Negative count (zigzag 1 = -1), negative index.
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 0, 1, 1}), true).status(), "-1 message indexes");
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 0, 1, 2, 3}), true).status(), "negative message index -2");
  // A huge count.
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 0, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f}), true).status(),
                "message indexes (expected 1 to 64)");
  // A varint longer than 5 bytes / over 32 bits.
  ExpectCorrupt(ParseFraming(Bytes({0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x7f}), true).status(), "32 bits");
}

TEST(RegistrySchemaType, NamesAndDefault) {
  EXPECT_EQ(*ParseSchemaType(""), SchemaType::kAvro);
  EXPECT_EQ(*ParseSchemaType("avro"), SchemaType::kAvro);
  EXPECT_EQ(*ParseSchemaType("PROTOBUF"), SchemaType::kProtobuf);
  EXPECT_EQ(*ParseSchemaType("JSON"), SchemaType::kJson);
  EXPECT_EQ(ParseSchemaType("XML").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SchemaTypeName(SchemaType::kJson), "JSON");
}

TEST(RegistryMessages, SchemaByIdWithAndWithoutType) {
  auto avro = ParseSchemaResponse(R"({"schema":"\"string\""})", "GET /schemas/ids/1");
  ASSERT_TRUE(avro.ok()) << avro.status().ToString();
  EXPECT_EQ(avro->type, SchemaType::kAvro);
  EXPECT_EQ(avro->text, "\"string\"");
  auto proto = ParseSchemaResponse(
      R"({"schemaType":"PROTOBUF","schema":"syntax = \"proto3\";","references":[{"name":"a.proto","subject":"a","version":2}]})",
      "w");
  ASSERT_TRUE(proto.ok()) << proto.status().ToString();
  EXPECT_EQ(proto->type, SchemaType::kProtobuf);
  ASSERT_EQ(proto->references.size(), 1u);
  EXPECT_EQ(proto->references[0], (SchemaReference{"a.proto", "a", 2}));
}

TEST(RegistryMessages, WrongShapesAreCorruptNamingTheRequest) {
  ExpectCorrupt(ParseSchemaResponse("not json", "GET http://r/schemas/ids/1").status(), "GET http://r/schemas/ids/1");
  ExpectCorrupt(ParseSchemaResponse("[]", "w").status(), "not a JSON object");
  ExpectCorrupt(ParseSchemaResponse("{}", "w").status(), "no 'schema'");
  ExpectCorrupt(ParseSchemaResponse(R"({"schema":1})", "w").status(), "'schema' is not a string");
  ExpectCorrupt(ParseSchemaResponse(R"({"schema":"x","references":{}})", "w").status(), "'references'");
  ExpectCorrupt(ParseSchemaResponse(R"({"schema":"x","references":[{"name":"n","subject":"s"}]})", "w").status(),
                "no 'version'");
  EXPECT_EQ(ParseSchemaResponse(R"({"schema":"x","schemaType":"YAML"})", "w").status().code(),
            StatusCode::kInvalidArgument);
  ExpectCorrupt(ParseRegisterResponse(R"({"id":"7"})", "w").status(), "'id' is not an integer");
  ExpectCorrupt(ParseRegisterResponse(R"({"id":4294967296})", "w").status(), "out of range");
  ExpectCorrupt(ParseRegisterResponse(R"({"id":1.5})", "w").status(), "not an integer");
}

TEST(RegistryMessages, SubjectVersionAndRegister) {
  auto v = ParseSubjectVersionResponse(
      R"({"subject":"t-value","id":3,"version":2,"schema":"{}","schemaType":"JSON","metadata":{"properties":{}}})",
      "w");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->subject, "t-value");
  EXPECT_EQ(v->id, 3);
  EXPECT_EQ(v->version, 2);
  EXPECT_EQ(v->schema.type, SchemaType::kJson);
  ExpectCorrupt(ParseSubjectVersionResponse(R"({"id":3,"version":2,"schema":"{}"})", "w").status(), "'subject'");
  EXPECT_EQ(*ParseRegisterResponse(R"({"id":12})", "w"), 12);
}

TEST(RegistryMessages, RequestBodyOmitsAvroTypeLikeConfluentClients) {
  EXPECT_EQ(SchemaRequestBody(Schema{SchemaType::kAvro, "\"int\"", {}}), R"({"schema":"\"int\""})");
  EXPECT_EQ(SchemaRequestBody(Schema{SchemaType::kProtobuf, "p", {{"b.proto", "b", 1}}}),
            R"({"references":[{"name":"b.proto","subject":"b","version":1}],"schema":"p","schemaType":"PROTOBUF"})");
}

TEST(RegistryMessages, ErrorBodies) {
  auto e = ParseErrorResponse(R"({"error_code":40403,"message":"Schema not found"})");
  EXPECT_EQ(e.error_code, 40403);
  EXPECT_EQ(e.message, "Schema not found");
  auto html = ParseErrorResponse("<html>\nBad Gateway\n</html>");
  EXPECT_FALSE(html.error_code.has_value());
  EXPECT_EQ(html.message, "<html> Bad Gateway </html>");
  EXPECT_EQ(ParseErrorResponse(std::string(1000, 'x')).message.size(), 203u);
  EXPECT_FALSE(ParseErrorResponse(R"({"error_code":"x"})").error_code.has_value());
}

}  // namespace
}  // namespace thaw::registry
