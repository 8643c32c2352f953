#include "thaw/kafka/protocol/wire.h"

#include <bit>
#include <limits>

namespace thaw::kafka {

bool Uuid::IsZero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

std::string Uuid::ToString() const {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve(22);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  // 16 = 5*3 + 1: one byte left, two characters, no padding.
  uint32_t v = uint32_t{bytes[i]} << 16;
  out.push_back(kAlphabet[(v >> 18) & 63]);
  out.push_back(kAlphabet[(v >> 12) & 63]);
  return out;
}

std::string Uuid::ToHex() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

// --- WireReader ---------------------------------------------------------------

Status WireReader::Truncated(size_t need, const char* what) const {
  return Status::Corrupt("Kafka message truncated: {} needs {} bytes at byte offset {} but only {} remain", what, need,
                         offset(), remaining());
}

template <typename T>
Status WireReader::ReadBigEndian(T* v, const char* what) {
  if (remaining() < sizeof(T)) return Truncated(sizeof(T), what);
  T x;
  std::memcpy(&x, data_.data() + pos_, sizeof(T));
  if constexpr (std::endian::native == std::endian::little && sizeof(T) > 1) {
    if constexpr (sizeof(T) == 2) x = __builtin_bswap16(x);
    if constexpr (sizeof(T) == 4) x = __builtin_bswap32(x);
    if constexpr (sizeof(T) == 8) x = __builtin_bswap64(x);
  }
  *v = x;
  pos_ += sizeof(T);
  return Status::OK();
}

Status WireReader::ReadInt8(int8_t* v, const char* what) {
  uint8_t u = 0;
  RETURN_NOT_OK(ReadBigEndian(&u, what));
  *v = static_cast<int8_t>(u);
  return Status::OK();
}
Status WireReader::ReadInt16(int16_t* v, const char* what) {
  uint16_t u = 0;
  RETURN_NOT_OK(ReadBigEndian(&u, what));
  *v = static_cast<int16_t>(u);
  return Status::OK();
}
Status WireReader::ReadInt32(int32_t* v, const char* what) {
  uint32_t u = 0;
  RETURN_NOT_OK(ReadBigEndian(&u, what));
  *v = static_cast<int32_t>(u);
  return Status::OK();
}
Status WireReader::ReadInt64(int64_t* v, const char* what) {
  uint64_t u = 0;
  RETURN_NOT_OK(ReadBigEndian(&u, what));
  *v = static_cast<int64_t>(u);
  return Status::OK();
}
Status WireReader::ReadUint16(uint16_t* v, const char* what) { return ReadBigEndian(v, what); }
Status WireReader::ReadUint32(uint32_t* v, const char* what) { return ReadBigEndian(v, what); }
Status WireReader::ReadFloat64(double* v, const char* what) {
  uint64_t u = 0;
  RETURN_NOT_OK(ReadBigEndian(&u, what));
  *v = std::bit_cast<double>(u);
  return Status::OK();
}
Status WireReader::ReadBool(bool* v, const char* what) {
  uint8_t u = 0;
  RETURN_NOT_OK(ReadBigEndian(&u, what));
  *v = u != 0;
  return Status::OK();
}
Status WireReader::ReadUuid(Uuid* v, const char* what) {
  if (remaining() < 16) return Truncated(16, what);
  std::memcpy(v->bytes.data(), data_.data() + pos_, 16);
  pos_ += 16;
  return Status::OK();
}

Status WireReader::ReadUnsignedVarint(uint32_t* v, const char* what) {
  uint32_t value = 0;
  size_t start = offset();
  for (int i = 0; i < 5; ++i) {
    if (pos_ >= data_.size()) return Truncated(1, what);
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (i == 4 && (b & 0xf0) != 0) break;
    value |= uint32_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) {
      *v = value;
      return Status::OK();
    }
  }
  return Status::Corrupt("Kafka message corrupt: {} is a varint longer than 32 bits at byte offset {}", what, start);
}

Status WireReader::ReadVarint(int32_t* v, const char* what) {
  uint32_t u = 0;
  RETURN_NOT_OK(ReadUnsignedVarint(&u, what));
  *v = static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
  return Status::OK();
}

Status WireReader::ReadVarlong(int64_t* v, const char* what) {
  uint64_t value = 0;
  size_t start = offset();
  for (int i = 0; i < 10; ++i) {
    if (pos_ >= data_.size()) return Truncated(1, what);
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (i == 9 && (b & 0xfe) != 0) break;
    value |= uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) {
      *v = static_cast<int64_t>((value >> 1) ^ (~(value & 1) + 1));
      return Status::OK();
    }
  }
  return Status::Corrupt("Kafka message corrupt: {} is a varlong longer than 64 bits at byte offset {}", what, start);
}

