#include "thaw/records/json_value.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/extension_type.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "thaw/common/civil_time.h"
#include "thaw/parquet/arrow_status.h"
#include "thaw/records/struct_fields.h"

namespace thaw::records {

namespace {

std::string FormatTimeOfDayMicros(int64_t us) {
  int64_t s = us / 1'000'000, frac = us % 1'000'000;
  return fmt::format("{:02}:{:02}:{:02}.{:06}", s / 3600, (s / 60) % 60, s % 60, frac);
}

// Java's Double.toString / Float.toString layout over the shortest
// round-trip digits: plain notation with at least one fraction digit for
// 1e-3 <= |v| < 1e7, else d.dddE<exp> ("1.0E20", "1.0E-5").
template <typename F>
void AppendJavaFloating(F v, std::string* out) {
  if (std::isnan(v)) {
    *out += "\"NaN\"";
    return;
  }
  if (std::isinf(v)) {
    *out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    return;
  }
  if (v == 0) {
    *out += std::signbit(v) ? "-0.0" : "0.0";
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(end - buf));  // "-4.541e+03"
  if (s.front() == '-') {
    out->push_back('-');
    s.remove_prefix(1);
  }
  const size_t e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = 0;
  std::string_view es = s.substr(e + 1);
  if (es.front() == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp);
  if (exp >= -3 && exp < 7) {
    if (exp >= 0) {
      const size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
      out->append(digits, 0, int_len);
      out->push_back('.');
      *out += digits.size() > int_len ? digits.substr(int_len) : std::string("0");
    } else {
      *out += "0.";
      out->append(static_cast<size_t>(-exp - 1), '0');
      *out += digits;
    }
  } else {
    out->push_back(digits[0]);
    out->push_back('.');
    *out += digits.size() > 1 ? digits.substr(1) : std::string("0");
    *out += 'E';
    *out += std::to_string(exp);
  }
}


int64_t ToMicros(int64_t v, arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return v * 1'000'000;
    case arrow::TimeUnit::MILLI: return v * 1'000;
    case arrow::TimeUnit::MICRO: return v;
    case arrow::TimeUnit::NANO: return FloorDiv(v, 1'000);
  }
  return v;
}

}  // namespace

std::string FormatUuid(std::string_view b) {
  std::string u;
  for (size_t k = 0; k < b.size(); ++k) {
    if (k == 4 || k == 6 || k == 8 || k == 10) u += '-';
    u += fmt::format("{:02x}", static_cast<unsigned char>(b[k]));
  }
  return u;
}

void AppendJsonDouble(double v, std::string* out) { AppendJavaFloating(v, out); }
void AppendJsonFloat(float v, std::string* out) { AppendJavaFloating(v, out); }

std::string FormatDate(int64_t days) {
  int64_t y; unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  return fmt::format("{:04}-{:02}-{:02}", y, m, d);
}

std::string FormatTimestampMicros(int64_t micros) {
  int64_t days = FloorDiv(micros, 86'400'000'000LL);
  int64_t rem = micros - days * 86'400'000'000LL;
  return FormatDate(days) + "T" + FormatTimeOfDayMicros(rem);
}

std::string Base64Encode(std::string_view in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += kAlphabet[n >> 18]; out += kAlphabet[(n >> 12) & 63]; out += kAlphabet[(n >> 6) & 63]; out += kAlphabet[n & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    out += kAlphabet[n >> 18]; out += kAlphabet[(n >> 12) & 63]; out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kAlphabet[n >> 18]; out += kAlphabet[(n >> 12) & 63]; out += kAlphabet[(n >> 6) & 63]; out += '=';
  }
  return out;
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (c < 0x20) *out += fmt::format("\\u{:04x}", c);
        else out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

namespace {

void AppendValue(const arrow::Array& a, int64_t i, std::string* out, StructFields& boxed) {
  if (a.IsNull(i)) {
    *out += "null";
    return;
  }
  using T = arrow::Type;
  switch (a.type_id()) {
    case T::BOOL: *out += static_cast<const arrow::BooleanArray&>(a).Value(i) ? "true" : "false"; break;
    case T::INT8: *out += std::to_string(static_cast<const arrow::Int8Array&>(a).Value(i)); break;
    case T::INT16: *out += std::to_string(static_cast<const arrow::Int16Array&>(a).Value(i)); break;
    case T::INT32: *out += std::to_string(static_cast<const arrow::Int32Array&>(a).Value(i)); break;
    case T::INT64: *out += std::to_string(static_cast<const arrow::Int64Array&>(a).Value(i)); break;
    case T::UINT8: *out += std::to_string(static_cast<const arrow::UInt8Array&>(a).Value(i)); break;
    case T::UINT16: *out += std::to_string(static_cast<const arrow::UInt16Array&>(a).Value(i)); break;
    case T::UINT32: *out += std::to_string(static_cast<const arrow::UInt32Array&>(a).Value(i)); break;
    case T::UINT64: *out += std::to_string(static_cast<const arrow::UInt64Array&>(a).Value(i)); break;
    case T::FLOAT: AppendJsonFloat(static_cast<const arrow::FloatArray&>(a).Value(i), out); break;
    case T::DOUBLE: AppendJsonDouble(static_cast<const arrow::DoubleArray&>(a).Value(i), out); break;
    case T::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Array&>(a);
      AppendJsonString(d.FormatValue(i), out);
      break;
    }
    case T::DATE32: AppendJsonString(FormatDate(static_cast<const arrow::Date32Array&>(a).Value(i)), out); break;
    case T::TIME64: {
      const auto& t = static_cast<const arrow::Time64Array&>(a);
      const auto& ty = static_cast<const arrow::Time64Type&>(*a.type());
      int64_t us = ty.unit() == arrow::TimeUnit::NANO ? t.Value(i) / 1000 : t.Value(i);
      AppendJsonString(FormatTimeOfDayMicros(us), out);
      break;
    }
    case T::TIMESTAMP: {
      const auto& ty = static_cast<const arrow::TimestampType&>(*a.type());
      int64_t us = ToMicros(static_cast<const arrow::TimestampArray&>(a).Value(i), ty.unit());
      std::string s = FormatTimestampMicros(us);
      if (!ty.timezone().empty()) s += "+00:00";
      AppendJsonString(s, out);
      break;
    }
    case T::STRING: AppendJsonString(static_cast<const arrow::StringArray&>(a).GetView(i), out); break;
    case T::LARGE_STRING: AppendJsonString(static_cast<const arrow::LargeStringArray&>(a).GetView(i), out); break;
    case T::STRING_VIEW: AppendJsonString(static_cast<const arrow::StringViewArray&>(a).GetView(i), out); break;
    case T::BINARY: AppendJsonString(Base64Encode(static_cast<const arrow::BinaryArray&>(a).GetView(i)), out); break;
    case T::LARGE_BINARY: AppendJsonString(Base64Encode(static_cast<const arrow::LargeBinaryArray&>(a).GetView(i)), out); break;
    case T::BINARY_VIEW: AppendJsonString(Base64Encode(static_cast<const arrow::BinaryViewArray&>(a).GetView(i)), out); break;
    case T::FIXED_SIZE_BINARY: AppendJsonString(Base64Encode(static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i)), out); break;
    case T::LIST: case T::LARGE_LIST: {
      std::shared_ptr<arrow::Array> values;
      int64_t begin, end;
      if (a.type_id() == T::LIST) {
        const auto& l = static_cast<const arrow::ListArray&>(a);
        values = l.values(); begin = l.value_offset(i); end = l.value_offset(i + 1);
      } else {
        const auto& l = static_cast<const arrow::LargeListArray&>(a);
        values = l.values(); begin = l.value_offset(i); end = l.value_offset(i + 1);
      }
      out->push_back('[');
      for (int64_t j = begin; j < end; ++j) {
        if (j > begin) out->push_back(',');
        AppendValue(*values, j, out, boxed);
      }
      out->push_back(']');
      break;
    }
    case T::MAP: {
      const auto& m = static_cast<const arrow::MapArray&>(a);
      const auto& keys = *m.keys();
      const auto& items = *m.items();
      const bool string_keys = keys.type_id() == T::STRING || keys.type_id() == T::LARGE_STRING;
      int64_t begin = m.value_offset(i), end = m.value_offset(i + 1);
      out->push_back(string_keys ? '{' : '[');
      for (int64_t j = begin; j < end; ++j) {
        if (j > begin) out->push_back(',');
        if (string_keys) {
          AppendValue(keys, j, out, boxed);
          out->push_back(':');
          AppendValue(items, j, out, boxed);
        } else {
          *out += "{\"key\":";
          AppendValue(keys, j, out, boxed);
          *out += ",\"value\":";
          AppendValue(items, j, out, boxed);
          out->push_back('}');
        }
      }
      out->push_back(string_keys ? '}' : ']');
      break;
    }
    case T::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(a);
      const auto& ty = static_cast<const arrow::StructType&>(*a.type());
      out->push_back('{');
      for (int f = 0; f < ty.num_fields(); ++f) {
        if (f) out->push_back(',');
        AppendJsonString(ty.field(f)->name(), out);
        out->push_back(':');
        AppendValue(boxed.Field(s, f), i, out, boxed);
      }
      out->push_back('}');
      break;
    }
    case T::EXTENSION: {
      const auto& ext = static_cast<const arrow::ExtensionArray&>(a);
      const auto& ty = static_cast<const arrow::ExtensionType&>(*a.type());
      if (ty.extension_name() == "arrow.uuid" && ext.storage()->type_id() == T::FIXED_SIZE_BINARY) {
        AppendJsonString(FormatUuid(static_cast<const arrow::FixedSizeBinaryArray&>(*ext.storage()).GetView(i)), out);
      } else {
        AppendValue(*ext.storage(), i, out, boxed);
      }
      break;
    }
    default: {
      auto scalar = a.GetScalar(i);
      AppendJsonString(scalar.ok() ? (*scalar)->ToString() : std::string("?"), out);
    }
  }
}

}  // namespace

