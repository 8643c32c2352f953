// The logging options every command takes, read the same way by all:
//   --log-level LEVEL  debug, info, warn or error (wins over -v and -q)
//   -v, --verbose      debug (with librdkafka's own log lines)
//   -q, --quiet        warnings and errors only, and no progress output
//                      where the command has some
// Default: info. -v with -q is bad usage.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "thaw/common/log.h"
#include "thaw/common/status.h"

namespace thaw::cli {

struct LogArgs {
  std::string level;  // --log-level; empty: from -v / -q
  bool verbose = false;
  bool quiet = false;

  // `quiet_help`: what -q hides besides info lines (the command's progress).
  void Register(CLI::App* cmd, std::string_view quiet_help = "");
  // The level these options ask for.
  Result<log::Level> Level() const;
  // log::Init for `command` at that level.
  Status Apply(const std::string& command) const;
};

}  // namespace thaw::cli
