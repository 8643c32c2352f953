// What a running serve (standalone or tiered) reports on `--metrics`: each
// served table's position per partition, the batch cache, and the
// readiness checks behind /readyz ("catalog": the last refresh of the
// tables reached the catalog; "tables": every table is loaded).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "thaw/common/status.h"
#include "thaw/metrics/metrics.h"
#include "thaw/serve/topic_registry.h"

namespace thaw::serve {

// Named statuses set by the loops that find them out (the refresh loop sets
// "catalog"), read by the readiness checks.
class ReadyState {
 public:
  void Set(const std::string& name, Status status);
  Status Get(const std::string& name) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Status> states_;
};

void RegisterTableMetrics(metrics::Metrics& m, TopicRegistry& registry, std::shared_ptr<ReadyState> ready);

}  // namespace thaw::serve
