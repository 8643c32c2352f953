#include "thaw/iceberg/table.h"

#include <zlib.h>

namespace thaw::iceberg {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<std::string> Gunzip(const std::string& data, const std::string& location) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return Status::Internal("zlib init failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[65536];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return Status::Corrupt("table metadata {}: bad gzip data", location);
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > (256u << 20)) {
      inflateEnd(&zs);
      return Status::Corrupt("table metadata {}: expands beyond 256 MiB", location);
    }
  } while (rc != Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

}  // namespace

Result<std::string> ReadMetadataText(const std::string& metadata_location, storage::FileIO& io) {
  auto data = io.ReadAll(metadata_location);
  if (!data.ok()) return data.status().WithContext("loading table metadata");
  std::string text = std::move(*data);
  if (EndsWith(metadata_location, ".gz") || EndsWith(metadata_location, ".gz.metadata.json") ||
      (text.size() > 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b)) {
    ASSIGN_OR_RAISE(text, Gunzip(text, metadata_location));
  }
  return text;
}

Result<Table> LoadTableFromMetadata(const std::string& metadata_location, std::shared_ptr<storage::FileIO> io) {
  ASSIGN_OR_RAISE(std::string text, ReadMetadataText(metadata_location, *io));
  ASSIGN_OR_RAISE(auto md, TableMetadata::Parse(text, metadata_location));
  Table t;
  t.name = metadata_location;
  t.metadata_location = metadata_location;
  t.metadata = std::move(md);
  t.io = std::move(io);
  return t;
}

}  // namespace thaw::iceberg
