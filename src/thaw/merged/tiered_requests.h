// The two requests the tiered proxy answers across both tiers, on a client's
// own upstream connection (nothing else in flight on it):
//
//   Fetch        forwarded first (sessionless); each tiered partition the
//                upstream refused with OFFSET_OUT_OF_RANGE is routed by
//                tiering.h on the upstream's log start and high watermark,
//                asked on the same connection: the table's batches below the
//                log start, or, for a range neither tier holds, the upstream's
//                records from its log start (the consumer skips ahead, as
//                after compaction; the loss is logged once). Tiered
//                partitions report the merged log start. One response,
//                within max_bytes and partition_max_bytes (KIP-74).
//                With `:prefer=table`, a partition whose fetch offset the
//                table holds is forwarded with partition_max_bytes 0 (the
//                upstream still decides whether the connection may read it)
//                and answered from the table.
//   ListOffsets  forwarded; for tiered partitions earliest is the merged log
//                start and a timestamp finds the first offset at or after it
//                across both tiers; latest and max-timestamp stay the
//                upstream's.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "thaw/common/status.h"
#include "thaw/kafka/client/connection.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/server/topic_log.h"
#include "thaw/merged/cold_views.h"

namespace thaw::merged {

// Logs each lost range (offsets neither tier holds) once, and tells when a
// range has looked lost long enough to be one: a table snapshot committed
// moments before the broker's log start moved may not be loaded yet.
class LostRanges {
 public:
  static constexpr std::chrono::milliseconds kConfirmAfter{1500};
  void Report(const std::string& topic, int32_t partition, int64_t from, int64_t to, int64_t table_start,
              int64_t table_end, int64_t upstream_start);
  // True once the range of `partition` starting at the table's end `from`
  // has been seen missing for kConfirmAfter (the first sighting starts the
  // clock). Bounded: old sightings are forgotten.
  bool Confirmed(const std::string& topic, int32_t partition, int64_t from, std::chrono::steady_clock::time_point now);

 private:
  std::mutex mu_;
  std::set<std::tuple<std::string, int32_t, int64_t>> logged_;
  std::map<std::tuple<std::string, int32_t, int64_t>, std::chrono::steady_clock::time_point> seen_;
};

// The upstream's bounds of the partitions a connection was refused, as its
// last ListOffsets gave them (for one connection: not shared). A consumer
// reading the table sequentially is refused on every fetch; asking the
// bounds each time would triple its round trips. An entry is used for at
// most kMaxAge, and only for a fetch offset below its log start: log starts
// only grow, so an entry can be stale only low, and a fetch it sends to an
// offset the upstream no longer holds is refused and asked again.
class UpstreamBounds {
 public:
  static constexpr std::chrono::milliseconds kMaxAge{1000};
  static constexpr size_t kMaxEntries = 4096;
  struct Entry {
    int64_t start = -1, end = -1;
    std::chrono::steady_clock::time_point at;
  };
  const Entry* Fresh(const std::string& topic, int32_t partition, std::chrono::steady_clock::time_point now) const;
  void Put(const std::string& topic, int32_t partition, int64_t start, int64_t end,
           std::chrono::steady_clock::time_point now);

 private:
  std::map<std::pair<std::string, int32_t>, Entry> entries_;
};

struct TierContext {
  kafka::server::TopicLogs* tables = nullptr;  // tiered topics, by their upstream name
  asio::thread_pool* pool = nullptr;           // blocking table reads
  LostRanges* lost = nullptr;
  // Topics whose offsets both tiers hold are read from the table
  // (`:prefer=table`).
  std::set<std::string> prefer_table;
  // `:cold_suffix` views of the tiered topics (cold_views.h); null or empty: none.
  const ColdViews* views = nullptr;
};

// Whether a request names a tiered topic or a view of one.
bool NamesTieredTopic(const TierContext& tc, const kafka::msg::FetchRequest& req);
bool NamesTieredTopic(const TierContext& tc, const kafka::msg::ListOffsetsRequest& req);

// Both return the response body to send with the client's correlation id;
// an error means the upstream connection failed (the pair is closed).
// `list_offsets_version` is a ListOffsets version the upstream takes (for
// Fetch's own bound requests).
// `bounds`: the connection's cache of the upstream's bounds (may be null).
// The response body: the table's batches in it are referenced, not copied
// (send it with WireWriter::ForEachPiece).
asio::awaitable<Result<std::unique_ptr<kafka::WireWriter>>> TieredFetch(const TierContext& tc,
                                                                        kafka::client::Connection& upstream,
                                                                        const kafka::msg::RequestHeader& header,
                                                                        const kafka::msg::FetchRequest& req,
                                                                        int16_t list_offsets_version,
                                                                        UpstreamBounds* bounds = nullptr);
asio::awaitable<Result<std::string>> TieredListOffsets(const TierContext& tc, kafka::client::Connection& upstream,
                                                       const kafka::msg::RequestHeader& header,
                                                       const kafka::msg::ListOffsetsRequest& req);

}  // namespace thaw::merged
