#include "thaw/storage/property_map.h"

#include "thaw/common/secrets.h"

namespace thaw::storage {

bool IsSecretProperty(std::string_view key) { return IsSecretKey(key); }

}  // namespace thaw::storage
