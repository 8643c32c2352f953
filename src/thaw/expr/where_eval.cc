// Three-valued evaluation of a --where expression (Expression::Evaluate).
#include "thaw/expr/where_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace thaw::expr {

using namespace internal;  // NOLINT: this library's own tree types

namespace {

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

}  // namespace

bool Expression::Evaluate(const Row& row) const { return Eval(*root_, row) == Tri::kTrue; }

}  // namespace thaw::expr
