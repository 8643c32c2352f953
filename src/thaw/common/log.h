// Thaw's logger: diagnostic lines on stderr, "thaw COMMAND: LEVEL: message",
// written through spdlog (thread-safe: librdkafka's threads log here too).
// Library log lines (librdkafka's) arrive at debug level, shown with
// --verbose. spdlog stays inside log.cc, so its compile settings do not
// spread to every file that logs.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

namespace thaw::log {

enum class Level { kDebug, kInfo, kWarn, kError };

// Names the command in each line ("thaw replay: ...") and sets the level:
// debug with `verbose`, info otherwise. Call once, before any client starts.
void Init(const std::string& command, bool verbose);
bool Verbose();
// --log-level: debug, info, warn or error (serve's long-running output).
bool ParseLevel(std::string_view name, Level* out);
void SetLevel(Level level);
bool Enabled(Level level);
void Write(Level level, std::string_view message);

// --log-format json: one JSON object per line on stderr ({"time", "level",
// "logger", "message"}), for log collectors; text ("thaw serve: info: ...")
// otherwise.
bool SetFormat(std::string_view name);
// Sees every line written (after the level check), e.g. to count errors for
// /metrics. One observer; null removes it.
using Observer = void (*)(Level level, std::string_view message);
void SetObserver(Observer observer);

template <typename... Args>
void Debug(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kDebug)) Write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kInfo)) Write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kError)) Write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Warn(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kWarn)) Write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace thaw::log
