#include "thaw/archive/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <utility>

#include "thaw/common/log.h"
#include "thaw/kafka/rdkafka/client_glue.h"

namespace thaw::archive {

namespace {

using kafka::rdkafka::ClientErrors;
using kafka::rdkafka::StopWatch;
namespace ki = kafka::rdkafka;

// Waits on the brokers are cut in slices this long, to notice a stop.
constexpr int kSliceMs = 200;

// The consumer handle, shared by the source and every batch of messages it
// handed out: librdkafka wants its messages destroyed before the handle.
struct Handle {
  rd_kafka_t* rk = nullptr;
  ClientErrors errors;
  ~Handle() {
    if (rk) {
      rd_kafka_consumer_close(rk);
      rd_kafka_destroy(rk);
    }
  }
};

// Owner of the messages one Poll returned (their bytes are the records' views).
struct Messages {
  std::shared_ptr<Handle> handle;
  std::vector<rd_kafka_message_t*> list;
  ~Messages() {
    for (auto* m : list) rd_kafka_message_destroy(m);
  }
};

// The partitions metadata lists for `topic`; *err is the topic's error
// (RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART when the topic is not listed).
std::set<int32_t> PartitionsIn(const rd_kafka_metadata_t* md, const std::string& topic, rd_kafka_resp_err_t* err) {
  std::set<int32_t> out;
  *err = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (topic != md->topics[i].topic) continue;
    *err = md->topics[i].err;
    for (int j = 0; j < md->topics[i].partition_cnt; ++j) out.insert(md->topics[i].partitions[j].id);
  }
  return out;
}

// Properties archive sets itself: a -X for them would change what is archived.
bool Reserved(const std::string& name) {
  return name == "isolation.level" || name == "enable.auto.commit" || name == "group.id" ||
         name == "enable.partition.eof" || name == "auto.offset.reset" || name == "bootstrap.servers";
}

class KafkaSourceImpl : public KafkaSource {
 public:
  explicit KafkaSourceImpl(SourceOptions options) : options_(std::move(options)), stop_watch_(options_.kafka.stop) {}
  ~KafkaSourceImpl() override {
    if (first_) rd_kafka_message_destroy(first_);
  }

  Status Init() {
    const auto& kafka = options_.kafka;
    const std::string& topic = options_.topic;
    for (const auto& [k, v] : kafka.properties) {
      if (Reserved(k)) {
        return Status::Invalid(
            "-X {}: archive sets it itself (read_committed, no auto commit, assigned partitions; "
            "--brokers and --group for the others): remove it",
            k);
      }
    }
    std::map<std::string, std::string> props = kafka.properties;
    props["bootstrap.servers"] = kafka.brokers;
    props["group.id"] = options_.group_id.empty() ? "thaw-archive" : options_.group_id;
    props["isolation.level"] = "read_committed";
    props["enable.auto.commit"] = "false";
    props["enable.auto.offset.store"] = "false";
    props["enable.partition.eof"] = "true";  // the EOF event's offset is the position past trailing gaps
    props["auto.offset.reset"] = "error";    // never skip records silently
    if (!props.count("allow.auto.create.topics")) props["allow.auto.create.topics"] = "false";
    // Archive reads a backlog as fast as it can: fetch larger pieces than
    // librdkafka's defaults (1 MiB per partition per fetch), so one round trip
    // feeds every partition's writer. -X still wins; memory stays bounded by
    // queued.max.messages.kbytes (64 MiB).
    if (!props.count("max.partition.fetch.bytes")) props["max.partition.fetch.bytes"] = "4194304";
    // (fetch.max.bytes must stay below receive.message.max.bytes: left alone when that is set.)
    if (!props.count("fetch.max.bytes") && !props.count("receive.message.max.bytes")) {
      props["fetch.max.bytes"] = "67108864";
    }
    if (!props.count("log_level")) props["log_level"] = log::Verbose() ? "7" : "3";

    handle_ = std::make_shared<Handle>();
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    for (const auto& [k, v] : props) {
      Status st = ki::Configure(conf, k, v);
      if (!st.ok()) {
        rd_kafka_conf_destroy(conf);
        return st;
      }
    }
    rd_kafka_conf_set_opaque(conf, &handle_->errors);
    ki::SetLogCallbacks(conf);
    rd_kafka_conf_set_error_cb(conf, [](rd_kafka_t*, int err, const char* reason, void* opaque) {
      ki::NoteError(static_cast<ClientErrors*>(opaque), err, reason);
    });
    rd_kafka_conf_set_offset_commit_cb(
        conf, [](rd_kafka_t*, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* offsets, void*) {
          if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET) return;
          log::Warn(
              "committing offsets to the consumer group failed (monitoring only; the table holds the "
              "archived offsets): {}",
              rd_kafka_err2str(err));
        });
    char err[512];
    handle_->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
    if (!handle_->rk) {
      rd_kafka_conf_destroy(conf);
      return Status::Invalid("cannot create a Kafka consumer for '{}': {}", kafka.brokers, err);
    }
    rk_ = handle_->rk;

