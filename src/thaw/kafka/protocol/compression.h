// Block compression for Kafka record batches: the records section of a
// batch is compressed as one block with the batch's codec.
//
//   gzip    zlib deflate in a gzip wrapper (reads concatenated members)
//   snappy  writes raw snappy (as librdkafka); reads raw snappy and the
//           xerial snappy-java framing the Java client writes
//   lz4     LZ4 frame format, independent 64 KiB blocks (as Kafka's Java
//           client and librdkafka); reads any LZ4 frame
//   zstd    a standard zstd frame
//
// Decompression is bounded: it fails with a Corrupt status once the output
// would exceed `max_output`, and allocates as output is produced, so a
// decompression bomb costs at most `max_output` bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw::kafka {

enum class Compression : int8_t { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

// none|gzip|snappy|lz4|zstd (case-insensitive).
Result<Compression> ParseCompression(std::string_view name);
std::string_view CompressionName(Compression c);

// Appends the compressed form of `input` to `*out`. `level` -1 is the
// codec's default (gzip 6, lz4 fast, zstd 3; snappy has no levels).
Status Compress(Compression codec, std::string_view input, int level, std::string* out);

// Appends the decompressed form of `input` to `*out`; fails once more than
// `max_output` bytes would be appended.
Status Decompress(Compression codec, std::string_view input, size_t max_output, std::string* out);

}  // namespace thaw::kafka
