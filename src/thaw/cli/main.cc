// thaw: Apache Iceberg tables back into Apache Kafka streams.
//
// Exit codes (docs/cli.md#exit-codes): 0 success, 1 error, 2 bad usage
// (CLI11's parse errors included), 128 + N stopped by signal N (130 SIGINT,
// 143 SIGTERM), for every command.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "thaw/cli/archive.h"
#include "thaw/cli/config_file.h"
#include "thaw/cli/inspect.h"
#include "thaw/cli/maintain.h"
#include "thaw/cli/replay.h"
#include "thaw/cli/serve.h"
#include "thaw/cli/stop_signal.h"
#include "thaw/cli/version.h"

namespace {

constexpr int kExitUsage = 2;

// Until a command installs its own handler (replay stops cleanly and
// checkpoints), a stop signal ends the process with the documented code.
extern "C" void ExitInterrupted(int signo) { _exit(thaw::cli::ExitCodeForSignal(signo)); }

// The --help footer: the value kinds this command's options take (by their
// type names: TIME, DURATION, SIZE, OFFSET, LIST), then what every command
// shares. docs/cli.md has a section for each kind.
std::string CommonFooter() {
  return "A flag is turned off with --FLAG=false.\nExit codes: 0 success, 1 error, 2 bad usage, 128+N stopped by "
         "signal N (130 SIGINT, 143 SIGTERM). See docs/cli.md.";
}

std::string FooterOf(const CLI::App& command) {
  std::set<std::string> kinds;
  for (const CLI::Option* opt : command.get_options()) kinds.insert(opt->get_type_name());
  std::string text;
  if (kinds.count("TIME")) {
    text += "Times: ISO-8601 (2024-05-01T12:00:00Z) or epoch ms (1714564800000; 1714564800s for seconds).\n";
  }
  if (kinds.count("DURATION")) text += "Durations: a number and a unit: 500ms, 5s, 10m, 2h, 7d, 1w.\n";
  if (kinds.count("SIZE")) {
    // The two options whose bare number stays MiB, as they always read.
    std::string in_mib;
    for (const char* name : {"--memory-budget", "--cache-size"}) {
      if (command.get_option_no_throw(name) != nullptr) in_mib += (in_mib.empty() ? "" : " and ") + std::string(name);
    }
    text += "Sizes: 64KiB, 512MiB, 2GiB (binary) or 64KB, 512MB, 2GB (decimal); a bare number is bytes" +
            (in_mib.empty() ? std::string() : ", except for " + in_mib + " (MiB)") + ".\n";
  }
  if (kinds.count("OFFSET")) text += "Offsets: N, earliest, latest.\n";
  if (kinds.count("LIST")) text += "Partitions: 0,3-5.\n";
  return "\n" + text + CommonFooter();
}

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
  app.footer(CommonFooter());
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    thaw::cli::AddConfigOption(command);
    command->footer(FooterOf(*command));
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
  // A command stopped by a signal exits 128 + N once it has stopped cleanly,
  // whatever it was doing (a --follow run, serve, a one-shot replay); an
  // error while stopping (archive's last commit failing) stays an error.
  if (int signo = thaw::cli::StopSignal(); signo != 0 && exit_code == 0) {
    return thaw::cli::ExitCodeForSignal(signo);
  }
  return exit_code;
}