    // The topic's partitions.
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    bool interrupted = false;
    rd_kafka_resp_err_t merr =
        ki::SlicedMetadata(rk_, rkt, &md, options_.timeout_ms, &stop_watch_, &interrupted, &handle_->errors);
    rd_kafka_topic_destroy(rkt);
    if (interrupted) return ki::Interrupted(kafka.brokers, "metadata for topic " + topic);
    if (merr != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ki::BrokerError(kafka.brokers, merr, "metadata for topic " + topic, handle_->errors.Describe());
    }
    rd_kafka_resp_err_t terr = RD_KAFKA_RESP_ERR_NO_ERROR;
    const std::set<int32_t> all = PartitionsIn(md, topic, &terr);
    rd_kafka_metadata_destroy(md);
    if (terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || (terr == RD_KAFKA_RESP_ERR_NO_ERROR && all.empty())) {
      return Status::NotFound("topic '{}' does not exist on brokers '{}'", topic, kafka.brokers);
    }
    if (terr != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ki::BrokerError(kafka, terr, "metadata for topic " + topic,
                             {"DESCRIBE", ki::Permission::Resource::kTopic, topic}, handle_->errors.Describe());
    }
    std::vector<int32_t> chosen(all.begin(), all.end());
    if (!options_.partitions.empty()) {
      chosen.clear();
      for (int32_t p : options_.partitions) {
        if (!all.count(p)) {
          return Status::Invalid("--partitions: topic '{}' has no partition {} (it has {} partitions, 0-{})", topic, p,
                                 all.size(), all.empty() ? 0 : *all.rbegin());
        }
        chosen.push_back(p);
      }
      std::sort(chosen.begin(), chosen.end());
      chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    }

    // Start and stop offsets. A read_committed consumer's ListOffsets
    // (rd_kafka_query_watermark_offsets sends the handle's isolation level)
    // answers the last stable offset as the high watermark.
    for (int32_t p : chosen) {
      int64_t low = 0, high = 0;
      RETURN_NOT_OK(Watermarks(p, &low, &high));
      int64_t start = 0;
      auto resumed = options_.resume.find(p);
      if (resumed != options_.resume.end()) {
        start = resumed->second;
        if (start < low) {
          return Status::Aborted(
              "topic '{}' partition {}: the table resumes at offset {}, but the partition now starts at offset {}: "
              "retention deleted offsets {}..{} before they were archived, and archiving on would leave a silent "
              "gap. Archive into a new table to accept the loss (and raise the topic's retention.ms so archive "
              "keeps up)",
              options_.topic, p, start, low, start, low - 1);
        }
        if (start > high) {
          return Status::Aborted(
              "topic '{}' partition {}: the table resumes at offset {}, but the partition ends at offset {} (was "
              "the topic deleted and re-created?): archive it into a new table",
              options_.topic, p, start, high);
        }
      } else {
        switch (options_.from.kind) {
          case FromOffset::Kind::kEarliest:
            start = low;
            break;
          case FromOffset::Kind::kLatest:
            start = high;
            break;
          case FromOffset::Kind::kOffset:
            if (options_.from.offset > high) {
              return Status::Invalid("--from-offset {}: topic '{}' partition {} ends at offset {}",
                                     options_.from.offset, options_.topic, p, high);
            }
            start = std::max(options_.from.offset, low);
            if (start != options_.from.offset) {
              log::Info(
                  "topic '{}' partition {} starts at offset {} (retention deleted the records before it); "
                  "archiving from there instead of --from-offset {}",
                  options_.topic, p, low, options_.from.offset);
            }
            break;
        }
      }
      start_[p] = start;
      next_[p] = start;
      if (!options_.follow) stop_[p] = high;
    }

