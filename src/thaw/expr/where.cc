#include "thaw/expr/where.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>

#include "thaw/common/time_parse.h"

namespace thaw::expr {

Row::~Row() = default;

namespace internal {

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

}  // namespace internal

namespace {

using internal::Cmp;
using internal::Field;
using internal::Literal;
using internal::Node;
using internal::Operand;

// ---------------------------------------------------------------------------
// Names and spelling

constexpr std::string_view kKeywords[] = {"and",  "or",      "not",  "in",    "is",  "null",
                                          "starts", "with", "between", "true", "false", "like"};

constexpr std::string_view kKafkaFieldList =
    "Kafka fields: partition, offset, timestamp, timestamp_type, key, value, header('k')";

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool IsKeyword(std::string_view word) {
  for (std::string_view k : kKeywords) {
    if (IEquals(word, k)) return true;
  }
  return false;
}

struct FieldName {
  Field field;
  std::string_view name;
};
constexpr FieldName kFieldNames[] = {{Field::kPartition, "partition"},
                                     {Field::kOffset, "offset"},
                                     {Field::kTimestamp, "timestamp"},
                                     {Field::kTimestampType, "timestamp_type"},
                                     {Field::kKey, "key"},
                                     {Field::kValue, "value"}};

std::string_view FieldNameOf(Field f) {
  for (const auto& fn : kFieldNames) {
    if (fn.field == f) return fn.name;
  }
  return "";
}

// Unquoted names match the Kafka field names in any case; quoted names only
// exactly.
Field LookupField(std::string_view name, bool quoted) {
  for (const auto& fn : kFieldNames) {
    if (quoted ? name == fn.name : IEquals(name, fn.name)) return fn.field;
  }
  return Field::kTable;
}

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

// name ( '.' name )* with name = [A-Za-z_][A-Za-z0-9_]*: what the lexer reads
// as one unquoted identifier.
bool IsPlainDottedName(std::string_view s) {
  bool at_start = true;
  for (char c : s) {
    if (at_start) {
      if (!IsIdentStart(c)) return false;
      at_start = false;
    } else if (c == '.') {
      at_start = true;
    } else if (!IsIdentChar(c)) {
      return false;
    }
  }
  return !at_start;
}

void AppendQuoted(std::string_view s, char quote, std::string* out) {
  out->push_back(quote);
  for (char c : s) {
    out->push_back(c);
    if (c == quote) out->push_back(quote);
  }
  out->push_back(quote);
}

void AppendColumnName(const Operand& op, std::string* out) {
  if (op.field != Field::kTable) {
    out->append(FieldNameOf(op.field));
    return;
  }
  const std::string& n = op.name;
  const bool dotted = n.find('.') != std::string::npos;
  const bool plain =
      IsPlainDottedName(n) && (dotted || (!IsKeyword(n) && LookupField(n, false) == Field::kTable &&
                                          !IEquals(n, "header")));
  if (plain) {
    out->append(n);
  } else {
    AppendQuoted(n, '"', out);
  }
}

std::string FormatDouble(double d) {
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

void AppendLiteral(const Literal& lit, std::string* out) {
  switch (lit.kind) {
    case Value::kNull:
      out->append("NULL");
      break;
    case Value::kInt:
      out->append(fmt::format("{}", lit.i));
      break;
    case Value::kDouble:
      out->append(FormatDouble(lit.d));
      break;
    case Value::kBytes:
      AppendQuoted(lit.s, '\'', out);
      break;
    case Value::kBool:
      out->append(lit.b ? "TRUE" : "FALSE");
      break;
  }
}

void AppendOperand(const Operand& op, std::string* out) {
  switch (op.kind) {
    case Operand::kColumn:
      AppendColumnName(op, out);
      break;
    case Operand::kHeader:
      out->append("header(");
      AppendQuoted(op.name, '\'', out);
      out->push_back(')');
      break;
    case Operand::kLiteral:
      AppendLiteral(op.lit, out);
      break;
  }
}

std::string OperandString(const Operand& op) {
  std::string s;
  AppendOperand(op, &s);
  return s;
}

// Bytes that are safe to show inside a one-line message.
std::string Printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

std::string Shorten(std::string_view s, size_t max) {
  if (s.size() <= max) return Printable(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return Printable(s.substr(0, cut)) + "...";
}

// The text around a 1-based column, for error messages.
std::string Excerpt(std::string_view text, int pos) {
  constexpr size_t kWidth = 80;
  if (text.size() <= kWidth) return Printable(text);
  size_t at = pos > 0 ? static_cast<size_t>(pos - 1) : 0;
  size_t start = at > kWidth / 2 ? at - kWidth / 2 : 0;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  size_t end = std::min(text.size(), start + kWidth);
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  std::string out = start > 0 ? "..." : "";
  out += Printable(text.substr(start, end - start));
  if (end < text.size()) out += "...";
  return out;
}

Status ErrorAt(std::string_view text, int pos, std::string_view message) {
  return Status::Invalid("--where: {} at column {} (in \"{}\")", Printable(message), pos,
                         Excerpt(text, pos));
}

// ---------------------------------------------------------------------------
// Lexer and parser

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

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<std::unique_ptr<Node>> Parse() {
    RETURN_NOT_OK(Advance());
    if (cur_.type == Tok::kEnd) {
      return Status::Invalid(
          "--where: the expression is empty; e.g. --where 'partition = 0 and offset >= 100'");
    }
    ASSIGN_OR_RAISE(auto root, ParseOr());
    if (cur_.type != Tok::kEnd) return Unexpected("'and', 'or' or the end of the expression");
    return root;
  }

 private:
  // --- errors

  std::string Describe(const Token& t) const {
    if (t.type == Tok::kEnd) return "end of input";
    return "'" + Shorten(text_.substr(t.begin, t.end - t.begin), 30) + "'";
  }

  std::string After() const {
    if (prev_end_ == 0) return "at the start";
    return "after '" + Shorten(text_.substr(prev_begin_, prev_end_ - prev_begin_), 30) + "'";
  }

  Status Unexpected(std::string_view expected) const {
    std::string hint;
    if (cur_.type == Tok::kIdent && IsKeyword(cur_.text)) {
      hint = fmt::format("; a column named '{}' must be written \"{}\"", cur_.text, cur_.text);
    }
    return Status::Invalid("--where: unexpected {} at column {}: expected {}{} (in \"{}\")",
                           Describe(cur_), cur_.pos, expected, hint, Excerpt(text_, cur_.pos));
  }

  Status Error(int pos, std::string_view message) const { return ErrorAt(text_, pos, message); }

  // --- lexer

  bool Kw(std::string_view word) const {
    return cur_.type == Tok::kIdent && IEquals(cur_.text, word);
  }

  // Moves to the next token; the current one becomes the "previous" token
  // that messages point after.
  Status Advance() {
    prev_begin_ = cur_.begin;
    prev_end_ = cur_.end;
    cur_ = Token{};
    const size_t n = text_.size();
    while (p_ < n && (text_[p_] == ' ' || text_[p_] == '\t' || text_[p_] == '\n' ||
                      text_[p_] == '\r' || text_[p_] == '\f' || text_[p_] == '\v')) {
      ++p_;
    }
    cur_.begin = p_;
    cur_.pos = static_cast<int>(p_) + 1;
    if (p_ >= n) {
      cur_.type = Tok::kEnd;
      cur_.end = p_;
      return Status::OK();
    }
    const char c = text_[p_];
    const char next = p_ + 1 < n ? text_[p_ + 1] : '\0';
    auto op = [&](Cmp cmp, size_t len) {
      cur_.type = Tok::kOp;
      cur_.cmp = cmp;
      p_ += len;
    };
    switch (c) {
      case '(':
        cur_.type = Tok::kLParen;
        ++p_;
        break;
      case ')':
        cur_.type = Tok::kRParen;
        ++p_;
        break;
      case ',':
        cur_.type = Tok::kComma;
        ++p_;
        break;
      case '=':
        op(Cmp::kEq, next == '=' ? 2 : 1);
        break;
      case '!':
        if (next != '=') return Error(cur_.pos, "unexpected '!' (did you mean '!=' or 'not'?)");
        op(Cmp::kNe, 2);
        break;
      case '<':
        if (next == '=') {
          op(Cmp::kLe, 2);
        } else if (next == '>') {
          op(Cmp::kNe, 2);
        } else {
          op(Cmp::kLt, 1);
        }
        break;
      case '>':
        op(next == '=' ? Cmp::kGe : Cmp::kGt, next == '=' ? 2 : 1);
        break;
      case '\'':
        RETURN_NOT_OK(LexQuoted('\'', Tok::kString));
        break;
      case '"':
        RETURN_NOT_OK(LexQuoted('"', Tok::kQuotedIdent));
        break;
      default:
        if (IsDigit(c) || ((c == '-' || c == '.') && IsDigit(next)) ||
            (c == '-' && next == '.' && p_ + 2 < n && IsDigit(text_[p_ + 2]))) {
          RETURN_NOT_OK(LexNumber());
        } else if (IsIdentStart(c)) {
          RETURN_NOT_OK(LexIdent());
        } else {
          const auto u = static_cast<unsigned char>(c);
          if (u >= 0x20 && u < 0x7f) {
            return Error(cur_.pos, fmt::format("unexpected character '{}'", c));
          }
          return Error(cur_.pos, fmt::format("unexpected byte 0x{:02x} (quote names and strings "
                                             "that contain it)",
                                             u));
        }
    }
    cur_.end = p_;
    return Status::OK();
  }

  Status LexQuoted(char quote, Tok type) {
    const int start_pos = cur_.pos;
    ++p_;
    std::string s;
    while (true) {
      if (p_ >= text_.size()) {
        return Error(start_pos, type == Tok::kString ? "unterminated string (strings are "
                                                       "'single-quoted'; write '' for a quote)"
                                                     : "unterminated quoted name");
      }
      const char c = text_[p_++];
      if (c == quote) {
        if (p_ < text_.size() && text_[p_] == quote) {
          s.push_back(quote);
          ++p_;
          continue;
        }
        break;
      }
      s.push_back(c);
    }
    if (type == Tok::kQuotedIdent && s.empty()) return Error(start_pos, "empty quoted name \"\"");
    cur_.type = type;
    cur_.text = std::move(s);
    return Status::OK();
  }

  Status LexNumber() {
    const size_t start = p_;
    const size_t n = text_.size();
    bool is_double = false;
    bool malformed = false;
    if (text_[p_] == '-') ++p_;
    while (p_ < n && IsDigit(text_[p_])) ++p_;
    if (p_ < n && text_[p_] == '.') {
      ++p_;
      if (p_ < n && IsDigit(text_[p_])) {
        while (p_ < n && IsDigit(text_[p_])) ++p_;
        is_double = true;
      } else {
        malformed = true;
      }
    }
    if (!malformed && p_ < n && (text_[p_] == 'e' || text_[p_] == 'E')) {
      size_t q = p_ + 1;
      if (q < n && (text_[q] == '+' || text_[q] == '-')) ++q;
      if (q < n && IsDigit(text_[q])) {
        while (q < n && IsDigit(text_[q])) ++q;
        p_ = q;
        is_double = true;
      } else {
        malformed = true;
      }
    }
    if (malformed || (p_ < n && (IsIdentChar(text_[p_]) || text_[p_] == '.'))) {
      while (p_ < n && (IsIdentChar(text_[p_]) || text_[p_] == '.')) ++p_;
      return Error(cur_.pos, fmt::format("malformed number '{}'",
                                         Shorten(text_.substr(start, p_ - start), 30)));
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + p_;
    const std::string_view spelled = text_.substr(start, p_ - start);
    if (is_double) {
      double d = 0;
      auto [ptr, ec] = std::from_chars(first, last, d);
      if (ec != std::errc() || ptr != last || !std::isfinite(d)) {
        return Error(cur_.pos, fmt::format("number {} is out of range", Shorten(spelled, 30)));
      }
      cur_.type = Tok::kDouble;
      cur_.d = d;
    } else {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(first, last, v);
      if (ec != std::errc() || ptr != last) {
        return Error(cur_.pos,
                     fmt::format("integer {} does not fit in 64 bits", Shorten(spelled, 30)));
      }
      cur_.type = Tok::kInt;
      cur_.i = v;
    }
    return Status::OK();
  }

  Status LexIdent() {
    const size_t start = p_;
    const size_t n = text_.size();
    while (true) {
      while (p_ < n && IsIdentChar(text_[p_])) ++p_;
      if (p_ < n && text_[p_] == '.') {
        if (p_ + 1 < n && IsIdentStart(text_[p_ + 1])) {
          ++p_;
          continue;
        }
        return Error(static_cast<int>(p_) + 2,
                     "expected a name part after '.' (quote names with other characters: "
                     "\"a.b-c\")");
      }
      break;
    }
    cur_.type = Tok::kIdent;
    cur_.text = std::string(text_.substr(start, p_ - start));
    return Status::OK();
  }

  // --- grammar

  Status EnterNesting(int pos) {
    if (++depth_ > kMaxWhereDepth) {
      return Error(pos, fmt::format("the expression nests deeper than {} levels of '(' and 'not'",
                                    kMaxWhereDepth));
    }
    return Status::OK();
  }

  static std::unique_ptr<Node> MakeJunction(Node::Kind kind,
                                            std::vector<std::unique_ptr<Node>> parts) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->pos = parts.front()->pos;
    for (auto& part : parts) {
      if (part->kind == kind) {  // (a or b) or c == a or b or c
        for (auto& grandchild : part->children) node->children.push_back(std::move(grandchild));
      } else {
        node->children.push_back(std::move(part));
      }
    }
    return node;
  }

  Result<std::unique_ptr<Node>> ParseOr() {
    ASSIGN_OR_RAISE(auto first, ParseAnd());
    if (!Kw("or")) return first;
    std::vector<std::unique_ptr<Node>> parts;
    parts.push_back(std::move(first));
    while (Kw("or")) {
      RETURN_NOT_OK(Advance());
      ASSIGN_OR_RAISE(auto next, ParseAnd());
      parts.push_back(std::move(next));
    }
    return MakeJunction(Node::kOr, std::move(parts));
  }

  Result<std::unique_ptr<Node>> ParseAnd() {
    ASSIGN_OR_RAISE(auto first, ParseNot());
    if (!Kw("and")) return first;
    std::vector<std::unique_ptr<Node>> parts;
    parts.push_back(std::move(first));
    while (Kw("and")) {
      RETURN_NOT_OK(Advance());
      ASSIGN_OR_RAISE(auto next, ParseNot());
      parts.push_back(std::move(next));
    }
    return MakeJunction(Node::kAnd, std::move(parts));
  }

  Result<std::unique_ptr<Node>> ParseNot() {
    if (!Kw("not")) return ParsePredicate();
    const int pos = cur_.pos;
    RETURN_NOT_OK(EnterNesting(pos));
    RETURN_NOT_OK(Advance());
    ASSIGN_OR_RAISE(auto child, ParseNot());
    --depth_;
    auto node = std::make_unique<Node>();
    node->kind = Node::kNot;
    node->pos = pos;
    node->children.push_back(std::move(child));
    return node;
  }

  bool AtOperandStart() const {
    switch (cur_.type) {
      case Tok::kIdent:
        return !IsKeyword(cur_.text) || Kw("true") || Kw("false") || Kw("null");
      case Tok::kQuotedIdent:
      case Tok::kString:
      case Tok::kInt:
      case Tok::kDouble:
        return true;
      default:
        return false;
    }
  }

  Status NullComparison(int pos) const {
    return Error(pos,
                 "a comparison with null is never true (it is unknown); use 'is null' or "
                 "'is not null'");
  }

  Result<std::unique_ptr<Node>> ParsePredicate() {
    if (cur_.type == Tok::kLParen) {
      const int pos = cur_.pos;
      RETURN_NOT_OK(EnterNesting(pos));
      RETURN_NOT_OK(Advance());
      ASSIGN_OR_RAISE(auto inner, ParseOr());
      if (cur_.type != Tok::kRParen) {
        return Unexpected(fmt::format("')' to close the '(' at column {}", pos));
      }
      RETURN_NOT_OK(Advance());
      --depth_;
      return inner;
    }
    if (!AtOperandStart()) {
      return Unexpected(fmt::format("a condition (a column, a value, 'not' or '(') {}", After()));
    }
    auto node = std::make_unique<Node>();
    node->pos = cur_.pos;
    ASSIGN_OR_RAISE(node->a, ParseOperand());
    const bool subject_null = node->a.IsNullLiteral();

    if (cur_.type == Tok::kOp) {
      node->kind = Node::kCompare;
      node->cmp = cur_.cmp;
      if (subject_null) return NullComparison(node->a.pos);
      RETURN_NOT_OK(Advance());
      if (!AtOperandStart()) return Unexpected(fmt::format("a column name or value {}", After()));
      ASSIGN_OR_RAISE(node->b, ParseOperand());
      if (node->b.IsNullLiteral()) return NullComparison(node->b.pos);
      return node;
    }
    if (Kw("is")) {
      node->kind = Node::kIsNull;
      RETURN_NOT_OK(Advance());
      if (Kw("not")) {
        node->negated = true;
        RETURN_NOT_OK(Advance());
      }
      if (!Kw("null")) {
        return Unexpected(node->negated ? "'null' after 'is not'"
                                        : "'null' or 'not null' after 'is'");
      }
      RETURN_NOT_OK(Advance());
      return node;
    }
    if (Kw("not")) {
      node->negated = true;
      RETURN_NOT_OK(Advance());
      if (!Kw("in") && !Kw("between") && !Kw("starts") && !Kw("like")) {
        return Unexpected("'in', 'between', 'starts with' or 'like' after 'not'");
      }
    }
    if (Kw("in") || Kw("between") || Kw("starts") || Kw("like")) {
      if (subject_null) return NullComparison(node->a.pos);
      if (Kw("in")) {
        RETURN_NOT_OK(ParseInList(node.get()));
      } else if (Kw("between")) {
        RETURN_NOT_OK(ParseBetween(node.get()));
      } else if (Kw("like")) {
        RETURN_NOT_OK(ParseLike(node.get()));
      } else {
        RETURN_NOT_OK(ParseStartsWith(node.get()));
      }
      return node;
    }
    return Unexpected(fmt::format(
        "a comparison (=, !=, <, <=, >, >=), 'in', 'is', 'starts with', 'like' or 'between' {}", After()));
  }

  Status ParseInList(Node* node) {
    node->kind = Node::kIn;
    RETURN_NOT_OK(Advance());  // 'in'
    if (cur_.type != Tok::kLParen) return Unexpected("'(' after 'in'");
    RETURN_NOT_OK(Advance());
    while (true) {
      if (node->list.size() >= kMaxInListItems) {
        return Error(cur_.pos,
                     fmt::format("an 'in' list holds at most {} values", kMaxInListItems));
      }
      ASSIGN_OR_RAISE(Operand item, ParseListLiteral());
      if (item.IsNullLiteral()) {
        return Error(item.pos,
                     "null in an 'in' list never matches; write 'x is null or x in (...)'");
      }
      node->list.push_back(std::move(item));
      if (cur_.type == Tok::kComma) {
        RETURN_NOT_OK(Advance());
        continue;
      }
      if (cur_.type == Tok::kRParen) break;
      return Unexpected("',' or ')' in the 'in' list");
    }
    return Advance();
  }

  Status ParseBetween(Node* node) {
    node->kind = Node::kBetween;
    RETURN_NOT_OK(Advance());  // 'between'
    ASSIGN_OR_RAISE(node->b, ParseListLiteral());
    if (node->b.IsNullLiteral()) return NullComparison(node->b.pos);
    if (!Kw("and")) return Unexpected("'and' between the two bounds of 'between'");
    RETURN_NOT_OK(Advance());
    ASSIGN_OR_RAISE(node->c, ParseListLiteral());
    if (node->c.IsNullLiteral()) return NullComparison(node->c.pos);
    return Status::OK();
  }

  Status ParseStartsWith(Node* node) {
    node->kind = Node::kStartsWith;
    RETURN_NOT_OK(Advance());  // 'starts'
    if (!Kw("with")) return Unexpected("'with' after 'starts'");
    RETURN_NOT_OK(Advance());
    if (cur_.type != Tok::kString)
      return Unexpected("a 'single-quoted' prefix after 'starts with'");
    node->prefix = cur_.text;
    return Advance();
  }

  // `x like 'abc%'`, as pyiceberg's row filters read it: a trailing '%'
  // makes it `x starts with 'abc'`, no '%' makes it `x = 'abc'` (`not like`:
  // `not starts with`, `!=`); '\%' is a literal '%' and '_' matches itself.
  // A '%' anywhere but at the end is an error.
  Status ParseLike(Node* node) {
    RETURN_NOT_OK(Advance());  // 'like'
    if (cur_.type != Tok::kString) return Unexpected("a 'single-quoted' pattern after 'like'");
    const std::string& pattern = cur_.text;
    bool wildcard = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != '%' || (i > 0 && pattern[i - 1] == '\\')) continue;
      if (i + 1 != pattern.size()) {
        return Error(cur_.pos, "unsupported '%' in the 'like' pattern (only a trailing '%' is a wildcard, as in "
                               "pyiceberg's row filters; write '\\%' for a literal percent)");
      }
      wildcard = true;
    }
    std::string value;
    const size_t n = wildcard ? pattern.size() - 1 : pattern.size();
    for (size_t i = 0; i < n; ++i) {
      if (pattern[i] == '\\' && i + 1 < n && pattern[i + 1] == '%') continue;  // '\%' -> '%'
      value.push_back(pattern[i]);
    }
    if (wildcard) {
      node->kind = Node::kStartsWith;
      node->prefix = std::move(value);
    } else {
      node->kind = Node::kCompare;
      node->cmp = node->negated ? Cmp::kNe : Cmp::kEq;
      node->negated = false;
      node->b.kind = Operand::kLiteral;
      node->b.lit.kind = Value::kBytes;
      node->b.lit.s = std::move(value);
      node->b.pos = cur_.pos;
    }
    return Advance();
  }

