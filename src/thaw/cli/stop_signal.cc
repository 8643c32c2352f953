#include "thaw/cli/stop_signal.h"

#include <unistd.h>

#include <csignal>

namespace thaw::cli {

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_second_exits{false};

extern "C" void ThawOnStopSignal(int) {
  if (g_stop.exchange(true) && g_second_exits.load()) _exit(130);
}

}  // namespace

std::atomic<bool>& StopFlag() { return g_stop; }

void CatchStopSignals(bool second_exits) {
  g_second_exits.store(second_exits);
  std::signal(SIGINT, ThawOnStopSignal);
  std::signal(SIGTERM, ThawOnStopSignal);
}

}  // namespace thaw::cli
