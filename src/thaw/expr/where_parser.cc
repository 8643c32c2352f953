// The --where grammar: tokens to an expression tree (ParseWhere).
#include "thaw/expr/where_internal.h"

#include <memory>
#include <utility>

namespace thaw::expr {

using namespace internal;  // NOLINT: this library's own tree types

namespace {

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

  // --- tokens

  bool Kw(std::string_view word) const {
    return cur_.type == Tok::kIdent && IEquals(cur_.text, word);
  }

  // Moves to the next token; the current one becomes the "previous" token
  // that messages point after.
  Status Advance() {
    prev_begin_ = cur_.begin;
    prev_end_ = cur_.end;
    cur_ = Token{};
    return lexer_.Next();
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
  Token cur_;
  Lexer lexer_{text_, &cur_};
  size_t prev_begin_ = 0;
  size_t prev_end_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<Expression> ParseWhere(std::string_view text) {
  if (text.size() > kMaxWhereBytes) {
    return Status::Invalid("--where: the expression is {} bytes; the limit is {}", text.size(),
                           kMaxWhereBytes);
  }
  Parser parser(text);
  ASSIGN_OR_RAISE(auto root, parser.Parse());
  return Expression(std::string(text), std::move(root));
}

}  // namespace thaw::expr