  // A literal (in an 'in' list or a 'between' bound).
  Result<Operand> ParseListLiteral() {
    const bool literal = cur_.type == Tok::kString || cur_.type == Tok::kInt ||
                         cur_.type == Tok::kDouble || Kw("true") || Kw("false") || Kw("null");
    if (!literal) {
      return Unexpected(fmt::format("a value (a number, a 'string', true or false) {}", After()));
    }
    return ParseOperand();
  }

  // Precondition: AtOperandStart().
  Result<Operand> ParseOperand() {
    Operand op;
    op.pos = cur_.pos;
    switch (cur_.type) {
      case Tok::kInt:
        op.lit.kind = Value::kInt;
        op.lit.i = cur_.i;
        break;
      case Tok::kDouble:
        op.lit.kind = Value::kDouble;
        op.lit.d = cur_.d;
        break;
      case Tok::kString:
        op.lit.kind = Value::kBytes;
        op.lit.s = std::move(cur_.text);
        break;
      case Tok::kQuotedIdent:
        op.kind = Operand::kColumn;
        op.field = LookupField(cur_.text, /*quoted=*/true);
        op.name = std::move(cur_.text);
        break;
      case Tok::kIdent:
        if (Kw("true") || Kw("false")) {
          op.lit.kind = Value::kBool;
          op.lit.b = Kw("true");
        } else if (Kw("null")) {
          op.lit.kind = Value::kNull;
        } else if (IEquals(cur_.text, "header")) {
          RETURN_NOT_OK(Advance());
          if (cur_.type != Tok::kLParen) {  // a table column named header
            op.kind = Operand::kColumn;
            op.name = std::string(text_.substr(prev_begin_, prev_end_ - prev_begin_));
            return op;
          }
          RETURN_NOT_OK(Advance());
          if (cur_.type != Tok::kString) {
            return Unexpected(
                "a 'single-quoted' header key after 'header(', as in header('trace-id')");
          }
          op.kind = Operand::kHeader;
          op.name = std::move(cur_.text);
          RETURN_NOT_OK(Advance());
          if (cur_.type != Tok::kRParen) return Unexpected("')' after the header key");
        } else {
          op.kind = Operand::kColumn;
          op.field = LookupField(cur_.text, /*quoted=*/false);
          op.name =
              op.field == Field::kTable ? std::move(cur_.text) : std::string(FieldNameOf(op.field));
        }
        break;
      default:
        return Status::Internal("--where: ParseOperand at a non-operand token");
    }
    RETURN_NOT_OK(Advance());
    return op;
  }

