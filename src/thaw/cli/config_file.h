// `--config FILE`: a command's settings as TOML (parsed by toml++), e.g.
//
//   catalog = "sqlite:////data/catalog.db"   # inline comments are fine
//   brokers = "kafka:9092"
//   checkpoint-every = 100_000
//   exactly-once = true
//   from-time = 2024-05-01T00:00:00Z         # TOML date-times are times
//   X = ["acks=all", "linger.ms=5"]          # or X = { "acks" = "all" }
//   [replay]                                  # only for `thaw replay`
//   topic = "orders-restored"
//
//   [catalog]                                 # catalog properties (docs/catalogs.md); a file has
//   uri = "http://rest:8181"                  #   either this table or catalog = "URI|NAME" above
//   "s3.endpoint" = "http://minio:9000"
//
//   [[topic]]                                 # serve: one --topic per table
//   name = "orders"                           #   -> --topic orders=archive.orders:compression=lz4
//   table = "archive.orders"
//   compression = "lz4"
//
// Keys are the command's long options without the dashes (one-letter keys:
// the short option, e.g. X, F, b). Top-level keys apply to the command run;
// a [replay] or [inspect] table applies only to that command. An option set
// on the command line replaces the files' setting of it, never adds to it;
// a [command] table's replaces a top-level key's, a later file's an earlier
// one's. Only name=value options (-X, --catalog-property and [catalog],
// --topic-config, --column) merge key by key, the command line's value
// winning: `--exactly-once=false` or `--no-exactly-once` turns off a flag set
// in the file.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::cli {

// A [catalog] table in a --config file holds catalog properties (keys are
// property names: uri = "...", "s3.endpoint" = "..."); each becomes this
// hidden flag with KEY=VALUE, below --catalog-property in precedence
// (docs/catalogs.md).
inline constexpr std::string_view kConfigCatalogPropertyFlag = "--config-catalog-property";

struct ExpandedArgs {
  std::vector<std::string> args;
  // (flag, "--config FILE line N key K") for every flag that came from a file.
  std::vector<std::pair<std::string, std::string>> origins;

  // A CLI11 parse error's message, plus where the offending setting came from
  // when it names a flag set by a --config file.
  std::string Explain(const std::string& message) const;
};

// Returns argv with every `--config FILE` (or --config=FILE) replaced by the
// flags the file holds, inserted right after the subcommand name. Keys are
// checked against the subcommand's options in `app`; errors (unreadable
// file, TOML syntax, unknown key, wrong kind of value) name the file, line
// and key, and are kInvalidArgument.
Result<ExpandedArgs> ExpandConfigFiles(const std::vector<std::string>& args, const CLI::App& app);
// Without --config: $THAW_CONFIG (empty: none), else
// $XDG_CONFIG_HOME/thaw/thaw.toml or ~/.config/thaw/thaw.toml when it
// exists. Whatever the files, an option's THAW_<OPTION> environment
// variable (EnvName: --catalog-token -> THAW_CATALOG_TOKEN) wins over them,
// and the command line over both.
Result<std::vector<std::string>> DefaultConfigFiles();
std::string EnvName(std::string_view long_name);

// A usage error naming the first option that `args` (expanded) give more
// than once although it takes one value: only repeatable options (vectors,
// such as -X, --partitions, --topic of archive and serve) add up.
// *command_name (if given) is set to the subcommand the args name.
Status CheckRepeatedOptions(const std::vector<std::string>& args, const CLI::App& app,
                            std::string* command_name = nullptr);

// Registers `--config FILE` on a subcommand so that --help lists it (the
// option itself is consumed by ExpandConfigFiles before parsing).
void AddConfigOption(CLI::App* command);

}  // namespace thaw::cli
