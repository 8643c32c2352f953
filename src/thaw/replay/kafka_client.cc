#include "thaw/replay/kafka_client.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace thaw::replay {

namespace {

// Properties whose values must never reach a log or an error message.
bool IsSecret(const std::string& name) {
  return name.find("password") != std::string::npos || name.find("secret") != std::string::npos ||
         name.find("sasl.oauthbearer.config") != std::string::npos || name.find("ssl.key") != std::string::npos;
}

Status Configure(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    return Status::Invalid("Kafka client property {}={}: {}", name, IsSecret(name) ? "(hidden)" : value, err);
  }
  return Status::OK();
}

Status BrokerError(const std::string& brokers, rd_kafka_resp_err_t err, const std::string& what) {
  if (err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__TIMED_OUT ||
      err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__RESOLVE) {
    return Status::IOError("cannot reach Kafka brokers '{}' ({}: {}): check --brokers and that the brokers are "
                           "running and reachable", brokers, what, rd_kafka_err2str(err));
  }
  if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED || err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED ||
      err == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED) {
    return Status::Invalid("not authorised on '{}' ({}: {}): grant the principal Write/Describe on the topic "
                           "(and the transactional id with --exactly-once)", brokers, what, rd_kafka_err2str(err));
  }
  return Status::IOError("Kafka '{}': {}: {}", brokers, what, rd_kafka_err2str(err));
}

}  // namespace

Status ParseProperty(const std::string& text, std::map<std::string, std::string>* out) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Invalid("-X '{}' is not name=value (librdkafka property, e.g. -X compression.type=lz4)", text);
  }
  (*out)[text.substr(0, eq)] = text.substr(eq + 1);
  return Status::OK();
}

Result<std::unique_ptr<KafkaProducer>> KafkaProducer::Make(const KafkaConfig& config,
                                                           const std::string& transactional_id) {
  auto p = std::unique_ptr<KafkaProducer>(new KafkaProducer());
  p->brokers_ = config.brokers;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto fail = [&](Status st) {
    rd_kafka_conf_destroy(conf);
    return st;
  };
  // Defaults for a faithful, ordered replay; -X overrides any of them.
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", config.brokers},
      {"enable.idempotence", "true"},          // per-partition order survives retries
      {"allow.auto.create.topics", "false"},   // probing a topic must not create it
      {"message.max.bytes", "104857600"},      // let the broker, not the client, judge record size
      {"queue.buffering.max.kbytes", "262144"},  // bounds Thaw's memory
      {"linger.ms", "20"},
      {"batch.size", "1000000"},
      {"log_level", "3"},
  };
  if (!transactional_id.empty()) props["transactional.id"] = transactional_id;
  for (const auto& [k, v] : config.properties) props[k] = v;
  for (const auto& [k, v] : props) {
    Status st = Configure(conf, k, v);
    if (!st.ok()) return fail(st);
  }
  rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) {
    OnDelivery(rk, m, opaque);
  });
  rd_kafka_conf_set_opaque(conf, p.get());
  char err[512];
  p->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!p->rk_) return fail(Status::Invalid("cannot create Kafka producer: {}", err));
  return p;
}

KafkaProducer::~KafkaProducer() {
  if (!rk_) return;
  rd_kafka_flush(rk_, 5000);
  for (auto& [name, t] : topics_) rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk_);
}

