// The options every long-running command shares for operating it:
// `--metrics HOST:PORT` (Prometheus /metrics, /healthz, /readyz and the
// status page at /), `--metrics-sample-interval` (the page's charts) and
// `--log-format text|json`. serve, archive and replay take them.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "thaw/common/status.h"
#include "thaw/metrics/endpoint.h"

namespace thaw::cli {

struct OpsArgs {
  std::string metrics;  // empty: no listener, no metrics
  std::string sample_interval = "10s";
  std::string log_format = "text";
};

void AddOpsOptions(CLI::App* cmd, OpsArgs* args);

// After log::Init: applies --log-format and, with --metrics, makes the
// process's Metrics (metrics::Global()) for `face` and starts its listener,
// which runs until the returned endpoint is destroyed. Null without --metrics.
Result<std::unique_ptr<metrics::Endpoint>> StartOps(const OpsArgs& args, const std::string& face);

}  // namespace thaw::cli
