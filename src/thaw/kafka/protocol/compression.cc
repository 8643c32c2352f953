#include "thaw/kafka/protocol/compression.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

namespace thaw::kafka {

namespace {

constexpr size_t kChunk = 64 * 1024;

Status TooBig(std::string_view codec, size_t max_output) {
  return Status::Corrupt(
      "{} block decompresses to more than {} bytes (the limit on a record batch's records); "
      "the batch is corrupt or a decompression bomb",
      codec, max_output);
}

// Grows `out` by kChunk or more (doubling with its size) without passing
// base + max_output + 1 (one byte past the limit tells a stream that ends
// exactly at the limit from one that goes on); false once past the limit.
bool Grow(std::string* out, size_t base, size_t max_output, char** data, size_t* avail) {
  size_t used = out->size() - base;
  if (used > max_output) return false;
  size_t step = std::max(kChunk, used);
  step = std::min(step, max_output + 1 - used);
  size_t old = out->size();
  out->resize(old + step);
  *data = out->data() + old;
  *avail = step;
  return true;
}

// ---- gzip ----

Status GzipCompress(std::string_view in, int level, std::string* out) {
  z_stream zs{};
  if (deflateInit2(&zs, level < 0 ? Z_DEFAULT_COMPRESSION : std::min(level, 9), Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("gzip: deflateInit2 failed");
  }
  size_t base = out->size();
  size_t bound = deflateBound(&zs, in.size()) + 32;
  out->resize(base + bound);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.next_out = reinterpret_cast<Bytef*>(out->data() + base);
  // zlib counts in uInt: feed large inputs in pieces.
  size_t in_left = in.size(), out_left = bound;
  int rc;
  do {
    uInt in_now = static_cast<uInt>(std::min<size_t>(in_left, 1u << 30));
    uInt out_now = static_cast<uInt>(std::min<size_t>(out_left, 1u << 30));
    zs.avail_in = in_now;
    zs.avail_out = out_now;
    rc = deflate(&zs, in_left == in_now ? Z_FINISH : Z_NO_FLUSH);
    in_left -= in_now - zs.avail_in;
    out_left -= out_now - zs.avail_out;
  } while (rc == Z_OK || (rc == Z_BUF_ERROR && out_left > 0));
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("gzip: deflate failed ({})", rc);
  out->resize(base + (bound - out_left));
  return Status::OK();
}

Status GzipDecompress(std::string_view in, size_t max_output, std::string* out) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return Status::Internal("gzip: inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  size_t base = out->size();
  size_t produced_end = base;
  const auto* next = reinterpret_cast<const Bytef*>(in.data());
  size_t in_left = in.size();
  if (in_left == 0) return Status::Corrupt("gzip block is empty");
  while (true) {
    char* dst;
    size_t avail;
    if (!Grow(out, base, max_output, &dst, &avail)) {
      out->resize(produced_end);
      return TooBig("gzip", max_output);
    }
    zs.next_out = reinterpret_cast<Bytef*>(dst);
    zs.avail_out = static_cast<uInt>(std::min<size_t>(avail, 1u << 30));
    uInt in_now = static_cast<uInt>(std::min<size_t>(in_left, 1u << 30));
    zs.next_in = const_cast<Bytef*>(next);
    zs.avail_in = in_now;
    uInt out_now = zs.avail_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    next += in_now - zs.avail_in;
    in_left -= in_now - zs.avail_in;
    produced_end = (dst - out->data()) + (out_now - zs.avail_out);
    out->resize(produced_end);
    if (produced_end - base > max_output) return TooBig("gzip", max_output);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (GZIPInputStream reads them all).
      if (in_left == 0) return Status::OK();
      if (inflateReset(&zs) != Z_OK) return Status::Internal("gzip: inflateReset failed");
      continue;
    }
    if (rc == Z_BUF_ERROR && in_left == 0) {
      return Status::Corrupt("gzip block is truncated (ends {} bytes in, inside the deflate stream)", in.size());
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Status::Corrupt("gzip block does not inflate at byte {}: {}", in.size() - in_left,
                             zs.msg ? zs.msg : "zlib error");
    }
  }
}

// ---- snappy ----

constexpr char kXerialMagic[8] = {'\x82', 'S', 'N', 'A', 'P', 'P', 'Y', '\0'};

Status SnappyRawAppend(std::string_view in, size_t max_output, size_t base, std::string* out, std::string_view what) {
  size_t n = 0;
  if (!snappy::GetUncompressedLength(in.data(), in.size(), &n)) {
    return Status::Corrupt("{}: not a valid snappy block (bad length preamble)", what);
  }
  if (n > max_output - (out->size() - base)) return TooBig("snappy", max_output);
  size_t old = out->size();
  out->resize(old + n);
  if (!snappy::RawUncompress(in.data(), in.size(), out->data() + old)) {
    out->resize(old);
    return Status::Corrupt("{}: snappy block does not decompress", what);
  }
  return Status::OK();
}

uint32_t LoadBE32(const char* p) {
  return (uint32_t{static_cast<unsigned char>(p[0])} << 24) | (uint32_t{static_cast<unsigned char>(p[1])} << 16) |
         (uint32_t{static_cast<unsigned char>(p[2])} << 8) | uint32_t{static_cast<unsigned char>(p[3])};
}

Status SnappyDecompress(std::string_view in, size_t max_output, std::string* out) {
  size_t base = out->size();
  // xerial snappy-java stream: magic, version int32, compatible version
  // int32, then blocks of (int32 big-endian length, raw snappy block).
  if (in.size() >= 16 && std::memcmp(in.data(), kXerialMagic, 8) == 0) {
    size_t pos = 16;
    while (pos < in.size()) {
      if (in.size() - pos < 4) {
        return Status::Corrupt("xerial snappy stream truncated at byte {} (inside a block length)", pos);
      }
      uint32_t len = LoadBE32(in.data() + pos);
      pos += 4;
      if (len > in.size() - pos) {
        return Status::Corrupt("xerial snappy block at byte {} declares {} bytes but {} remain", pos - 4, len,
                               in.size() - pos);
      }
      RETURN_NOT_OK(SnappyRawAppend(in.substr(pos, len), max_output, base, out,
                                    fmt::format("xerial snappy block at byte {}", pos - 4)));
      pos += len;
    }
    return Status::OK();
  }
  return SnappyRawAppend(in, max_output, base, out, "raw snappy block");
}

// ---- lz4 ----

Status Lz4Compress(std::string_view in, int level, std::string* out) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  prefs.compressionLevel = level < 0 ? 0 : level;
  size_t bound = LZ4F_compressFrameBound(in.size(), &prefs);
  size_t base = out->size();
  out->resize(base + bound);
  size_t n = LZ4F_compressFrame(out->data() + base, bound, in.data(), in.size(), &prefs);
  if (LZ4F_isError(n)) {
    out->resize(base);
    return Status::Internal("lz4: compress failed: {}", LZ4F_getErrorName(n));
  }
  out->resize(base + n);
  return Status::OK();
}

Status Lz4Decompress(std::string_view in, size_t max_output, std::string* out) {
  LZ4F_dctx* dctx = nullptr;
  size_t rc = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
  if (LZ4F_isError(rc)) return Status::Internal("lz4: cannot create a decompression context");
  std::unique_ptr<LZ4F_dctx, size_t (*)(LZ4F_dctx*)> guard(dctx, LZ4F_freeDecompressionContext);
  size_t base = out->size();
  size_t pos = 0;
  size_t produced_end = base;
  while (true) {
    char* dst;
    size_t avail;
    if (!Grow(out, base, max_output, &dst, &avail)) {
      out->resize(produced_end);
      return TooBig("lz4", max_output);
    }
    size_t dst_size = avail;
    size_t src_size = in.size() - pos;
    rc = LZ4F_decompress(dctx, dst, &dst_size, in.data() + pos, &src_size, nullptr);
    pos += src_size;
    produced_end = (dst - out->data()) + dst_size;
    out->resize(produced_end);
    if (produced_end - base > max_output) return TooBig("lz4", max_output);
    if (LZ4F_isError(rc)) {
      return Status::Corrupt("lz4 frame does not decompress near byte {}: {}", pos, LZ4F_getErrorName(rc));
    }
    if (rc == 0) {
      // End of a frame. Further frames may follow (concatenated).
      if (pos == in.size()) return Status::OK();
      continue;
    }
    if (pos == in.size() && dst_size == 0) {
      return Status::Corrupt("lz4 frame is truncated (ends at byte {}, the frame expects more)", in.size());
    }
  }
}

// ---- zstd ----

Status ZstdCompress(std::string_view in, int level, std::string* out) {
  size_t bound = ZSTD_compressBound(in.size());
  size_t base = out->size();
  out->resize(base + bound);
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  size_t n = ZSTD_compressCCtx(cctx.get(), out->data() + base, bound, in.data(), in.size(),
                               level < 0 ? ZSTD_CLEVEL_DEFAULT : level);
  if (ZSTD_isError(n)) {
    out->resize(base);
    return Status::Internal("zstd: compress failed: {}", ZSTD_getErrorName(n));
  }
  out->resize(base + n);
  return Status::OK();
}

Status ZstdDecompress(std::string_view in, size_t max_output, std::string* out) {
  thread_local std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!ds) return Status::Internal("zstd: cannot create a decompression stream");
  ZSTD_DCtx_reset(ds.get(), ZSTD_reset_session_only);
  size_t base = out->size();
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  size_t produced_end = base;
  size_t last = 1;
  if (in.empty()) return Status::Corrupt("zstd block is empty");
  while (true) {
    char* dst;
    size_t avail;
    if (!Grow(out, base, max_output, &dst, &avail)) {
      out->resize(produced_end);
      return TooBig("zstd", max_output);
    }
    ZSTD_outBuffer ob{dst, avail, 0};
    last = ZSTD_decompressStream(ds.get(), &ob, &ib);
    produced_end = (dst - out->data()) + ob.pos;
    out->resize(produced_end);
    if (produced_end - base > max_output) return TooBig("zstd", max_output);
    if (ZSTD_isError(last)) {
      return Status::Corrupt("zstd block does not decompress near byte {}: {}", ib.pos, ZSTD_getErrorName(last));
    }
    // last == 0: a frame just ended (and is flushed). Calling again at the
    // end of the input would start reading another frame's header.
    if (ib.pos == ib.size && (last == 0 || ob.pos < ob.size)) {
      if (last != 0) {
        return Status::Corrupt("zstd frame is truncated (ends at byte {}, the frame expects more)", in.size());
      }
      return Status::OK();
    }
  }
}

}  // namespace

