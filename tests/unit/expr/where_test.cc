#include "thaw/expr/where.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace thaw::expr {
namespace {

// Slot i holds column kColumns[i]; the first six are the Kafka fields.
const std::vector<std::string> kColumns = {"partition", "offset", "timestamp",    "timestamp_type",
                                           "key",       "value",  "amount",       "name",
                                           "flag",      "ratio",  "kafka.offset", "my col"};

Result<int> Resolve(std::string_view name) {
  for (size_t i = 0; i < kColumns.size(); ++i) {
    if (kColumns[i] == name) return static_cast<int>(i);
  }
  return Status::NotFound("table columns: amount, name, flag, ratio, kafka.offset, my col");
}

constexpr int64_t k2024 = 1704067200000;  // 2024-01-01T00:00:00Z

class TestRow : public Row {
 public:
  TestRow() : values_(kColumns.size()) {
    Set("partition", Value::Int(2));
    Set("offset", Value::Int(15));
    Set("timestamp", Value::Int(k2024));
    Set("timestamp_type", Value::Int(0));
    Set("key", Value::Bytes("abcdef"));
    Set("value", Value::Bytes("hello"));
    Set("amount", Value::Int(42));
    Set("name", Value::Bytes("bob"));
    Set("flag", Value::Bool(true));
    Set("ratio", Value::Double(0.5));
    Set("kafka.offset", Value::Int(15));
    Set("my col", Value::Bytes("x"));
    headers_ = {{"trace", "t1"}, {"trace", "t2"}, {"empty", std::nullopt}};
  }

  TestRow& Set(std::string_view name, Value v) {
    for (size_t i = 0; i < kColumns.size(); ++i) {
      if (kColumns[i] == name) values_[i] = v;
    }
    return *this;
  }

  Value Get(int slot) const override { return values_.at(static_cast<size_t>(slot)); }

  Value Header(std::string_view key) const override {
    for (const auto& [k, v] : headers_) {
      if (k == key) return v ? Value::Bytes(*v) : Value::Null();
    }
    return Value::Null();
  }

