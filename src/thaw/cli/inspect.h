#pragma once

#include <CLI/CLI.hpp>

namespace thaw::cli {

// Registers `thaw inspect`; the callback sets *exit_code.
void RegisterInspect(CLI::App* app, int* exit_code);

}  // namespace thaw::cli
