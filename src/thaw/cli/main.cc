// thaw: Apache Iceberg tables back into Apache Kafka streams.
#include <CLI/CLI.hpp>

#include "thaw/cli/inspect.h"
#include "thaw/cli/replay.h"

int main(int argc, char** argv) {
  CLI::App app{"thaw: turn Apache Iceberg tables back into Apache Kafka streams"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "thaw 0.1.0");
  int exit_code = 0;
  thaw::cli::RegisterInspect(&app, &exit_code);
  thaw::cli::RegisterReplay(&app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