  std::string_view text_;
  size_t p_ = 0;
  Token cur_;
  size_t prev_begin_ = 0;
  size_t prev_end_ = 0;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------
// Binding and type checks

enum class Ty { kUnknown, kNull, kNumber, kBytes, kBool };

Ty TypeOf(const Operand& op) {
  switch (op.kind) {
    case Operand::kHeader:
      return Ty::kBytes;
    case Operand::kColumn:
      switch (op.field) {
        case Field::kTable:
          return Ty::kUnknown;
        case Field::kKey:
        case Field::kValue:
          return Ty::kBytes;
        default:
          return Ty::kNumber;
      }
    case Operand::kLiteral:
      switch (op.lit.Get().kind) {
        case Value::kNull:
          return Ty::kNull;
        case Value::kInt:
        case Value::kDouble:
          return Ty::kNumber;
        case Value::kBytes:
          return Ty::kBytes;
        case Value::kBool:
          return Ty::kBool;
      }
  }
  return Ty::kUnknown;
}

std::string DescribeOperand(const Operand& op) {
  const Ty ty = TypeOf(op);
  const bool literal = op.kind == Operand::kLiteral;
  std::string_view type;
  switch (ty) {
    case Ty::kNumber:
      type = literal ? "a number" : "an integer";
      break;
    case Ty::kBytes:
      type = literal ? "a string" : "bytes";
      break;
    case Ty::kBool:
      type = "a boolean";
      break;
    case Ty::kNull:
      type = "null";
      break;
    case Ty::kUnknown:
      type = "a table column";
      break;
  }
  return fmt::format("{} ({})", Shorten(OperandString(op), 40), type);
}

class Binder {
 public:
  Binder(std::string_view text, const SlotResolver& resolve) : text_(text), resolve_(resolve) {}

