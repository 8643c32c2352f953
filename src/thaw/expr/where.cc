#include "thaw/expr/where.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "thaw/expr/where_internal.h"

namespace thaw::expr {

Row::~Row() = default;

namespace internal {

namespace {

constexpr std::string_view kKeywords[] = {"and",  "or",      "not",  "in",    "is",  "null",
                                          "starts", "with", "between", "true", "false", "like"};

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

}  // namespace

// ---------------------------------------------------------------------------
// Names and spelling



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

}  // namespace internal

using namespace internal;  // NOLINT: this library's own tree types

// ---------------------------------------------------------------------------

Expression::Expression(std::string text, std::unique_ptr<internal::Node> root)
    : text_(std::move(text)), root_(std::move(root)) {}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

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

}  // namespace thaw::expr
