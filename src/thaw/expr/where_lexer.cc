// The --where lexer: text to tokens (see where_internal.h).
#include "thaw/expr/where_internal.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace thaw::expr::internal {

Status Lexer::Next() {
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

Status Lexer::LexQuoted(char quote, Tok type) {
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

Status Lexer::LexNumber() {
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

Status Lexer::LexIdent() {
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

}  // namespace thaw::expr::internal
