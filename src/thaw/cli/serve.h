#pragma once

#include <CLI/CLI.hpp>

namespace thaw::cli {

// Registers `thaw serve`; the callback sets *exit_code.
void RegisterServe(CLI::App* app, int* exit_code);

}  // namespace thaw::cli
