#include "thaw/iceberg/puffin.h"

#include <lz4frame.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

namespace thaw::iceberg {
namespace {

using nlohmann::json;

// Leading magic + footer magic + payload size + flags + trailing magic.
constexpr int64_t kMagicSize = 4;
constexpr int64_t kFooterFramingSize = 4 * 4;
constexpr int64_t kMinFileSize = kMagicSize + kFooterFramingSize;

constexpr uint8_t kFlagFooterCompressed = 0x01;

// LZ4 cannot expand data by more than ~255x (one length byte per 255 matched
// bytes), so a frame whose header claims more is lying; the slack covers tiny
// frames. The absolute cap keeps a hostile file from asking for gigabytes even
// when the compressed payload is large.
constexpr int64_t kMaxLz4Ratio = 255;
constexpr int64_t kLz4Slack = 4096;
constexpr int64_t kMaxFooterPayloadSize = int64_t{256} << 20;

uint32_t LoadLe32(std::string_view bytes, size_t pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + pos);
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

struct Lz4DctxDeleter {
  void operator()(LZ4F_dctx* dctx) const { LZ4F_freeDecompressionContext(dctx); }
};

Result<std::string> DecompressLz4Frame(std::string_view compressed, std::string_view source) {
  LZ4F_dctx* raw_dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw_dctx, LZ4F_VERSION))) {
    return Status::Internal("puffin file {}: cannot create an LZ4 decompression context", source);
  }
  std::unique_ptr<LZ4F_dctx, Lz4DctxDeleter> dctx(raw_dctx);

  LZ4F_frameInfo_t info{};
  size_t header_size = compressed.size();
  size_t rc = LZ4F_getFrameInfo(dctx.get(), &info, compressed.data(), &header_size);
  if (LZ4F_isError(rc)) {
    return Status::Corrupt("puffin file {}: compressed footer payload is not an LZ4 frame: {}",
                           source, LZ4F_getErrorName(rc));
  }
  // The spec requires the content size in the frame header; without it we
  // could not bound the output before allocating.
  if (info.contentSize == 0) {
    return Status::Corrupt(
        "puffin file {}: LZ4 footer payload frame has no content size (required by the Puffin "
        "spec)",
        source);
  }
  const int64_t max_size = std::min(
      kMaxFooterPayloadSize, static_cast<int64_t>(compressed.size()) * kMaxLz4Ratio + kLz4Slack);
  if (info.contentSize > static_cast<uint64_t>(max_size)) {
    return Status::Corrupt(
        "puffin file {}: LZ4 footer payload claims {} decompressed bytes from {} compressed "
        "bytes (limit {})",
        source, info.contentSize, compressed.size(), max_size);
  }

  std::string out(static_cast<size_t>(info.contentSize), '\0');
  size_t in_pos = header_size;
  size_t out_pos = 0;
  while (true) {
    size_t src_size = compressed.size() - in_pos;
    size_t dst_size = out.size() - out_pos;
    rc = LZ4F_decompress(dctx.get(), out.data() + out_pos, &dst_size, compressed.data() + in_pos,
                         &src_size, nullptr);
    if (LZ4F_isError(rc)) {
      return Status::Corrupt("puffin file {}: cannot decompress LZ4 footer payload: {}", source,
                             LZ4F_getErrorName(rc));
    }
    in_pos += src_size;
    out_pos += dst_size;
    if (rc == 0) break;  // frame complete
    if (src_size == 0 && dst_size == 0) {
      // No progress: either the input ended mid-frame or the output is full
      // while the frame wants more (content size lied).
      return Status::Corrupt(
          "puffin file {}: LZ4 footer payload is truncated or larger than its declared content "
          "size {}",
          source, info.contentSize);
    }
  }
  if (out_pos != out.size() || in_pos != compressed.size()) {
    return Status::Corrupt(
        "puffin file {}: LZ4 footer payload decoded to {} of {} declared bytes using {} of {} "
        "input bytes",
        source, out_pos, out.size(), in_pos, compressed.size());
  }
  return out;
}

// JSON field helpers. nlohmann's get<>() throws on type mismatch, so types are
// checked explicitly and a descriptive Corrupt status is returned instead.

Result<int64_t> GetLong(const json& obj, const char* key, std::string_view where) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Corrupt("{}: missing required field '{}'", where, key);
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::Corrupt("{}: field '{}' value {} does not fit in a long", where, key, v);
    }
    return static_cast<int64_t>(v);
  }
  if (it->is_number_integer()) return it->get<int64_t>();
  return Status::Corrupt("{}: field '{}' must be an integer, got {}", where, key, it->type_name());
}

Result<std::map<std::string, std::string>> GetStringMap(const json& obj, const char* key,
                                                        std::string_view where) {
  std::map<std::string, std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_object()) {
    return Status::Corrupt("{}: field '{}' must be an object, got {}", where, key, it->type_name());
  }
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) {
      return Status::Corrupt("{}: property '{}' must be a string, got {}", where, k, v.type_name());
    }
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