void AppendJsonValue(const arrow::Array& a, int64_t i, std::string* out, StructFields* fields) {
  if (fields) return AppendValue(a, i, out, *fields);
  StructFields once;
  AppendValue(a, i, out, once);
}

// ---------------------------------------------------------------------------
// initial-default values (Iceberg single-value JSON -> Thaw's JSON mapping)

namespace {

Status JsonFromArrow(const arrow::Status& st) { return pq::FromArrow(st, "decoding a JSON value"); }

using Type = iceberg::Type;
using TypeId = iceberg::TypeId;

// Appends `v` (nullptr: absent) to `b` of type `t`; what does not fit is null.
Status AppendJson(const Type& t, const nlohmann::ordered_json* v, arrow::ArrayBuilder* b) {
  if (!v || v->is_null()) return JsonFromArrow(b->AppendNull());
  switch (t.id) {
    case TypeId::kBoolean:
      if (!v->is_boolean()) return JsonFromArrow(b->AppendNull());
      return JsonFromArrow(static_cast<arrow::BooleanBuilder*>(b)->Append(v->get<bool>()));
    case TypeId::kLong:
      if (v->is_number_integer() &&
          (!v->is_number_unsigned() ||
           v->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
        return JsonFromArrow(static_cast<arrow::Int64Builder*>(b)->Append(v->get<int64_t>()));
      }
      return JsonFromArrow(b->AppendNull());
    case TypeId::kDouble:
      // A number past a double's range (1e400) is no double: null (its bytes are kept).
      if (!v->is_number() || !std::isfinite(v->get<double>())) return JsonFromArrow(b->AppendNull());
      return JsonFromArrow(static_cast<arrow::DoubleBuilder*>(b)->Append(v->get<double>()));
    case TypeId::kString: {
      auto* sb = static_cast<arrow::StringBuilder*>(b);
      if (v->is_string()) return JsonFromArrow(sb->Append(v->get_ref<const std::string&>()));
      return JsonFromArrow(sb->Append(v->dump()));  // the JSON text of a conflicting value
    }
    case TypeId::kStruct: {
      if (!v->is_object()) return JsonFromArrow(b->AppendNull());
      auto* sb = static_cast<arrow::StructBuilder*>(b);
      RETURN_NOT_OK(JsonFromArrow(sb->Append()));
      for (size_t k = 0; k < t.fields.size(); ++k) {
        auto it = v->find(t.fields[k].name);
        RETURN_NOT_OK(
            AppendJson(*t.fields[k].type, it == v->end() ? nullptr : &*it, sb->field_builder(static_cast<int>(k))));
      }
      return Status::OK();
    }
    case TypeId::kList: {
      if (!v->is_array()) return JsonFromArrow(b->AppendNull());
      auto* lb = static_cast<arrow::ListBuilder*>(b);
      RETURN_NOT_OK(JsonFromArrow(lb->Append()));
      for (const auto& item : *v) RETURN_NOT_OK(AppendJson(*t.fields[0].type, &item, lb->value_builder()));
      return Status::OK();
    }
    default:
      return Status::Internal("JSON value of type {}", t.ToString());  // refused by CheckJsonType
  }
}

}  // namespace

Status AppendJsonObject(const iceberg::Type& type, std::string_view text, arrow::StructBuilder* builder,
                        bool* appended) {
  *appended = false;
  auto v = nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded() || !v.is_object()) return Status::OK();
  RETURN_NOT_OK(AppendJson(type, &v, builder));
  *appended = true;
  return Status::OK();
}

}  // namespace thaw::records
