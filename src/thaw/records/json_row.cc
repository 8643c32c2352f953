#include "thaw/records/json_row.h"

#include <charconv>
#include <cmath>

#include <arrow/array.h>
#include <arrow/extension_type.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <fmt/format.h>

#include "thaw/common/civil_time.h"

namespace thaw::records {

namespace {

std::string FormatTimeOfDayMicros(int64_t us) {
  int64_t s = us / 1'000'000, frac = us % 1'000'000;
  return fmt::format("{:02}:{:02}:{:02}.{:06}", s / 3600, (s / 60) % 60, s % 60, frac);
}

void AppendDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    *out += std::isnan(v) ? "\"NaN\"" : (v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, p);
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

void AppendJsonValue(const arrow::Array& a, int64_t i, std::string* out) {
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
    case T::FLOAT: AppendDouble(static_cast<const arrow::FloatArray&>(a).Value(i), out); break;
    case T::DOUBLE: AppendDouble(static_cast<const arrow::DoubleArray&>(a).Value(i), out); break;
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
        AppendJsonValue(*values, j, out);
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
          AppendJsonValue(keys, j, out);
          out->push_back(':');
          AppendJsonValue(items, j, out);
        } else {
          *out += "{\"key\":";
          AppendJsonValue(keys, j, out);
          *out += ",\"value\":";
          AppendJsonValue(items, j, out);
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
        AppendJsonValue(*s.field(f), i, out);
      }
      out->push_back('}');
      break;
    }
    case T::EXTENSION: {
      const auto& ext = static_cast<const arrow::ExtensionArray&>(a);
      const auto& ty = static_cast<const arrow::ExtensionType&>(*a.type());
      if (ty.extension_name() == "arrow.uuid" && ext.storage()->type_id() == T::FIXED_SIZE_BINARY) {
        auto b = static_cast<const arrow::FixedSizeBinaryArray&>(*ext.storage()).GetView(i);
        std::string u;
        for (size_t k = 0; k < b.size(); ++k) {
          if (k == 4 || k == 6 || k == 8 || k == 10) u += '-';
          u += fmt::format("{:02x}", static_cast<unsigned char>(b[k]));
        }
        AppendJsonString(u, out);
      } else {
        AppendJsonValue(*ext.storage(), i, out);
      }
      break;
    }
    default: {
      auto scalar = a.GetScalar(i);
      AppendJsonString(scalar.ok() ? (*scalar)->ToString() : std::string("?"), out);
    }
  }
}

}  // namespace thaw::records
