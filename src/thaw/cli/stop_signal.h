// SIGINT / SIGTERM, one rule for every command (docs/cli.md#exit-codes): the
// first signal asks for a clean stop, and the process then exits 128 + the
// signal's number (130 for SIGINT, 143 for SIGTERM), as shells and Kafka's
// own tools report a stop by signal. Commands that run until done (replay,
// archive, maintain) set the stop flag, which every wait on Kafka, the
// catalog or storage polls, so they finish cleanly (a checkpoint written,
// buffered records committed); serve records the signal it stopped for.
// With `second_exits`, a second signal ends the process at once with the
// same code.
#pragma once

#include <atomic>

namespace thaw::cli {

// The process-wide stop flag (set by the handlers below).
std::atomic<bool>& StopFlag();

// Installs the handlers for SIGINT and SIGTERM.
void CatchStopSignals(bool second_exits);

// Notes that the process is stopping for signal `signo` (the handlers above
// do; serve calls it from its own asio signal_set).
void RecordStopSignal(int signo);

// The first stop signal received, or 0.
int StopSignal();

// The exit code of a process stopped by `signo`: 128 + signo.
constexpr int ExitCodeForSignal(int signo) { return 128 + signo; }

}  // namespace thaw::cli
