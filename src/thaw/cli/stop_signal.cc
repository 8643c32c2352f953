#include "thaw/cli/stop_signal.h"

#include <unistd.h>

#include <csignal>

namespace thaw::cli {

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_second_exits{false};
std::atomic<int> g_signal{0};

extern "C" void ThawOnStopSignal(int signo) {
  RecordStopSignal(signo);  // lock-free atomics only: safe in a handler
  if (g_stop.exchange(true) && g_second_exits.load()) _exit(ExitCodeForSignal(g_signal.load()));
}

}  // namespace

std::atomic<bool>& StopFlag() { return g_stop; }

void CatchStopSignals(bool second_exits) {
  g_second_exits.store(second_exits);
  std::signal(SIGINT, ThawOnStopSignal);
  std::signal(SIGTERM, ThawOnStopSignal);
}

void RecordStopSignal(int signo) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, signo);
}

int StopSignal() { return g_signal.load(); }

}  // namespace thaw::cli
