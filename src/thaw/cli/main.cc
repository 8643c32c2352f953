// thaw: Apache Iceberg tables back into Apache Kafka streams.
//
// Exit codes (docs/cli.md#exit-codes): 0 success, 1 error, 2 bad usage
// (CLI11's parse errors included), 130 interrupted (SIGINT/SIGTERM).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "thaw/cli/archive.h"
#include "thaw/cli/config_file.h"
#include "thaw/cli/inspect.h"
#include "thaw/cli/maintain.h"
#include "thaw/cli/replay.h"
#include "thaw/cli/serve.h"
#include "thaw/cli/version.h"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

// Until a command installs its own handler (replay stops cleanly and
// checkpoints), an interrupt ends the process with the documented code.
extern "C" void ExitInterrupted(int) { _exit(kExitInterrupted); }

}  // namespace

int main(int argc, char** argv) {
  // Arrow's allocator (the mimalloc inside the pyarrow wheel's libarrow)
  // returns freed memory to the system 10 ms after it is freed by default,
  // and Parquet decoding frees and takes back tens of MiB per row group: each
  // time the kernel maps and zeroes fresh pages. Kept a second instead,
  // `thaw serve`'s cold reads cost about 10 % less CPU (docs/benchmarks.md);
  // idle memory still goes back. Read by mimalloc when it first purges, so
  // setting it here is in time; a value in the environment wins.
  setenv("MIMALLOC_PURGE_DELAY", "1000", 0);
  std::signal(SIGINT, ExitInterrupted);
  std::signal(SIGTERM, ExitInterrupted);
  CLI::App app{"thaw: turn Apache Iceberg tables back into Apache Kafka streams"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", [] {
    std::string text = thaw::cli::VersionText();
    text.pop_back();  // CLI11 adds the newline
    return text;
  });
  // A single-valued option is given once (CheckRepeatedOptions); a --config
  // file's setting of it is dropped when the command line sets it.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  int exit_code = 0;
  thaw::cli::RegisterInspect(&app, &exit_code);
  thaw::cli::RegisterReplay(&app, &exit_code);
  thaw::cli::RegisterServe(&app, &exit_code);
  thaw::cli::RegisterArchive(&app, &exit_code);
  thaw::cli::RegisterMaintain(&app, &exit_code);
  const char* footer =
      "\nTimes: ISO-8601 (2024-05-01T12:00:00Z) or epoch ms (1714564800000, 1714564800s for seconds); partitions: "
      "0,3-5; a flag is turned off with --FLAG=false.\nExit codes: 0 success, 1 error, 2 bad usage, 130 interrupted. "
      "See docs/cli.md.";
  app.footer(footer);
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    thaw::cli::AddConfigOption(command);
    command->footer(footer);
  }
  auto expanded = thaw::cli::ExpandConfigFiles(std::vector<std::string>(argv, argv + argc), app);
  if (!expanded.ok()) {
    std::fprintf(stderr, "thaw: error: %s\n", expanded.status().message().c_str());
    return kExitUsage;
  }
  std::string repeated_in;
  if (auto st = thaw::cli::CheckRepeatedOptions(expanded->args, app, &repeated_in); !st.ok()) {
    std::fprintf(stderr, "thaw %s: error: %s\n", repeated_in.c_str(), st.message().c_str());
    return kExitUsage;
  }
  std::vector<const char*> cargs;
  for (const auto& a : expanded->args) cargs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    // Which command, for the message and the hint.
    std::string command, message = expanded->Explain(e.what());
    for (const CLI::App* c : app.get_subcommands()) command = " " + c->get_name();
    if (command.empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      for (const CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + c->get_name();
      }
      message = fmt::format("unknown command '{}': the commands are {}", argv[1], names);
    }
    std::fprintf(stderr, "thaw%s: error: %s\nRun 'thaw%s --help' for the options.\n", command.c_str(), message.c_str(),
                 command.c_str());
    return kExitUsage;
  }
  return exit_code;
}
