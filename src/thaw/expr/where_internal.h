// Internals of the --where language shared by its parts (not a public API):
//   where.cc         names, spelling, printing and the Expression glue
//   where_lexer.cc   tokens
//   where_parser.cc  the grammar (ParseWhere)
//   where_bind.cc    binding columns and type checks (Expression::Bind)
//   where_eval.cc    three-valued evaluation (Expression::Evaluate)
//   where_ranges.cc  pruning ranges (Expression::Bounds, KafkaBounds::ToString)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/expr/where.h"

namespace thaw::expr::internal {

// A Kafka field, or kTable for any other (table) column.
enum class Field { kTable, kPartition, kOffset, kTimestamp, kTimestampType, kKey, kValue };

struct Literal {
  Value::Kind kind = Value::kNull;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;  // kBytes: the string as written (unescaped)
  // Set by Bind() for a string compared with timestamp or timestamp_type;
  // ToString() still prints the string.
  std::optional<int64_t> bound_int;

  Value Get() const {
    if (bound_int) return Value::Int(*bound_int);
    switch (kind) {
      case Value::kNull:
        return Value::Null();
      case Value::kInt:
        return Value::Int(i);
      case Value::kDouble:
        return Value::Double(d);
      case Value::kBytes:
        return Value::Bytes(s);
      case Value::kBool:
        return Value::Bool(b);
    }
    return Value::Null();
  }
};

struct Operand {
  enum Kind { kColumn, kHeader, kLiteral };
  Kind kind = kLiteral;
  Field field = Field::kTable;  // kColumn
  std::string name;             // kColumn: column name; kHeader: header key
  int slot = -1;                // kColumn, set by Bind()
  Literal lit;                  // kLiteral
  int pos = 0;                  // 1-based byte column in the text

  bool IsNullLiteral() const { return kind == kLiteral && lit.kind == Value::kNull; }
};

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

struct Node {
  enum Kind { kAnd, kOr, kNot, kCompare, kIn, kIsNull, kStartsWith, kBetween };
  Kind kind = kAnd;
  int pos = 0;
  bool negated = false;  // NOT IN, IS NOT NULL, NOT BETWEEN, NOT STARTS WITH
  Cmp cmp = Cmp::kEq;
  std::vector<std::unique_ptr<Node>> children;  // kAnd, kOr (two or more), kNot (one)
  Operand a;                                    // the subject; left side of a comparison
  Operand b, c;                                 // right side of a comparison; between's bounds
  std::vector<Operand> list;                    // kIn: literals
  std::string prefix;                           // kStartsWith
  // kIn lookup tables built by Bind() when every item is an integer / bytes.
  bool int_lookup = false;
  bool bytes_lookup = false;
  std::vector<int64_t> int_items;
  std::vector<std::string_view> bytes_items;  // point into list[*].lit.s
};


// ---------------------------------------------------------------------------
// Names and spelling (where.cc)

inline constexpr std::string_view kKafkaFieldList =
    "Kafka fields: partition, offset, timestamp, timestamp_type, key, value, header('k')";

bool IEquals(std::string_view a, std::string_view b);
bool IsKeyword(std::string_view word);
std::string_view FieldNameOf(Field f);
// Unquoted names match the Kafka field names in any case; quoted names only
// in exact lower case.
Field LookupField(std::string_view name, bool quoted);
inline bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsPlainDottedName(std::string_view s);
void AppendQuoted(std::string_view s, char quote, std::string* out);
void AppendColumnName(const Operand& op, std::string* out);
std::string FormatDouble(double d);
void AppendLiteral(const Literal& lit, std::string* out);
void AppendOperand(const Operand& op, std::string* out);
std::string OperandString(const Operand& op);
// Bytes that are safe to show inside a one-line message.
std::string Printable(std::string_view s);
std::string Shorten(std::string_view s, size_t max);
// The text around a 1-based column, for error messages.
std::string Excerpt(std::string_view text, int pos);
Status ErrorAt(std::string_view text, int pos, std::string_view message);

// Printing (where.cc)
void Print(const Node& n, std::string* out);
void VisitOperands(const Node& n, const std::function<void(const Operand&)>& f);

// ---------------------------------------------------------------------------
// Tokens (where_lexer.cc)

enum class Tok {
  kEnd,
  kIdent,
  kQuotedIdent,
  kString,
  kInt,
  kDouble,
  kLParen,
  kRParen,
  kComma,
  kOp
};

struct Token {
  Tok type = Tok::kEnd;
  int pos = 0;       // 1-based column
  size_t begin = 0;  // span in the text
  size_t end = 0;
  std::string text;  // kIdent as written; kQuotedIdent and kString unescaped
  int64_t i = 0;
  double d = 0;
  Cmp cmp = Cmp::kEq;
};

// Splits the text into tokens, one per Next(), written into the token its
// owner reads (the parser's current token).
class Lexer {
 public:
  Lexer(std::string_view text, Token* cur) : text_(text), cur_(*cur) {}

  // Reads the next token into the current one (reset by the caller).
  Status Next();

 private:
  Status LexQuoted(char quote, Tok type);
  Status LexNumber();
  Status LexIdent();
  Status Error(int pos, std::string_view message) const { return ErrorAt(text_, pos, message); }

  std::string_view text_;
  size_t p_ = 0;
  Token& cur_;
};

// ---------------------------------------------------------------------------
// Evaluation (where_eval.cc) and ranges (where_ranges.cc) need nothing more
// than the tree; the Expression members they define are declared in where.h.

}  // namespace thaw::expr::internal
