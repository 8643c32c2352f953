// `thaw --version`: Thaw's version and commit, and the versions of the
// libraries that decide what it speaks and reads (as `kcat -V` lists its
// librdkafka and builtin features).
#pragma once

#include <string>

namespace thaw::cli {

std::string VersionText();

}  // namespace thaw::cli
