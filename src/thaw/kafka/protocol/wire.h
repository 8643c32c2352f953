// Kafka wire primitives: a bounds-checked reader over untrusted bytes and an
// appending writer. The generated message codec (messages.h, made by
// tools/kafka_codegen.py) is written in terms of these.
//
// Reader: every read checks the bytes remaining first; every length or count
// is checked against the bytes remaining BEFORE anything is allocated (an
// array of N elements of at least M wire bytes each needs N*M bytes), so a
// forged length cannot make Thaw allocate more than a small multiple of the
// frame it was given. Errors are kCorrupt and name the field (`what`) and
// the byte offset in the frame.
//
// Writer: appends big-endian integers, (compact) strings, bytes and array
// lengths to a std::string. Record data is either appended with one copy or,
// for shared buffers (a served topic's cached batches), referenced: the
// writer keeps them alive and a caller sending ForEachPiece()'s views sends them in place,
// with no copy between the cache and the socket. A value
// that cannot be encoded (a string longer than 32767 bytes in a non-flexible
// version) sets a sticky error in status() instead of writing bad bytes.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::kafka {

// A Kafka UUID (topic ids): 16 bytes, big-endian halves on the wire.
struct Uuid {
  std::array<uint8_t, 16> bytes{};

  bool IsZero() const;
  // Kafka's text form: URL-safe base64 without padding (22 characters).
  std::string ToString() const;
  // Hex form with dashes (8-4-4-4-12), for logs.
  std::string ToHex() const;
  bool operator==(const Uuid&) const = default;
  auto operator<=>(const Uuid&) const = default;
};

// A tagged field the codec does not know (a newer client's tag, or a tag of
// another version): kept as raw bytes and written back in tag order.
struct TaggedField {
  uint32_t tag = 0;
  std::string data;
  bool operator==(const TaggedField&) const = default;
};

class WireReader {
 public:
  // `base_offset` is added to offsets in error messages (a reader over part
  // of a frame reports offsets in the whole frame).
  explicit WireReader(std::string_view data, size_t base_offset = 0) : data_(data), base_(base_offset) {}

  size_t offset() const { return base_ + pos_; }  // bytes consumed, plus base_offset
  size_t remaining() const { return data_.size() - pos_; }
  bool done() const { return pos_ == data_.size(); }
  std::string_view rest() const { return data_.substr(pos_); }

  Status ReadInt8(int8_t* v, const char* what);
  Status ReadInt16(int16_t* v, const char* what);
  Status ReadInt32(int32_t* v, const char* what);
  Status ReadInt64(int64_t* v, const char* what);
  Status ReadUint16(uint16_t* v, const char* what);
  Status ReadUint32(uint32_t* v, const char* what);
  Status ReadFloat64(double* v, const char* what);
  Status ReadBool(bool* v, const char* what);
  Status ReadUuid(Uuid* v, const char* what);

  // Zig-zag varint (record fields) and unsigned varint (compact lengths, tags).
  Status ReadVarint(int32_t* v, const char* what);
  Status ReadVarlong(int64_t* v, const char* what);
  Status ReadUnsignedVarint(uint32_t* v, const char* what);

  // Strings: int16 length (-1 null), or compact (uvarint length+1, 0 null).
  // A null where the field is not nullable is an error.
  Status ReadString(std::string* v, bool compact, const char* what);
  Status ReadNullableString(std::optional<std::string>* v, bool compact, bool nullable, const char* what);
  // Bytes (and records): int32 length (-1 null), or compact.
  Status ReadBytes(std::string* v, bool compact, const char* what);
  Status ReadNullableBytes(std::optional<std::string>* v, bool compact, bool nullable, const char* what);

  // Array count: int32 (-1 null) or compact. *n is -1 for null. A count whose
  // elements (at least `min_element_bytes` each, >= 1) cannot fit in the
  // bytes remaining is an error.
  Status ReadArrayLength(int32_t* n, bool compact, size_t min_element_bytes, const char* what);
  // Same, for a field that is not nullable in this version: null is an error.
  Status ReadNonNullArrayLength(int32_t* n, bool compact, size_t min_element_bytes, const char* what);

  // `n` raw bytes, viewed in place.
  Status ReadRaw(size_t n, std::string_view* v, const char* what);
  Status Skip(size_t n, const char* what);
  // Error unless every byte was consumed (tagged field bodies, whole frames).
  Status ExpectDone(const char* what) const;

 private:
  Status Truncated(size_t need, const char* what) const;
  template <typename T>
  Status ReadBigEndian(T* v, const char* what);
  // Length prefix of a string/bytes: -1 for null.
  Status ReadLength(int64_t* len, bool compact, bool int16_length, const char* what);
  // A string (int16 length) or bytes (int32 length), or their compact forms;
  // `v` null = not nullable.
  Status ReadSized(std::string* v, std::optional<std::string>* nullable_v, bool compact, bool int16_length,
                   const char* what);

