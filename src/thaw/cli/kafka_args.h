// Command-line options shared by every command that talks to Kafka (replay
// now; serve and archive later), spelled as Kafka users know them:
//   -b, --brokers, --bootstrap-server HOST:PORT[,...]
//   -X name=value        a librdkafka property (repeatable)
//   -F FILE              a properties file: `name=value` lines, `#`/`!`
//                        comments, as kcat -F and the Java tools'
//                        --command-config take
// Later settings win: -F, then each -X in order. `bootstrap.servers` (or
// `metadata.broker.list`) from -F/-X is used when --brokers is not given;
// --brokers wins over it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "thaw/common/status.h"
#include "thaw/kafka/rdkafka/client_glue.h"

namespace thaw::cli {

struct KafkaArgs {
  std::string brokers;
  std::vector<std::string> properties;  // -X, as given
  std::string properties_file;          // -F

  void Register(CLI::App* app);
  // The connection settings, with -F read and -X applied over it. Errors
  // (an unreadable -F, a malformed line or -X) are kInvalidArgument: bad usage.
  Result<kafka::rdkafka::KafkaConfig> Resolve() const;
};

// Reads a Java-style properties file (-F); the syntax is in thaw/common/properties.h.
Result<std::vector<std::pair<std::string, std::string>>> ReadPropertiesFile(const std::string& path);

}  // namespace thaw::cli
