#include "thaw/replay/kafka_client.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "thaw/common/log.h"

namespace thaw::replay {

using namespace kafka::rdkafka;

namespace {

// Waits on the broker are cut in slices this long, to notice Ctrl-C.
constexpr int kSliceMs = 200;

}  // namespace

namespace {

// Delivery failures that resending (after aborting the transaction, or from
// the last checkpoint) can repair: the cluster was briefly unavailable or the
// record's fate is unknown.
bool IsRedoable(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
    case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
    case RD_KAFKA_RESP_ERR__STATE:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER:
    case RD_KAFKA_RESP_ERR_UNKNOWN_PRODUCER_ID:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
      return true;
    default:
      return false;
  }
}

// A CreateTime of 0. librdkafka's produce API reads a timestamp of 0 as
// "stamp the current time" and offers no other way to send 0. Thaw sends 1
// and, in an on_send interceptor (run synchronously inside producev, on the
// producing thread, before the record is queued), sets the record's
// timestamp field to 0. The field is found by its value and confirmed
// through the public rd_kafka_message_timestamp(); if it cannot be, Produce
// fails instead of sending a wrong time.
thread_local bool t_zero_pending = false;
thread_local bool t_zero_done = false;

rd_kafka_resp_err_t ZeroTimestampOnSend(rd_kafka_t*, rd_kafka_message_t* m, void*) {
  if (!t_zero_pending) return RD_KAFKA_RESP_ERR_NO_ERROR;
  t_zero_pending = false;
  auto* base = reinterpret_cast<unsigned char*>(m);
  // librdkafka's message object starts with the public rd_kafka_message_t;
  // its timestamp follows within a few fields.
  for (size_t off = sizeof(rd_kafka_message_t); off < sizeof(rd_kafka_message_t) + 96; off += alignof(int64_t)) {
    int64_t v = 0;
    std::memcpy(&v, base + off, sizeof v);
    if (v != 1) continue;
    const int64_t zero = 0;
    std::memcpy(base + off, &zero, sizeof zero);
    if (rd_kafka_message_timestamp(m, nullptr) == 0) {
      t_zero_done = true;
      return RD_KAFKA_RESP_ERR_NO_ERROR;
    }
    std::memcpy(base + off, &v, sizeof v);  // not the timestamp: restore
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

rd_kafka_resp_err_t InstallInterceptors(rd_kafka_t* rk, const rd_kafka_conf_t*, void*, char*, size_t) {
  return rd_kafka_interceptor_add_on_send(rk, "thaw-zero-timestamp", ZeroTimestampOnSend, nullptr);
}

bool IsFencing(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR__FENCED || err == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
         err == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH || err == RD_KAFKA_RESP_ERR_INVALID_TXN_STATE;
}

}  // namespace

Result<std::unique_ptr<KafkaProducer>> KafkaProducer::Make(const KafkaConfig& config,
                                                           const std::string& transactional_id,
                                                           const std::string& target_topic) {
  auto p = std::unique_ptr<KafkaProducer>(new KafkaProducer());
  p->brokers_ = config.brokers;
  p->config_ = config;
  p->transactional_id_ = transactional_id;
  p->target_topic_ = target_topic;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto fail = [&](Status st) {
    rd_kafka_conf_destroy(conf);
    return st;
  };
  // Defaults for a faithful, ordered replay; -X overrides any of them.
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", config.brokers},
      {"enable.idempotence", "true"},            // per-partition order survives retries
      {"allow.auto.create.topics", "false"},     // probing a topic must not create it
      {"message.max.bytes", "104857600"},        // let the broker, not the client, judge record size
      {"queue.buffering.max.kbytes", "262144"},  // bounds Thaw's memory
      {"linger.ms", "20"},
      {"batch.size", "1000000"},
      {"log_level", thaw::log::Verbose() ? "7" : "3"},
  };
  p->stop_ = StopWatch(config.stop);
  if (!transactional_id.empty()) props["transactional.id"] = transactional_id;
  for (const auto& [k, v] : config.properties) props[k] = v;
  if (auto it = props.find("transaction.timeout.ms"); it != props.end()) {
    try {
      p->transaction_timeout_ms_ = std::stoll(it->second);
    } catch (const std::exception&) {
      return fail(Status::Invalid("-X transaction.timeout.ms={} is not a number of milliseconds", it->second));
    }
  }
  for (const auto& [k, v] : props) {
    Status st = Configure(conf, k, v);
    if (!st.ok()) return fail(st);
  }
  rd_kafka_conf_set_dr_msg_cb(
      conf, [](rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) { OnDelivery(rk, m, opaque); });
  rd_kafka_conf_set_opaque(conf, p.get());
  rd_kafka_conf_set_log_cb(conf, [](const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
    LogLine(rk, level, fac, buf);
    // A transaction refused a topic (no WRITE): the records are purged and
    // their reports only say so; the refusal is the error to report.
    const std::string refused = TopicRefusedToTransaction(fac, buf);
    if (!refused.empty() && rk) {
      auto* self = static_cast<KafkaProducer*>(rd_kafka_opaque(rk));
      self->RecordFailure(NotAuthorized(self->config_, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                                        {"WRITE", Permission::Resource::kTopic, refused}));
    }
  });
  rd_kafka_conf_set_error_cb(conf, [](rd_kafka_t*, int err, const char* reason, void* opaque) {
    NoteError(&static_cast<KafkaProducer*>(opaque)->errors_, err, reason);
  });
  rd_kafka_conf_interceptor_add_on_new(conf, "thaw", InstallInterceptors, nullptr);
  char err[512];
  p->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!p->rk_) return fail(Status::Invalid("cannot create Kafka producer: {}", err));
  return p;
}

