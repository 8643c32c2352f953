// Tables that a Python script of the tests writes with pyiceberg (real
// metadata, manifests and Parquet files), for unit tests that read them.
// The script is run as `$THAW_PYTHON SCRIPT OUT_DIR` and prints one JSON
// object; exit status 77 means pyiceberg is missing (the tests skip).
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace thaw::testing {

struct PythonFixture {
  std::filesystem::path dir;  // the script's OUT_DIR (removed when the test binary exits)
  nlohmann::json info;        // what the script printed
  std::string skip;           // why the tests skip: no $THAW_PYTHON, or no pyiceberg
  std::string error;          // why the fixture failed (exit status, output that is not JSON)
};

// Runs THAW_SOURCE_DIR/`script` (a path from the source root) into a new
// directory /tmp/`prefix`XXXXXX.
inline PythonFixture RunPythonFixture(const std::string& script, const std::string& prefix) {
  PythonFixture f;
  const char* python = std::getenv("THAW_PYTHON");
  if (python == nullptr || *python == '\0') {
    f.skip = "THAW_PYTHON is not set";
    return f;
  }
  std::string tmpl = "/tmp/" + prefix + "XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    f.error = "cannot make " + tmpl;
    return f;
  }
  f.dir = tmpl;
  static std::mutex mu;
  static std::vector<std::filesystem::path> dirs;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (dirs.empty()) {
      std::atexit([] {
        for (const auto& d : dirs) {
          std::error_code ec;
          std::filesystem::remove_all(d, ec);
        }
      });
    }
    dirs.push_back(f.dir);
  }
  const std::string cmd = std::string("'") + python + "' '" +
                          (std::filesystem::path(THAW_SOURCE_DIR) / script).string() + "' '" + f.dir.string() + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    f.error = "cannot run " + cmd;
    return f;
  }
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int rc = pclose(pipe);
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
    f.skip = std::string("pyiceberg not available to ") + python;
    return f;
  }
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    f.error = cmd + " failed:\n" + out;
    return f;
  }
  f.info = nlohmann::json::parse(out, nullptr, false);
  if (f.info.is_discarded()) f.error = cmd + " printed no JSON:\n" + out;
  return f;
}

}  // namespace thaw::testing