  Status Bind(Node& n) {
    switch (n.kind) {
      case Node::kAnd:
      case Node::kOr:
      case Node::kNot:
        for (auto& child : n.children) RETURN_NOT_OK(Bind(*child));
        return Status::OK();
      case Node::kCompare:
        RETURN_NOT_OK(BindOperand(n.a));
        RETURN_NOT_OK(BindOperand(n.b));
        RETURN_NOT_OK(Convert(n.a, n.b));
        RETURN_NOT_OK(Convert(n.b, n.a));
        return CheckComparable(n.a, n.b);
      case Node::kBetween:
        RETURN_NOT_OK(BindOperand(n.a));
        RETURN_NOT_OK(Convert(n.a, n.b));
        RETURN_NOT_OK(Convert(n.a, n.c));
        RETURN_NOT_OK(CheckComparable(n.a, n.b));
        RETURN_NOT_OK(CheckComparable(n.a, n.c));
        return CheckComparable(n.b, n.c);
      case Node::kIsNull:
        return BindOperand(n.a);
      case Node::kStartsWith: {
        RETURN_NOT_OK(BindOperand(n.a));
        const Ty ty = TypeOf(n.a);
        if (ty != Ty::kBytes && ty != Ty::kUnknown) {
          return ErrorAt(text_, n.a.pos,
                         fmt::format("'starts with' needs a string or bytes value, not {}",
                                     DescribeOperand(n.a)));
        }
        return Status::OK();
      }
      case Node::kIn:
        return BindIn(n);
    }
    return Status::OK();
  }

