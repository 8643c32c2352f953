// A thin, Status-returning layer over librdkafka's C API: a producer
// (idempotent, optionally transactional) with delivery tracking, topic
// metadata and creation, and a reader of a whole topic (for checkpoints).
// Errors name the brokers, topic, partition and the setting to change.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/records/record.h"

struct rd_kafka_s;
struct rd_kafka_topic_s;

namespace thaw::replay {

struct KafkaConfig {
  std::string brokers;
  std::map<std::string, std::string> properties;  // -X name=value passthrough
};

// Parses "name=value" (-X) into the map.
Status ParseProperty(const std::string& text, std::map<std::string, std::string>* out);

struct TopicInfo {
  std::string name;
  int32_t partitions = 0;
};

// Extra headers added to each produced record (link headers).
struct ExtraHeader {
  std::string key;
  std::string value;
};

class KafkaProducer {
 public:
  // transactional_id empty = idempotent producer without transactions.
  static Result<std::unique_ptr<KafkaProducer>> Make(const KafkaConfig& config, const std::string& transactional_id);
  ~KafkaProducer();

  // Metadata for one topic; NotFound when it does not exist.
  Result<TopicInfo> DescribeTopic(const std::string& topic, int timeout_ms);
  Status CreateTopic(const std::string& topic, int32_t partitions, const std::map<std::string, std::string>& configs,
                     int timeout_ms);

  // Queues one record (waits while the local queue is full). `source_*`
  // name the record in delivery errors.
  Status Produce(const std::string& topic, int32_t partition, const records::Record& record,
                 std::span<const records::Header> headers, std::span<const ExtraHeader> extra,
                 int32_t source_partition, int64_t source_offset);
  // Raw produce (checkpoints).
  Status ProduceRaw(const std::string& topic, int32_t partition, std::string_view key, std::string_view value);

  // Waits until every queued record is acknowledged or failed.
  Status Flush(int timeout_ms);
  // The first delivery failure, if any (sticky).
  Status DeliveryStatus() const;
  int64_t acked_records() const { return acked_.load(); }
  int64_t acked_bytes() const { return acked_bytes_.load(); }
  void Poll(int timeout_ms);

  Status InitTransactions(int timeout_ms);
  Status BeginTransaction();
  Status CommitTransaction(int timeout_ms);
  Status AbortTransaction(int timeout_ms);

  const std::string& brokers() const { return brokers_; }

 private:
  KafkaProducer() = default;
  static void OnDelivery(rd_kafka_s* rk, const void* msg, void* opaque);
  void RecordFailure(Status st);
  Status TxnError(const char* what, void* error);

  rd_kafka_s* rk_ = nullptr;
  std::string brokers_;
  std::map<std::string, rd_kafka_topic_s*> topics_;
  std::atomic<int64_t> acked_{0};
  std::atomic<int64_t> acked_bytes_{0};
  mutable std::mutex mu_;
  Status first_error_;
};

struct TopicRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
};

// Reads every committed record of a topic from the beginning to its current
// end (read_committed), e.g. the checkpoint topic.
Result<std::vector<TopicRecord>> ReadWholeTopic(const KafkaConfig& config, const std::string& topic, int timeout_ms);

}  // namespace thaw::replay