void KafkaProducer::OnDelivery(rd_kafka_s* rk, const void* msg_ptr, void* opaque) {
  auto* self = static_cast<KafkaProducer*>(opaque);
  const auto* m = static_cast<const rd_kafka_message_t*>(msg_ptr);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->acked_.fetch_add(1);
    self->acked_bytes_.fetch_add(static_cast<int64_t>(m->len + m->key_len));
    return;
  }
  // The opaque packs the source partition (16 bits) and offset (48 bits).
  const auto packed = reinterpret_cast<uintptr_t>(m->_private);
  const int32_t sp = static_cast<int32_t>(packed >> 48);
  const int64_t so = static_cast<int64_t>(packed & ((uint64_t{1} << 48) - 1));
  const std::string topic = rd_kafka_topic_name(m->rkt);
  Status st;
  if (m->err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE || m->err == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE) {
    st = Status::Invalid("record from source partition {} offset {} ({} bytes) is larger than the broker accepts "
                         "for topic '{}': raise the topic's max.message.bytes (and the broker's message.max.bytes)",
                         sp, so, m->len + m->key_len, topic);
  } else if (m->err == RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP) {
    st = Status::Invalid("record from source partition {} offset {} has timestamp {} ms, outside what topic '{}' "
                         "accepts: raise the topic's message.timestamp.after.max.ms / before.max.ms (Kafka 4 rejects "
                         "timestamps more than an hour in the future by default)", sp, so, rd_kafka_message_timestamp(m, nullptr), topic);
  } else if (m->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
    st = Status::Invalid("not authorised to write to topic '{}' on '{}': grant the principal Write and Describe",
                         topic, self->brokers_);
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

void KafkaProducer::Poll(int timeout_ms) { rd_kafka_poll(rk_, timeout_ms); }

Result<TopicInfo> KafkaProducer::DescribeTopic(const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt, &md, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return BrokerError(brokers_, err, "metadata for topic " + topic);
  TopicInfo info;
  info.name = topic;
  rd_kafka_resp_err_t terr = md->topic_cnt > 0 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  if (md->topic_cnt > 0) info.partitions = md->topics[0].partition_cnt;
  rd_kafka_metadata_destroy(md);
  if (terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
    return Status::NotFound("topic '{}' does not exist on '{}': create it, or pass --create-topic "
                            "[--target-partitions N]", topic, brokers_);
  }
  if (terr != RD_KAFKA_RESP_ERR_NO_ERROR) return BrokerError(brokers_, terr, "metadata for topic " + topic);
  return info;
}

Status KafkaProducer::CreateTopic(const std::string& topic, int32_t partitions,
                                  const std::map<std::string, std::string>& configs, int timeout_ms) {
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, err, sizeof(err));
  if (!nt) return Status::Invalid("cannot create topic '{}': {}", topic, err);
  for (const auto& [k, v] : configs) rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str());
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk_);
  rd_kafka_CreateTopics(rk_, &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, timeout_ms);
  Status st;
  if (!ev) {
    st = BrokerError(brokers_, RD_KAFKA_RESP_ERR__TIMED_OUT, "creating topic " + topic);
  } else if (rd_kafka_event_error(ev)) {
    st = BrokerError(brokers_, rd_kafka_event_error(ev), "creating topic " + topic);
  } else {
    const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
    size_t n = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(res, &n);
    for (size_t i = 0; i < n; ++i) {
      rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
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

Status KafkaProducer::Produce(const std::string& topic, int32_t partition, const records::Record& r,
                              std::span<const records::Header> headers, std::span<const ExtraHeader> extra,
                              int32_t source_partition, int64_t source_offset) {
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
  const int64_t timestamp = r.timestamp_ms >= 0 ? r.timestamp_ms : 0;
  while (true) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(const_cast<void*>(key), key_len), RD_KAFKA_V_VALUE(const_cast<void*>(value), value_len),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(packed)), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk_, 50);
      continue;
    }
    rd_kafka_headers_destroy(hdrs);
    if (err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) {
      return Status::Invalid("record from source partition {} offset {} is larger than the client's "
                             "message.max.bytes: raise it with -X message.max.bytes=N", source_partition, source_offset);
    }
    if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
      return Status::Invalid("topic '{}' has no partition {}", topic, partition);
    }
    return BrokerError(brokers_, err, "producing to " + topic);
  }
}

Status KafkaProducer::ProduceRaw(const std::string& topic, int32_t partition, std::string_view key,
                                 std::string_view value) {
  while (true) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk_, 50);
      continue;
    }
    return BrokerError(brokers_, err, "producing to " + topic);
  }
}

