// libFuzzer target: an upstream response the tiered proxy rewrites
// (merged/broker_map.h, merged/api_versions.h) before a client sees it, and
// a client's request (and its upstream answer) that the `:cold_suffix` views
// rewrite (merged/cold_views.h). The first two bytes pick the case and
// version; the rest is the body. Whatever decodes must be rewritten without
// crashing, name only Thaw's host afterwards (brokers) or never the view
// upstream (requests), and re-encode to bytes that decode again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "thaw/merged/api_versions.h"
#include "thaw/merged/broker_map.h"
#include "thaw/merged/cold_views.h"

namespace {

using thaw::kafka::WireReader;
using thaw::kafka::WireWriter;
namespace msg = thaw::kafka::msg;

template <typename Resp, typename Rewrite>
void Check(std::string_view body, int16_t version, Rewrite rewrite) {
  if (version < Resp::kMinVersion || version > Resp::kMaxVersion) return;
  WireReader r(body);
  Resp resp;
  if (!resp.Read(r, version).ok()) return;
  rewrite(resp);
  WireWriter w;
  resp.Write(w, version);
  if (!w.status().ok()) return;
  Resp again;
  WireReader r2(w.data());
  if (!again.Read(r2, version).ok() || !r2.done()) std::abort();
}

// No tables: the views' answers are built from nothing but the upstream's.
class NoTables : public thaw::kafka::server::TopicLogs {
 public:
  std::shared_ptr<thaw::kafka::server::TopicLog> Find(std::string_view) const override { return nullptr; }
  std::shared_ptr<thaw::kafka::server::TopicLog> FindById(const thaw::kafka::Uuid&) const override { return nullptr; }
  std::vector<std::shared_ptr<thaw::kafka::server::TopicLog>> All() const override { return {}; }
  thaw::Status RefreshAll() override { return thaw::Status::OK(); }
};

// A client request with views rewritten: the upstream never sees a view.
template <typename Req, typename Rewrite>
void CheckRequest(std::string_view body, int16_t version, Rewrite rewrite) {
  Check<Req>(body, version, rewrite);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int which = data[0] % 10;
  const auto version = static_cast<int16_t>(data[1] % 20);
  std::string_view body(reinterpret_cast<const char*>(data + 2), size - 2);
  thaw::merged::BrokerMap map("thaw.local", {19000, 19099});
  switch (which) {
    case 0:
      Check<msg::MetadataResponse>(body, version, [&](msg::MetadataResponse& r) {
        map.RewriteMetadata(r);
        for (const auto& b : r.brokers) {
          if (b.host != "thaw.local") std::abort();
        }
      });
      break;
    case 1:
      Check<msg::FindCoordinatorResponse>(body, version, [&](msg::FindCoordinatorResponse& r) {
        map.RewriteFindCoordinator(r);
      });
      break;
    case 2:
      Check<msg::DescribeClusterResponse>(body, version, [&](msg::DescribeClusterResponse& r) {
        map.RewriteDescribeCluster(r);
        for (const auto& b : r.brokers) {
          if (b.host != "thaw.local") std::abort();
        }
      });
      break;
    case 4: {
      const thaw::merged::ColdViews views({{"orders.cold", "orders"}}, "thaw.local", 19099);
      CheckRequest<msg::MetadataRequest>(body, version, [&](msg::MetadataRequest& r) {
        auto plan = thaw::merged::PrepareMetadata(views, version, r);
        if (r.topics) {
          for (const auto& t : *r.topics) {
            if (t.name == "orders.cold") std::abort();
          }
        }
        msg::MetadataResponse resp;
        NoTables tables;
        thaw::merged::FinishMetadata(views, plan, tables, resp);
      });
      break;
    }
    case 5: {
      const thaw::merged::ColdViews views({{"orders.cold", "orders"}}, "thaw.local", 19099);
      CheckRequest<msg::FetchRequest>(body, version, [&](msg::FetchRequest& r) {
        auto plan = thaw::merged::PrepareFetch(views, r);
        for (const auto& t : r.topics) {
          if (t.topic == "orders.cold") std::abort();
        }
        msg::FetchResponse resp;  // the upstream answers the probes (some)
        for (const auto& t : r.topics) {
          auto& rt = resp.responses.emplace_back();
          rt.topic = t.topic;
          for (size_t i = 0; i < t.partitions.size(); i += 2) rt.partitions.emplace_back().partition_index = t.partitions[i].partition;
        }
        thaw::merged::MoveProbeAnswers(plan, resp);
      });
      break;
    }
    case 6: {
      const thaw::merged::ColdViews views({{"orders.cold", "orders"}}, "thaw.local", 19099);
      CheckRequest<msg::ListOffsetsRequest>(body, version, [&](msg::ListOffsetsRequest& r) {
        auto plan = thaw::merged::PrepareListOffsets(views, r);
        msg::ListOffsetsResponse resp;
        for (const auto& t : r.topics) {
          auto& rt = resp.topics.emplace_back();
          rt.name = t.name;
          for (const auto& p : t.partitions) rt.partitions.emplace_back().partition_index = p.partition_index;
        }
        thaw::merged::MoveProbeAnswers(plan, resp);
        for (const auto& t : r.topics) {
          if (t.name == "orders.cold") std::abort();
        }
      });
      break;
    }
    case 7: {
      const thaw::merged::ColdViews views({{"orders.cold", "orders"}}, "thaw.local", 19099);
      CheckRequest<msg::OffsetCommitRequest>(body, version, [&](msg::OffsetCommitRequest& r) {
        auto renamed = thaw::merged::RenameViewsToBases(views, r);
        msg::OffsetCommitResponse resp;
        for (const auto& t : r.topics) resp.topics.emplace_back().name = t.name;
        thaw::merged::RenameBasesToViews(views, renamed, resp);
      });
      break;
    }
    case 8: {
      const thaw::merged::ColdViews views({{"orders.cold", "orders"}}, "thaw.local", 19099);
      CheckRequest<msg::OffsetFetchRequest>(body, version, [&](msg::OffsetFetchRequest& r) {
        auto renamed = thaw::merged::RenameViewsToBases(views, r);
        msg::OffsetFetchResponse resp;
        if (r.topics) {
          for (const auto& t : *r.topics) resp.topics.emplace_back().name = t.name;
        }
        thaw::merged::RenameBasesToViews(views, renamed, resp);
      });
      break;
    }
    default:
      Check<msg::ApiVersionsResponse>(body, version, [](msg::ApiVersionsResponse& r) {
        thaw::merged::NarrowApiVersions(r);
        for (const auto& v : r.api_keys) {
          if (v.min_version > v.max_version) std::abort();
        }
      });
      break;
  }
  return 0;
}
