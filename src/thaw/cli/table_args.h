// Command-line options shared by every command that reads a table
// (inspect now; replay and serve later): which table, which snapshot,
// which layout.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "thaw/common/status.h"
#include "thaw/records/record_reader.h"
#include "thaw/storage/catalog.h"

namespace thaw::cli {

struct TableArgs {
  std::string catalog;
  std::string catalog_name;
  std::string table;
  std::string metadata;
  std::string snapshot_id;
  std::string ref;
  std::string as_of;
  std::string layout;
  std::vector<std::string> columns;
  std::string spill_dir;
  int64_t memory_budget_mib = 0;  // 0 = the reader's default

  void Register(CLI::App* app);
  Result<std::shared_ptr<const storage::Table>> Load() const;
  // Fills snapshot, layout and memory (spill) parts of the read options.
  Status Apply(records::ReadOptions* options) const;
};

// Prints a failed command's error as one line on stderr ("thaw CMD: error:
// ...", control bytes escaped) and sets the exit code: 2 for bad usage, 1
// otherwise. Does nothing for an OK status.
void ReportError(const char* command, const Status& status, int* exit_code);

}  // namespace thaw::cli
