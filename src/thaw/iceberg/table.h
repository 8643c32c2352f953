// A loaded Iceberg table: its current metadata and the FileIO that reads its
// files. Catalogs (src/thaw/catalog/) produce these; everything that reads a
// table (records/, serve/, replay/) takes one and never knows which catalog
// or which storage it came from.
#pragma once

#include <memory>
#include <string>

#include "thaw/common/status.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::iceberg {

struct Table {
  std::string name;  // for messages: "ns.t" or the metadata location
  std::string metadata_location;
  TableMetadata metadata;
  std::shared_ptr<storage::FileIO> io;
};

// A metadata.json's text, read through `io` (gzip-compressed ones inflated).
Result<std::string> ReadMetadataText(const std::string& metadata_location, storage::FileIO& io);

// Reads and parses a metadata.json (gzip-compressed ones too) through `io`.
// The table's name is its metadata location.
Result<Table> LoadTableFromMetadata(const std::string& metadata_location, std::shared_ptr<storage::FileIO> io);

}  // namespace thaw::iceberg