 private:
  Status BindOperand(Operand& op) {
    if (op.kind == Operand::kLiteral) op.lit.bound_int.reset();
    if (op.kind != Operand::kColumn) return Status::OK();
    op.slot = -1;
    auto slot = resolve_(op.name);
    if (!slot.ok()) {
      const Status& st = slot.status();
      if (op.field != Field::kTable) {
        return Status(st.code(),
                      fmt::format("--where: Kafka field '{}' at column {} is not available in "
                                  "this table ({})",
                                  op.name, op.pos, st.message()));
      }
      if (st.code() == StatusCode::kNotFound) {
        return Status::NotFound("--where: unknown column '{}' at column {} ({}{}{})",
                                Shorten(op.name, 60), op.pos, kKafkaFieldList,
                                st.message().empty() ? "" : "; ", st.message());
      }
      return st.WithContext(
          fmt::format("--where: column '{}' at column {}", Shorten(op.name, 60), op.pos));
    }
    op.slot = *slot;
    return Status::OK();
  }

  // A string literal compared with timestamp or timestamp_type becomes an
  // integer.
  Status Convert(const Operand& subject, Operand& other) {
    if (other.kind != Operand::kLiteral) return Status::OK();
    other.lit.bound_int.reset();
    if (subject.kind != Operand::kColumn || other.lit.kind != Value::kBytes) return Status::OK();
    const std::string& s = other.lit.s;
    if (subject.field == Field::kTimestamp) {
      if (s.find('\0') != std::string::npos) {
        return ErrorAt(text_, other.pos, "a timestamp literal cannot contain a NUL byte");
      }
      auto ms = ParseTimeMs(s, "timestamp");
      if (!ms.ok()) return ErrorAt(text_, other.pos, ms.status().message());
      other.lit.bound_int = *ms;
    } else if (subject.field == Field::kTimestampType) {
      if (IEquals(s, "CreateTime")) {
        other.lit.bound_int = 0;
      } else if (IEquals(s, "LogAppendTime")) {
        other.lit.bound_int = 1;
      } else {
        return ErrorAt(text_, other.pos,
                       fmt::format("timestamp_type is 'CreateTime' or 'LogAppendTime' (or 0 or 1), "
                                   "not '{}'",
                                   Shorten(s, 40)));
      }
    }
    return Status::OK();
  }

  Status CheckComparable(const Operand& x, const Operand& y) {
    const Ty tx = TypeOf(x), ty = TypeOf(y);
    if (tx == Ty::kUnknown || ty == Ty::kUnknown || tx == Ty::kNull || ty == Ty::kNull ||
        tx == ty) {
      return Status::OK();
    }
    const int pos = x.kind == Operand::kLiteral ? x.pos : y.pos;
    return ErrorAt(
        text_, pos,
        fmt::format("cannot compare {} with {}", DescribeOperand(x), DescribeOperand(y)));
  }

  Status BindIn(Node& n) {
    RETURN_NOT_OK(BindOperand(n.a));
    const Operand* first_known = nullptr;
    for (Operand& item : n.list) {
      RETURN_NOT_OK(Convert(n.a, item));
      RETURN_NOT_OK(CheckComparable(n.a, item));
      if (first_known == nullptr) {
        first_known = &item;
      } else if (TypeOf(*first_known) != TypeOf(item)) {
        return ErrorAt(text_, item.pos,
                       fmt::format("an 'in' list mixes {} and {}", DescribeOperand(*first_known),
                                   DescribeOperand(item)));
      }
    }
    n.int_lookup = n.bytes_lookup = false;
    n.int_items.clear();
    n.bytes_items.clear();
    auto all = [&](Value::Kind kind) {
      return std::all_of(n.list.begin(), n.list.end(),
                         [&](const Operand& item) { return item.lit.Get().kind == kind; });
    };
    if (all(Value::kInt)) {
      for (const Operand& item : n.list) n.int_items.push_back(item.lit.Get().i);
      std::sort(n.int_items.begin(), n.int_items.end());
      n.int_lookup = true;
    } else if (all(Value::kBytes)) {
      for (const Operand& item : n.list) n.bytes_items.push_back(item.lit.s);
      std::sort(n.bytes_items.begin(), n.bytes_items.end());
      n.bytes_lookup = true;
    }
    return Status::OK();
  }