  std::string_view data_;
  size_t base_ = 0;
  size_t pos_ = 0;
};

class WireWriter {
 public:
  // Appends to an internal buffer (take it with Take()), or to `*out`.
  WireWriter() : out_(&own_) {}
  explicit WireWriter(std::string* out) : out_(out) {}
  WireWriter(const WireWriter&) = delete;
  WireWriter& operator=(const WireWriter&) = delete;

  // All the bytes written, shared ones copied in first (see WriteShared).
  const std::string& data() const {
    Flatten();
    return *out_;
  }
  // Bytes written, shared ones included.
  size_t size() const { return out_->size() + shared_bytes_; }
  std::string Take() {
    Flatten();
    return std::move(*out_);
  }
  // The bytes written, in order, as views: runs of the writer's own bytes
  // and the shared buffers between them (each non-empty). Valid while the
  // writer lives and is not written to.
  template <typename F>
  void ForEachPiece(F&& f) const {
    size_t pos = 0;
    for (const auto& [at, bytes] : shared_) {
      if (at > pos) f(std::string_view(*out_).substr(pos, at - pos));
      f(std::string_view(*bytes));  // never empty (WriteShared)
      pos = at;
    }
    if (out_->size() > pos) f(std::string_view(*out_).substr(pos));
  }
  // Appends `bytes` by reference: this writer keeps them alive,
  // ForEachPiece() gives them in place, data() and Take() copy them in.
  void WriteShared(std::shared_ptr<const std::string> bytes);
  // The first encoding error (value too long for its length prefix), or OK.
  const Status& status() const { return status_; }
  void Reserve(size_t n) { out_->reserve(out_->size() + n); }

  void WriteInt8(int8_t v) { out_->push_back(static_cast<char>(v)); }
  void WriteInt16(int16_t v) { WriteBigEndian(static_cast<uint16_t>(v)); }
  void WriteInt32(int32_t v) { WriteBigEndian(static_cast<uint32_t>(v)); }
  void WriteInt64(int64_t v) { WriteBigEndian(static_cast<uint64_t>(v)); }
  void WriteUint16(uint16_t v) { WriteBigEndian(v); }
  void WriteUint32(uint32_t v) { WriteBigEndian(v); }
  void WriteFloat64(double v);
  void WriteBool(bool v) { out_->push_back(v ? 1 : 0); }
  void WriteUuid(const Uuid& v) { out_->append(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()); }

  void WriteVarint(int32_t v);
  void WriteVarlong(int64_t v);
  void WriteUnsignedVarint(uint32_t v);

  void WriteString(std::string_view v, bool compact);
  void WriteNullableString(const std::optional<std::string>& v, bool compact);
  void WriteBytes(std::string_view v, bool compact);
  void WriteNullableBytes(const std::optional<std::string>& v, bool compact);
  // A records field (Produce, Fetch): `owned`'s bytes then each of `shared`
  // (by reference), as one bytes field; null when `owned` is null and
  // `shared` empty.
  void WriteNullableRecords(const std::optional<std::string>& owned,
                            const std::vector<std::shared_ptr<const std::string>>& shared, bool compact);
  // n = -1 writes null.
  void WriteArrayLength(int64_t n, bool compact);
  void WriteRaw(std::string_view v) { out_->append(v); }
  // Appends another writer's bytes and keeps its first error.
  void Append(const WireWriter& other);

 private:
  template <typename T>
  void WriteBigEndian(T v) {
    if constexpr (std::endian::native == std::endian::little) {
      if constexpr (sizeof(T) == 2) v = __builtin_bswap16(v);
      if constexpr (sizeof(T) == 4) v = __builtin_bswap32(v);
      if constexpr (sizeof(T) == 8) v = __builtin_bswap64(v);
    }
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    out_->append(buf, sizeof(T));
  }
  void Fail(std::string message);
  // Copies the shared buffers in at their places (data(), Take()).
  void Flatten() const;
  // Writes the length prefix of a bytes field of `size` bytes; false (and
  // an error) when it cannot be encoded.
  bool WriteBytesLength(size_t size, bool compact);

  std::string own_;
  std::string* out_;
  Status status_;
  // Shared buffers, each at its offset in *out_ (ascending); mutable:
  // data() copies them in on demand.
  mutable std::vector<std::pair<size_t, std::shared_ptr<const std::string>>> shared_;
  mutable size_t shared_bytes_ = 0;
};

}  // namespace thaw::kafka
