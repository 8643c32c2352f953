// `thaw maintain`: compaction, snapshot expiry and orphan removal for a
// table `thaw archive` writes (src/thaw/archive/maintain.h; docs/maintain.md).
#pragma once

#include <CLI/CLI.hpp>

namespace thaw::cli {

void RegisterMaintain(CLI::App* app, int* exit_code);

}  // namespace thaw::cli