KafkaProducer::~KafkaProducer() {
  if (!rk_) return;
  if (stop_.stopping()) {
    // Interrupted: what was not acknowledged is redone by a rerun.
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(rk_, 100);
  } else {
    rd_kafka_flush(rk_, 5000);
  }
  for (auto& [name, t] : topics_) rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk_);
}

void KafkaProducer::OnDelivery(rd_kafka_s* rk, const void* msg_ptr, void* opaque) {
  auto* self = static_cast<KafkaProducer*>(opaque);
  const auto* m = static_cast<const rd_kafka_message_t*>(msg_ptr);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->offset >= 0) return;  // written, at that offset
  // The opaque packs the source partition (16 bits) and offset (48 bits).
  const auto packed = reinterpret_cast<uintptr_t>(m->_private);
  const int32_t sp = static_cast<int32_t>(packed >> 48);
  const int64_t so = static_cast<int64_t>(packed & ((uint64_t{1} << 48) - 1));
  const std::string topic = rd_kafka_topic_name(m->rkt);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    // librdkafka reports a batch as delivered when a later batch to the same
    // partition succeeded ("implicit acknowledgement", e.g. after a leader
    // change) without the broker ever confirming it: no offset, no proof.
    self->RecordFailure(Status::Aborted(
        "delivery to topic '{}' partition {} of source partition {} offset {} was reported without an offset "
        "(implicitly acknowledged after a leader change): not proven written",
        topic, m->partition, sp, so));
    return;
  }
  Status st;
  if (m->err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE || m->err == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE) {
    st = Status::Invalid(
        "record from source partition {} offset {} ({} bytes) is larger than the broker accepts "
        "for topic '{}': raise the topic's max.message.bytes (and the broker's message.max.bytes)",
        sp, so, m->len + m->key_len, topic);
  } else if (m->err == RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP) {
    st = Status::Invalid(
        "record from source partition {} offset {} has timestamp {} ms, outside what topic '{}' "
        "accepts: raise the topic's message.timestamp.after.max.ms / before.max.ms (Kafka 4 rejects "
        "timestamps more than an hour in the future by default)",
        sp, so, rd_kafka_message_timestamp(m, nullptr), topic);
  } else if (m->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
    // The broker refused the whole batch: nothing of it was written.
    st = NotAuthorized(self->config_, m->err, {"WRITE", Permission::Resource::kTopic, topic});
  } else if (m->err == RD_KAFKA_RESP_ERR__FATAL && !self->FatalError().ok()) {
    st = self->FatalError();
  } else if (IsFencing(m->err)) {
    st = self->Fenced(fmt::format("delivery to topic '{}' partition {} of source partition {} offset {} failed: {}",
                                  topic, m->partition, sp, so, rd_kafka_err2str(m->err)));
  } else if (IsRedoable(m->err)) {
    st = Status::Aborted("delivery to topic '{}' partition {} failed for source partition {} offset {}: {}", topic,
                         m->partition, sp, so, rd_kafka_err2str(m->err));
  } else {
    st = Status::IOError("delivery to topic '{}' partition {} failed for source partition {} offset {}: {}", topic,
                         m->partition, sp, so, rd_kafka_err2str(m->err));
  }
  self->RecordFailure(std::move(st));
}

