#include "thaw/replay/topic_check.h"

#include <charconv>
#include <limits>

#include "thaw/records/json_row.h"

namespace thaw::replay {

namespace {

Result<std::optional<int64_t>> Long(const std::map<std::string, std::string>& configs, const std::string& name) {
  auto it = configs.find(name);
  if (it == configs.end() || it->second.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  const std::string& s = it->second;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    return Status::Corrupt("topic config {}='{}' is not an integer", name, s);
  }
  return std::optional<int64_t>(v);
}

// "about 334 days": an age, rounded.
std::string Age(int64_t ms) {
  if (ms >= 2 * 86400000ll) return fmt::format("about {} days", ms / 86400000ll);
  if (ms >= 2 * 3600000ll) return fmt::format("about {} hours", ms / 3600000ll);
  return fmt::format("about {} minutes", ms / 60000);
}

std::string Iso(int64_t ms) { return records::FormatTimestampMicros(ms * 1000) + "Z"; }

}  // namespace

std::string HumanDuration(int64_t ms) {
  if (ms < 0) return "forever";
  if (ms % 86400000 == 0 && ms >= 86400000) return std::to_string(ms / 86400000) + "d";
  if (ms % 3600000 == 0 && ms >= 3600000) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0 && ms >= 60000) return std::to_string(ms / 60000) + "min";
  if (ms % 1000 == 0 && ms >= 1000) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

Result<TopicLimits> TopicLimits::FromConfigs(const std::map<std::string, std::string>& configs) {
  TopicLimits l;
  ASSIGN_OR_RAISE(auto rms, Long(configs, "retention.ms"));
  if (rms && *rms >= 0) l.retention_ms = rms;
  ASSIGN_OR_RAISE(auto rb, Long(configs, "retention.bytes"));
  if (rb && *rb >= 0) l.retention_bytes = rb;
  if (auto it = configs.find("message.timestamp.type"); it != configs.end()) {
    l.log_append_time = it->second == "LogAppendTime";
  }
  // Kafka >= 3.6 splits the deprecated difference.max.ms into before/after.
  ASSIGN_OR_RAISE(auto diff, Long(configs, "message.timestamp.difference.max.ms"));
  ASSIGN_OR_RAISE(auto before, Long(configs, "message.timestamp.before.max.ms"));
  ASSIGN_OR_RAISE(auto after, Long(configs, "message.timestamp.after.max.ms"));
  if (!before) before = diff;
  if (!after) after = diff;
  constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();
  if (before && *before >= 0 && *before != kLongMax) l.before_max_ms = before;
  if (after && *after >= 0 && *after != kLongMax) l.after_max_ms = after;
  ASSIGN_OR_RAISE(l.max_message_bytes, Long(configs, "max.message.bytes"));
  if (auto it = configs.find("cleanup.policy"); it != configs.end()) {
    l.compacted = it->second.find("compact") != std::string::npos;
  }
  return l;
}

std::map<std::string, std::string> CreatedTopicConfigs(const std::map<std::string, std::string>& user) {
  std::map<std::string, std::string> c = {{"retention.ms", "-1"}, {"retention.bytes", "-1"}};
  for (const auto& [k, v] : user) c[k] = v;
  return c;
}

Status CheckTopic(const std::string& topic, const TopicLimits& l, const PlannedRecords& planned, TimestampMode mode,
                  bool force, int64_t now_ms, std::vector<std::string>* warnings) {
  std::vector<std::string> forceable;
  const bool original = mode == TimestampMode::kOriginal;
  if (original && l.log_append_time) {
    forceable.push_back(fmt::format(
        "topic '{}' has message.timestamp.type=LogAppendTime: the broker would replace every replayed record's "
        "original timestamp with the time it was appended. Set message.timestamp.type=CreateTime on the topic, or "
        "pass --timestamps now (the original is kept in a thaw.source.timestamp header)", topic));
  }
  if (original && l.retention_ms && planned.timestamp_range_ms) {
    const int64_t oldest = planned.timestamp_range_ms->first;
    if (oldest >= 0 && oldest < now_ms - *l.retention_ms) {
      forceable.push_back(fmt::format(
          "topic '{}' has retention.ms={} ({}) but the oldest record to replay has timestamp {} ({} old): the broker "
          "would delete replayed history minutes after it arrives. Set retention.ms=-1 on the topic "
          "(kafka-configs --alter --entity-type topics --entity-name {} --add-config retention.ms=-1), replay into a "
          "new topic with --create-topic (it keeps everything by default), or pass --timestamps now",
          topic, *l.retention_ms, HumanDuration(*l.retention_ms), Iso(oldest), Age(now_ms - oldest), topic));
    }
  }
  if (l.retention_bytes && planned.target_partitions > 0) {
    const int64_t per_partition = planned.bytes / planned.target_partitions;
    if (per_partition > *l.retention_bytes) {
      forceable.push_back(fmt::format(
          "topic '{}' has retention.bytes={} per partition but the replay sends at least {} bytes per partition (the "
          "planned files' compressed size): the broker would delete the oldest replayed records. Set "
          "retention.bytes=-1 on the topic, or replay into a new topic with --create-topic",
          topic, *l.retention_bytes, per_partition));
    }
  }
  // What the broker would reject outright: no --force helps.
  if (original && planned.timestamp_range_ms) {
    const auto [oldest, newest] = *planned.timestamp_range_ms;
    if (l.before_max_ms && oldest >= 0 && oldest < now_ms - *l.before_max_ms) {
      return Status::Invalid(
          "topic '{}' rejects records older than {} (message.timestamp.before.max.ms={}) but the oldest record to "
          "replay has timestamp {}: raise message.timestamp.before.max.ms on the topic, or pass --timestamps now",
          topic, HumanDuration(*l.before_max_ms), *l.before_max_ms, Iso(oldest));
    }
    if (l.after_max_ms && newest > now_ms + *l.after_max_ms) {
      return Status::Invalid(
          "topic '{}' rejects records more than {} in the future (message.timestamp.after.max.ms={}) but the newest "
          "record to replay has timestamp {}: raise message.timestamp.after.max.ms on the topic, or pass "
          "--timestamps now", topic, HumanDuration(*l.after_max_ms), *l.after_max_ms, Iso(newest));
    }
  }
  if (!forceable.empty()) {
    if (!force) {
      std::string msg = forceable[0];
      for (size_t i = 1; i < forceable.size(); ++i) msg += "; also " + forceable[i];
      return Status::Invalid("{}; or pass --force to replay anyway", msg);
    }
    for (auto& w : forceable) warnings->push_back(std::move(w));
  }
  return Status::OK();
}

Status CheckRecord(const std::string& topic, const TopicLimits& l, int64_t ts, int64_t size, bool null_key,
                   bool force, int64_t now_ms, int32_t sp, int64_t so) {
  if (l.compacted && null_key) {
    return Status::Invalid("record from source partition {} offset {} has a null key, which the compacted topic '{}' "
                           "(cleanup.policy=compact) rejects: replay into a topic with cleanup.policy=delete, or "
                           "exclude keyless records (--where 'key is not null')", sp, so, topic);
  }
  // Record batch and record overhead on the wire, roughly.
  if (l.max_message_bytes && size + 128 > *l.max_message_bytes) {
    return Status::Invalid("record from source partition {} offset {} ({} bytes) is larger than the broker accepts "
                           "for topic '{}' (max.message.bytes={}): raise the topic's max.message.bytes (and the "
                           "broker's message.max.bytes)", sp, so, size, topic, *l.max_message_bytes);
  }
  if (ts < 0) return Status::OK();
  if (l.before_max_ms && ts < now_ms - *l.before_max_ms) {
    return Status::Invalid("record from source partition {} offset {} has timestamp {}, older than topic '{}' accepts "
                           "(message.timestamp.before.max.ms={}): raise it on the topic, or pass --timestamps now",
                           sp, so, Iso(ts), topic, *l.before_max_ms);
  }
  if (l.after_max_ms && ts > now_ms + *l.after_max_ms) {
    return Status::Invalid("record from source partition {} offset {} has timestamp {}, further in the future than "
                           "topic '{}' accepts (message.timestamp.after.max.ms={}): raise it on the topic, or pass "
                           "--timestamps now", sp, so, Iso(ts), topic, *l.after_max_ms);
  }
  if (!force && l.retention_ms && ts < now_ms - *l.retention_ms) {
    return Status::Invalid("record from source partition {} offset {} has timestamp {}, older than topic '{}' keeps "
                           "(retention.ms={}, {}): the broker would delete it. Set retention.ms=-1 on the topic, pass "
                           "--timestamps now, or --force", sp, so, Iso(ts), topic, *l.retention_ms,
                           HumanDuration(*l.retention_ms));
  }
  return Status::OK();
}

}  // namespace thaw::replay