Result<PuffinBlobMetadata> ParseBlob(const json& j, size_t index, int64_t footer_offset,
                                     std::string_view source) {
  const std::string where = fmt::format("puffin file {}: blob {}", source, index);
  if (!j.is_object()) {
    return Status::Corrupt("{}: must be a JSON object, got {}", where, j.type_name());
  }
  PuffinBlobMetadata blob;

  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    return Status::Corrupt("{}: field 'type' is missing or not a string", where);
  }
  blob.type = type->get<std::string>();

  auto fields = j.find("fields");
  if (fields == j.end() || !fields->is_array()) {
    return Status::Corrupt("{}: field 'fields' is missing or not a list", where);
  }
  blob.fields.reserve(fields->size());  // bounded by the parsed JSON itself
  for (const auto& f : *fields) {
    std::optional<int64_t> id;
    if (f.is_number_unsigned()) {
      if (f.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
        id = static_cast<int64_t>(f.get<uint64_t>());
      }
    } else if (f.is_number_integer()) {
      id = f.get<int64_t>();
    }
    if (!id || *id < std::numeric_limits<int32_t>::min() ||
        *id > std::numeric_limits<int32_t>::max()) {
      return Status::Corrupt("{}: 'fields' entries must be 32-bit integers, got {}", where,
                             f.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    blob.fields.push_back(static_cast<int32_t>(*id));
  }

  ASSIGN_OR_RAISE(blob.snapshot_id, GetLong(j, "snapshot-id", where));
  ASSIGN_OR_RAISE(blob.sequence_number, GetLong(j, "sequence-number", where));
  ASSIGN_OR_RAISE(blob.offset, GetLong(j, "offset", where));
  ASSIGN_OR_RAISE(blob.length, GetLong(j, "length", where));

  auto codec = j.find("compression-codec");
  if (codec != j.end() && !codec->is_null()) {
    if (!codec->is_string()) {
      return Status::Corrupt("{}: field 'compression-codec' must be a string", where);
    }
    blob.compression_codec = codec->get<std::string>();
  }
  ASSIGN_OR_RAISE(blob.properties, GetStringMap(j, "properties", where));

  // Blobs live between the leading magic and the footer.
  if (blob.offset < kMagicSize || blob.length < 0 || blob.offset > footer_offset ||
      blob.length > footer_offset - blob.offset) {
    return Status::Corrupt(
        "{} (type {}): offset {} length {} lies outside the blob area [{}, {}) of the file", where,
        blob.type, blob.offset, blob.length, kMagicSize, footer_offset);
  }
  return blob;
}

Result<PuffinFooter> ParseFooterJson(std::string_view payload, int64_t footer_offset,
                                     std::string_view source) {
  json root = json::parse(payload.begin(), payload.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return Status::Corrupt("puffin file {}: footer payload is not valid JSON", source);
  }
  if (!root.is_object()) {
    return Status::Corrupt("puffin file {}: footer payload must be a JSON object, got {}", source,
                           root.type_name());
  }
  auto blobs = root.find("blobs");
  if (blobs == root.end() || !blobs->is_array()) {
    return Status::Corrupt("puffin file {}: footer field 'blobs' is missing or not a list", source);
  }
  PuffinFooter footer;
  footer.footer_offset = footer_offset;
  footer.blobs.reserve(blobs->size());
  for (size_t i = 0; i < blobs->size(); ++i) {
    ASSIGN_OR_RAISE(PuffinBlobMetadata blob, ParseBlob((*blobs)[i], i, footer_offset, source));
    footer.blobs.push_back(std::move(blob));
  }
  ASSIGN_OR_RAISE(footer.properties,
                  GetStringMap(root, "properties", fmt::format("puffin file {}: footer", source)));
  return footer;
}

}  // namespace

std::optional<std::string_view> PuffinBlobMetadata::Property(std::string_view key) const {
  auto it = properties.find(std::string(key));
  if (it == properties.end()) return std::nullopt;
  return std::string_view(it->second);
}

