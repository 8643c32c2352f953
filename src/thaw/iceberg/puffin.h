// Puffin files (Iceberg format/puffin-spec.md): a container of opaque blobs
// (deletion vectors, theta sketches) described by a JSON footer.
//
//   Magic Blob1 ... BlobN Footer
//   Footer = Magic FooterPayload FooterPayloadSize(int32 LE) Flags(4 bytes) Magic
//
// Input bytes are untrusted: offsets, lengths and the payload size are
// checked against the file before anything is sliced or allocated (see
// fuzz/puffin_fuzz.cc). Every error message starts with "puffin file <source>".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::iceberg {

// "PFA1": short for Puffin Fratercula arctica, version 1.
inline constexpr std::string_view kPuffinMagic = "PFA1";

// Blob type names defined by the spec.
inline constexpr std::string_view kDeletionVectorBlobType = "deletion-vector-v1";
inline constexpr std::string_view kThetaSketchBlobType = "apache-datasketches-theta-v1";

struct PuffinBlobMetadata {
  std::string type;
  std::vector<int32_t> fields;  // field ids the blob was computed for
  int64_t snapshot_id = -1;     // -1 for deletion vectors (unknown when written)
  int64_t sequence_number = -1;
  int64_t offset = 0;                            // absolute offset of the blob in the file
  int64_t length = 0;                            // stored length (after compression, if compressed)
  std::optional<std::string> compression_codec;  // absent = uncompressed
  std::map<std::string, std::string> properties;

  // Convenience for properties such as "referenced-data-file".
  std::optional<std::string_view> Property(std::string_view key) const;
};

struct PuffinFooter {
  std::vector<PuffinBlobMetadata> blobs;
  std::map<std::string, std::string> properties;  // file-level, e.g. "created-by"
  // Offset of the footer's leading magic; blobs must end at or before it.
  int64_t footer_offset = 0;
  bool payload_was_compressed = false;
};

// Parses the footer of a complete Puffin file. Validates both magics, the
// flags (unknown flag bits are rejected), the payload size, the JSON shape,
// and that every blob lies between the leading magic and the footer.
// An LZ4-compressed footer payload (flag bit 0) is decompressed; the spec
// requires a single LZ4 frame with the content size present.
Result<PuffinFooter> ParsePuffinFooter(std::string_view file_bytes, std::string_view source);

// Returns the stored bytes of a blob [offset, offset + length) of `file_bytes`
// with overflow-safe bounds checks. No decompression: callers check
// `compression_codec` (deletion vectors are never compressed).
Result<std::string_view> SlicePuffinBlob(std::string_view file_bytes, int64_t offset,
                                         int64_t length, std::string_view source);
Result<std::string_view> SlicePuffinBlob(std::string_view file_bytes,
                                         const PuffinBlobMetadata& blob, std::string_view source);

// Assembles a Puffin file in memory (uncompressed footer, uncompressed
// blobs). AddBlob returns the metadata recorded for the blob, whose
// offset/length a manifest entry uses as content_offset/content_size_in_bytes.
class PuffinWriter {
 public:
  PuffinWriter();

  PuffinBlobMetadata AddBlob(std::string type, std::vector<int32_t> fields, int64_t snapshot_id,
                             int64_t sequence_number, std::string_view data,
                             std::map<std::string, std::string> properties = {});

  // Appends the footer and returns the whole file; the writer then starts a new, empty file.
  std::string Finish(const std::map<std::string, std::string>& file_properties = {});

 private:
  std::string bytes_;
  std::vector<PuffinBlobMetadata> blobs_;
};

}  // namespace thaw::iceberg