  std::string_view text_;
  const SlotResolver& resolve_;
};

// ---------------------------------------------------------------------------
// Evaluation (three-valued)

enum class Tri : uint8_t { kFalse, kTrue, kUnknown };

Tri Not(Tri t) {
  if (t == Tri::kUnknown) return t;
  return t == Tri::kTrue ? Tri::kFalse : Tri::kTrue;
}

Tri FromBool(bool b) { return b ? Tri::kTrue : Tri::kFalse; }

constexpr int kUnordered = 2;

int Sign(int64_t x, int64_t y) { return x < y ? -1 : (x > y ? 1 : 0); }

// Exact comparison of an integer with a double.
int CompareIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return kUnordered;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (d >= kTwo63) return -1;
  if (d < -kTwo63) return 1;
  const double t = std::trunc(d);
  const auto ti = static_cast<int64_t>(t);
  if (i != ti) return Sign(i, ti);
  const double frac = d - t;
  return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
}

// -1, 0, 1, or kUnordered (null, NaN, incompatible kinds).
int CompareValues(const Value& x, const Value& y) {
  using K = Value::Kind;
  if (x.kind == K::kNull || y.kind == K::kNull) return kUnordered;
  if (x.kind == K::kInt && y.kind == K::kInt) return Sign(x.i, y.i);
  if (x.kind == K::kInt && y.kind == K::kDouble) return CompareIntDouble(x.i, y.d);
  if (x.kind == K::kDouble && y.kind == K::kInt) {
    const int c = CompareIntDouble(y.i, x.d);
    return c == kUnordered ? c : -c;
  }
  if (x.kind == K::kDouble && y.kind == K::kDouble) {
    if (std::isnan(x.d) || std::isnan(y.d)) return kUnordered;
    return x.d < y.d ? -1 : (x.d > y.d ? 1 : 0);
  }
  if (x.kind == K::kBytes && y.kind == K::kBytes) {
    const int c = x.s.compare(y.s);  // char_traits<char> compares as unsigned char
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (x.kind == K::kBool && y.kind == K::kBool) return Sign(x.b, y.b);
  return kUnordered;
}

Tri Apply(Cmp cmp, const Value& x, const Value& y) {
  const int c = CompareValues(x, y);
  if (c == kUnordered) return Tri::kUnknown;
  switch (cmp) {
    case Cmp::kEq:
      return FromBool(c == 0);
    case Cmp::kNe:
      return FromBool(c != 0);
    case Cmp::kLt:
      return FromBool(c < 0);
    case Cmp::kLe:
      return FromBool(c <= 0);
    case Cmp::kGt:
      return FromBool(c > 0);
    case Cmp::kGe:
      return FromBool(c >= 0);
  }
  return Tri::kUnknown;
}

Value Fetch(const Operand& op, const Row& row) {
  switch (op.kind) {
    case Operand::kColumn:
      return op.slot < 0 ? Value::Null() : row.Get(op.slot);
    case Operand::kHeader:
      return row.Header(op.name);
    case Operand::kLiteral:
      return op.lit.Get();
  }
  return Value::Null();
}

Tri EvalIn(const Node& n, const Row& row) {
  const Value v = Fetch(n.a, row);
  if (v.kind == Value::kNull) return Tri::kUnknown;
  bool found = false;
  bool unknown = false;
  if (n.int_lookup && v.kind == Value::kInt) {
    found = std::binary_search(n.int_items.begin(), n.int_items.end(), v.i);
  } else if (n.bytes_lookup && v.kind == Value::kBytes) {
    found = std::binary_search(n.bytes_items.begin(), n.bytes_items.end(), v.s);
  } else {
    for (const Operand& item : n.list) {
      const Tri t = Apply(Cmp::kEq, v, item.lit.Get());
      if (t == Tri::kTrue) {
        found = true;
        break;
      }
      if (t == Tri::kUnknown) unknown = true;
    }
  }
  Tri result = found ? Tri::kTrue : (unknown ? Tri::kUnknown : Tri::kFalse);
  return n.negated ? Not(result) : result;
}

Tri Eval(const Node& n, const Row& row) {
  switch (n.kind) {
    case Node::kAnd: {
      Tri result = Tri::kTrue;
      for (const auto& child : n.children) {
        const Tri t = Eval(*child, row);
        if (t == Tri::kFalse) return t;
        if (t == Tri::kUnknown) result = t;
      }
      return result;
    }
    case Node::kOr: {
      Tri result = Tri::kFalse;
      for (const auto& child : n.children) {
        const Tri t = Eval(*child, row);
        if (t == Tri::kTrue) return t;
        if (t == Tri::kUnknown) result = t;
      }
      return result;
    }
    case Node::kNot:
      return Not(Eval(*n.children.front(), row));
    case Node::kCompare:
      return Apply(n.cmp, Fetch(n.a, row), Fetch(n.b, row));
    case Node::kIn:
      return EvalIn(n, row);
    case Node::kIsNull:
      return FromBool((Fetch(n.a, row).kind == Value::kNull) != n.negated);
    case Node::kStartsWith: {
      const Value v = Fetch(n.a, row);
      if (v.kind != Value::kBytes) return Tri::kUnknown;
      const Tri t = FromBool(v.s.substr(0, n.prefix.size()) == n.prefix);
      return n.negated ? Not(t) : t;
    }
    case Node::kBetween: {
      const Value v = Fetch(n.a, row);
      const Tri lo = Apply(Cmp::kGe, v, n.b.lit.Get());
      const Tri hi = Apply(Cmp::kLe, v, n.c.lit.Get());
      Tri t = Tri::kTrue;
      if (lo == Tri::kFalse || hi == Tri::kFalse) {
        t = Tri::kFalse;
      } else if (lo == Tri::kUnknown || hi == Tri::kUnknown) {
        t = Tri::kUnknown;
      }
      return n.negated ? Not(t) : t;
    }
  }
  return Tri::kUnknown;
}

// ---------------------------------------------------------------------------
// Bounds

using Interval = std::pair<int64_t, int64_t>;  // inclusive
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// At most this many partitions are listed in KafkaBounds::partitions.
constexpr int64_t kMaxBoundPartitions = static_cast<int64_t>(kMaxInListItems);

// The integers a field can hold: sorted, disjoint, non-adjacent intervals.
// Unions and intersections are linear merges, so `or`s of ranges and `in`
// lists stay cheap whatever their size.
class IntSet {
 public:
  static IntSet All() { return IntSet({{kInt64Min, kInt64Max}}); }
  static IntSet Range(int64_t lo, int64_t hi) { return lo > hi ? IntSet({}) : IntSet({{lo, hi}}); }
  static IntSet Of(std::vector<int64_t> values) {
    std::sort(values.begin(), values.end());
    std::vector<Interval> out;
    for (int64_t v : values) Append(out, {v, v});
    return IntSet(std::move(out));
  }

  bool IsAll() const { return iv_.size() == 1 && iv_[0] == Interval{kInt64Min, kInt64Max}; }
  bool IsEmpty() const { return iv_.empty(); }
  int64_t Lo() const { return iv_.front().first; }
  int64_t Hi() const { return iv_.back().second; }
  const std::vector<Interval>& intervals() const { return iv_; }

  IntSet Intersect(const IntSet& o) const {
    std::vector<Interval> out;
    size_t i = 0, j = 0;
    while (i < iv_.size() && j < o.iv_.size()) {
      const int64_t lo = std::max(iv_[i].first, o.iv_[j].first);
      const int64_t hi = std::min(iv_[i].second, o.iv_[j].second);
      if (lo <= hi) out.push_back({lo, hi});
      if (iv_[i].second < o.iv_[j].second) {
        ++i;
      } else {
        ++j;
      }
    }
    return IntSet(std::move(out));
  }

  IntSet Union(const IntSet& o) const {
    std::vector<Interval> out;
    out.reserve(iv_.size() + o.iv_.size());
    size_t i = 0, j = 0;
    while (i < iv_.size() || j < o.iv_.size()) {
      if (j == o.iv_.size() || (i < iv_.size() && iv_[i].first <= o.iv_[j].first)) {
        Append(out, iv_[i++]);
      } else {
        Append(out, o.iv_[j++]);
      }
    }
    return IntSet(std::move(out));
  }

  // The number of integers held, saturating at `cap` + 1.
  int64_t CountUpTo(int64_t cap) const {
    __int128 n = 0;
    for (const Interval& iv : iv_) {
      n += static_cast<__int128>(iv.second) - iv.first + 1;
      if (n > cap) return cap + 1;
    }
    return static_cast<int64_t>(n);
  }

 private:
  explicit IntSet(std::vector<Interval> iv) : iv_(std::move(iv)) {}

  // Appends an interval that starts at or after the last one's start,
  // merging overlapping and adjacent intervals.
  static void Append(std::vector<Interval>& out, Interval next) {
    if (!out.empty() && (out.back().second == kInt64Max || next.first <= out.back().second + 1)) {
      out.back().second = std::max(out.back().second, next.second);
    } else {
      out.push_back(next);
    }
  }

  std::vector<Interval> iv_;
};

struct Acc {
  bool empty = false;  // a key contradiction; empty IntSets also mean nothing matches
  IntSet partition = IntSet::All();
  IntSet offset = IntSet::All();
  IntSet time = IntSet::All();
  std::optional<std::string> key_prefix;
  std::optional<std::string> key_lo, key_hi;  // inclusive

  bool Empty() const { return empty || partition.IsEmpty() || offset.IsEmpty() || time.IsEmpty(); }
  bool Bounded() const {
    return Empty() || !partition.IsAll() || !offset.IsAll() || !time.IsAll() || key_prefix ||
           key_lo || key_hi;
  }
};

std::string CommonPrefix(std::string_view x, std::string_view y) {
  size_t n = 0;
  while (n < x.size() && n < y.size() && x[n] == y[n]) ++n;
  return std::string(x.substr(0, n));
}

// Both prefixes hold: keep the longer, or nothing can match.
void AndPrefix(Acc& acc, const std::string& p) {
  if (p.empty()) return;
  if (!acc.key_prefix) {
    acc.key_prefix = p;
  } else if (p.size() > acc.key_prefix->size()) {
    if (p.compare(0, acc.key_prefix->size(), *acc.key_prefix) == 0) {
      acc.key_prefix = p;
    } else {
      acc.empty = true;
    }
  } else if (acc.key_prefix->compare(0, p.size(), p) != 0) {
    acc.empty = true;
  }
}

// Every key in [lo, hi] starts with their common prefix.
void Normalize(Acc& acc) {
  if (acc.key_lo && acc.key_hi) {
    if (*acc.key_lo > *acc.key_hi) {
      acc.empty = true;
    } else {
      AndPrefix(acc, CommonPrefix(*acc.key_lo, *acc.key_hi));
    }
  }
}

void AndInto(Acc& x, Acc&& y) {
  if (y.empty) x.empty = true;
  x.partition = x.partition.Intersect(y.partition);
  x.offset = x.offset.Intersect(y.offset);
  x.time = x.time.Intersect(y.time);
  if (y.key_lo && (!x.key_lo || *y.key_lo > *x.key_lo)) x.key_lo = std::move(y.key_lo);
  if (y.key_hi && (!x.key_hi || *y.key_hi < *x.key_hi)) x.key_hi = std::move(y.key_hi);
  if (y.key_prefix) AndPrefix(x, *y.key_prefix);
}

Acc OrOf(Acc&& x, Acc&& y) {
  Normalize(x);
  Normalize(y);
  if (x.Empty()) return std::move(y);
  if (y.Empty()) return std::move(x);
  Acc r;
  r.partition = x.partition.Union(y.partition);
  r.offset = x.offset.Union(y.offset);
  r.time = x.time.Union(y.time);
  if (x.key_prefix && y.key_prefix) {
    std::string p = CommonPrefix(*x.key_prefix, *y.key_prefix);
    if (!p.empty()) r.key_prefix = std::move(p);
  }
  if (x.key_lo && y.key_lo) r.key_lo = std::min(*x.key_lo, *y.key_lo);
  if (x.key_hi && y.key_hi) r.key_hi = std::max(*x.key_hi, *y.key_hi);
  return r;
}

IntSet* SetFor(Acc& acc, Field f) {
  switch (f) {
    case Field::kPartition:
      return &acc.partition;
    case Field::kOffset:
      return &acc.offset;
    case Field::kTimestamp:
      return &acc.time;
    default:
      return nullptr;
  }
}

Cmp Flip(Cmp c) {
  switch (c) {
    case Cmp::kLt:
      return Cmp::kGt;
    case Cmp::kLe:
      return Cmp::kGe;
    case Cmp::kGt:
      return Cmp::kLt;
    case Cmp::kGe:
      return Cmp::kLe;
    default:
      return c;
  }
}

bool IsKafkaColumn(const Operand& op) {
  return op.kind == Operand::kColumn && op.field != Field::kTable;
}

// The integers `x cmp v` admits.
IntSet SetFromComparison(Cmp cmp, int64_t v) {
  switch (cmp) {
    case Cmp::kEq:
      return IntSet::Range(v, v);
    case Cmp::kGe:
      return IntSet::Range(v, kInt64Max);
    case Cmp::kLe:
      return IntSet::Range(kInt64Min, v);
    case Cmp::kGt:
      return v == kInt64Max ? IntSet::Range(1, 0) : IntSet::Range(v + 1, kInt64Max);
    case Cmp::kLt:
      return v == kInt64Min ? IntSet::Range(1, 0) : IntSet::Range(kInt64Min, v - 1);
    case Cmp::kNe:
      break;
  }
  return IntSet::All();
}

// What one predicate implies. Only predicates that are true solely for
// non-null Kafka fields inside the range contribute.
Acc LeafBounds(const Node& n) {
  Acc acc;
  switch (n.kind) {
    case Node::kCompare: {
      const Operand* col = &n.a;
      const Operand* lit = &n.b;
      Cmp cmp = n.cmp;
      if (!IsKafkaColumn(*col)) {
        std::swap(col, lit);
        cmp = Flip(cmp);
      }
      if (!IsKafkaColumn(*col) || lit->kind != Operand::kLiteral) return acc;
      const Value v = lit->lit.Get();
      if (IntSet* set = SetFor(acc, col->field)) {
        if (v.kind == Value::kInt) *set = SetFromComparison(cmp, v.i);
      } else if (col->field == Field::kKey && v.kind == Value::kBytes) {
        std::string s(v.s);
        if (cmp == Cmp::kEq || cmp == Cmp::kGe || cmp == Cmp::kGt) acc.key_lo = s;
        if (cmp == Cmp::kEq || cmp == Cmp::kLe || cmp == Cmp::kLt) acc.key_hi = s;
      }
      return acc;
    }
    case Node::kIn: {
      if (n.negated || !IsKafkaColumn(n.a)) return acc;
      if (IntSet* set = SetFor(acc, n.a.field)) {
        std::vector<int64_t> values;
        for (const Operand& item : n.list) {
          const Value v = item.lit.Get();
          if (v.kind != Value::kInt) return acc;
          values.push_back(v.i);
        }
        *set = IntSet::Of(std::move(values));
      } else if (n.a.field == Field::kKey) {
        for (const Operand& item : n.list) {
          if (item.lit.Get().kind != Value::kBytes) return acc;
        }
        for (const Operand& item : n.list) {
          const std::string& s = item.lit.s;
          if (!acc.key_lo || s < *acc.key_lo) acc.key_lo = s;
          if (!acc.key_hi || s > *acc.key_hi) acc.key_hi = s;
        }
      }
      return acc;
    }
    case Node::kBetween: {
      if (n.negated || !IsKafkaColumn(n.a)) return acc;
      const Value lo = n.b.lit.Get();
      const Value hi = n.c.lit.Get();
      if (IntSet* set = SetFor(acc, n.a.field)) {
        if (lo.kind == Value::kInt && hi.kind == Value::kInt) *set = IntSet::Range(lo.i, hi.i);
      } else if (n.a.field == Field::kKey && lo.kind == Value::kBytes && hi.kind == Value::kBytes) {
        acc.key_lo = std::string(lo.s);
        acc.key_hi = std::string(hi.s);
      }
      return acc;
    }
    case Node::kStartsWith:
      if (!n.negated && IsKafkaColumn(n.a) && n.a.field == Field::kKey && !n.prefix.empty()) {
        acc.key_prefix = n.prefix;
      }
      return acc;
    default:
      return acc;
  }
}

Acc Collect(const Node& n) {
  switch (n.kind) {
    case Node::kAnd: {
      Acc acc;
      for (const auto& child : n.children) AndInto(acc, Collect(*child));
      return acc;
    }
    case Node::kOr: {
      Acc acc = Collect(*n.children.front());
      for (size_t i = 1; i < n.children.size(); ++i) {
        acc = OrOf(std::move(acc), Collect(*n.children[i]));
        if (!acc.Bounded()) break;  // nothing left to keep
      }
      return acc;
    }
    case Node::kNot:
      return Acc{};  // `not` gives no bound
    default:
      return LeafBounds(n);
  }
}

// ---------------------------------------------------------------------------
// Printing

int Precedence(const Node& n) {
  switch (n.kind) {
    case Node::kOr:
      return 1;
    case Node::kAnd:
      return 2;
    case Node::kNot:
      return 3;
    default:
      return 4;
  }
}

std::string_view CmpString(Cmp c) {
  switch (c) {
    case Cmp::kEq:
      return "=";
    case Cmp::kNe:
      return "!=";
    case Cmp::kLt:
      return "<";
    case Cmp::kLe:
      return "<=";
    case Cmp::kGt:
      return ">";
    case Cmp::kGe:
      return ">=";
  }
  return "?";
}

void Print(const Node& n, std::string* out);

void PrintChild(const Node& child, int min_precedence, std::string* out) {
  const bool parens = Precedence(child) < min_precedence;
  if (parens) out->push_back('(');
  Print(child, out);
  if (parens) out->push_back(')');
}

void Print(const Node& n, std::string* out) {
  switch (n.kind) {
    case Node::kAnd:
    case Node::kOr: {
      const bool is_and = n.kind == Node::kAnd;
      for (size_t i = 0; i < n.children.size(); ++i) {
        if (i > 0) out->append(is_and ? " AND " : " OR ");
        PrintChild(*n.children[i], Precedence(n) + 1, out);
      }
      return;
    }
    case Node::kNot:
      out->append("NOT ");
      PrintChild(*n.children.front(), 3, out);
      return;
    case Node::kCompare:
      AppendOperand(n.a, out);
      out->push_back(' ');
      out->append(CmpString(n.cmp));
      out->push_back(' ');
      AppendOperand(n.b, out);
      return;
    case Node::kIn:
      AppendOperand(n.a, out);
      out->append(n.negated ? " NOT IN (" : " IN (");
      for (size_t i = 0; i < n.list.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendOperand(n.list[i], out);
      }
      out->push_back(')');
      return;
    case Node::kIsNull:
      AppendOperand(n.a, out);
      out->append(n.negated ? " IS NOT NULL" : " IS NULL");
      return;
    case Node::kStartsWith:
      AppendOperand(n.a, out);
      out->append(n.negated ? " NOT STARTS WITH " : " STARTS WITH ");
      AppendQuoted(n.prefix, '\'', out);
      return;
    case Node::kBetween:
      AppendOperand(n.a, out);
      out->append(n.negated ? " NOT BETWEEN " : " BETWEEN ");
      AppendOperand(n.b, out);
      out->append(" AND ");
      AppendOperand(n.c, out);
      return;
  }
}

void VisitOperands(const Node& n, const std::function<void(const Operand&)>& f) {
  for (const auto& child : n.children) VisitOperands(*child, f);
  switch (n.kind) {
    case Node::kCompare:
      f(n.a);
      f(n.b);
      break;
    case Node::kIn:
    case Node::kIsNull:
    case Node::kStartsWith:
      f(n.a);
      break;
    case Node::kBetween:
      f(n.a);
      f(n.b);
      f(n.c);
      break;
    default:
      break;
  }
}

}  // namespace

// ---------------------------------------------------------------------------

Expression::Expression(std::string text, std::unique_ptr<internal::Node> root)
    : text_(std::move(text)), root_(std::move(root)) {}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

Result<Expression> ParseWhere(std::string_view text) {
  if (text.size() > kMaxWhereBytes) {
    return Status::Invalid("--where: the expression is {} bytes; the limit is {}", text.size(),
                           kMaxWhereBytes);
  }
  Parser parser(text);
  ASSIGN_OR_RAISE(auto root, parser.Parse());
  return Expression(std::string(text), std::move(root));
}

Status Expression::Bind(const SlotResolver& resolve) {
  Binder binder(text_, resolve);
  return binder.Bind(*root_);
}

bool Expression::Evaluate(const Row& row) const { return Eval(*root_, row) == Tri::kTrue; }

KafkaBounds Expression::Bounds() const {
  Acc acc = Collect(*root_);
  Normalize(acc);
  KafkaBounds out;
  if (!acc.Empty() && !acc.partition.IsAll()) {
    // Kafka partitions are 32-bit: values outside cannot match.
    const IntSet p = acc.partition.Intersect(
        IntSet::Range(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    if (p.IsEmpty()) {
      acc.empty = true;
    } else if (p.CountUpTo(kMaxBoundPartitions) <= kMaxBoundPartitions) {
      out.partitions.emplace();
      for (const Interval& iv : p.intervals()) {
        for (int64_t v = iv.first; v <= iv.second; ++v) {
          out.partitions->insert(out.partitions->end(), static_cast<int32_t>(v));
        }
      }
    }
  }
  if (acc.Empty()) {
    KafkaBounds none;
    none.empty = true;
    none.partitions.emplace();
    return none;
  }
  auto range = [](const IntSet& set, std::optional<int64_t>* lo, std::optional<int64_t>* hi) {
    if (set.Lo() != kInt64Min) *lo = set.Lo();
    if (set.Hi() != kInt64Max) *hi = set.Hi();
  };
  range(acc.offset, &out.offset_lo, &out.offset_hi);
  range(acc.time, &out.time_lo_ms, &out.time_hi_ms);
  out.key_prefix = acc.key_prefix;
  return out;
}

std::string Expression::ToString() const {
  std::string out;
  Print(*root_, &out);
  return out;
}

std::vector<std::string> Expression::ColumnNames() const {
  std::vector<std::string> names;
  VisitOperands(*root_, [&](const Operand& op) {
    if (op.kind == Operand::kColumn &&
        std::find(names.begin(), names.end(), op.name) == names.end()) {
      names.push_back(op.name);
    }
  });
  return names;
}

bool Expression::UsesHeaders() const {
  bool uses = false;
  VisitOperands(*root_, [&](const Operand& op) { uses |= op.kind == Operand::kHeader; });
  return uses;
}

std::string KafkaBounds::ToString() const {
  if (empty) return "matches nothing";
  std::vector<std::string> parts;
  if (partitions) {
    std::string s = "partition in (";
    size_t i = 0;
    for (int32_t p : *partitions) {
      if (i == 20) {
        s += fmt::format(", ... {} more", partitions->size() - 20);
        break;
      }
      if (i++ > 0) s += ", ";
      s += fmt::format("{}", p);
    }
    parts.push_back(s + ")");
  }
  auto range = [&](std::string_view name, const std::optional<int64_t>& lo,
                   const std::optional<int64_t>& hi) {
    if (!lo && !hi) return;
    parts.push_back(fmt::format("{} {}..{}", name, lo ? fmt::format("{}", *lo) : "",
                                hi ? fmt::format("{}", *hi) : ""));
  };
  range("offset", offset_lo, offset_hi);
  range("timestamp", time_lo_ms, time_hi_ms);
  if (key_prefix) {
    std::string s = "key starts with ";
    AppendQuoted(Printable(*key_prefix), '\'', &s);
    parts.push_back(s);
  }
  if (parts.empty()) return "no bounds";
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += ", ";
    out += parts[i];
  }
  return out;
}

}  // namespace thaw::expr
