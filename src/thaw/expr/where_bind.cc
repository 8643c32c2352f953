// Binding --where columns to slots, with type checks (Expression::Bind).
#include "thaw/expr/where_internal.h"

#include <algorithm>
#include <utility>

#include "thaw/common/time_parse.h"

namespace thaw::expr {

using namespace internal;  // NOLINT: this library's own tree types

namespace {

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

}  // namespace

Status Expression::Bind(const SlotResolver& resolve) {
  Binder binder(text_, resolve);
  return binder.Bind(*root_);
}

}  // namespace thaw::expr
