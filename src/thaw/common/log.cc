#include "thaw/common/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <mutex>

namespace thaw::log {

namespace {

std::atomic<bool> g_verbose{false};
std::mutex g_mu;
std::shared_ptr<spdlog::logger> g_logger;

std::shared_ptr<spdlog::logger> MakeLogger(const std::string& name, bool verbose) {
  // Unbuffered stderr, one line per message.
  auto logger = std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("%n: %l: %v");
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

std::shared_ptr<spdlog::logger> Get() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_logger) g_logger = MakeLogger("thaw", false);
  return g_logger;
}

spdlog::level::level_enum ToSpd(Level level) {
  switch (level) {
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

}  // namespace

void Init(const std::string& command, bool verbose) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_verbose.store(verbose);
  g_logger = MakeLogger(command.empty() ? "thaw" : "thaw " + command, verbose);
}

bool Verbose() { return g_verbose.load(); }

bool ParseLevel(std::string_view name, Level* out) {
  if (name == "debug")
    *out = Level::kDebug;
  else if (name == "info")
    *out = Level::kInfo;
  else if (name == "warn" || name == "warning")
    *out = Level::kWarn;
  else if (name == "error")
    *out = Level::kError;
  else
    return false;
  return true;
}

void SetLevel(Level level) {
  g_verbose.store(level == Level::kDebug);
  Get()->set_level(ToSpd(level));
}

bool Enabled(Level level) { return Get()->should_log(ToSpd(level)); }

void Write(Level level, std::string_view message) { Get()->log(ToSpd(level), message); }

}  // namespace thaw::log
