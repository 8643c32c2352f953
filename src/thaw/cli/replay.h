#pragma once

#include <CLI/CLI.hpp>

namespace thaw::cli {

// Registers `thaw replay`; the callback sets *exit_code.
void RegisterReplay(CLI::App* app, int* exit_code);

}  // namespace thaw::cli