Result<Compression> ParseCompression(std::string_view name) {
  std::string n(name);
  for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "none") return Compression::kNone;
  if (n == "gzip") return Compression::kGzip;
  if (n == "snappy") return Compression::kSnappy;
  if (n == "lz4") return Compression::kLz4;
  if (n == "zstd") return Compression::kZstd;
  return Status::Invalid("unknown compression '{}': use none, gzip, snappy, lz4 or zstd", name);
}

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "none";
    case Compression::kGzip:
      return "gzip";
    case Compression::kSnappy:
      return "snappy";
    case Compression::kLz4:
      return "lz4";
    case Compression::kZstd:
      return "zstd";
  }
  return "unknown";
}

Status Compress(Compression codec, std::string_view input, int level, std::string* out) {
  switch (codec) {
    case Compression::kNone:
      out->append(input);
      return Status::OK();
    case Compression::kGzip:
      return GzipCompress(input, level, out);
    case Compression::kSnappy: {
      size_t base = out->size();
      out->resize(base + snappy::MaxCompressedLength(input.size()));
      size_t n = 0;
      snappy::RawCompress(input.data(), input.size(), out->data() + base, &n);
      out->resize(base + n);
      return Status::OK();
    }
    case Compression::kLz4:
      return Lz4Compress(input, level, out);
    case Compression::kZstd:
      return ZstdCompress(input, level, out);
  }
  return Status::Unsupported("compression codec {} is not supported", static_cast<int>(codec));
}

Status Decompress(Compression codec, std::string_view input, size_t max_output, std::string* out) {
  switch (codec) {
    case Compression::kNone:
      if (input.size() > max_output) return TooBig("uncompressed", max_output);
      out->append(input);
      return Status::OK();
    case Compression::kGzip:
      return GzipDecompress(input, max_output, out);
    case Compression::kSnappy:
      return SnappyDecompress(input, max_output, out);
    case Compression::kLz4:
      return Lz4Decompress(input, max_output, out);
    case Compression::kZstd:
      return ZstdDecompress(input, max_output, out);
  }
  return Status::Unsupported("compression codec {} is not supported", static_cast<int>(codec));
}

}  // namespace thaw::kafka
