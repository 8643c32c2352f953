// SIGINT / SIGTERM for the commands that run until done (replay, archive,
// maintain): the first signal sets the process's stop flag, which every wait
// on Kafka, the catalog or storage polls, so the command finishes cleanly
// (a checkpoint written, buffered records committed). With `second_exits`, a
// second signal ends the process at once with exit code 130.
#pragma once

#include <atomic>

namespace thaw::cli {

// The process-wide stop flag (set by the handlers below).
std::atomic<bool>& StopFlag();

// Installs the handlers for SIGINT and SIGTERM.
void CatchStopSignals(bool second_exits);

}  // namespace thaw::cli
