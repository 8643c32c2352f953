#include "thaw/kafka/rdkafka/client_glue.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <string_view>

#include "thaw/common/log.h"
#include "thaw/common/secrets.h"

namespace thaw::kafka::rdkafka {

int64_t SteadyMs() {
  using SteadyClock = std::chrono::steady_clock;
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now().time_since_epoch()).count();
}

Status Interrupted(const std::string& brokers, const std::string& what) {
  return Status::IOError("interrupted while waiting for '{}' ({})", brokers, what);
}

// librdkafka's log lines: Thaw's logger at debug (shown with --verbose), in
// librdkafka's own "LEVEL|FACILITY|CLIENT| message" form.
void LogLine(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  thaw::log::Debug("librdkafka: {}|{}|{}| {}", level, fac, rk ? rd_kafka_name(rk) : "", buf);
}

// librdkafka's error events: kept (the first connection problem explains a
// later timeout), logged at debug; never printed raw.
void NoteError(ClientErrors* errors, int err, const char* reason) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  thaw::log::Debug("librdkafka error: {}: {}", rd_kafka_err2name(code), reason ? reason : "");
  if (!errors || !reason) return;
  if (code == RD_KAFKA_RESP_ERR__TRANSPORT || code == RD_KAFKA_RESP_ERR__RESOLVE ||
      code == RD_KAFKA_RESP_ERR__AUTHENTICATION || code == RD_KAFKA_RESP_ERR__SSL) {
    std::lock_guard<std::mutex> lock(errors->mu);
    if (errors->first_transport.empty()) errors->first_transport = reason;
    if (code == RD_KAFKA_RESP_ERR__AUTHENTICATION && errors->authentication.empty()) errors->authentication = reason;
  }
}

void SetLogCallbacks(rd_kafka_conf_t* conf) { rd_kafka_conf_set_log_cb(conf, LogLine); }

std::string TopicRefusedToTransaction(const char* fac, const char* buf) {
  // e.g. ADDPARTS: TxnCoordinator/1: Failed to add partition "orders" [0] to
  // transaction: Broker: Topic authorization failed
  if (!fac || !buf || std::string_view(fac) != "ADDPARTS") return "";
  const std::string_view line(buf);
  if (line.find("Topic authorization failed") == std::string_view::npos) return "";
  const auto open = line.find("partition \"");
  if (open == std::string_view::npos) return "";
  const auto begin = open + 11;
  const auto close = line.find('"', begin);
  if (close == std::string_view::npos) return "";
  return std::string(line.substr(begin, close - begin));
}

Status Configure(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    return Status::Invalid("Kafka client property {}={}: {}", name, IsSecretKey(name) ? "(hidden)" : value, err);
  }
  return Status::OK();
}

// librdkafka before 2.6.1 sends a SCRAM client-final message whose nonce
// Kafka 4 brokers (strict RFC 5802 check) refuse: every SCRAM login fails.
constexpr int kScramFixedVersion = 0x020601ff;

// `cause`: what librdkafka reported about the connection, if anything.
Status BrokerError(const std::string& brokers, rd_kafka_resp_err_t err, const std::string& what,
                   const std::string& cause) {
  if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION) {
    // librdkafka's reason names the broker and mechanism, never the password.
    std::string scram;
    if (cause.find("SCRAM") != std::string::npos && rd_kafka_version() < kScramFixedVersion) {
      scram = fmt::format(
          "; if they are right: this Thaw uses librdkafka {}, whose SCRAM Kafka 4 brokers reject even with the right "
          "password (fixed in librdkafka 2.6.1, confluentinc/librdkafka#4895): use -X sasl.mechanism=PLAIN over "
          "SASL_SSL, or a Thaw built with librdkafka 2.6.1 or later",
          rd_kafka_version_str());
    }
    return Status::PermissionDenied(
        "authentication to Kafka brokers '{}' failed ({}): {}: check -X sasl.mechanism, sasl.username and "
        "sasl.password (and that the user exists on the cluster){}",
        brokers, what, cause.empty() ? rd_kafka_err2str(err) : cause, scram);
  }
  if (err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__TIMED_OUT ||
      err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__RESOLVE) {
    if (!cause.empty()) {
      return Status::IOError(
          "cannot reach Kafka brokers '{}': {} ({}: {}): check --brokers and that the brokers "
          "are running and reachable",
          brokers, cause, what, rd_kafka_err2str(err));
    }
    return Status::IOError(
        "cannot reach Kafka brokers '{}' ({}: {}): check --brokers and that the brokers are "
        "running and reachable",
        brokers, what, rd_kafka_err2str(err));
  }
  if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED || err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED ||
      err == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED) {
    return Status::Invalid(
        "not authorised on '{}' ({}: {}): grant the principal Write/Describe on the topic "
        "(and the transactional id with --exactly-once)",
        brokers, what, rd_kafka_err2str(err));
  }
  return Status::IOError("Kafka '{}': {}: {}", brokers, what, rd_kafka_err2str(err));
}