Status KafkaProducer::Flush(int timeout_ms) {
  rd_kafka_resp_err_t err = rd_kafka_flush(rk_, timeout_ms);
  RETURN_NOT_OK(DeliveryStatus());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return BrokerError(brokers_, err, "waiting for acknowledgements");
  return Status::OK();
}

Status KafkaProducer::TxnError(const char* what, void* error_ptr) {
  auto* error = static_cast<rd_kafka_error_t*>(error_ptr);
  std::string msg = rd_kafka_error_string(error);
  rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  rd_kafka_error_destroy(error);
  if (code == RD_KAFKA_RESP_ERR__TRANSPORT || code == RD_KAFKA_RESP_ERR__TIMED_OUT) {
    return BrokerError(brokers_, code, what);
  }
  return Status::IOError("Kafka transaction on '{}': {}: {}", brokers_, what, msg);
}

Status KafkaProducer::InitTransactions(int timeout_ms) {
  if (rd_kafka_error_t* e = rd_kafka_init_transactions(rk_, timeout_ms)) return TxnError("init transactions", e);
  return Status::OK();
}
Status KafkaProducer::BeginTransaction() {
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(rk_)) return TxnError("begin transaction", e);
  return Status::OK();
}
Status KafkaProducer::CommitTransaction(int timeout_ms) {
  if (rd_kafka_error_t* e = rd_kafka_commit_transaction(rk_, timeout_ms)) {
    // A failed delivery explains a failed commit better than the commit does.
    Status delivery = DeliveryStatus();
    Status txn = TxnError("commit transaction", e);
    return delivery.ok() ? txn : delivery;
  }
  return DeliveryStatus();
}
Status KafkaProducer::AbortTransaction(int timeout_ms) {
  if (rd_kafka_error_t* e = rd_kafka_abort_transaction(rk_, timeout_ms)) return TxnError("abort transaction", e);
  return Status::OK();
}

Result<std::vector<TopicRecord>> ReadWholeTopic(const KafkaConfig& config, const std::string& topic, int timeout_ms) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::map<std::string, std::string> props = {
      {"bootstrap.servers", config.brokers}, {"group.id", "thaw-checkpoint-reader"},
      {"enable.auto.commit", "false"},       {"isolation.level", "read_committed"},
      {"enable.partition.eof", "true"},      {"auto.offset.reset", "earliest"},
      {"allow.auto.create.topics", "false"}, {"log_level", "3"}};
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
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return Status::Invalid("cannot create Kafka consumer: {}", err);
  }
  std::vector<TopicRecord> out;
  Status status;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t merr = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  int32_t parts = 0;
  if (merr != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = BrokerError(config.brokers, merr, "metadata for topic " + topic);
  } else {
    if (md->topic_cnt > 0 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) parts = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
  }
  if (status.ok() && parts > 0) {
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(parts);
    for (int32_t p = 0; p < parts; ++p) {
      rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(rk, list);
    rd_kafka_topic_partition_list_destroy(list);
    int eofs = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (eofs < parts) {
      if (std::chrono::steady_clock::now() > deadline) {
        status = Status::IOError("reading topic '{}' on '{}' timed out (an open transaction holds it?)", topic,
                                 config.brokers);
        break;
      }
      rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
      if (!m) continue;
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        ++eofs;
      } else if (m->err) {
        status = BrokerError(config.brokers, m->err, "reading topic " + topic);
        rd_kafka_message_destroy(m);
        break;
      } else {
        TopicRecord r;
        r.partition = m->partition;
        r.offset = m->offset;
        if (m->key) r.key = std::string(static_cast<const char*>(m->key), m->key_len);
        if (m->payload) r.value = std::string(static_cast<const char*>(m->payload), m->len);
        out.push_back(std::move(r));
      }
      rd_kafka_message_destroy(m);
    }
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (!status.ok()) return status;
  return out;
}

}  // namespace thaw::replay
