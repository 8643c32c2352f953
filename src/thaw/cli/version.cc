#include "thaw/cli/version.h"

#include <arrow/config.h>
#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <openssl/crypto.h>

#include "thaw/build_info.h"

namespace thaw::cli {

std::string VersionText() {
  const arrow::BuildInfo& arrow = arrow::GetBuildInfo();
  return fmt::format(
      "thaw 0.1.0 (commit {})\n"
      "librdkafka {}\n"
      "Apache Arrow {} (Parquet, filesystems)\n"
      "{}\n"
      "Kafka protocol codec generated from the message specs of {}\n",
      THAW_COMMIT, rd_kafka_version_str(), arrow.version_string, OpenSSL_version(OPENSSL_VERSION),
      THAW_KAFKA_SPECS_VERSION);
}

}  // namespace thaw::cli
