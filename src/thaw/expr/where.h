// The `--where 'EXPR'` record-selection language of `thaw replay` and
// `thaw inspect` (reference: docs/where.md).
//
//   partition in (0, 3) and offset >= 1000 and key starts with 'user-'
//   timestamp between '2024-05-01' and '2024-05-02T12:00:00Z' or header('trace') is not null
//
// ParseWhere() turns the text into an Expression; Bind() maps every column
// name onto a caller-defined slot and checks types; Evaluate() decides one
// record; Bounds() gives the conservative partition/offset/time/key ranges the
// planner may prune by. Pure logic: no Arrow, no I/O. Evaluate() and Bounds()
// never fail: every user error is reported by ParseWhere() or Bind().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::expr {

// Limits on untrusted input; each is reported with a clear error.
inline constexpr size_t kMaxWhereBytes = 64 * 1024;
inline constexpr int kMaxWhereDepth = 100;  // nested '(' and 'not'
inline constexpr size_t kMaxInListItems = 100'000;

// One field value of a record, as the Row hands it out. `s` points into memory
// the Row owns and must stay valid for the duration of the Evaluate() call.
struct Value {
  enum Kind { kNull, kInt, kDouble, kBytes, kBool };
  Kind kind = kNull;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
  bool b = false;

  static Value Null() { return {}; }
  static Value Int(int64_t v) { return {kInt, v, 0, {}, false}; }
  static Value Double(double v) { return {kDouble, 0, v, {}, false}; }
  static Value Bytes(std::string_view v) { return {kBytes, 0, 0, v, false}; }
  static Value Bool(bool v) { return {kBool, 0, 0, {}, v}; }
};

// The record being decided. Slots are whatever the Bind() resolver returned.
// Kafka fields come back as: partition, offset, timestamp (ms) and
// timestamp_type (0 = CreateTime, 1 = LogAppendTime) as kInt; key and value as
// kBytes or kNull.
class Row {
 public:
  virtual ~Row();
  virtual Value Get(int slot) const = 0;
  // The value of the first header with this key; kNull when there is none
  // (or its value is null).
  virtual Value Header(std::string_view key) const = 0;
};

// Ranges implied by an expression: every record the expression selects lies
// inside them (they never exclude a selected record; they may include records
// the expression rejects). Unset = no restriction.
struct KafkaBounds {
  // The expression can never be true (`offset = 1 and offset = 2`); plan
  // nothing. `partitions` is then also set, and empty.
  bool empty = false;
  std::optional<std::set<int32_t>> partitions;
  std::optional<int64_t> offset_lo, offset_hi;    // inclusive
  std::optional<int64_t> time_lo_ms, time_hi_ms;  // inclusive
  std::optional<std::string> key_prefix;          // never the empty string

  std::string ToString() const;  // for --dry-run and test messages
};

namespace internal {
struct Node;
}  // namespace internal

// Maps a column name to a slot for Row::Get(). Called by Bind() for every
// name in the expression, including the Kafka field names (partition, offset,
// timestamp, timestamp_type, key, value). For a name the table does not have,
// return Status::NotFound whose message lists the table's columns, e.g.
// "table columns: kafka_partition, kafka_offset, payload.id"; Bind() wraps it
// into "--where: unknown column 'x' at column 7 (Kafka fields: ...; <message>)".
using SlotResolver = std::function<Result<int>(std::string_view name)>;

class Expression {
 public:
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  // Resolves every column to a slot, converts string literals compared with
  // `timestamp` (ISO-8601 or epoch ms) and `timestamp_type` ('CreateTime',
  // 'LogAppendTime'), and rejects comparisons whose two sides have known,
  // incompatible types (`partition = 'a'`, `key > 5`). May be called again
  // with another resolver.
  Status Bind(const SlotResolver& resolve);

  // True when the record is selected: SQL three-valued logic, where any
  // comparison with null is unknown, `not unknown` is unknown, and only true
  // selects. Values of incompatible kinds met at run time (a string column
  // compared with 5) compare as unknown. Call after a successful Bind();
  // unbound columns read as null.
  bool Evaluate(const Row& row) const;

  // Conservative pruning ranges from the top-level `and` conjuncts (and from
  // `or`s whose every branch bounds the same field). Call after Bind(): before
  // it, string literals compared with `timestamp` give no bound.
  KafkaBounds Bounds() const;

  // Canonical form: upper-case keywords, single spaces, minimal parentheses,
  // literals as written (timestamps stay ISO strings). ParseWhere(ToString())
  // gives an expression with the same ToString().
  std::string ToString() const;

  // Distinct column names, in order of first appearance (Kafka fields
  // included, header() excluded): the columns a reader must project.
  std::vector<std::string> ColumnNames() const;
  // True when some header('k') appears.
  bool UsesHeaders() const;

  const std::string& text() const { return text_; }

 private:
  friend Result<Expression> ParseWhere(std::string_view text);
  Expression(std::string text, std::unique_ptr<internal::Node> root);

  std::string text_;
  std::unique_ptr<internal::Node> root_;
};

// Parses the --where text. Errors are one line and name the 1-based column:
//   --where: unexpected ')' at column 10: expected a column name or value
//   after '>' (in "offset > )")            <- all on one line
Result<Expression> ParseWhere(std::string_view text);

}  // namespace thaw::expr
