// The librdkafka glue Thaw's clients share (replay's producer and topic
// reader, archive's read_committed source): the client configuration and
// its -X properties, librdkafka's log and error callbacks routed to Thaw's
// logger, broker errors phrased for the user (secrets hidden), and waits on
// the brokers that notice a stop (Ctrl-C).
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "thaw/common/status.h"

namespace thaw::kafka::rdkafka {

struct KafkaConfig {
  std::string brokers;
  std::map<std::string, std::string> properties;  // -X name=value passthrough
  // Set by SIGINT/SIGTERM. Every wait on the broker (metadata, admin calls,
  // flush, transactions, a full queue) checks it between short slices and
  // gives up within kStopGraceMs of it being set, so Ctrl-C is prompt even
  // when the broker does not answer.
  const std::atomic<bool>* stop = nullptr;
};

// How long waits on the broker continue once a stop was asked: time for a
// final checkpoint to a healthy broker, no more.
inline constexpr int kStopGraceMs = 1500;

// Connection problems librdkafka reported (its error_cb), kept to explain a
// later failure in one line instead of printing its raw log lines.
struct ClientErrors {
  mutable std::mutex mu;
  std::string first_transport;  // e.g. "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused"
  std::string authentication;   // the first SASL/SSL authentication failure (wrong password, unknown user)
  std::string Describe() const;
  // The authentication failure, if there was one ("" otherwise).
  std::string Authentication() const;
};

// A permission a request to the brokers needed, in Kafka's ACL terms: what a
// refusal names and how kafka-acls.sh grants it.
struct Permission {
  enum class Resource { kTopic, kGroup, kTransactionalId, kCluster };
  Permission(std::string operation_, Resource resource_, std::string name_, std::string why_ = "")
      : operation(std::move(operation_)), resource(resource_), name(std::move(name_)), why(std::move(why_)) {}
  std::string operation;  // Kafka's AclOperation: WRITE, READ, DESCRIBE, DESCRIBE_CONFIGS, CREATE, ...
  Resource resource = Resource::kTopic;
  std::string name;  // the topic, group or transactional id ("" for the cluster)
  std::string why;   // optional: why this request needed it
};

// The principal the brokers authorize a client with these properties as:
// "User:NAME" for SASL PLAIN and SCRAM (NAME = sasl.username), "" when Thaw
// cannot tell (SSL certificates, GSSAPI, OAUTHBEARER, or no authentication).
std::string PrincipalOf(const std::map<std::string, std::string>& properties);
// The brokers' refusals: TOPIC_, GROUP_, TRANSACTIONAL_ID_, CLUSTER_AUTHORIZATION_FAILED.
bool IsAuthorizationError(rd_kafka_resp_err_t err);
// A refusal phrased for the user: the principal, the permission and resource
// it lacks, the broker's error, and the kafka-acls.sh command that grants it.
Status NotAuthorized(const KafkaConfig& config, rd_kafka_resp_err_t err, const Permission& needed);

// Ends waits on the broker: false once the stop flag has been set for longer
// than kStopGraceMs.
class StopWatch {
 public:
  explicit StopWatch(const std::atomic<bool>* stop) : stop_(stop) {}
  // True while waiting may go on.
  bool Continue();
  bool stopping() const { return stop_ && stop_->load(); }

 private:
  const std::atomic<bool>* stop_;
  int64_t seen_ms_ = -1;
};

// Parses "name=value" (-X) into the map.
Status ParseProperty(const std::string& text, std::map<std::string, std::string>* out);

// Steady-clock milliseconds.
int64_t SteadyMs();
// The error for a wait on the brokers ended by a stop (Ctrl-C).
Status Interrupted(const std::string& brokers, const std::string& what);
// librdkafka's error_cb: keeps the first connection problem in `errors`.
void NoteError(ClientErrors* errors, int err, const char* reason);
// librdkafka's log lines to Thaw's logger at debug.
void SetLogCallbacks(rd_kafka_conf_t* conf);
// One librdkafka log line to Thaw's logger (for a client's own log callback).
void LogLine(const rd_kafka_t* rk, int level, const char* fac, const char* buf);
// The topic of a transaction's AddPartitionsToTxn the brokers refused for
// authorization, from librdkafka's log line ("" for other lines): librdkafka
// 2.0 reports it nowhere else (the records are only "purged in queue").
std::string TopicRefusedToTransaction(const char* fac, const char* buf);
// rd_kafka_conf_set with an error naming the property (secrets hidden).
Status Configure(rd_kafka_conf_t* conf, const std::string& name, const std::string& value);
// A failed request to the brokers; `cause`: what librdkafka reported about the connection.
Status BrokerError(const std::string& brokers, rd_kafka_resp_err_t err, const std::string& what,
                   const std::string& cause = "");
// The same for a request that needed `needed`: a refusal is NotAuthorized.
Status BrokerError(const KafkaConfig& config, rd_kafka_resp_err_t err, const std::string& what,
                   const Permission& needed, const std::string& cause = "");
// rd_kafka_metadata in slices until `timeout_ms` or a stop (then *interrupted).
// With `errors`, an authentication failure (a wrong password) ends the wait
// at once with RD_KAFKA_RESP_ERR__AUTHENTICATION: librdkafka itself would
// retry the connection until the timeout.
rd_kafka_resp_err_t SlicedMetadata(rd_kafka_t* rk, rd_kafka_topic_t* rkt, const rd_kafka_metadata_t** md,
                                   int timeout_ms, StopWatch* stop, bool* interrupted,
                                   const ClientErrors* errors = nullptr);

}  // namespace thaw::kafka::rdkafka
