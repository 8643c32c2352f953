// `:cold_suffix` (serve --upstream): each tiered topic's Iceberg-only view
// under NAME + suffix, served by Thaw itself. The view's partitions are led
// by a broker of Thaw's own (kColdNodeId, on --broker-ports' last port) that
// Metadata lists; Fetch and ListOffsets of a view are answered from its table
// (tiered_requests.cc), and its group offsets are committed in the upstream
// under the base topic's name (the offsets are the same offsets).
//
// The upstream still decides who may read a view: every request naming a
// view carries a probe of its base topic (the same partition, asking no
// bytes), and the upstream's error for the probe (authorization above all)
// is the view's. So each request is rewritten in three steps:
//
//   auto plan = PrepareFetch(views, forwarded);    // views -> probes of the base
//   ... forward, get resp ...
//   MoveProbeAnswers(plan, resp);                   // probe answers -> the view's entries
//
// and the same for ListOffsets and Metadata. Pure request/response surgery;
// the table reads are the caller's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/server/topic_log.h"

namespace thaw::merged {

// The node id of Thaw's own broker in Metadata (far from any real broker's).
inline constexpr int32_t kColdNodeId = 2'000'000'000;

class ColdViews {
 public:
  ColdViews() = default;
  // view name -> base (tiered) topic name; host/port: Thaw's own broker's
  // address as clients reach it.
  ColdViews(std::map<std::string, std::string> base_of, std::string host, int32_t port)
      : base_of_(std::move(base_of)), host_(std::move(host)), port_(port) {}

  bool empty() const { return base_of_.empty(); }
  // The base topic of a view; null when `name` is no view.
  const std::string* BaseOf(const std::string& name) const;
  const std::map<std::string, std::string>& all() const { return base_of_; }
  const std::string& host() const { return host_; }
  int32_t port() const { return port_; }

 private:
  std::map<std::string, std::string> base_of_;
  std::string host_;
  int32_t port_ = 0;
};

// ---------------------------------------------------------------- Metadata

struct MetadataPlan {
  bool request_changed = false;       // views were replaced in the request
  bool all_topics = false;            // the client asked for every topic
  std::vector<std::string> views;     // views the client named
  std::set<std::string> added_bases;  // base topics added only as probes
};

// Every Metadata answer is finished (Thaw's broker is in each); views named
// in `req` are replaced by their base topics (request_changed).
MetadataPlan PrepareMetadata(const ColdViews& views, int16_t version, kafka::msg::MetadataRequest& req);
// Adds the views' entries (led by kColdNodeId, partitions as the table has
// them, the base's error when the upstream refused it) and Thaw's broker;
// removes the probe-only base topics.
void FinishMetadata(const ColdViews& views, const MetadataPlan& plan, kafka::server::TopicLogs& tables,
                    kafka::msg::MetadataResponse& resp);

// ---------------------------------------------------------------- Fetch, ListOffsets

struct ProbePlan {
  struct Probe {
    std::string view, base;
    int32_t partition = 0;
    bool added = false;  // the probe was added (not a partition the client asked itself)
  };
  std::vector<Probe> probes;
  bool only_views = false;  // every partition of the request is a view's
};

// Moves the views' partitions out of `forwarded` and asks their base topics'
// same partitions instead, with partition_max_bytes 0 (and no wait when the
// request holds views only).
ProbePlan PrepareFetch(const ColdViews& views, kafka::msg::FetchRequest& forwarded);
// Each probe's answer becomes the view's partition (its error code only: the
// caller fills it from the table); probes the client did not ask go.
void MoveProbeAnswers(const ProbePlan& plan, kafka::msg::FetchResponse& resp);

ProbePlan PrepareListOffsets(const ColdViews& views, kafka::msg::ListOffsetsRequest& forwarded);
void MoveProbeAnswers(const ProbePlan& plan, kafka::msg::ListOffsetsResponse& resp);

// ---------------------------------------------------------------- group offsets

// A group's offsets of a view are committed and fetched under its base
// topic's name in the upstream (they are the same offsets). Each returns the
// views it renamed (none: the request is untouched); a view whose base the
// same request also names is left as it is (the upstream refuses it).
std::vector<std::string> RenameViewsToBases(const ColdViews& views, kafka::msg::OffsetCommitRequest& req);
std::vector<std::string> RenameViewsToBases(const ColdViews& views, kafka::msg::OffsetFetchRequest& req);
// The way back: the renamed views' bases get the views' names again.
void RenameBasesToViews(const ColdViews& views, const std::vector<std::string>& renamed,
                        kafka::msg::OffsetCommitResponse& resp);
void RenameBasesToViews(const ColdViews& views, const std::vector<std::string>& renamed,
                        kafka::msg::OffsetFetchResponse& resp);

// Whether a request names a view.
bool NamesView(const ColdViews& views, const kafka::msg::FetchRequest& req);
bool NamesView(const ColdViews& views, const kafka::msg::ListOffsetsRequest& req);

}  // namespace thaw::merged
