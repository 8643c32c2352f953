#include "thaw/cli/log_args.h"

#include <fmt/format.h>

namespace thaw::cli {

void LogArgs::Register(CLI::App* cmd, std::string_view quiet_help) {
  cmd->add_option("--log-level", level, "debug, info, warn or error (default info; wins over -v and -q)")
      ->type_name("LEVEL");
  cmd->add_flag("-v,--verbose", verbose, "Debug logging (--log-level debug), including librdkafka's own log lines");
  cmd->add_flag("-q,--quiet", quiet,
                quiet_help.empty() ? std::string("Warnings and errors only (--log-level warn)")
                                   : fmt::format("Warnings and errors only (--log-level warn); {}", quiet_help));
}

Result<log::Level> LogArgs::Level() const {
  if (!level.empty()) {
    log::Level out;
    if (!log::ParseLevel(level, &out)) return Status::Invalid("--log-level '{}': use debug, info, warn or error", level);
    return out;
  }
  if (verbose && quiet) {
    return Status::Invalid("-v/--verbose and -q/--quiet contradict each other: give one (or --log-level LEVEL)");
  }
  if (verbose) return log::Level::kDebug;
  if (quiet) return log::Level::kWarn;
  return log::Level::kInfo;
}

Status LogArgs::Apply(const std::string& command) const {
  ASSIGN_OR_RAISE(log::Level l, Level());
  log::Init(command, l == log::Level::kDebug);
  log::SetLevel(l);
  return Status::OK();
}

}  // namespace thaw::cli
