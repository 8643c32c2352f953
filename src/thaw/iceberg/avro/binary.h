// Avro binary encoding primitives (spec "Binary Encoding"): zigzag varints,
// length-prefixed bytes, little-endian floats, array/map block counts.
// Shared by the OCF reader/writer (avro.cc) and the Kafka value codec
// (records/avro_value.cc).
//
// Input is untrusted: every length is checked against the bytes that remain
// before it is used, and errors name the byte position.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw::avro {

// Reads Avro primitives from a byte range. `base` is added to positions in
// error messages so header errors report file offsets.
class Decoder {
 public:
  explicit Decoder(std::string_view data, size_t base = 0) : data_(data), base_(base) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  Status Eof() const { return Status::Corrupt("unexpected end of data at byte {}", base_ + data_.size()); }

  Status ReadLong(int64_t* out) {
    uint64_t acc = 0;
    for (int shift = 0;; shift += 7) {
      if (pos_ >= data_.size()) return Eof();
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      // The 10th byte may only supply bit 63 and must end the varint.
      if (shift == 63 && (b & 0xfe) != 0) {
        return Status::Corrupt("varint overflows 64 bits at byte {}", base_ + pos_ - 1);
      }
      acc |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
    }
    *out = static_cast<int64_t>((acc >> 1) ^ (~(acc & 1) + 1));
    return Status::OK();
  }

  Status ReadInt(int32_t* out) {
    size_t start = pos_;
    int64_t v = 0;
    RETURN_NOT_OK(ReadLong(&v));
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return Status::Corrupt("int value {} out of range at byte {}", v, base_ + start);
    }
    *out = static_cast<int32_t>(v);
    return Status::OK();
  }

  // A length prefix, checked against the bytes that follow it.
  Status ReadLength(size_t* out, const char* what) {
    size_t start = pos_;
    int64_t n;
    RETURN_NOT_OK(ReadLong(&n));
    if (n < 0) return Status::Corrupt("negative {} length {} at byte {}", what, n, base_ + start);
    if (static_cast<uint64_t>(n) > remaining()) {
      return Status::Corrupt("{} length {} at byte {} exceeds the {} bytes remaining (file truncated or corrupt)", what,
                             n, base_ + start, remaining());
    }
    *out = static_cast<size_t>(n);
    return Status::OK();
  }

  Status ReadRaw(size_t n, std::string_view* out) {
    if (n > remaining()) return Eof();
    *out = data_.substr(pos_, n);
    pos_ += n;
    return Status::OK();
  }

  Status ReadBytes(std::string_view* out, const char* what = "bytes") {
    size_t n;
    RETURN_NOT_OK(ReadLength(&n, what));
    return ReadRaw(n, out);
  }

  // Start of one block of an array or map: the item count, with a negative
  // count followed by the block's byte size (which we check and ignore).
  Status ReadBlockCount(int64_t* count) {
    size_t start = pos_;
    RETURN_NOT_OK(ReadLong(count));
    if (*count < 0) {
      if (*count == std::numeric_limits<int64_t>::min()) {
        return Status::Corrupt("invalid block count at byte {}", base_ + start);
      }
      *count = -*count;
      size_t ignored;
      RETURN_NOT_OK(ReadLength(&ignored, "block"));
    }
    return Status::OK();
  }

  Status ReadFloat(double* out) {
    std::string_view raw;
    RETURN_NOT_OK(ReadRaw(4, &raw));
    uint32_t bits;
    std::memcpy(&bits, raw.data(), 4);
    if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap32(bits);
    *out = std::bit_cast<float>(bits);
    return Status::OK();
  }

  Status ReadDouble(double* out) {
    std::string_view raw;
    RETURN_NOT_OK(ReadRaw(8, &raw));
    uint64_t bits;
    std::memcpy(&bits, raw.data(), 8);
    if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap64(bits);
    *out = std::bit_cast<double>(bits);
    return Status::OK();
  }

 private:
  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
};

inline void WriteLong(int64_t v, std::string* out) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  char buf[10];
  size_t n = 0;
  while (z >= 0x80) {
    buf[n++] = static_cast<char>((z & 0x7f) | 0x80);
    z >>= 7;
  }
  buf[n++] = static_cast<char>(z);
  out->append(buf, n);
}

inline void WriteBytes(std::string_view b, std::string* out) {
  WriteLong(static_cast<int64_t>(b.size()), out);
  out->append(b);
}

}  // namespace thaw::avro
