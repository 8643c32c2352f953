// The FileIO for a location, shared process-wide.
#pragma once

#include <memory>
#include <string>

#include "thaw/common/status.h"
#include "thaw/storage/file_io.h"
#include "thaw/storage/property_map.h"

namespace thaw::storage {

// The FileIO for a location's scheme and these properties (catalog properties merged with a loaded table's
// config and vended credentials). One instance per distinct (scheme, credential/endpoint set), shared
// process-wide. Local paths and file:// -> LocalFileIO. s3/s3a/s3n, gs, abfs/abfss -> ArrowFileIO. Anything
// else: Unsupported naming the scheme and the list of supported ones.
Result<std::shared_ptr<FileIO>> FileIOFor(const std::string& location, const PropertyMap& properties);

// How many distinct object-store FileIOs the process holds (for tests).
size_t FileIORegistrySize();

}  // namespace thaw::storage