    // From here on consumer polls serve the error and commit callbacks
    // (rd_kafka_poll, used by the waits above, may no longer be called).
    rd_kafka_poll_set_consumer(rk_);
    // Assign the partitions with something to read.
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(chosen.size()));
    for (int32_t p : chosen) {
      if (!options_.follow && start_[p] >= stop_[p]) continue;
      rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = start_[p];
      active_.insert(p);
    }
    next_partition_check_ms_ = ki::SteadyMs() + options_.partition_check_ms;
    rd_kafka_resp_err_t aerr = rd_kafka_assign(rk_, list);
    rd_kafka_topic_partition_list_destroy(list);
    if (aerr != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return ki::BrokerError(kafka.brokers, aerr, "assigning partitions of topic " + topic, handle_->errors.Describe());
    }
    return CheckAccess(chosen);
  }

  const std::map<int32_t, int64_t>& start_offsets() const override { return start_; }
  const std::map<int32_t, int64_t>& stop_offsets() const override { return stop_; }

  Status Poll(records::RecordBatch* out, int64_t max_bytes, std::chrono::milliseconds timeout) override {
    const int64_t deadline = ki::SteadyMs() + timeout.count();
    if (options_.follow && options_.partitions.empty()) DiscoverPartitions();
    auto holder = std::make_shared<Messages>();
    holder->handle = handle_;
    int64_t bytes = 0;
    Status status;
    while (bytes < max_bytes && !Done()) {
      if (stop_watch_.stopping()) break;  // the caller commits what it has
      const int64_t left = deadline - ki::SteadyMs();
      if (left <= 0) break;
      rd_kafka_message_t* m = first_ ? std::exchange(first_, nullptr)
                                     : rd_kafka_consumer_poll(rk_, static_cast<int>(std::min<int64_t>(left, kSliceMs)));
      if (!m) continue;
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // Everything before the EOF offset was delivered: what follows the
        // last record (commit markers, aborted transactions) is a gap.
        Advance(m->partition, m->offset);
        rd_kafka_message_destroy(m);
        continue;
      }
      if (m->err) {
        status = MessageError(m);
        rd_kafka_message_destroy(m);
        if (!status.ok()) break;
        continue;
      }
      const int32_t p = m->partition;
      auto stop = stop_.find(p);
      if ((stop != stop_.end() && m->offset >= stop->second) || !next_.count(p) || m->offset < next_[p]) {
        // Past the stop offset: the partition is done (what follows is for the next run).
        if (stop != stop_.end() && m->offset >= stop->second) Advance(p, stop->second);
        rd_kafka_message_destroy(m);
        continue;
      }
      holder->list.push_back(m);
      bytes += Append(m, out);
      next_[p] = m->offset + 1;
      if (stop != stop_.end() && next_[p] >= stop->second) Finished(p);
    }
    if (!holder->list.empty()) out->keepalive.push_back(std::move(holder));
    return status;
  }

  std::map<int32_t, int64_t> end_offsets() const override {
    std::map<int32_t, int64_t> out;
    for (int32_t p : active_) {
      int64_t low = -1, high = -1;
      if (rd_kafka_get_watermark_offsets(rk_, options_.topic.c_str(), p, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR &&
          high >= 0) {
        out[p] = high;
      }
    }
    return out;
  }

  std::map<int32_t, int64_t> positions() const override {
    std::map<int32_t, int64_t> out = next_;
    if (active_.empty()) return out;
    // The consumer's position is past control records and aborted
    // transactions it skipped after the last record returned.
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(active_.size()));
    for (int32_t p : active_) rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p);
    if (rd_kafka_position(rk_, list) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (int i = 0; i < list->cnt; ++i) {
        const auto& e = list->elems[i];
        if (e.err || e.offset < 0) continue;
        int64_t pos = e.offset;
        auto stop = stop_.find(e.partition);
        if (stop != stop_.end()) pos = std::min(pos, stop->second);
        auto& n = out[e.partition];
        n = std::max(n, pos);
      }
    }
    rd_kafka_topic_partition_list_destroy(list);
    return out;
  }

  bool Done() const override {
    if (options_.follow) return false;
    for (const auto& [p, stop] : stop_) {
      if (next_.at(p) < stop) return false;
    }
    return true;
  }

  // Before anything is archived (a table created, a snapshot committed):
  // the brokers let this principal READ the topic (its first fetch answers:
  // the first record or end of a partition is kept for Poll) and, with
  // --group, use the consumer group the archived offsets are committed to.
  Status CheckAccess(const std::vector<int32_t>& chosen) {
    if (!options_.group_id.empty() && !chosen.empty()) {
      rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(chosen.size()));
      for (int32_t p : chosen) rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p);
      rd_kafka_resp_err_t err = rd_kafka_committed(rk_, list, static_cast<int>(options_.timeout_ms));
      for (int i = 0; err == RD_KAFKA_RESP_ERR_NO_ERROR && i < list->cnt; ++i) err = list->elems[i].err;
      rd_kafka_topic_partition_list_destroy(list);
      if (ki::IsAuthorizationError(err)) {
        const bool group = err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED;
        return ki::NotAuthorized(
            options_.kafka, err,
            {group ? "READ" : "DESCRIBE", group ? ki::Permission::Resource::kGroup : ki::Permission::Resource::kTopic,
             group ? options_.group_id : options_.topic,
             group ? "--group: archive commits the archived offsets to it" : ""});
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        log::Warn("consumer group '{}': its committed offsets could not be read ({}); archiving goes on",
                  options_.group_id, rd_kafka_err2str(err));
      }
    }
    if (active_.empty()) return Status::OK();
    const int64_t deadline = ki::SteadyMs() + options_.timeout_ms;
    while (!first_ && ki::SteadyMs() < deadline && !stop_watch_.stopping()) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, kSliceMs);
      if (!m) continue;
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF || !m->err) {
        first_ = m;  // the fetch was allowed: Poll takes it from here
        break;
      }
      Status st = MessageError(m);
      rd_kafka_message_destroy(m);
      RETURN_NOT_OK(st);
    }
    return Status::OK();
  }

  void CommitGroupOffsets(const std::map<int32_t, int64_t>& next) override {
    if (options_.group_id.empty() || next.empty()) return;
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(next.size()));
    for (const auto& [p, offset] : next) {
      rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p)->offset = offset;
    }
    // Asynchronous: a slow coordinator never holds up archiving; the result
    // reaches the offset-commit callback (a warning on failure).
    rd_kafka_resp_err_t err = rd_kafka_commit(rk_, list, 1);
    rd_kafka_topic_partition_list_destroy(list);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      log::Warn("committing offsets to consumer group '{}' failed (monitoring only): {}", options_.group_id,
                rd_kafka_err2str(err));
    }
  }

 private:
  // Under --follow (every partition, no --partitions), partitions added to
  // the topic while archiving (kafka-topics --alter, the Admin API's
  // CreatePartitions) are archived too, from their earliest offset: the
  // topic's metadata is asked every partition_check_ms. Errors are logged and
  // the check repeated at the next interval; nothing here stops archiving.
  void DiscoverPartitions() {
    const int64_t now = ki::SteadyMs();
    if (now < next_partition_check_ms_) return;
    next_partition_check_ms_ = now + options_.partition_check_ms;
    const int wait_ms = static_cast<int>(std::min<int64_t>(options_.partition_check_ms, 2000));
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, options_.topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt, &md, wait_ms);
    rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      log::Debug("topic '{}': checking for new partitions: {} (checked again in {} ms)", options_.topic,
                 rd_kafka_err2str(err), options_.partition_check_ms);
      return;
    }
    rd_kafka_resp_err_t terr = RD_KAFKA_RESP_ERR_NO_ERROR;
    std::vector<int32_t> added;
    for (int32_t p : PartitionsIn(md, options_.topic, &terr)) {
      if (!start_.count(p)) added.push_back(p);
    }
    rd_kafka_metadata_destroy(md);
    if (terr != RD_KAFKA_RESP_ERR_NO_ERROR || added.empty()) return;
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(added.size()));
    std::vector<int32_t> assigned;
    for (int32_t p : added) {
      int64_t low = 0, high = 0;
      err = rd_kafka_query_watermark_offsets(rk_, options_.topic.c_str(), p, &low, &high, wait_ms);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        log::Debug("topic '{}' partition {} appeared; its offsets: {} (asked again in {} ms)", options_.topic, p,
                   rd_kafka_err2str(err), options_.partition_check_ms);
        continue;
      }
      rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p)->offset = low;
      start_[p] = low;
      next_[p] = low;
      assigned.push_back(p);
    }
    if (list->cnt > 0) {
      rd_kafka_error_t* e = rd_kafka_incremental_assign(rk_, list);
      if (e) {
        // The whole assignment again, each partition at its next offset.
        log::Debug("topic '{}': incremental assignment refused ({}); assigning every partition again", options_.topic,
                   rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        rd_kafka_topic_partition_list_t* all = rd_kafka_topic_partition_list_new(static_cast<int>(next_.size()));
        for (int32_t p : active_) rd_kafka_topic_partition_list_add(all, options_.topic.c_str(), p)->offset = next_[p];
        for (int32_t p : assigned) rd_kafka_topic_partition_list_add(all, options_.topic.c_str(), p)->offset = next_[p];
        err = rd_kafka_assign(rk_, all);
        rd_kafka_topic_partition_list_destroy(all);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          log::Warn("topic '{}': assigning new partitions failed ({}); tried again in {} ms", options_.topic,
                    rd_kafka_err2str(err), options_.partition_check_ms);
          for (int32_t p : assigned) {
            start_.erase(p);
            next_.erase(p);
          }
          assigned.clear();
        }
      }
    }
    rd_kafka_topic_partition_list_destroy(list);
    for (int32_t p : assigned) {
      active_.insert(p);
      log::Info("topic '{}' partition {} appeared while following: archiving it from its earliest offset {}",
                options_.topic, p, start_[p]);
    }
  }

  Status Watermarks(int32_t p, int64_t* low, int64_t* high) {
    const int64_t deadline = ki::SteadyMs() + options_.timeout_ms;
    while (true) {
      const int64_t left = deadline - ki::SteadyMs();
      rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk_, options_.topic.c_str(), p, low, high,
                                                                 static_cast<int>(std::clamp<int64_t>(left, 1, 1000)));
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
      const bool retriable = err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
                             err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                             err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION;
      const std::string what = fmt::format("offsets of topic {} partition {}", options_.topic, p);
      if (!retriable || ki::SteadyMs() >= deadline) {
        return ki::BrokerError(options_.kafka, err, what,
                               {"DESCRIBE", ki::Permission::Resource::kTopic, options_.topic},
                               handle_->errors.Describe());
      }
      if (stop_watch_.stopping()) return ki::Interrupted(options_.kafka.brokers, what);
      rd_kafka_poll(rk_, 0);
    }
  }

  // Moves partition `p`'s next offset to `offset` (when further), bounded by its stop offset.
  void Advance(int32_t p, int64_t offset) {
    auto it = next_.find(p);
    if (it == next_.end() || offset < 0) return;
    auto stop = stop_.find(p);
    if (stop != stop_.end()) offset = std::min(offset, stop->second);
    it->second = std::max(it->second, offset);
    if (stop != stop_.end() && it->second >= stop->second) Finished(p);
  }

  // A partition reached its stop offset: no more fetching for it.
  void Finished(int32_t p) {
    if (!active_.erase(p)) return;
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p);
    rd_kafka_pause_partitions(rk_, list);
    rd_kafka_topic_partition_list_destroy(list);
  }

  // A consumer error event: fatal ones end the run, others (connection
  // trouble librdkafka retries) are logged.
  Status MessageError(const rd_kafka_message_t* m) {
    const std::string where =
        m->partition >= 0 ? fmt::format("topic '{}' partition {}", options_.topic, m->partition) : options_.topic;
    switch (m->err) {
      case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
      case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
        return Status::Aborted(
            "{}: offset {} is out of range (retention deleted records before they were "
            "archived?): {}",
            where, m->offset, rd_kafka_message_errstr(m));
      case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
      case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
      case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
        return Status::NotFound("{} no longer exists on brokers '{}': {}", where, options_.kafka.brokers,
                                rd_kafka_message_errstr(m));
      case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
        return ki::NotAuthorized(options_.kafka, m->err, {"READ", ki::Permission::Resource::kTopic, options_.topic});
      case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
        // Without --group the group (librdkafka needs one to assign) is not
        // used: the principal needs no ACL on it.
        if (options_.group_id.empty()) break;
        return ki::NotAuthorized(options_.kafka, m->err, {"READ", ki::Permission::Resource::kGroup, options_.group_id});
      default:
        break;
    }
    char reason[512];
    if (rd_kafka_fatal_error(rk_, reason, sizeof(reason)) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::IOError("Kafka consumer on '{}' failed: {}", options_.kafka.brokers, reason);
    }
    log::Debug("reading {}: {}", where, rd_kafka_message_errstr(m));
    return Status::OK();
  }

  // Adds the record viewing `m` to `out`; returns its bytes.
  static int64_t Append(const rd_kafka_message_t* m, records::RecordBatch* out) {
    records::Record r;
    r.partition = m->partition;
    r.offset = m->offset;
    rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    r.timestamp_ms = rd_kafka_message_timestamp(m, &type);
    if (type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE) r.timestamp_ms = -1;
    r.timestamp_type = type == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? records::TimestampType::kLogAppendTime
                                                                  : records::TimestampType::kCreateTime;
    int64_t bytes = 0;
    if (m->key) {
      r.key = std::string_view(static_cast<const char*>(m->key), m->key_len);
      bytes += static_cast<int64_t>(m->key_len);
    }
    if (m->payload) {
      r.value = std::string_view(static_cast<const char*>(m->payload), m->len);
      bytes += static_cast<int64_t>(m->len);
    }
    r.header_begin = static_cast<uint32_t>(out->headers.size());
    rd_kafka_headers_t* hdrs = nullptr;
    // The headers are parsed into the message and live as long as it does.
    if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
      const char* name;
      const void* val;
      size_t size;
      for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
        records::Header h{std::string_view(name), std::nullopt};
        if (val) h.value = std::string_view(static_cast<const char*>(val), size);
        bytes += static_cast<int64_t>(h.key.size() + (val ? size : 0));
        out->headers.push_back(h);
      }
    }
    r.header_count = static_cast<uint32_t>(out->headers.size() - r.header_begin);
    out->records.push_back(r);
    return bytes;
  }

  SourceOptions options_;
  StopWatch stop_watch_;
  std::shared_ptr<Handle> handle_;
  rd_kafka_t* rk_ = nullptr;
  std::map<int32_t, int64_t> start_, stop_, next_;
  std::set<int32_t> active_;  // assigned and not at their stop offset
  int64_t next_partition_check_ms_ = 0;
  rd_kafka_message_t* first_ = nullptr;  // polled by CheckAccess, not yet by Poll
};

}  // namespace

Result<FromOffset> FromOffset::Parse(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  FromOffset out;
  if (lower == "earliest") {
    out.kind = Kind::kEarliest;
    return out;
  }
  if (lower == "latest") {
    out.kind = Kind::kLatest;
    return out;
  }
  int64_t n = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || ptr != end || n < 0 || !std::isdigit(static_cast<unsigned char>(text[0]))) {
    return Status::Invalid("--from-offset '{}': expected earliest, latest or an offset (an integer >= 0)", text);
  }
  out.kind = Kind::kOffset;
  out.offset = n;
  return out;
}

Result<std::unique_ptr<KafkaSource>> KafkaSource::Make(const SourceOptions& options) {
  if (options.topic.empty()) return Status::Invalid("archive needs a topic (--topic)");
  auto source = std::make_unique<KafkaSourceImpl>(options);
  RETURN_NOT_OK(source->Init());
  return std::unique_ptr<KafkaSource>(std::move(source));
}

}  // namespace thaw::archive