void KafkaProducer::RecordFailure(Status st) {
  std::lock_guard<std::mutex> lock(mu_);
  if (first_error_.ok()) first_error_ = std::move(st);
}

Status KafkaProducer::DeliveryStatus() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

void KafkaProducer::ResetDeliveryStatus() {
  std::lock_guard<std::mutex> lock(mu_);
  first_error_ = Status::OK();
}

Status KafkaProducer::FatalError() const {
  char err[512];
  rd_kafka_resp_err_t code = rd_kafka_fatal_error(rk_, err, sizeof(err));
  if (code == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
  if (code == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED && transactional_id_.empty()) {
    // KIP-679: an idempotent producer gets its producer id with WRITE on any
    // topic (or IDEMPOTENT_WRITE on the cluster); the principal has neither.
    return NotAuthorized(config_, code,
                         {"WRITE", Permission::Resource::kTopic, target_topic_.empty() ? "TOPIC" : target_topic_,
                          "an idempotent producer gets a producer id only with WRITE on some topic or "
                          "IDEMPOTENT_WRITE on the cluster"});
  }
  if (code == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED) {
    return NotAuthorized(config_, code, {"WRITE", Permission::Resource::kTransactionalId, transactional_id_});
  }
  return Status::IOError("Kafka producer on '{}' failed fatally: {} ({})", brokers_, err, rd_kafka_err2name(code));
}

Status KafkaProducer::BrokerFailure(int err, const std::string& what) const {
  rd_kafka_poll(rk_, 0);  // serves error_cb
  return BrokerError(brokers_, static_cast<rd_kafka_resp_err_t>(err), what, errors_.Describe());
}

void* KafkaProducer::PollAdmin(void* queue, int timeout_ms) {
  const int64_t deadline = SteadyMs() + timeout_ms;
  while (true) {
    const int64_t left = deadline - SteadyMs();
    rd_kafka_event_t* ev = rd_kafka_queue_poll(static_cast<rd_kafka_queue_t*>(queue),
                                               static_cast<int>(std::clamp<int64_t>(left, 0, kSliceMs)));
    if (ev || left <= 0 || !stop_.Continue()) return ev;
  }
}

Result<int32_t> KafkaProducer::BrokerCount(int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  bool interrupted = false;
  rd_kafka_resp_err_t err = SlicedMetadata(rk_, nullptr, &md, timeout_ms, &stop_, &interrupted, &errors_);
  if (interrupted) return Interrupted(brokers_, "cluster metadata");
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return BrokerFailure(err, "cluster metadata");
  int32_t n = md->broker_cnt;
  rd_kafka_metadata_destroy(md);
  return n;
}

Result<std::map<std::string, std::string>> KafkaProducer::DescribeTopicConfigs(const std::string& topic,
                                                                               int timeout_ms) {
  rd_kafka_ConfigResource_t* res = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk_);
  rd_kafka_DescribeConfigs(rk_, &res, 1, nullptr, q);
  auto* ev = static_cast<rd_kafka_event_t*>(PollAdmin(q, timeout_ms));
  std::map<std::string, std::string> out;
  Status st;
  if (!ev && stop_.stopping()) {
    st = Interrupted(brokers_, "configs of topic " + topic);
  } else if (!ev) {
    st = BrokerFailure(RD_KAFKA_RESP_ERR__TIMED_OUT, "configs of topic " + topic);
  } else if (rd_kafka_event_error(ev)) {
    st = BrokerError(brokers_, rd_kafka_event_error(ev), "configs of topic " + topic);
  } else {
    const rd_kafka_DescribeConfigs_result_t* r = rd_kafka_event_DescribeConfigs_result(ev);
    size_t n = 0;
    const rd_kafka_ConfigResource_t** rs = rd_kafka_DescribeConfigs_result_resources(r, &n);
    for (size_t i = 0; i < n && st.ok(); ++i) {
      if (rd_kafka_ConfigResource_error(rs[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        st = BrokerError(config_, rd_kafka_ConfigResource_error(rs[i]), "configs of topic " + topic,
                         {"DESCRIBE_CONFIGS", Permission::Resource::kTopic, topic,
                          "replay checks the topic's retention and size limits before it sends"});
        break;
      }
      size_t m = 0;
      const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(rs[i], &m);
      for (size_t k = 0; k < m; ++k) {
        if (rd_kafka_ConfigEntry_is_sensitive(entries[k])) continue;
        const char* v = rd_kafka_ConfigEntry_value(entries[k]);
        out[rd_kafka_ConfigEntry_name(entries[k])] = v ? v : "";
      }
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_ConfigResource_destroy(res);
  if (!st.ok()) return st;
  return out;
}

void KafkaProducer::Poll(int timeout_ms) { rd_kafka_poll(rk_, timeout_ms); }

Result<TopicInfo> KafkaProducer::DescribeTopic(const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  bool interrupted = false;
  rd_kafka_resp_err_t err = SlicedMetadata(rk_, rkt, &md, timeout_ms, &stop_, &interrupted, &errors_);
  rd_kafka_topic_destroy(rkt);
  if (interrupted) return Interrupted(brokers_, "metadata for topic " + topic);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return BrokerFailure(err, "metadata for topic " + topic);
  TopicInfo info;
  info.name = topic;
  rd_kafka_resp_err_t terr = md->topic_cnt > 0 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  if (md->topic_cnt > 0) info.partitions = md->topics[0].partition_cnt;
  rd_kafka_metadata_destroy(md);
  if (terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
    return Status::NotFound(
        "topic '{}' does not exist on '{}': create it, or pass --create-topic "
        "[--target-partitions N]",
        topic, brokers_);
  }
  if (terr != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return BrokerError(config_, terr, "metadata for topic " + topic, {"DESCRIBE", Permission::Resource::kTopic, topic});
  }
  return info;
}

Status KafkaProducer::CreateTopic(const std::string& topic, int32_t partitions, int32_t replication_factor,
                                  const std::map<std::string, std::string>& configs, int timeout_ms) {
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, replication_factor, err, sizeof(err));
  if (!nt) return Status::Invalid("cannot create topic '{}': {}", topic, err);
  for (const auto& [k, v] : configs) rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str());
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk_);
  rd_kafka_CreateTopics(rk_, &nt, 1, nullptr, q);
  auto* ev = static_cast<rd_kafka_event_t*>(PollAdmin(q, timeout_ms));
  Status st;
  if (!ev && stop_.stopping()) {
    st = Interrupted(brokers_, "creating topic " + topic);
  } else if (!ev) {
    st = BrokerFailure(RD_KAFKA_RESP_ERR__TIMED_OUT, "creating topic " + topic);
  } else if (rd_kafka_event_error(ev)) {
    st = BrokerError(brokers_, rd_kafka_event_error(ev), "creating topic " + topic);
  } else {
    const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
    size_t n = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(res, &n);
    for (size_t i = 0; i < n; ++i) {
      rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
      if (IsAuthorizationError(e)) {
        st = NotAuthorized(config_, e, {"CREATE", Permission::Resource::kTopic, topic});
      } else if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        const char* msg = rd_kafka_topic_result_error_string(results[i]);
        st = Status::IOError("cannot create topic '{}' on '{}': {}", topic, brokers_, msg ? msg : rd_kafka_err2str(e));
      }
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  return st;
}

Status KafkaProducer::DeleteTopic(const std::string& topic, int timeout_ms) {
  rd_kafka_DeleteTopic_t* dt = rd_kafka_DeleteTopic_new(topic.c_str());
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk_);
  rd_kafka_DeleteTopics(rk_, &dt, 1, nullptr, q);
  auto* ev = static_cast<rd_kafka_event_t*>(PollAdmin(q, timeout_ms));
  Status st;
  if (!ev) {
    st = BrokerFailure(RD_KAFKA_RESP_ERR__TIMED_OUT, "deleting topic " + topic);
  } else if (rd_kafka_event_error(ev)) {
    st = BrokerFailure(rd_kafka_event_error(ev), "deleting topic " + topic);
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
    for (size_t i = 0; i < n; ++i) {
      rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        st = Status::IOError("cannot delete topic '{}' on '{}': {}", topic, brokers_, rd_kafka_err2str(e));
      }
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_DeleteTopic_destroy(dt);
  return st;
}

Status KafkaProducer::Produce(const std::string& topic, int32_t partition, const records::Record& r,
                              int64_t timestamp_ms, std::span<const records::Header> headers,
                              std::span<const ExtraHeader> extra, int32_t source_partition, int64_t source_offset) {
  rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size() + extra.size());
  for (const auto& h : headers) {
    // A null header value stays null; an empty one stays empty.
    rd_kafka_header_add(hdrs, h.key.data(), static_cast<ssize_t>(h.key.size()),
                        h.value ? (h.value->data() ? h.value->data() : "") : nullptr,
                        h.value ? static_cast<ssize_t>(h.value->size()) : 0);
  }
  for (const auto& h : extra) {
    rd_kafka_header_add(hdrs, h.key.data(), static_cast<ssize_t>(h.key.size()), h.value.data(),
                        static_cast<ssize_t>(h.value.size()));
  }
  uintptr_t packed = 0;
  if (source_partition >= 0 && source_partition < 65536 && source_offset >= 0 && source_offset < (int64_t{1} << 48)) {
    packed = (static_cast<uintptr_t>(source_partition) << 48) | static_cast<uintptr_t>(source_offset);
  }
  // Null stays null (pointer nullptr); empty stays empty (non-null, length 0).
  const void* key = r.key ? (r.key->data() ? r.key->data() : "") : nullptr;
  const void* value = r.value ? (r.value->data() ? r.value->data() : "") : nullptr;
  const size_t key_len = r.key ? r.key->size() : 0;
  const size_t value_len = r.value ? r.value->size() : 0;
  // librdkafka: 0 = stamp the produce time. A real 0 goes out as 1, set to 0
  // by the on_send interceptor (ZeroTimestampOnSend).
  const bool zero = timestamp_ms == 0;
  const int64_t timestamp = zero ? 1 : timestamp_ms > 0 ? timestamp_ms : 0;
  while (true) {
    t_zero_pending = zero;
    t_zero_done = false;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(const_cast<void*>(key), key_len), RD_KAFKA_V_VALUE(const_cast<void*>(value), value_len),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(packed)), RD_KAFKA_V_END);
    t_zero_pending = false;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (zero && !t_zero_done) {
        return Status::Unsupported(
            "record from source partition {} offset {} has timestamp 0, which this librdkafka "
            "build cannot send (it was queued with timestamp 1 ms): replay with --timestamps "
            "now to keep the original in a thaw.source.timestamp header",
            source_partition, source_offset);
      }
      return Status::OK();
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk_, 50);
      if (stop_.Continue()) continue;
      rd_kafka_headers_destroy(hdrs);
      return Interrupted(brokers_, "room in the producer queue");
    }
    rd_kafka_headers_destroy(hdrs);
    if (err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) {
      return Status::Invalid(
          "record from source partition {} offset {} is larger than the client's "
          "message.max.bytes: raise it with -X message.max.bytes=N",
          source_partition, source_offset);
    }
    if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
      return Status::Invalid("topic '{}' has no partition {}", topic, partition);
    }
    if (err == RD_KAFKA_RESP_ERR__FATAL) RETURN_NOT_OK(FatalError());
    return BrokerError(brokers_, err, "producing to " + topic);
  }
}

