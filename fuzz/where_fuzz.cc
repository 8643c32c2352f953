// libFuzzer target for the --where expression language.
//
// Whatever parses is bound (every name resolves), evaluated against a fixed
// grid of records, and must satisfy:
//   - a selected record lies inside Bounds() (pruning never drops a match);
//   - ToString() parses again, to the same ToString(), the same Bounds() and
//     the same decision on every record.
// A violation aborts so the fuzzer records it. Error messages must be one line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/expr/where.h"

namespace {

using thaw::Result;
using thaw::expr::Expression;
using thaw::expr::KafkaBounds;
using thaw::expr::Value;

void Check(bool condition) {
  if (!condition) std::abort();
}

constexpr std::string_view kKafkaFields[] = {"partition",      "offset", "timestamp",
                                             "timestamp_type", "key",    "value"};
constexpr int kTableSlots = 16;

Result<int> Resolve(std::string_view name) {
  for (int i = 0; i < 6; ++i) {
    if (name == kKafkaFields[i]) return i;
  }
  return 6 + static_cast<int>(std::hash<std::string_view>{}(name) % kTableSlots);
}

struct Record {
  int64_t partition;
  int64_t offset;
  int64_t timestamp;
  const char* key;  // nullptr = null key
};

class FuzzRow : public thaw::expr::Row {
 public:
  explicit FuzzRow(const Record& r) : r_(r) {}

  Value Get(int slot) const override {
    switch (slot) {
      case 0:
        return Value::Int(r_.partition);
      case 1:
        return Value::Int(r_.offset);
      case 2:
        return Value::Int(r_.timestamp);
      case 3:
        return Value::Int(r_.offset & 1);
      case 4:
        return r_.key ? Value::Bytes(r_.key) : Value::Null();
      case 5:
        return Value::Bytes(std::string_view("v\0\xff", 3));
      default:
        break;
    }
    switch ((slot + r_.offset % 6) % 6) {
      case 0:
        return Value::Int(slot - 10);
      case 1:
        return Value::Double(0.5 * slot);
      case 2:
        return Value::Bytes(r_.key ? r_.key : "x");
      case 3:
        return Value::Bool(slot % 2 == 0);
      case 4:
        return Value::Double(std::numeric_limits<double>::quiet_NaN());
      default:
        return Value::Null();
    }
  }

  Value Header(std::string_view key) const override {
    if (key == "h") return Value::Bytes("v");
    if (key.empty()) return Value::Bytes("");
    return Value::Null();
  }

 private:
  Record r_;
};

std::vector<Record> MakeRecords() {
  const char* keys[] = {nullptr, "", "a", "abc", "b", "\xff"};
  std::vector<Record> out;
  int k = 0;
  for (int64_t p : {0, 2, 7}) {
    for (int64_t off : {int64_t{0}, int64_t{10}, int64_t{19}, INT64_MAX}) {
      for (int64_t ts : {int64_t{-1}, int64_t{1704067200000}}) {
        out.push_back({p, off, ts, keys[k++ % 6]});
      }
    }
  }
  return out;
}

const std::vector<Record>& Records() {
  static const std::vector<Record> records = MakeRecords();
  return records;
}

bool Inside(const KafkaBounds& b, const Record& r) {
  if (b.empty) return false;
  if (b.partitions && !b.partitions->count(static_cast<int32_t>(r.partition))) return false;
  if (b.offset_lo && r.offset < *b.offset_lo) return false;
  if (b.offset_hi && r.offset > *b.offset_hi) return false;
  if (b.time_lo_ms && r.timestamp < *b.time_lo_ms) return false;
  if (b.time_hi_ms && r.timestamp > *b.time_hi_ms) return false;
  if (b.key_prefix) {
    if (b.key_prefix->empty()) return false;  // documented never to be empty
    if (r.key == nullptr ||
        std::string_view(r.key).substr(0, b.key_prefix->size()) != *b.key_prefix) {
      return false;
    }
  }
  return true;
}

void CheckMessage(const thaw::Status& st) {
  Check(!st.ok());
  Check(st.message().find('\n') == std::string::npos);
  Check(st.message().rfind("--where: ", 0) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto parsed = thaw::expr::ParseWhere(input);
  if (!parsed.ok()) {
    CheckMessage(parsed.status());
    return 0;
  }
  Expression& e = *parsed;
  const thaw::Status bound = e.Bind(Resolve);
  if (!bound.ok()) CheckMessage(bound);

  const KafkaBounds bounds = e.Bounds();
  (void)bounds.ToString();
  std::vector<bool> decisions;
  for (const Record& r : Records()) {
    const bool selected = e.Evaluate(FuzzRow(r));
    if (selected) Check(Inside(bounds, r));
    decisions.push_back(selected);
  }
  (void)e.ColumnNames();
  (void)e.UsesHeaders();

  // The canonical form parses back to itself. (It can outgrow the input's
  // length limit: "a in(1,2)" prints as "a IN (1, 2)".)
  const std::string canonical = e.ToString();
  if (canonical.size() > thaw::expr::kMaxWhereBytes) return 0;
  auto again = thaw::expr::ParseWhere(canonical);
  Check(again.ok());
  Check(again->ToString() == canonical);
  const thaw::Status rebound = again->Bind(Resolve);
  Check(rebound.ok() == bound.ok());
  if (bound.ok()) {
    Check(again->Bounds().ToString() == bounds.ToString());
    for (size_t i = 0; i < Records().size(); ++i) {
      Check(again->Evaluate(FuzzRow(Records()[i])) == decisions[i]);
    }
  }
  return 0;
}
