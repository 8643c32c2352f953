// Pruning ranges implied by a --where expression (Expression::Bounds).
#include "thaw/expr/where_internal.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

namespace thaw::expr {

using namespace internal;  // NOLINT: this library's own tree types

namespace {

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

}  // namespace

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