Status WireReader::ReadLength(int64_t* len, bool compact, bool int16_length, const char* what) {
  size_t start = offset();
  if (compact) {
    uint32_t u;
    RETURN_NOT_OK(ReadUnsignedVarint(&u, what));
    *len = static_cast<int64_t>(u) - 1;
  } else if (int16_length) {
    int16_t n;
    RETURN_NOT_OK(ReadInt16(&n, what));
    *len = n;
  } else {
    int32_t n;
    RETURN_NOT_OK(ReadInt32(&n, what));
    *len = n;
  }
  if (*len < -1) {
    return Status::Corrupt("Kafka message corrupt: {} has negative length {} at byte offset {}", what, *len, start);
  }
  if (*len > static_cast<int64_t>(remaining())) {
    return Status::Corrupt(
        "Kafka message truncated: {} has length {} at byte offset {} but only {} bytes remain in the frame", what, *len,
        start, remaining());
  }
  return Status::OK();
}

Status WireReader::ReadSized(std::string* v, std::optional<std::string>* nullable_v, bool compact, bool int16_length,
                             const char* what) {
  size_t start = offset();
  int64_t len;
  RETURN_NOT_OK(ReadLength(&len, compact, int16_length, what));
  if (len < 0) {
    if (!nullable_v) {
      return Status::Corrupt("Kafka message corrupt: {} is null at byte offset {} but is not nullable", what, start);
    }
    nullable_v->reset();
    return Status::OK();
  }
  if (nullable_v) {
    nullable_v->emplace(data_.data() + pos_, static_cast<size_t>(len));
  } else {
    v->assign(data_.data() + pos_, static_cast<size_t>(len));
  }
  pos_ += static_cast<size_t>(len);
  return Status::OK();
}

Status WireReader::ReadString(std::string* v, bool compact, const char* what) {
  return ReadSized(v, nullptr, compact, /*int16_length=*/true, what);
}

Status WireReader::ReadNullableString(std::optional<std::string>* v, bool compact, bool nullable, const char* what) {
  if (nullable) return ReadSized(nullptr, v, compact, /*int16_length=*/true, what);
  return ReadSized(&v->emplace(), nullptr, compact, /*int16_length=*/true, what);
}

Status WireReader::ReadBytes(std::string* v, bool compact, const char* what) {
  return ReadSized(v, nullptr, compact, /*int16_length=*/false, what);
}

Status WireReader::ReadNullableBytes(std::optional<std::string>* v, bool compact, bool nullable, const char* what) {
  if (nullable) return ReadSized(nullptr, v, compact, /*int16_length=*/false, what);
  return ReadSized(&v->emplace(), nullptr, compact, /*int16_length=*/false, what);
}

Status WireReader::ReadArrayLength(int32_t* n, bool compact, size_t min_element_bytes, const char* what) {
  size_t start = offset();
  int64_t count;
  if (compact) {
    uint32_t u;
    RETURN_NOT_OK(ReadUnsignedVarint(&u, what));
    count = static_cast<int64_t>(u) - 1;
  } else {
    int32_t c;
    RETURN_NOT_OK(ReadInt32(&c, what));
    count = c;
  }
  if (count < -1) {
    return Status::Corrupt("Kafka message corrupt: {} has negative element count {} at byte offset {}", what, count,
                           start);
  }
  if (count > std::numeric_limits<int32_t>::max()) {
    return Status::Corrupt("Kafka message corrupt: {} has {} elements at byte offset {} (more than 2^31-1)", what,
                           count, start);
  }
  if (min_element_bytes == 0) min_element_bytes = 1;
  if (count > 0 && static_cast<uint64_t>(count) * min_element_bytes > remaining()) {
    return Status::Corrupt(
        "Kafka message truncated: {} has {} elements (at least {} bytes each) at byte offset {} but only {} bytes "
        "remain in the frame",
        what, count, min_element_bytes, start, remaining());
  }
  *n = static_cast<int32_t>(count);
  return Status::OK();
}

Status WireReader::ReadNonNullArrayLength(int32_t* n, bool compact, size_t min_element_bytes, const char* what) {
  size_t start = offset();
  RETURN_NOT_OK(ReadArrayLength(n, compact, min_element_bytes, what));
  if (*n < 0) {
    return Status::Corrupt("Kafka message corrupt: {} is null at byte offset {} but is not nullable", what, start);
  }
  return Status::OK();
}

Status WireReader::ReadRaw(size_t n, std::string_view* v, const char* what) {
  if (remaining() < n) return Truncated(n, what);
  *v = data_.substr(pos_, n);
  pos_ += n;
  return Status::OK();
}

Status WireReader::Skip(size_t n, const char* what) {
  if (remaining() < n) return Truncated(n, what);
  pos_ += n;
  return Status::OK();
}

Status WireReader::ExpectDone(const char* what) const {
  if (done()) return Status::OK();
  return Status::Corrupt("Kafka message corrupt: {} ends at byte offset {} but {} more bytes follow", what, offset(),
                         remaining());
}

