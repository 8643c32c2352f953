#include "thaw/common/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

namespace thaw::log {

namespace {

std::atomic<bool> g_verbose{false};
std::mutex g_mu;
std::shared_ptr<spdlog::logger> g_logger;
std::atomic<bool> g_json{false};
std::atomic<Observer> g_observer{nullptr};

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warning";
    case Level::kError:
      return "error";
  }
  return "info";
}

std::string JsonLine(const std::string& logger, Level level, std::string_view message) {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  nlohmann::json j = {{"time", stamp},
                      {"level", LevelName(level)},
                      {"logger", logger},
                      {"message", std::string(message)}};
  // Bytes that are not UTF-8 (a record's key quoted in a message) are replaced.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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
  if (g_json.load()) g_logger->set_pattern("%v");
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

void Write(Level level, std::string_view message) {
  auto logger = Get();
  if (g_json.load(std::memory_order_relaxed)) {
    logger->log(ToSpd(level), JsonLine(logger->name(), level, message));
  } else {
    logger->log(ToSpd(level), message);
  }
  if (Observer observer = g_observer.load(std::memory_order_acquire)) observer(level, message);
}

bool SetFormat(std::string_view name) {
  if (name != "text" && name != "json") return false;
  bool json = name == "json";
  g_json.store(json);
  Get()->set_pattern(json ? "%v" : "%n: %l: %v");
  return true;
}

void SetObserver(Observer observer) { g_observer.store(observer, std::memory_order_release); }

}  // namespace thaw::log