 private:
  std::vector<Value> values_;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers_;
};

// Parses and binds, failing the test (and returning a never-true expression)
// on error.
Expression Must(std::string_view text) {
  auto parsed = ParseWhere(text);
  if (!parsed.ok()) {
    ADD_FAILURE() << text << ": " << parsed.status().ToString();
    return std::move(ParseWhere("FALSE = TRUE")).ValueOrDie();
  }
  Expression e = std::move(parsed).ValueOrDie();
  Status st = e.Bind(Resolve);
  EXPECT_TRUE(st.ok()) << text << ": " << st.ToString();
  return e;
}

bool Matches(std::string_view text, const Row& row = TestRow()) { return Must(text).Evaluate(row); }

std::string Canonical(std::string_view text) { return Must(text).ToString(); }

std::string ParseError(std::string_view text) {
  auto parsed = ParseWhere(text);
  if (parsed.ok()) return "parsed: " + parsed->ToString();
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

Status BindError(std::string_view text) {
  auto parsed = ParseWhere(text);
  if (!parsed.ok()) return parsed.status();
  return parsed->Bind(Resolve);
}

KafkaBounds BoundsOf(std::string_view text) { return Must(text).Bounds(); }

// --- parsing and precedence

TEST(WhereParse, AndBindsTighterThanOr) {
  // partition = 2 or (partition = 3 and offset = 0)
  EXPECT_TRUE(Matches("partition = 2 or partition = 3 and offset = 0"));
  EXPECT_EQ(Canonical("partition = 2 or partition = 3 and offset = 0"),
            "partition = 2 OR partition = 3 AND offset = 0");
  EXPECT_FALSE(Matches("(partition = 2 or partition = 3) and offset = 0"));
  EXPECT_EQ(Canonical("(partition = 2 or partition = 3) and offset = 0"),
            "(partition = 2 OR partition = 3) AND offset = 0");
  EXPECT_TRUE(Matches("offset = 0 and partition = 3 or partition = 2"));
}

TEST(WhereParse, NotBindsTighterThanAnd) {
  EXPECT_FALSE(Matches("not partition = 2 and offset = 15"));
  EXPECT_EQ(Canonical("not partition = 2 and offset = 15"), "NOT partition = 2 AND offset = 15");
  EXPECT_TRUE(Matches("not (partition = 3 and offset = 0)"));
  EXPECT_EQ(Canonical("not (partition = 3 and offset = 0)"), "NOT (partition = 3 AND offset = 0)");
  EXPECT_TRUE(Matches("not not partition = 2"));
  EXPECT_EQ(Canonical("not not (partition = 2)"), "NOT NOT partition = 2");
  EXPECT_TRUE(Matches("offset = 15 and not partition = 3"));
}

TEST(WhereParse, ParenthesesKeywordsAndFlattening) {
  EXPECT_EQ(Canonical("((partition = 2))"), "partition = 2");
  EXPECT_EQ(Canonical("(offset = 1 and offset = 2) and (offset = 3 and offset = 4)"),
            "offset = 1 AND offset = 2 AND offset = 3 AND offset = 4");
  EXPECT_EQ(Canonical("offset = 1 or (offset = 2 or offset = 3)"),
            "offset = 1 OR offset = 2 OR offset = 3");
  EXPECT_EQ(Canonical("PARTITION = 2 AnD Offset IS NOT NULL Or KEY Not In ('a')"),
            "partition = 2 AND offset IS NOT NULL OR key NOT IN ('a')");
  EXPECT_EQ(Canonical("  partition\t=\n2  "), "partition = 2");
}

TEST(WhereParse, CanonicalFormRoundTrips) {
  const char* cases[] = {
      "partition <> 1",
      "partition == 1",
      "\"my col\" = 'it''s'",
      "\"Offset\" = 1",
      "\"offset\" = 1",
      "kafka.offset >= 10",
      "ratio = 1.0",
      "ratio < 1e20",
      "ratio > -.5",
      "amount in (1, 2.5, -3)",
      "header('a''b') is null",
      "key not starts with 'x' and value not between 'a' and 'b'",
      "timestamp >= '2024-01-01' or timestamp_type = 'LogAppendTime'",
      "not (offset = 1 or offset = 2) and (flag = true or flag = false)",
      "null is null",
      "5 < offset",
  };
  for (const char* text : cases) {
    auto first = ParseWhere(text);
    ASSERT_TRUE(first.ok()) << text << ": " << first.status().ToString();
    const std::string once = first->ToString();
    auto again = ParseWhere(once);
    ASSERT_TRUE(again.ok()) << text << " -> " << once << ": " << again.status().ToString();
    EXPECT_EQ(again->ToString(), once) << text;
  }
  EXPECT_EQ(Canonical("partition <> 1"), "partition != 1");
  EXPECT_EQ(Canonical("partition == 1"), "partition = 1");
  EXPECT_EQ(Canonical("\"my col\" = 'it''s'"), "\"my col\" = 'it''s'");
  EXPECT_EQ(Canonical("\"offset\" = 1"), "offset = 1");
  EXPECT_EQ(Canonical("ratio = 1.0"), "ratio = 1.0");
  EXPECT_EQ(Canonical("ratio < 1e20"), "ratio < 1e+20");
  EXPECT_EQ(Canonical("ratio > -.5"), "ratio > -0.5");
  EXPECT_EQ(Canonical("timestamp >= '2024-01-01'"), "timestamp >= '2024-01-01'");
  // A table column that looks like a keyword or a Kafka field stays quoted.
  auto quoted = ParseWhere("\"and\" = 1 and \"Offset\" = 2 and \"header\" = 3");
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(quoted->ToString(), "\"and\" = 1 AND \"Offset\" = 2 AND \"header\" = 3");
  EXPECT_EQ(quoted->ColumnNames(), (std::vector<std::string>{"and", "Offset", "header"}));
}

TEST(WhereParse, ColumnNamesAndHeaders) {
  Expression e = Must("offset > 1 and (amount = 2 or offset < 9) and header('h') is null");
  EXPECT_EQ(e.ColumnNames(), (std::vector<std::string>{"offset", "amount"}));
  EXPECT_TRUE(e.UsesHeaders());
  EXPECT_FALSE(Must("offset > 1").UsesHeaders());
  EXPECT_EQ(e.text(), "offset > 1 and (amount = 2 or offset < 9) and header('h') is null");
}

// --- operators

TEST(WhereEval, Comparisons) {
  EXPECT_TRUE(Matches("offset = 15"));
  EXPECT_TRUE(Matches("offset == 15"));
  EXPECT_FALSE(Matches("offset = 16"));
  EXPECT_TRUE(Matches("offset != 16"));
  EXPECT_TRUE(Matches("offset <> 16"));
  EXPECT_FALSE(Matches("offset != 15"));
  EXPECT_TRUE(Matches("offset < 16"));
  EXPECT_FALSE(Matches("offset < 15"));
  EXPECT_TRUE(Matches("offset <= 15"));
  EXPECT_FALSE(Matches("offset <= 14"));
  EXPECT_TRUE(Matches("offset > 14"));
  EXPECT_FALSE(Matches("offset > 15"));
  EXPECT_TRUE(Matches("offset >= 15"));
  EXPECT_FALSE(Matches("offset >= 16"));
  EXPECT_TRUE(Matches("offset>14"));
  EXPECT_TRUE(Matches("offset>-1"));
  EXPECT_TRUE(Matches("offset > -9223372036854775808 and offset < 9223372036854775807"));
  // Literal on the left, column against column.
  EXPECT_TRUE(Matches("15 = offset"));
  EXPECT_TRUE(Matches("14 < offset"));
  EXPECT_TRUE(Matches("offset = kafka.offset"));
  EXPECT_FALSE(Matches("offset < kafka.offset"));
  EXPECT_TRUE(Matches("1 = 1"));
  EXPECT_FALSE(Matches("1 = 2"));
}

TEST(WhereEval, MixedNumbersCompareExactly) {
  EXPECT_TRUE(Matches("amount = 42.0"));
  EXPECT_TRUE(Matches("amount < 42.5"));
  EXPECT_TRUE(Matches("amount > 41.999"));
  EXPECT_TRUE(Matches("ratio = 0.5 and ratio > 0 and ratio < 1"));
  EXPECT_TRUE(Matches("ratio < amount"));
  TestRow big;
  big.Set("amount", Value::Int(9007199254740993));  // 2^53 + 1: not a double
  EXPECT_FALSE(Matches("amount = 9007199254740992.0", big));
  EXPECT_TRUE(Matches("amount > 9007199254740992.0", big));
  EXPECT_TRUE(Matches("amount < 1e300", big));
  big.Set("amount", Value::Int(INT64_MAX));
  EXPECT_TRUE(Matches("amount < 9223372036854775808.0", big));
  TestRow nan;
  nan.Set("ratio", Value::Double(std::nan("")));
  EXPECT_FALSE(Matches("ratio = 1", nan));
  EXPECT_FALSE(Matches("not ratio = 1", nan));
}

TEST(WhereEval, StringsBytesAndBooleans) {
  EXPECT_TRUE(Matches("name = 'bob'"));
  EXPECT_TRUE(Matches("name > 'alice' and name < 'carol'"));
  EXPECT_TRUE(Matches("key = 'abcdef' and value = 'hello'"));
  EXPECT_TRUE(Matches("\"my col\" = 'x'"));
  EXPECT_TRUE(Matches("flag = true and flag != false"));
  EXPECT_TRUE(Matches("flag > false"));
  TestRow row;
  row.Set("name", Value::Bytes("it's"));
  EXPECT_TRUE(Matches("name = 'it''s'", row));
  // Bytes compare as unsigned: 0xff sorts after 'a'.
  row.Set("key", Value::Bytes("\xff"));
  EXPECT_TRUE(Matches("key > 'a'", row));
  EXPECT_TRUE(Matches("key = '\xff'", row));
  row.Set("key", Value::Bytes(std::string_view("a\0b", 3)));
  EXPECT_TRUE(Matches("key > 'a' and key < 'b'", row));
}

TEST(WhereEval, InAndNotIn) {
  EXPECT_TRUE(Matches("partition in (0, 2, 3)"));
  EXPECT_FALSE(Matches("partition in (0, 3)"));
  EXPECT_TRUE(Matches("partition not in (0, 3)"));
  EXPECT_FALSE(Matches("partition not in (2)"));
  EXPECT_TRUE(Matches("name in ('alice', 'bob')"));
  EXPECT_TRUE(Matches("name not in ('alice', 'carol')"));
  EXPECT_TRUE(Matches("amount in (41.5, 42)"));
  EXPECT_TRUE(Matches("amount in (42.0)"));
  EXPECT_TRUE(Matches("ratio in (0.5, 1)"));
  EXPECT_TRUE(Matches("timestamp_type in ('CreateTime', 1)"));
  EXPECT_TRUE(Matches("timestamp in ('2023-01-01', '2024-01-01T00:00:00Z')"));
  EXPECT_TRUE(Matches("key in ('zzz', 'abcdef', 'a')"));
  // A value of another kind at run time: unknown either way.
  TestRow row;
  row.Set("amount", Value::Bytes("42"));
  EXPECT_FALSE(Matches("amount in (42, 43)", row));
  EXPECT_FALSE(Matches("amount not in (42, 43)", row));
}

TEST(WhereEval, IsNull) {
  TestRow row;
  row.Set("key", Value::Null());
  EXPECT_TRUE(Matches("key is null", row));
  EXPECT_FALSE(Matches("key is not null", row));
  EXPECT_TRUE(Matches("not key is not null", row));
  EXPECT_TRUE(Matches("value is not null", row));
  EXPECT_TRUE(Matches("null is null"));
  EXPECT_FALSE(Matches("1 is null"));
}

TEST(WhereEval, StartsWith) {
  EXPECT_TRUE(Matches("key starts with 'abc'"));
  EXPECT_TRUE(Matches("key starts with 'abcdef'"));
  EXPECT_FALSE(Matches("key starts with 'abcdefg'"));
  EXPECT_FALSE(Matches("key starts with 'abd'"));
  EXPECT_TRUE(Matches("key starts with ''"));
  EXPECT_FALSE(Matches("key not starts with 'abc'"));
  EXPECT_TRUE(Matches("KEY STARTS WITH 'ab' and name starts with 'b'"));
  EXPECT_TRUE(Matches("header('trace') starts with 't'"));
  TestRow row;
  row.Set("name", Value::Int(5));  // not bytes at run time: unknown
  EXPECT_FALSE(Matches("name starts with '5'", row));
  EXPECT_FALSE(Matches("name not starts with '5'", row));
}

// `like` as pyiceberg's row filters read it: 'p%' is starts-with, no '%' is
// equality, '\%' a literal percent, '_' matches only itself.
TEST(WhereEval, LikeIsStartsWithOrEquality) {
  EXPECT_TRUE(Matches("key like 'abc%'"));
  EXPECT_TRUE(Matches("KEY LIKE 'abcdef%'"));
  EXPECT_TRUE(Matches("key like '%'"));
  EXPECT_FALSE(Matches("key like 'abd%'"));
  EXPECT_FALSE(Matches("key not like 'abc%'"));
  EXPECT_TRUE(Matches("key not like 'abd%'"));
  EXPECT_TRUE(Matches("key like 'abcdef'"));
  EXPECT_FALSE(Matches("key like 'abc'"));
  EXPECT_TRUE(Matches("key not like 'abc'"));
  EXPECT_FALSE(Matches("key like 'a_c%'"));
  EXPECT_TRUE(Matches("name like 'b%' and header('trace') like 't%'"));
  TestRow row;
  row.Set("key", Value::Bytes("50%off"));
  EXPECT_TRUE(Matches("key like '50\\%%'", row));
  EXPECT_TRUE(Matches("key like '50\\%off'", row));
  EXPECT_FALSE(Matches("key like '50\\%x%'", row));
  EXPECT_EQ(Canonical("key like 'ab%'"), "key STARTS WITH 'ab'");
  EXPECT_EQ(Canonical("key not like 'ab%'"), "key NOT STARTS WITH 'ab'");
  EXPECT_EQ(Canonical("key like 'ab'"), "key = 'ab'");
  EXPECT_EQ(Canonical("key not like 'ab'"), "key != 'ab'");
  EXPECT_EQ(BoundsOf("key like 'abc%'").key_prefix, "abc");
  EXPECT_EQ(BoundsOf("key like 'abc'").key_prefix, "abc");
  EXPECT_FALSE(BoundsOf("key not like 'abc%'").key_prefix);
  // A column named like must be quoted, as other keywords.
  EXPECT_EQ(ParseError("like = 1").substr(0, 40), "--where: unexpected 'like' at column 1: ");
}

TEST(WhereEval, Between) {
  EXPECT_TRUE(Matches("offset between 10 and 20"));
  EXPECT_TRUE(Matches("offset between 15 and 15"));
  EXPECT_FALSE(Matches("offset between 16 and 20"));
  EXPECT_FALSE(Matches("offset between 20 and 10"));
  EXPECT_TRUE(Matches("offset not between 16 and 20"));
  EXPECT_TRUE(Matches("name between 'a' and 'c'"));
  EXPECT_TRUE(Matches("ratio between 0 and 1.5"));
  // The 'and' of between does not end the conjunct.
  EXPECT_TRUE(Matches("offset between 10 and 20 and partition = 2"));
  EXPECT_EQ(Canonical("offset between 10 and 20 and partition = 2"),
            "offset BETWEEN 10 AND 20 AND partition = 2");
  EXPECT_TRUE(Matches("timestamp between '2023-12-31' and '2024-01-02'"));
}

TEST(WhereEval, Headers) {
  EXPECT_TRUE(Matches("header('trace') = 't1'"));  // the first header with the key
  EXPECT_FALSE(Matches("header('trace') = 't2'"));
  EXPECT_TRUE(Matches("header('empty') is null"));
  EXPECT_TRUE(Matches("header('missing') is null"));
  EXPECT_FALSE(Matches("header('missing') = 'x'"));
  EXPECT_FALSE(Matches("not header('missing') = 'x'"));
  EXPECT_TRUE(Matches("HEADER ( 'trace' ) in ('t0', 't1')"));
  EXPECT_EQ(Canonical("HEADER ( 'trace' ) = 't1'"), "header('trace') = 't1'");
}

TEST(WhereEval, TimestampLiterals) {
  EXPECT_TRUE(Matches("timestamp = '2024-01-01'"));
  EXPECT_TRUE(Matches("timestamp >= '2024-01-01T00:00:00Z'"));
  EXPECT_TRUE(Matches("timestamp < '2024-01-01T00:00:00.001Z'"));
  EXPECT_FALSE(Matches("timestamp > '2023-12-31T23:00:00-01:00'"));
  EXPECT_TRUE(Matches("timestamp >= '2023-12-31T23:00:00-01:00'"));
  EXPECT_TRUE(Matches("timestamp = '1704067200000'"));
  EXPECT_TRUE(Matches("timestamp = 1704067200000"));
  EXPECT_TRUE(Matches("'2023-06-01' < timestamp"));
  EXPECT_TRUE(Matches("timestamp_type = 'CreateTime' and timestamp_type != 'logappendtime'"));
  EXPECT_TRUE(Matches("timestamp_type = 0"));
  TestRow row;
  row.Set("timestamp_type", Value::Int(1));
  EXPECT_TRUE(Matches("timestamp_type = 'LogAppendTime'", row));
  // Binding converts; rebinding keeps working.
  Expression e = Must("timestamp >= '2024-01-01'");
  ASSERT_TRUE(e.Bind(Resolve).ok());
  EXPECT_TRUE(e.Evaluate(TestRow()));
  Expression moved = std::move(e);
  EXPECT_TRUE(moved.Evaluate(TestRow()));
}

// --- three-valued logic

TEST(WhereEval, NullsAreUnknownNotFalse) {
  TestRow row;
  row.Set("amount", Value::Null()).Set("name", Value::Null());
  EXPECT_FALSE(Matches("amount = 1", row));
  EXPECT_FALSE(Matches("amount != 1", row));
  EXPECT_FALSE(Matches("not amount = 1", row));
  EXPECT_FALSE(Matches("not not amount = 1", row));
  EXPECT_FALSE(Matches("amount in (1, 2)", row));
  EXPECT_FALSE(Matches("amount not in (1, 2)", row));
  EXPECT_FALSE(Matches("amount between 1 and 2", row));
  EXPECT_FALSE(Matches("amount not between 1 and 2", row));
  EXPECT_FALSE(Matches("name starts with 'b'", row));
  EXPECT_FALSE(Matches("name not starts with 'b'", row));
  // unknown or true = true; unknown or false = unknown; unknown and false = false.
  EXPECT_TRUE(Matches("amount = 1 or offset = 15", row));
  EXPECT_FALSE(Matches("amount = 1 or offset = 0", row));
  EXPECT_FALSE(Matches("not (amount = 1 or offset = 0)", row));
  EXPECT_TRUE(Matches("not (amount = 1 and offset = 0)", row));
  EXPECT_FALSE(Matches("not (amount = 1 and offset = 15)", row));
  EXPECT_TRUE(Matches("amount is null or amount > 5", row));
  // Null on both sides is still unknown.
  EXPECT_FALSE(Matches("amount = name", row));
}

TEST(WhereEval, KindsThatDoNotMatchAtRunTimeAreUnknown) {
  // Table column types are unknown when binding; a string column against a
  // number decides nothing.
  EXPECT_FALSE(Matches("name = 5"));
  EXPECT_FALSE(Matches("name != 5"));
  EXPECT_FALSE(Matches("not name = 5"));
  EXPECT_FALSE(Matches("flag = 1"));
}

// --- bounds

TEST(WhereBounds, ConjunctsNarrowRanges) {
  KafkaBounds b = BoundsOf("offset >= 10 and offset < 20");
  EXPECT_FALSE(b.empty);
  EXPECT_EQ(b.offset_lo, 10);
  EXPECT_EQ(b.offset_hi, 19);
  EXPECT_FALSE(b.partitions);
  EXPECT_FALSE(b.time_lo_ms);
  EXPECT_FALSE(b.key_prefix);

  EXPECT_EQ(BoundsOf("partition in (0,3)").partitions, (std::set<int32_t>{0, 3}));
  EXPECT_EQ(BoundsOf("partition = 2").partitions, (std::set<int32_t>{2}));
  EXPECT_EQ(BoundsOf("partition >= 0 and partition < 4").partitions,
            (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(BoundsOf("partition between 5 and 6").partitions, (std::set<int32_t>{5, 6}));
  EXPECT_EQ(BoundsOf("partition in (1, 2, 3) and partition != 9 and partition > 1").partitions,
            (std::set<int32_t>{2, 3}));

  b = BoundsOf("offset between 5 and 9");
  EXPECT_EQ(b.offset_lo, 5);
  EXPECT_EQ(b.offset_hi, 9);
  b = BoundsOf("10 <= offset and 20 > offset");
  EXPECT_EQ(b.offset_lo, 10);
  EXPECT_EQ(b.offset_hi, 19);
  b = BoundsOf("offset >= 10 and offset in (3, 12, 17, 30) and offset < 20");
  EXPECT_EQ(b.offset_lo, 12);
  EXPECT_EQ(b.offset_hi, 17);
  b = BoundsOf("offset = 7");
  EXPECT_EQ(b.offset_lo, 7);
  EXPECT_EQ(b.offset_hi, 7);

  b = BoundsOf("timestamp >= '2024-01-01'");
  EXPECT_EQ(b.time_lo_ms, k2024);
  EXPECT_FALSE(b.time_hi_ms);
  b = BoundsOf("timestamp between '2024-01-01' and 1704067200999");
  EXPECT_EQ(b.time_lo_ms, k2024);
  EXPECT_EQ(b.time_hi_ms, k2024 + 999);
  b = BoundsOf("timestamp < '2024-01-01T00:00:01Z'");
  EXPECT_EQ(b.time_hi_ms, k2024 + 999);

  EXPECT_EQ(BoundsOf("key starts with 'abc'").key_prefix, "abc");
  EXPECT_EQ(BoundsOf("key = 'abc'").key_prefix, "abc");
  EXPECT_EQ(BoundsOf("key in ('abc1', 'abc2')").key_prefix, "abc");
  EXPECT_EQ(BoundsOf("key between 'ab1' and 'ab9'").key_prefix, "ab");
  EXPECT_EQ(BoundsOf("key >= 'ab1' and key < 'ab9'").key_prefix, "ab");
  EXPECT_EQ(BoundsOf("key starts with 'ab' and key starts with 'abc'").key_prefix, "abc");

  b = BoundsOf("partition = 2 and offset >= 100 and timestamp <= 5 and key starts with 'k'");
  EXPECT_EQ(b.ToString(), "partition in (2), offset 100.., timestamp ..5, key starts with 'k'");
}

TEST(WhereBounds, OrsOfTheSameFieldUnite) {
  EXPECT_EQ(BoundsOf("partition = 1 or partition = 4").partitions, (std::set<int32_t>{1, 4}));
  EXPECT_EQ(BoundsOf("partition in (1, 2) or partition between 7 and 8").partitions,
            (std::set<int32_t>{1, 2, 7, 8}));
  KafkaBounds b =
      BoundsOf("(partition = 1 and offset >= 100) or (partition = 2 and offset between 50 and 60)");
  EXPECT_EQ(b.partitions, (std::set<int32_t>{1, 2}));
  EXPECT_EQ(b.offset_lo, 50);
  EXPECT_FALSE(b.offset_hi);
  b = BoundsOf("offset >= 10 and (partition = 1 or flag = true)");
  EXPECT_EQ(b.offset_lo, 10);
  EXPECT_FALSE(b.partitions);
  EXPECT_EQ(BoundsOf("key starts with 'abc' or key starts with 'abd'").key_prefix, "ab");
  EXPECT_FALSE(BoundsOf("key starts with 'a' or key starts with 'b'").key_prefix);
  // A branch that can never be true adds nothing.
  EXPECT_EQ(BoundsOf("(offset = 1 and offset = 2) or partition = 7").partitions,
            (std::set<int32_t>{7}));
}

TEST(WhereBounds, ContradictionsAreEmpty) {
  for (const char* text :
       {"offset = 1 and offset = 2", "partition in (1, 2) and partition = 3",
        "key starts with 'a' and key starts with 'b'", "offset > 9223372036854775807",
        "timestamp < -9223372036854775808", "partition = 5000000000", "key >= 'b' and key <= 'a'",
        "offset between 9 and 5"}) {
    KafkaBounds b = BoundsOf(text);
    EXPECT_TRUE(b.empty) << text;
    EXPECT_EQ(b.partitions, std::set<int32_t>{}) << text;
    EXPECT_EQ(b.ToString(), "matches nothing") << text;
  }
}

TEST(WhereBounds, ConservativeCasesGiveNoBound) {
  for (const char* text : {
           "not offset < 10",
           "not (partition = 1)",
           "offset >= 10 or partition = 1",
           "partition = 1 or key = 'x'",
           "offset = 5 or offset is null",
           "offset != 5",
           "partition not in (1, 2)",
           "offset not between 1 and 5",
           "key not starts with 'a'",
           "key starts with ''",
           "offset > 4.5",
           "kafka.offset >= 10",
           "offset >= amount",
           "offset is not null",
           "header('p') = 'x'",
           "value starts with 'abc'",
           "partition >= 2",
           "partition between 0 and 1000000",
           "key > 'abc'",
       }) {
    KafkaBounds b = BoundsOf(text);
    EXPECT_EQ(b.ToString(), "no bounds") << text;
  }
}

TEST(WhereBounds, TimestampStringsNeedBind) {
  auto parsed = ParseWhere("timestamp >= '2024-01-01' and offset > 3");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Bounds().ToString(), "offset 4..");
  ASSERT_TRUE(parsed->Bind(Resolve).ok());
  EXPECT_EQ(parsed->Bounds().ToString(), "offset 4.., timestamp 1704067200000..");
}

// Every selected row lies inside the bounds, over a grid of rows.
TEST(WhereBounds, NeverPruneASelectedRow) {
  const char* exprs[] = {
      "partition in (0, 3) and offset >= 10 and offset < 20",
      "(partition = 1 and offset >= 5) or (partition = 2 and offset <= 3)",
      "partition between 1 and 2 or partition = 3 and key starts with 'a'",
      "key starts with 'ab' or key = 'ac'",
      "key in ('a', 'ab', 'b') and partition != 1",
      "key between 'a' and 'ab' or offset = 7",
      "timestamp >= 3 and timestamp < 8 and not offset = 4",
      "offset in (1, 5, 9) or offset between 20 and 30 and partition = 0",
      "not (offset < 5) and (partition = 0 or partition = 2)",
      "key >= 'a' and key < 'b' and timestamp between 2 and 6",
  };
  const std::string keys[] = {"", "a", "ab", "abc", "ac", "b", "ba"};
  for (const char* text : exprs) {
    Expression e = Must(text);
    const KafkaBounds b = e.Bounds();
    int selected = 0;
    for (int64_t p = 0; p < 4; ++p) {
      for (int64_t off : {0, 1, 3, 4, 5, 7, 9, 10, 15, 19, 20, 25, 30, 31}) {
        for (int64_t ts = 0; ts < 10; ts += 3) {
          for (const std::string& k : keys) {
            TestRow row;
            row.Set("partition", Value::Int(p)).Set("offset", Value::Int(off));
            row.Set("timestamp", Value::Int(ts)).Set("key", Value::Bytes(k));
            if (!e.Evaluate(row)) continue;
            ++selected;
            SCOPED_TRACE(fmt::format("{}: p={} off={} ts={} key='{}'", text, p, off, ts, k));
            ASSERT_FALSE(b.empty);
            ASSERT_TRUE(!b.partitions || b.partitions->count(static_cast<int32_t>(p)));
            ASSERT_GE(off, b.offset_lo.value_or(INT64_MIN));
            ASSERT_LE(off, b.offset_hi.value_or(INT64_MAX));
            ASSERT_GE(ts, b.time_lo_ms.value_or(INT64_MIN));
            ASSERT_LE(ts, b.time_hi_ms.value_or(INT64_MAX));
            ASSERT_TRUE(!b.key_prefix || k.rfind(*b.key_prefix, 0) == 0);
          }
        }
      }
    }
    EXPECT_GT(selected, 0) << text;
  }
}

// --- errors

TEST(WhereErrors, ParseErrorsNameTheColumn) {
  EXPECT_EQ(ParseError("partition = "),
            "--where: unexpected end of input at column 13: expected a column name or value after "
            "'=' (in \"partition = \")");
  EXPECT_EQ(ParseError("offset > )"),
            "--where: unexpected ')' at column 10: expected a column name or value after '>' (in "
            "\"offset > )\")");
  EXPECT_EQ(ParseError("(offset > 5"),
            "--where: unexpected end of input at column 12: expected ')' to close the '(' at "
            "column 1 (in \"(offset > 5\")");
  EXPECT_EQ(ParseError("offset > 5)"),
            "--where: unexpected ')' at column 11: expected 'and', 'or' or the end of the "
            "expression (in \"offset > 5)\")");
  EXPECT_EQ(ParseError("offset >> 5"),
            "--where: unexpected '>' at column 9: expected a column name or value after '>' (in "
            "\"offset >> 5\")");
  EXPECT_EQ(ParseError("name = 'abc"),
            "--where: unterminated string (strings are 'single-quoted'; write '' for a quote) at "
            "column 8 (in \"name = 'abc\")");
  EXPECT_EQ(ParseError("offset = 12abc"),
            "--where: malformed number '12abc' at column 10 (in \"offset = 12abc\")");
  EXPECT_EQ(ParseError("offset = 99999999999999999999"),
            "--where: integer 99999999999999999999 does not fit in 64 bits at column 10 (in "
            "\"offset = 99999999999999999999\")");
  EXPECT_EQ(ParseError("ratio = 1e999"),
            "--where: number 1e999 is out of range at column 9 (in \"ratio = 1e999\")");
  EXPECT_EQ(ParseError("partition in (1, 2"),
            "--where: unexpected end of input at column 19: expected ',' or ')' in the 'in' list "
            "(in \"partition in (1, 2\")");
  EXPECT_EQ(ParseError("partition in ()"),
            "--where: unexpected ')' at column 15: expected a value (a number, a 'string', true or "
            "false) after '(' (in \"partition in ()\")");
  EXPECT_EQ(ParseError("partition in (amount)"),
            "--where: unexpected 'amount' at column 15: expected a value (a number, a 'string', "
            "true or false) after '(' (in \"partition in (amount)\")");
  EXPECT_EQ(ParseError("key starts 'a'"),
            "--where: unexpected ''a'' at column 12: expected 'with' after 'starts' (in \"key "
            "starts 'a'\")");
  EXPECT_EQ(ParseError("offset between 1 5"),
            "--where: unexpected '5' at column 18: expected 'and' between the two bounds of "
            "'between' (in \"offset between 1 5\")");
  EXPECT_EQ(ParseError("offset is nul"),
            "--where: unexpected 'nul' at column 11: expected 'null' or 'not null' after 'is' (in "
            "\"offset is nul\")");
  EXPECT_EQ(ParseError("offset not equals 'a'"),
            "--where: unexpected 'equals' at column 12: expected 'in', 'between', 'starts with' or 'like' "
            "after 'not' (in \"offset not equals 'a'\")");
  EXPECT_EQ(ParseError("offset"),
            "--where: unexpected end of input at column 7: expected a comparison (=, !=, <, <=, >, "
            ">=), 'in', 'is', 'starts with', 'like' or 'between' after 'offset' (in \"offset\")");
  EXPECT_EQ(ParseError(""),
            "--where: the expression is empty; e.g. --where 'partition = 0 and offset >= 100'");
  EXPECT_EQ(ParseError("key like 'a%b'"),
            "--where: unsupported '%' in the 'like' pattern (only a trailing '%' is a wildcard, as in "
            "pyiceberg's row filters; write '\\%' for a literal percent) at column 10 (in \"key like 'a%b'\")");
  EXPECT_EQ(ParseError("key like 5"),
            "--where: unexpected '5' at column 10: expected a 'single-quoted' pattern after 'like' (in \"key "
            "like 5\")");
  EXPECT_EQ(ParseError("offset # 5"),
            "--where: unexpected character '#' at column 8 (in \"offset # 5\")");
  EXPECT_EQ(ParseError("offset ! 5"),
            "--where: unexpected '!' (did you mean '!=' or 'not'?) at column 8 (in \"offset ! "
            "5\")");
  EXPECT_EQ(ParseError("offset = 1 and and = 1"),
            "--where: unexpected 'and' at column 16: expected a condition (a column, a value, "
            "'not' or '(') after 'and'; a column named 'and' must be written \"and\" (in \"offset "
            "= 1 and and = 1\")");
  EXPECT_EQ(ParseError("a. = 1"),
            "--where: expected a name part after '.' (quote names with other characters: "
            "\"a.b-c\") at column 3 (in \"a. = 1\")");
  EXPECT_EQ(ParseError("header(5) = 'x'"),
            "--where: unexpected '5' at column 8: expected a 'single-quoted' header key after "
            "'header(', as in header('trace-id') (in \"header(5) = 'x'\")");
  EXPECT_EQ(ParseError("\"\" = 1"),
            "--where: empty quoted name \"\" at column 1 (in \"\"\" = 1\")");
  EXPECT_EQ(ParseError("offset = null"),
            "--where: a comparison with null is never true (it is unknown); use 'is null' or 'is "
            "not null' at column 10 (in \"offset = null\")");
  EXPECT_EQ(ParseError("offset in (1, null)"),
            "--where: null in an 'in' list never matches; write 'x is null or x in (...)' at "
            "column 15 (in \"offset in (1, null)\")");
  EXPECT_EQ(ParseError("  "),
            "--where: the expression is empty; e.g. --where 'partition = 0 and offset >= 100'");
}

TEST(WhereErrors, MessagesStayOnOneLine) {
  std::string message = ParseError("offset = 1\nand\n)");
  EXPECT_EQ(message,
            "--where: unexpected ')' at column 16: expected a condition (a column, a value, 'not' "
            "or '(') after 'and' (in \"offset = 1 and )\")");
  std::string long_text = "offset = 1" + std::string(200, ' ') + "and ) " + std::string(200, 'x');
  message = ParseError(long_text);
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_NE(message.find("at column 215"), std::string::npos) << message;
  EXPECT_NE(message.find("(in \"...      "), std::string::npos) << message;
  EXPECT_NE(message.find("   and ) xxx"), std::string::npos) << message;
  EXPECT_EQ(message.substr(message.size() - 6), "x...\")") << message;
  EXPECT_LT(message.size(), 250u);
}

TEST(WhereErrors, LimitsOnUntrustedInput) {
  std::string deep = std::string(100, '(') + "offset = 1" + std::string(100, ')');
  EXPECT_TRUE(ParseWhere(deep).ok());
  deep = std::string(101, '(') + "offset = 1" + std::string(101, ')');
  EXPECT_NE(ParseError(deep).find("nests deeper than 100 levels of '(' and 'not' at column 101"),
            std::string::npos);
  std::string nots;
  for (int i = 0; i < 101; ++i) nots += "not ";
  EXPECT_NE(ParseError(nots + "offset = 1")
                .find("nests deeper than 100 levels of '(' and 'not' at "
                      "column 401"),
            std::string::npos);
  std::string big = "offset in (" + std::string(kMaxWhereBytes, '1') + ")";
  EXPECT_EQ(ParseError(big), "--where: the expression is 65548 bytes; the limit is 65536");
  // The largest in list that fits the length limit parses.
  std::string many = "partition in (0";
  while (many.size() + 3 < kMaxWhereBytes) many += ",2";
  many += ")";
  EXPECT_TRUE(Must(many).Evaluate(TestRow()));
}

TEST(WhereErrors, UnknownColumn) {
  Status st = BindError("offset > 1 and nosuch = 1");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.message(),
            "--where: unknown column 'nosuch' at column 16 (Kafka fields: partition, offset, "
            "timestamp, timestamp_type, key, value, header('k'); table columns: amount, name, "
            "flag, ratio, kafka.offset, my col)");
  // A Kafka field the table does not carry.
  auto e = ParseWhere("timestamp_type = 0");
  ASSERT_TRUE(e.ok());
  st = e->Bind([](std::string_view name) -> Result<int> {
    return Status::NotFound("no column holds {}", name);
  });
  EXPECT_EQ(st.message(),
            "--where: Kafka field 'timestamp_type' at column 1 is not available in this table "
            "(no column holds timestamp_type)");
  // Unquoted Kafka field names reach the resolver in lower case; quoted names as written.
  e = ParseWhere("OFFSET = 1 and \"Offset\" = 2");
  ASSERT_TRUE(e.ok());
  std::vector<std::string> asked;
  ASSERT_TRUE(e->Bind([&](std::string_view name) -> Result<int> {
                 asked.emplace_back(name);
                 return 0;
               }).ok());
  EXPECT_EQ(asked, (std::vector<std::string>{"offset", "Offset"}));
}

TEST(WhereErrors, TypeMismatchesFoundWhenBinding) {
  EXPECT_EQ(BindError("partition = 'abc'").message(),
            "--where: cannot compare partition (an integer) with 'abc' (a string) at column 13 (in "
            "\"partition = 'abc'\")");
  EXPECT_EQ(BindError("'abc' = offset").message(),
            "--where: cannot compare 'abc' (a string) with offset (an integer) at column 1 (in "
            "\"'abc' = offset\")");
  EXPECT_EQ(BindError("key > 5").message(),
            "--where: cannot compare key (bytes) with 5 (a number) at column 7 (in \"key > 5\")");
  EXPECT_EQ(BindError("offset = key").message(),
            "--where: cannot compare offset (an integer) with key (bytes) at column 10 (in "
            "\"offset = key\")");
  EXPECT_EQ(BindError("true = 1").message(),
            "--where: cannot compare TRUE (a boolean) with 1 (a number) at column 1 (in \"true = "
            "1\")");
  EXPECT_EQ(BindError("partition in (1, 'a')").message(),
            "--where: cannot compare partition (an integer) with 'a' (a string) at column 18 (in "
            "\"partition in (1, 'a')\")");
  EXPECT_EQ(BindError("amount in (1, 'a')").message(),
            "--where: an 'in' list mixes 1 (a number) and 'a' (a string) at column 15 (in "
            "\"amount in (1, 'a')\")");
  EXPECT_EQ(BindError("offset starts with '1'").message(),
            "--where: 'starts with' needs a string or bytes value, not offset (an integer) at "
            "column 1 (in \"offset starts with '1'\")");
  EXPECT_EQ(BindError("offset between 'a' and 2").message(),
            "--where: cannot compare offset (an integer) with 'a' (a string) at column 16 (in "
            "\"offset between 'a' and 2\")");
  EXPECT_EQ(BindError("header('h') = 1").message(),
            "--where: cannot compare header('h') (bytes) with 1 (a number) at column 15 (in "
            "\"header('h') = 1\")");
  EXPECT_EQ(BindError("timestamp > 'yesterday'").message(),
            "--where: timestamp 'yesterday' is not a time: use epoch milliseconds or ISO-8601 "
            "such as 2024-05-01T12:00:00Z at column 13 (in \"timestamp > 'yesterday'\")");
  EXPECT_EQ(BindError("timestamp_type = 'Create'").message(),
            "--where: timestamp_type is 'CreateTime' or 'LogAppendTime' (or 0 or 1), not 'Create' "
            "at column 18 (in \"timestamp_type = 'Create'\")");
  EXPECT_EQ(BindError("timestamp = true").code(), StatusCode::kInvalidArgument);
  // Table columns have no known type: decided at run time.
  EXPECT_TRUE(BindError("amount = 'abc' and name > 5 and flag starts with 'x'").ok());
}

}  // namespace
}  // namespace thaw::expr
