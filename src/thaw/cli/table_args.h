// Command-line options shared by every command that reads a table
// (inspect now; replay and serve later): which table, which snapshot,
// which layout.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/catalog/catalog.h"
#include "thaw/catalog/catalog_config.h"
#include "thaw/common/status.h"
#include "thaw/records/record_reader.h"

namespace thaw::cli {

// The catalog options of every command that reads tables (inspect, replay,
// serve): --catalog URI|NAME, --catalog-property KEY=VALUE (repeatable),
// --catalog-name, and the [catalog] table of a --config file.
struct CatalogArgs {
  std::string catalog;
  std::string catalog_name;
  std::vector<std::string> properties;         // --catalog-property
  std::vector<std::string> config_properties;  // the [catalog] table of --config files (a hidden flag)

  void Register(CLI::App* app);
  // Resolves the catalog (docs/catalogs.md): the URI or named catalog and
  // its properties, in their order of precedence.
  Result<catalog::CatalogConfig> Resolve() const;
  // The catalog properties alone (for --metadata: storage settings).
  Result<storage::PropertyMap> Properties() const;
  bool given() const { return !catalog.empty() || !properties.empty() || !config_properties.empty(); }
};

struct TableArgs {
  CatalogArgs catalog;
  std::string table;
  std::string metadata;
  std::string snapshot_id;
  std::string ref;
  std::string as_of;
  std::string layout;
  std::vector<std::string> columns;
  std::string source_topic;  // --source-topic: one topic of a table that holds several
  std::string spill_dir;
  std::string memory_budget;  // empty = the reader's default

  void Register(CLI::App* app);
  Result<std::shared_ptr<const iceberg::Table>> Load() const;
  // Fills snapshot, layout, source topic and memory (spill) parts of the read options.
  Status Apply(records::ReadOptions* options) const;
};

// The one partition-list syntax of every command: "0,3-5" -> {0,3,4,5}.
// Ranges are inclusive; at most 100,000 partitions in one range. `flag` names
// the option in errors.
// --memory-budget (inspect, replay, serve): a size as every size option
// takes it (512MiB, 2GiB), a bare number MiB; at least 1 MiB.
Result<int64_t> ParseMemoryBudget(const std::string& text);

Result<std::set<int32_t>> ParsePartitions(const std::string& text, std::string_view flag = "--partitions");
// An offset option's value: a non-negative integer.
Result<int64_t> ParseOffset(const std::string& text, const char* flag);

// Each partition's end (its last offset + 1, the log end offset) in the table
// as `options` read it: from the statistics where they are exact (files of
// one partition), else by reading the offsets. --from-offset latest, and
// inspect's -N.
Result<std::map<int32_t, int64_t>> PartitionEnds(const std::shared_ptr<const iceberg::Table>& table,
                                                 const records::ReadOptions& options);

// Adds `names` (e.g. "--partitions,--partition") as a repeatable option in
// that syntax; each occurrence adds to *out. A malformed list is a CLI11
// validation error (exit code 2) at parse time.
CLI::Option* AddPartitionsOption(CLI::App* app, const std::string& names, std::set<int32_t>* out,
                                 const std::string& help);

// A CLI11 check for a time option kept as text (ParseTimeMs's forms), so that
// a bad time is bad usage (exit 2) found before any work.
CLI::Validator TimeValidator();

// Prints a failed command's error as one line on stderr ("thaw CMD: error:
// ...", control bytes escaped) and sets the exit code: 2 for bad usage, 1
// otherwise. Does nothing for an OK status.
void ReportError(const char* command, const Status& status, int* exit_code);

}  // namespace thaw::cli
