#include "thaw/kafka/rdkafka/client_glue.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>

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
static void LogLine(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
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
  }
}

void SetLogCallbacks(rd_kafka_conf_t* conf) { rd_kafka_conf_set_log_cb(conf, LogLine); }

Status Configure(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    return Status::Invalid("Kafka client property {}={}: {}", name, IsSecretKey(name) ? "(hidden)" : value, err);
  }
  return Status::OK();
}

// `cause`: what librdkafka reported about the connection, if anything.
Status BrokerError(const std::string& brokers, rd_kafka_resp_err_t err, const std::string& what,
                   const std::string& cause) {
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


// rd_kafka_metadata in slices until `timeout_ms` or a stop (metadata is
// never needed for a last checkpoint: a stop ends the wait at once). Each
// slice is a new request, so slices grow (0.5 s, then 1 s) to let a slow
// broker answer.
rd_kafka_resp_err_t SlicedMetadata(rd_kafka_t* rk, rd_kafka_topic_t* rkt, const rd_kafka_metadata_t** md,
                                   int timeout_ms, StopWatch* stop, bool* interrupted) {
  const int64_t deadline = SteadyMs() + timeout_ms;
  int64_t slice = 500;
  while (true) {
    const int64_t left = deadline - SteadyMs();
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, md, static_cast<int>(std::clamp<int64_t>(left, 1, slice)));
    slice = 1000;
    rd_kafka_poll(rk, 0);  // serves error_cb (what the connection attempts met)
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT && err != RD_KAFKA_RESP_ERR__TRANSPORT) return err;
    if (SteadyMs() >= deadline) return err;
    if (stop->stopping()) {
      *interrupted = true;
      return err;
    }
  }
}


std::string ClientErrors::Describe() const {
  std::lock_guard<std::mutex> lock(mu);
  return first_transport;
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
