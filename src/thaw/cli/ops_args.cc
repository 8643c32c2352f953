#include "thaw/cli/ops_args.h"

#include "thaw/common/log.h"
#include "thaw/common/units.h"
#include "thaw/storage/object_store.h"

namespace thaw::cli {

void AddOpsOptions(CLI::App* cmd, OpsArgs* a) {
  cmd->add_option("--metrics", a->metrics,
                  "Serve Prometheus metrics, /healthz, /readyz and a status page on HOST:PORT (or PORT on loopback, "
                  "e.g. 9404); off by default. See docs/metrics.md");
  cmd->add_option("--metrics-sample-interval", a->sample_interval,
                  "How often the status page samples its charts (default 10s: 360 points = one hour)")
      ->type_name("DURATION");
  cmd->add_option("--log-format", a->log_format, "text (default) or json: one JSON object per line on stderr");
}

Result<std::unique_ptr<metrics::Endpoint>> StartOps(const OpsArgs& a, const std::string& face) {
  if (!log::SetFormat(a.log_format)) {
    return Status::Invalid("--log-format '{}': use text or json", a.log_format);
  }
  ASSIGN_OR_RAISE(int64_t sample_ms, ParseDurationMs(a.sample_interval, "--metrics-sample-interval"));
  if (sample_ms < 100) {
    return Status::Invalid("--metrics-sample-interval '{}' is too short (at least 100ms)", a.sample_interval);
  }
  if (a.metrics.empty()) return std::unique_ptr<metrics::Endpoint>();
  ASSIGN_OR_RAISE(auto options, metrics::ParseListen(a.metrics));
  options.sample_interval = std::chrono::milliseconds(sample_ms);
  auto m = metrics::Metrics::Make(face);
  metrics::SetGlobal(m);
  metrics::ObserveLog(m.get());
  m->AddProcessHook([seen = storage::IOStats{}](metrics::Metrics& m) mutable {
    const storage::IOStats now = storage::ObjectStoreTotals();
    m.Counter("thaw_object_store_requests_total", "Requests to object stores (reads, HEADs, uploads)", {})
        .Increment(static_cast<double>(now.requests - seen.requests));
    m.Counter("thaw_object_store_read_bytes_total", "Bytes read from object stores", {})
        .Increment(static_cast<double>(now.bytes_read - seen.bytes_read));
    m.Counter("thaw_object_store_retries_total", "Object-store requests retried after a retriable error", {})
        .Increment(static_cast<double>(now.retries - seen.retries));
    seen = now;
  });
  return metrics::Endpoint::Start(std::move(m), options);
}

}  // namespace thaw::cli
