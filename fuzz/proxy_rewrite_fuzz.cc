// libFuzzer target: an upstream response the tiered proxy rewrites
// (merged/broker_map.h, merged/api_versions.h) before a client sees it. The
// first two bytes pick the API (Metadata, FindCoordinator, DescribeCluster,
// ApiVersions) and version; the rest is the body. Whatever decodes must be
// rewritten without crashing, name only Thaw's host afterwards, and
// re-encode to bytes that decode again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "thaw/merged/api_versions.h"
#include "thaw/merged/broker_map.h"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int which = data[0] % 4;
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
