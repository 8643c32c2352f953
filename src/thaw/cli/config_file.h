// `--config FILE`: a command's settings as TOML (`brokers = "h:9092"`,
// `exactly-once = true`, `X = ["acks=all"]`). Expanded into flags placed
// before the command line's own, so flags given on the command line win.
#pragma once

#include <string>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::cli {

// Returns argv with every `--config FILE` (or --config=FILE) replaced by the
// flags the file holds, inserted right after the subcommand name.
Result<std::vector<std::string>> ExpandConfigFiles(const std::vector<std::string>& args);

}  // namespace thaw::cli