Status KafkaProducer::ProduceRaw(const std::string& topic, int32_t partition, std::string_view key,
                                 std::string_view value) {
  while (true) {
    rd_kafka_resp_err_t err = rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                                                RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
                                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk_, 50);
      if (stop_.Continue()) continue;
      return Interrupted(brokers_, "room in the producer queue");
    }
    if (err == RD_KAFKA_RESP_ERR__FATAL) RETURN_NOT_OK(FatalError());
    return BrokerError(brokers_, err, "producing to " + topic);
  }
}

Status KafkaProducer::Flush(int timeout_ms) {
  const int64_t deadline = SteadyMs() + timeout_ms;
  rd_kafka_resp_err_t err;
  while (true) {
    const int64_t left = deadline - SteadyMs();
    err = rd_kafka_flush(rk_, static_cast<int>(std::clamp<int64_t>(left, 0, kSliceMs)));
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT || left <= 0) break;
    if (!stop_.Continue()) {
      RETURN_NOT_OK(DeliveryStatus());
      return Interrupted(brokers_, "acknowledgements");
    }
  }
  RETURN_NOT_OK(DeliveryStatus());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return BrokerFailure(err, "waiting for acknowledgements");
  return Status::OK();
}

Status KafkaProducer::Fenced(const std::string& what) const {
  return Status::IOError(
      "Kafka transaction on '{}': {}: the broker aborted this producer's transaction. Either it stayed open longer "
      "than transaction.timeout.ms ({} ms) -- Thaw commits every --checkpoint-interval / --checkpoint-every / "
      "--checkpoint-bytes, so lower those or raise -X transaction.timeout.ms -- or another process with the same "
      "transactional id (the same --job) took over and fenced this one",
      brokers_, what, transaction_timeout_ms_);
}