Status BrokerError(const KafkaConfig& config, rd_kafka_resp_err_t err, const std::string& what,
                   const Permission& needed, const std::string& cause) {
  if (IsAuthorizationError(err)) return NotAuthorized(config, err, needed);
  return BrokerError(config.brokers, err, what, cause);
}

bool IsAuthorizationError(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED || err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED ||
         err == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
         err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED;
}

static std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

std::string PrincipalOf(const std::map<std::string, std::string>& properties) {
  auto get = [&](const char* k) -> std::string {
    auto it = properties.find(k);
    return it == properties.end() ? "" : it->second;
  };
  if (Lower(get("security.protocol")).rfind("sasl_", 0) != 0) return "";
  const std::string mechanism = get("sasl.mechanism").empty() ? get("sasl.mechanisms") : get("sasl.mechanism");
  if (mechanism != "PLAIN" && mechanism != "SCRAM-SHA-256" && mechanism != "SCRAM-SHA-512") return "";
  const std::string user = get("sasl.username");
  // A user name, not a secret: Kafka's ACLs and logs name it. A reference
  // that could not be resolved (no file) is never shown.
  if (user.empty() || user.front() == '@' || user.rfind("${", 0) == 0) return "";
  return "User:" + user;
}

Status NotAuthorized(const KafkaConfig& config, rd_kafka_resp_err_t err, const Permission& needed) {
  using R = Permission::Resource;
  std::string resource, option;
  switch (needed.resource) {
    case R::kTopic:
      resource = fmt::format("topic '{}'", needed.name);
      option = "--topic " + needed.name;
      break;
    case R::kGroup:
      resource = fmt::format("consumer group '{}'", needed.name);
      option = "--group " + needed.name;
      break;
    case R::kTransactionalId:
      resource = fmt::format("transactional id '{}'", needed.name);
      option = "--transactional-id " + needed.name;
      break;
    case R::kCluster:
      resource = "the cluster";
      option = "--cluster";
      break;
  }
  // kafka-acls.sh spells operations in camel case: DESCRIBE_CONFIGS -> DescribeConfigs.
  std::string camel;
  bool upper = true;
  for (char c : needed.operation) {
    if (c == '_') {
      upper = true;
      continue;
    }
    camel += upper ? c : static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    upper = false;
  }
  const std::string principal = PrincipalOf(config.properties);
  const std::string who = principal.empty() ? "this client's principal" : fmt::format("user '{}'", principal.substr(5));
  return Status::PermissionDenied(
      "{} may not {} {} on Kafka brokers '{}' ({}{}{}): grant it with: kafka-acls.sh "
      "--bootstrap-server {} --add --allow-principal {} --operation {} {}",
      who, needed.operation, resource, config.brokers, rd_kafka_err2name(err), needed.why.empty() ? "" : "; ",
      needed.why, config.brokers, principal.empty() ? "User:NAME" : principal, camel, option);
}

// rd_kafka_metadata in slices until `timeout_ms` or a stop (metadata is
// never needed for a last checkpoint: a stop ends the wait at once). Each
// slice is a new request, so slices grow (0.5 s, then 1 s) to let a slow
// broker answer.
rd_kafka_resp_err_t SlicedMetadata(rd_kafka_t* rk, rd_kafka_topic_t* rkt, const rd_kafka_metadata_t** md,
                                   int timeout_ms, StopWatch* stop, bool* interrupted, const ClientErrors* errors) {
  const int64_t deadline = SteadyMs() + timeout_ms;
  int64_t slice = 500;
  while (true) {
    const int64_t left = deadline - SteadyMs();
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, md, static_cast<int>(std::clamp<int64_t>(left, 1, slice)));
    slice = 1000;
    rd_kafka_poll(rk, 0);  // serves error_cb (what the connection attempts met)
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT && err != RD_KAFKA_RESP_ERR__TRANSPORT) return err;
    if (errors && !errors->Authentication().empty()) return RD_KAFKA_RESP_ERR__AUTHENTICATION;
    if (SteadyMs() >= deadline) return err;
    if (stop->stopping()) {
      *interrupted = true;
      return err;
    }
  }
}

std::string ClientErrors::Describe() const {
  std::lock_guard<std::mutex> lock(mu);
  return authentication.empty() ? first_transport : authentication;
}

std::string ClientErrors::Authentication() const {
  std::lock_guard<std::mutex> lock(mu);
  return authentication;
}

bool StopWatch::Continue() {
  if (!stop_ || !stop_->load()) return true;
  const int64_t now = SteadyMs();
  if (seen_ms_ < 0) seen_ms_ = now;
  return now - seen_ms_ < kStopGraceMs;
}

Status ParseProperty(const std::string& text, std::map<std::string, std::string>* out) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Invalid("-X '{}' is not name=value (librdkafka property, e.g. -X compression.type=lz4)", text);
  }
  (*out)[text.substr(0, eq)] = text.substr(eq + 1);
  return Status::OK();
}

}  // namespace thaw::kafka::rdkafka
