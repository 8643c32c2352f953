// kafka_client.cc's librdkafka helpers that archive's KafkaSource
// (archive/kafka_source.cc) shares: client configuration, log and error
// callbacks, broker errors phrased for the user, and metadata waits that
// notice a stop. Not for other callers: use kafka_client.h.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>

#include "thaw/common/status.h"
#include "thaw/replay/kafka_client.h"

namespace thaw::replay::kafka_internal {

// Steady-clock milliseconds.
int64_t SteadyMs();
// The error for a wait on the brokers ended by a stop (Ctrl-C).
Status Interrupted(const std::string& brokers, const std::string& what);
// librdkafka's error_cb: keeps the first connection problem in `errors`.
void NoteError(ClientErrors* errors, int err, const char* reason);
// librdkafka's log lines to Thaw's logger at debug.
void SetLogCallbacks(rd_kafka_conf_t* conf);
// rd_kafka_conf_set with an error naming the property (secrets hidden).
Status Configure(rd_kafka_conf_t* conf, const std::string& name, const std::string& value);
// A failed request to the brokers; `cause`: what librdkafka reported about the connection.
Status BrokerError(const std::string& brokers, rd_kafka_resp_err_t err, const std::string& what,
                   const std::string& cause = "");
// rd_kafka_metadata in slices until `timeout_ms` or a stop (then *interrupted).
rd_kafka_resp_err_t SlicedMetadata(rd_kafka_t* rk, rd_kafka_topic_t* rkt, const rd_kafka_metadata_t** md,
                                   int timeout_ms, StopWatch* stop, bool* interrupted);

}  // namespace thaw::replay::kafka_internal