Status KafkaProducer::TxnError(const char* what, void* error_ptr) {
  auto* error = static_cast<rd_kafka_error_t*>(error_ptr);
  const std::string msg = rd_kafka_error_string(error);
  const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  const bool abortable = rd_kafka_error_txn_requires_abort(error);
  const bool fatal = rd_kafka_error_is_fatal(error);
  const bool retriable = rd_kafka_error_is_retriable(error);
  rd_kafka_error_destroy(error);
  if (code == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED) {
    return NotAuthorized(config_, code, {"WRITE", Permission::Resource::kTransactionalId, transactional_id_});
  }
  if (code == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED && !target_topic_.empty()) {
    // The refusal recorded from librdkafka's log names the topic (the target
    // or the checkpoint topic); else it was the target.
    Status refused = DeliveryStatus();
    if (refused.code() == StatusCode::kPermissionDenied) return refused;
    return NotAuthorized(config_, code, {"WRITE", Permission::Resource::kTopic, target_topic_});
  }
  if (IsFencing(code) || (fatal && code == RD_KAFKA_RESP_ERR__FENCED)) {
    return Fenced(fmt::format("{} failed: {} ({})", what, msg, rd_kafka_err2name(code)));
  }
  if (abortable && !fatal) {
    return Status::Aborted("Kafka transaction on '{}': {} failed: {} ({}); the transaction is aborted and redone",
                           brokers_, what, msg, rd_kafka_err2name(code));
  }
  if (retriable) {
    return Status::IOError(
        "Kafka transaction on '{}': {} still failing after {} s of retries: {} ({}): the "
        "transaction coordinator is unavailable",
        brokers_, what, kRetryBudgetMs / 1000, msg, rd_kafka_err2name(code));
  }
  if (code == RD_KAFKA_RESP_ERR__TRANSPORT || code == RD_KAFKA_RESP_ERR__TIMED_OUT) {
    return BrokerFailure(code, what);
  }
  return Status::IOError("Kafka transaction on '{}': {}: {} ({})", brokers_, what, msg, rd_kafka_err2name(code));
}

