// thaw: Apache Iceberg tables back into Apache Kafka streams.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "thaw/cli/config_file.h"
#include "thaw/cli/inspect.h"
#include "thaw/cli/replay.h"

int main(int argc, char** argv) {
  CLI::App app{"thaw: turn Apache Iceberg tables back into Apache Kafka streams"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "thaw 0.1.0");
  // A single-valued flag given twice keeps the last one: command-line flags
  // override those expanded from --config, which come first.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  int exit_code = 0;
  thaw::cli::RegisterInspect(&app, &exit_code);
  thaw::cli::RegisterReplay(&app, &exit_code);
  auto args = thaw::cli::ExpandConfigFiles(std::vector<std::string>(argv, argv + argc));
  if (!args.ok()) {
    std::fprintf(stderr, "thaw: error: %s\n", args.status().message().c_str());
    return 2;
  }
  std::vector<const char*> cargs;
  for (const auto& a : *args) cargs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