// --- WireWriter ---------------------------------------------------------------

void WireWriter::WriteFloat64(double v) { WriteBigEndian(std::bit_cast<uint64_t>(v)); }

void WireWriter::WriteUnsignedVarint(uint32_t v) {
  char buf[5];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out_->append(buf, n);
}

void WireWriter::WriteVarint(int32_t v) {
  uint32_t u = (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  WriteUnsignedVarint(u);
}

void WireWriter::WriteVarlong(int64_t v) {
  uint64_t u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  char buf[10];
  size_t n = 0;
  while (u >= 0x80) {
    buf[n++] = static_cast<char>((u & 0x7f) | 0x80);
    u >>= 7;
  }
  buf[n++] = static_cast<char>(u);
  out_->append(buf, n);
}

void WireWriter::Fail(std::string message) {
  if (status_.ok()) status_ = Status::Invalid("{}", message);
}

void WireWriter::WriteString(std::string_view v, bool compact) {
  if (compact) {
    if (v.size() >= std::numeric_limits<uint32_t>::max()) {
      Fail(fmt::format("cannot encode a Kafka string of {} bytes", v.size()));
      WriteUnsignedVarint(1);
      return;
    }
    WriteUnsignedVarint(static_cast<uint32_t>(v.size() + 1));
  } else {
    if (v.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
      Fail(
          fmt::format("cannot encode a Kafka string of {} bytes: non-flexible versions allow at most 32767", v.size()));
      WriteInt16(0);
      return;
    }
    WriteInt16(static_cast<int16_t>(v.size()));
  }
  out_->append(v);
}

void WireWriter::WriteNullableString(const std::optional<std::string>& v, bool compact) {
  if (!v) {
    if (compact) {
      WriteUnsignedVarint(0);
    } else {
      WriteInt16(-1);
    }
    return;
  }
  WriteString(*v, compact);
}

bool WireWriter::WriteBytesLength(size_t size, bool compact) {
  if (size >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    Fail(fmt::format("cannot encode Kafka bytes of {} bytes (limit 2^31-2)", size));
    if (compact) {
      WriteUnsignedVarint(1);
    } else {
      WriteInt32(0);
    }
    return false;
  }
  if (compact) {
    WriteUnsignedVarint(static_cast<uint32_t>(size + 1));
  } else {
    WriteInt32(static_cast<int32_t>(size));
  }
  return true;
}

void WireWriter::WriteBytes(std::string_view v, bool compact) {
  if (WriteBytesLength(v.size(), compact)) out_->append(v);
}

void WireWriter::WriteShared(std::shared_ptr<const std::string> bytes) {
  if (!bytes || bytes->empty()) return;
  shared_bytes_ += bytes->size();
  shared_.emplace_back(out_->size(), std::move(bytes));
}

void WireWriter::WriteNullableRecords(const std::optional<std::string>& owned,
                                      const std::vector<std::shared_ptr<const std::string>>& shared, bool compact) {
  if (shared.empty()) {
    WriteNullableBytes(owned, compact);
    return;
  }
  size_t total = owned ? owned->size() : 0;
  for (const auto& b : shared) total += b ? b->size() : 0;
  if (!WriteBytesLength(total, compact)) return;
  if (owned) out_->append(*owned);
  for (const auto& b : shared) WriteShared(b);
}

void WireWriter::Flatten() const {
  if (shared_.empty()) return;
  std::string flat;
  flat.reserve(out_->size() + shared_bytes_);
  ForEachPiece([&](std::string_view piece) { flat.append(piece); });
  shared_.clear();
  shared_bytes_ = 0;
  *out_ = std::move(flat);
}

void WireWriter::WriteNullableBytes(const std::optional<std::string>& v, bool compact) {
  if (!v) {
    if (compact) {
      WriteUnsignedVarint(0);
    } else {
      WriteInt32(-1);
    }
    return;
  }
  WriteBytes(*v, compact);
}

void WireWriter::WriteArrayLength(int64_t n, bool compact) {
  if (n > std::numeric_limits<int32_t>::max() - 1) {
    Fail(fmt::format("cannot encode a Kafka array of {} elements", n));
    n = 0;
  }
  if (compact) {
    WriteUnsignedVarint(static_cast<uint32_t>(n + 1));
  } else {
    WriteInt32(static_cast<int32_t>(n));
  }
}

void WireWriter::Append(const WireWriter& other) {
  // Shared buffers stay shared: other's own bytes are copied around them.
  size_t pos = 0;
  for (const auto& [at, bytes] : other.shared_) {
    out_->append(*other.out_, pos, at - pos);
    WriteShared(bytes);
    pos = at;
  }
  out_->append(*other.out_, pos, std::string::npos);
  if (status_.ok() && !other.status().ok()) status_ = other.status();
}

}  // namespace thaw::kafka