// `fn(slice_ms)` makes the call with a short timeout: librdkafka's init,
// commit and abort go on in the background after a timeout and are resumed
// by calling again, so a slice that times out is simply called again (until
// `timeout_ms`), checking for Ctrl-C in between.
template <typename Fn>
Status KafkaProducer::TxnCall(const char* what, Fn&& fn, int timeout_ms) {
  const int64_t start = SteadyMs();
  const int64_t retry_deadline = start + kRetryBudgetMs;
  const int64_t call_deadline = start + timeout_ms;
  int backoff_ms = 100;
  while (true) {
    const int slice = static_cast<int>(std::clamp<int64_t>(call_deadline - SteadyMs(), 1, 500));
    rd_kafka_error_t* e = fn(slice);
    if (!e) return Status::OK();
    const bool retriable =
        rd_kafka_error_is_retriable(e) && !rd_kafka_error_txn_requires_abort(e) && !rd_kafka_error_is_fatal(e);
    if (retriable && rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__TIMED_OUT && SteadyMs() < call_deadline) {
      rd_kafka_error_destroy(e);
      if (!stop_.Continue()) return Interrupted(brokers_, what);
      continue;  // the slice ended; the call goes on
    }
    if (retriable && SteadyMs() + backoff_ms < retry_deadline) {
      rd_kafka_error_destroy(e);
      for (int waited = 0; waited < backoff_ms; waited += 50) {
        if (!stop_.Continue()) return Interrupted(brokers_, what);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      backoff_ms = std::min(backoff_ms * 2, 2000);
      continue;
    }
    return TxnError(what, e);
  }
}

Status KafkaProducer::InitTransactions(int timeout_ms) {
  return TxnCall(
      "init transactions", [&](int ms) { return rd_kafka_init_transactions(rk_, ms); }, timeout_ms);
}
Status KafkaProducer::BeginTransaction() {
  return TxnCall(
      "begin transaction", [&](int) { return rd_kafka_begin_transaction(rk_); }, 0);
}
Status KafkaProducer::CommitTransaction(int timeout_ms) {
  // Every record of the transaction must be proven written before the commit:
  // librdkafka would commit past a record it counted as implicitly
  // acknowledged. Flush, check, then commit.
  Status flushed = Flush(timeout_ms);
  Status delivery = DeliveryStatus();
  if (!delivery.ok()) return delivery;
  if (!flushed.ok() && stop_.stopping()) return flushed;
  if (rd_kafka_outq_len(rk_) > 0) {
    return Status::Aborted(
        "records were still unacknowledged by '{}' after {} ms; the transaction is aborted and "
        "redone",
        brokers_, timeout_ms);
  }
  Status st = TxnCall(
      "commit transaction", [&](int ms) { return rd_kafka_commit_transaction(rk_, ms); }, timeout_ms);
  if (!st.ok()) {
    // A failed delivery explains a failed commit better than the commit does.
    delivery = DeliveryStatus();
    if (!delivery.ok()) return delivery;
  }
  return st;
}
Status KafkaProducer::AbortTransaction(int timeout_ms) {
  RETURN_NOT_OK(TxnCall(
      "abort transaction", [&](int ms) { return rd_kafka_abort_transaction(rk_, ms); }, timeout_ms));
  // Serve the delivery reports of the purged records, then forget them: the
  // aborted transaction is redone from the last commit.
  for (int i = 0; i < 100 && rd_kafka_outq_len(rk_) > 0; ++i) rd_kafka_poll(rk_, 10);
  rd_kafka_poll(rk_, 0);
  ResetDeliveryStatus();
  return Status::OK();
}

Status ScanTopic(const KafkaConfig& config, const std::string& topic, int timeout_ms,
                 const std::function<Status(const TopicMessage&)>& fn) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // librdkafka 2.0 assigns partitions only with a group.id; nothing is
  // committed to it (the principal needs no ACL on it: its refusals are ignored).
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", config.brokers}, {"group.id", "thaw-reader"},
      {"enable.auto.commit", "false"},       {"isolation.level", "read_committed"},
      {"enable.partition.eof", "true"},      {"auto.offset.reset", "earliest"},
      {"allow.auto.create.topics", "false"}, {"log_level", thaw::log::Verbose() ? "7" : "3"}};
  for (const auto& [k, v] : config.properties) {
    // Producer-only settings make a consumer fail; pass on the connection ones.
    if (k.rfind("security.", 0) == 0 || k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
        k.rfind("client.", 0) == 0 || k.rfind("socket.", 0) == 0) {
      props[k] = v;
    }
  }
  for (const auto& [k, v] : props) {
    Status st = Configure(conf, k, v);
    if (!st.ok()) {
      rd_kafka_conf_destroy(conf);
      return st;
    }
  }
  ClientErrors errors;
  StopWatch stop(config.stop);
  rd_kafka_conf_set_opaque(conf, &errors);
  SetLogCallbacks(conf);
  rd_kafka_conf_set_error_cb(conf, [](rd_kafka_t*, int err, const char* reason, void* opaque) {
    NoteError(static_cast<ClientErrors*>(opaque), err, reason);
  });
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return Status::Invalid("cannot create Kafka consumer: {}", err);
  }
  Status status;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  bool interrupted = false;
  rd_kafka_resp_err_t merr = SlicedMetadata(rk, rkt, &md, timeout_ms, &stop, &interrupted, &errors);
  rd_kafka_topic_destroy(rkt);
  int32_t parts = 0;
  if (interrupted) {
    status = Interrupted(config.brokers, "metadata for topic " + topic);
  } else if (merr != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = BrokerError(config.brokers, merr, "metadata for topic " + topic, errors.Describe());
  } else {
    const rd_kafka_resp_err_t terr = md->topic_cnt > 0 ? md->topics[0].err : RD_KAFKA_RESP_ERR_NO_ERROR;
    if (terr == RD_KAFKA_RESP_ERR_NO_ERROR) parts = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    // A topic the principal may not see is no empty topic (a job's
    // checkpoints would be lost): only a missing one is.
    if (IsAuthorizationError(terr)) {
      status = NotAuthorized(config, terr, {"DESCRIBE", Permission::Resource::kTopic, topic});
    }
  }
  if (status.ok() && parts > 0) {
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(parts);
    for (int32_t p = 0; p < parts; ++p) {
      rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(rk, list);
    rd_kafka_topic_partition_list_destroy(list);
    std::vector<bool> at_eof(parts, false);
    int eofs = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    TopicMessage tm;
    while (eofs < parts) {
      if (!stop.Continue()) {
        status = Interrupted(config.brokers, "reading topic " + topic);
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        status = Status::IOError(
            "reading topic '{}' on '{}' made no progress for {} ms (an open transaction holds "
            "it?)",
            topic, config.brokers, timeout_ms);
        break;
      }
      rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
      if (!m) continue;
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (m->partition >= 0 && m->partition < parts && !at_eof[m->partition]) {
          at_eof[m->partition] = true;
          ++eofs;
        }
      } else if (m->err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
        thaw::log::Debug("reading topic {}: {} (its group is not used)", topic, rd_kafka_message_errstr(m));
      } else if (m->err) {
        status = BrokerError(config, m->err, "reading topic " + topic, {"READ", Permission::Resource::kTopic, topic});
        rd_kafka_message_destroy(m);
        break;
      } else {
        tm.partition = m->partition;
        tm.offset = m->offset;
        tm.timestamp_ms = rd_kafka_message_timestamp(m, nullptr);
        tm.key_null = m->key == nullptr;
        tm.key = m->key ? std::string_view(static_cast<const char*>(m->key), m->key_len) : std::string_view();
        tm.value_null = m->payload == nullptr;
        tm.value = m->payload ? std::string_view(static_cast<const char*>(m->payload), m->len) : std::string_view();
        tm.headers.clear();
        rd_kafka_headers_t* hdrs = nullptr;
        if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
          const char* name;
          const void* val;
          size_t size;
          for (size_t idx = 0; rd_kafka_header_get_all(hdrs, idx, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
               ++idx) {
            std::optional<std::string_view> v;
            if (val) v = std::string_view(static_cast<const char*>(val), size);
            tm.headers.emplace_back(std::string_view(name), v);
          }
        }
        status = fn(tm);
        if (!status.ok()) {
          rd_kafka_message_destroy(m);
          break;
        }
      }
      rd_kafka_message_destroy(m);
    }
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return status;
}

Result<std::vector<TopicRecord>> ReadWholeTopic(const KafkaConfig& config, const std::string& topic, int timeout_ms) {
  std::vector<TopicRecord> out;
  RETURN_NOT_OK(ScanTopic(config, topic, timeout_ms, [&](const TopicMessage& m) {
    TopicRecord r;
    r.partition = m.partition;
    r.offset = m.offset;
    if (!m.key_null) r.key = std::string(m.key);
    if (!m.value_null) r.value = std::string(m.value);
    out.push_back(std::move(r));
    return Status::OK();
  }));
  return out;
}

}  // namespace thaw::replay
