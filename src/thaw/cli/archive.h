#pragma once

#include <CLI/CLI.hpp>

namespace thaw::cli {

// Registers `thaw archive`; the callback sets *exit_code.
void RegisterArchive(CLI::App* app, int* exit_code);

}  // namespace thaw::cli
