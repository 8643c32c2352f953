// A thin, Status-returning layer over librdkafka's C API: a producer
// (idempotent, optionally transactional) with delivery tracking, topic
// metadata and creation, and a reader of a whole topic (for checkpoints).
// Errors name the brokers, topic, partition and the setting to change.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/kafka/rdkafka/client_glue.h"
#include "thaw/records/record.h"

struct rd_kafka_s;
struct rd_kafka_topic_s;

namespace thaw::replay {

// The librdkafka glue replay shares with archive (kafka/rdkafka/client_glue.h).
using kafka::rdkafka::ClientErrors;
using kafka::rdkafka::KafkaConfig;
using kafka::rdkafka::kStopGraceMs;
using kafka::rdkafka::ParseProperty;
using kafka::rdkafka::StopWatch;

struct TopicInfo {
  std::string name;
  int32_t partitions = 0;
};

// A record read back from a topic, with its headers (for --verify).
struct TopicMessage {
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;
  std::string_view key;  // views valid during the callback only
  bool key_null = true;
  std::string_view value;
  bool value_null = true;
  std::vector<std::pair<std::string_view, std::optional<std::string_view>>> headers;
};

// Extra headers added to each produced record (link headers).
struct ExtraHeader {
  std::string key;
  std::string value;
};

class KafkaProducer {
 public:
  // transactional_id empty = idempotent producer without transactions.
  static Result<std::unique_ptr<KafkaProducer>> Make(const KafkaConfig& config, const std::string& transactional_id,
                                                     const std::string& target_topic = "");
  ~KafkaProducer();

  // Metadata for one topic; NotFound when it does not exist.
  Result<TopicInfo> DescribeTopic(const std::string& topic, int timeout_ms);
  // replication_factor -1 = the broker's default.
  Status CreateTopic(const std::string& topic, int32_t partitions, int32_t replication_factor,
                     const std::map<std::string, std::string>& configs, int timeout_ms);
  // A topic's effective configuration (DescribeConfigs): name -> value.
  Result<std::map<std::string, std::string>> DescribeTopicConfigs(const std::string& topic, int timeout_ms);
  // Brokers in the cluster (from metadata).
  Result<int32_t> BrokerCount(int timeout_ms);

  // Queues one record (waits while the local queue is full) with timestamp
  // `timestamp_ms` (< 0: the produce time). `source_*` name the record in
  // delivery errors.
  Status Produce(const std::string& topic, int32_t partition, const records::Record& record, int64_t timestamp_ms,
                 std::span<const records::Header> headers, std::span<const ExtraHeader> extra, int32_t source_partition,
                 int64_t source_offset);
  // Raw produce (checkpoints).
  Status ProduceRaw(const std::string& topic, int32_t partition, std::string_view key, std::string_view value);

  // Waits until every queued record is acknowledged or failed.
  Status Flush(int timeout_ms);
  // The first delivery failure, if any (sticky until ResetDeliveryStatus).
  // Code kAborted: the record may not be durable (an "implicit"
  // acknowledgement without an offset, a timeout, a retriable broker error);
  // redoing the work from the last commit repairs it.
  Status DeliveryStatus() const;
  void ResetDeliveryStatus();
  // A fatal producer error (e.g. fenced); OK if none. The producer is
  // unusable afterwards.
  Status FatalError() const;
  void Poll(int timeout_ms);

  // Transactions. Retriable errors (coordinator moved or loading, timeouts)
  // are retried inside for up to a minute. Errors that need the
  // transaction aborted come back as kAborted (the caller aborts and redoes
  // the work since the last commit); fatal ones (fenced, timed out by the
  // broker) as kIOError with the likely cause.
  Status InitTransactions(int timeout_ms);
  Status BeginTransaction();
  Status CommitTransaction(int timeout_ms);
  Status AbortTransaction(int timeout_ms);
  // transaction.timeout.ms in effect (librdkafka default 60000).
  int64_t transaction_timeout_ms() const { return transaction_timeout_ms_; }

  const std::string& brokers() const { return brokers_; }

  // Deletes a topic (undoing --create-topic when a check fails before
  // anything was produced).
  Status DeleteTopic(const std::string& topic, int timeout_ms);

 private:
  KafkaProducer() = default;
  static void OnDelivery(rd_kafka_s* rk, const void* msg, void* opaque);
  void RecordFailure(Status st);
  Status TxnError(const char* what, void* error);
  // The error for a transaction the broker aborted (timeout) or fenced.
  Status Fenced(const std::string& what) const;
  // Runs a transactional call, retrying retriable errors within the budget.
  template <typename Fn>
  Status TxnCall(const char* what, Fn&& fn, int timeout_ms);

  // The error for a failed request to the brokers, with what librdkafka
  // reported about the connection.
  Status BrokerFailure(int err, const std::string& what) const;
  // Waits for one admin result on `queue` in short slices (Ctrl-C).
  void* PollAdmin(void* queue, int timeout_ms);

  rd_kafka_s* rk_ = nullptr;
  std::string brokers_;
  KafkaConfig config_;  // what refusals name (the principal) and the brokers
  std::string transactional_id_;
  std::string target_topic_;  // the topic records are replayed to
  ClientErrors errors_;
  StopWatch stop_{nullptr};
  std::map<std::string, rd_kafka_topic_s*> topics_;
  mutable std::mutex mu_;
  Status first_error_;
  static constexpr int kRetryBudgetMs = 60000;
  int64_t transaction_timeout_ms_ = 60000;
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

// Streams every committed record of a topic, with headers, from the
// beginning to the end it had when the scan started (read_committed).
// `timeout_ms` bounds the wait for progress, not the whole scan.
Status ScanTopic(const KafkaConfig& config, const std::string& topic, int timeout_ms,
                 const std::function<Status(const TopicMessage&)>& fn);

}  // namespace thaw::replay