Result<PuffinFooter> ParsePuffinFooter(std::string_view file_bytes, std::string_view source) {
  const int64_t file_size = static_cast<int64_t>(file_bytes.size());
  if (file_size < kMinFileSize) {
    return Status::Corrupt(
        "puffin file {}: file size {} is smaller than the minimum {} (magic plus empty footer)",
        source, file_size, kMinFileSize);
  }
  if (file_bytes.substr(0, 4) != kPuffinMagic) {
    return Status::Corrupt("puffin file {}: bad magic at start of file (expected 'PFA1')", source);
  }
  if (file_bytes.substr(file_size - 4) != kPuffinMagic) {
    return Status::Corrupt("puffin file {}: bad magic at end of file (expected 'PFA1')", source);
  }

  const auto* flags = reinterpret_cast<const unsigned char*>(file_bytes.data() + file_size - 8);
  const bool compressed = (flags[0] & kFlagFooterCompressed) != 0;
  // Reserved bits may change how the footer must be read: refuse rather than guess.
  if ((flags[0] & ~kFlagFooterCompressed) != 0 || flags[1] != 0 || flags[2] != 0 || flags[3] != 0) {
    return Status::Unsupported(
        "puffin file {}: unknown footer flags {:02x} {:02x} {:02x} {:02x} (only bit 0 of byte 0, "
        "'compressed footer', is defined)",
        source, flags[0], flags[1], flags[2], flags[3]);
  }

  // Signed two's complement, little-endian.
  const int64_t payload_size = static_cast<int32_t>(LoadLe32(file_bytes, file_size - 12));
  if (payload_size < 0) {
    return Status::Corrupt("puffin file {}: negative footer payload size {}", source, payload_size);
  }
  if (payload_size > file_size - kMinFileSize) {
    return Status::Corrupt(
        "puffin file {}: footer payload size {} exceeds file size {} (magics, size and flags take "
        "another {} bytes)",
        source, payload_size, file_size, kMinFileSize);
  }
  const int64_t footer_offset = file_size - kFooterFramingSize - payload_size;
  if (file_bytes.substr(footer_offset, 4) != kPuffinMagic) {
    return Status::Corrupt(
        "puffin file {}: bad magic at footer start (offset {}, payload size {}); the payload size "
        "is probably wrong",
        source, footer_offset, payload_size);
  }
  std::string_view payload = file_bytes.substr(footer_offset + 4, payload_size);

  std::string decompressed;
  if (compressed) {
    ASSIGN_OR_RAISE(decompressed, DecompressLz4Frame(payload, source));
    payload = decompressed;
  }
  try {
    ASSIGN_OR_RAISE(PuffinFooter footer, ParseFooterJson(payload, footer_offset, source));
    footer.payload_was_compressed = compressed;
    return footer;
  } catch (const std::exception& e) {
    // Defensive: ParseFooterJson checks types before every get<>(), but no
    // exception may escape to callers.
    return Status::Corrupt("puffin file {}: malformed footer JSON: {}", source, e.what());
  }
}

Result<std::string_view> SlicePuffinBlob(std::string_view file_bytes, int64_t offset,
                                         int64_t length, std::string_view source) {
  const int64_t file_size = static_cast<int64_t>(file_bytes.size());
  if (offset < 0 || length < 0 || offset > file_size || length > file_size - offset) {
    return Status::Corrupt("puffin file {}: blob at offset {} with length {} exceeds file size {}",
                           source, offset, length, file_size);
  }
  return file_bytes.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
}

Result<std::string_view> SlicePuffinBlob(std::string_view file_bytes,
                                         const PuffinBlobMetadata& blob, std::string_view source) {
  return SlicePuffinBlob(file_bytes, blob.offset, blob.length, source);
}

PuffinWriter::PuffinWriter() : bytes_(kPuffinMagic) {}

PuffinBlobMetadata PuffinWriter::AddBlob(std::string type, std::vector<int32_t> fields,
                                         int64_t snapshot_id, int64_t sequence_number,
                                         std::string_view data,
                                         std::map<std::string, std::string> properties) {
  PuffinBlobMetadata blob;
  blob.type = std::move(type);
  blob.fields = std::move(fields);
  blob.snapshot_id = snapshot_id;
  blob.sequence_number = sequence_number;
  blob.offset = static_cast<int64_t>(bytes_.size());
  blob.length = static_cast<int64_t>(data.size());
  blob.properties = std::move(properties);
  bytes_.append(data);
  blobs_.push_back(blob);
  return blob;
}

std::string PuffinWriter::Finish(const std::map<std::string, std::string>& file_properties) {
  json blobs = json::array();
  for (const PuffinBlobMetadata& b : blobs_) {
    json j = {{"type", b.type},
              {"fields", b.fields},
              {"snapshot-id", b.snapshot_id},
              {"sequence-number", b.sequence_number},
              {"offset", b.offset},
              {"length", b.length}};
    if (b.compression_codec) j["compression-codec"] = *b.compression_codec;
    if (!b.properties.empty()) j["properties"] = b.properties;
    blobs.push_back(std::move(j));
  }
  json root = {{"blobs", std::move(blobs)}};
  if (!file_properties.empty()) root["properties"] = file_properties;
  // Strings come from the caller; replace invalid UTF-8 instead of throwing.
  const std::string payload = root.dump(-1, ' ', false, json::error_handler_t::replace);
  assert(payload.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));

  std::string out = std::move(bytes_);
  out.append(kPuffinMagic);
  out.append(payload);
  const uint32_t size = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((size >> (8 * i)) & 0xFF));
  out.append(4, '\0');  // flags: footer not compressed
  out.append(kPuffinMagic);
  // Start over so the writer can assemble another file.
  bytes_ = std::string(kPuffinMagic);
  blobs_.clear();
  return out;
}

}  // namespace thaw::iceberg
