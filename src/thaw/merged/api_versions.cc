#include "thaw/merged/api_versions.h"

#include <algorithm>

namespace thaw::merged {

namespace msg = kafka::msg;

namespace {


constexpr int16_t kFetchMaxByName = 12;      // v13 names topics by id
constexpr int16_t kProduceMaxNoEndpoints = 9;  // v10 adds node_endpoints
constexpr int16_t kSaslHandshakeKey = 17;
constexpr int16_t kSaslHandshakeFramed = 1;  // v0 sends the SASL tokens unframed

// Responses naming brokers Thaw does not rewrite.
bool Dropped(int16_t key) {
  switch (key) {
    case 55:  // DescribeQuorum
    case 76:  // ShareGroupHeartbeat
    case 77:  // ShareGroupDescribe
    case 78:  // ShareFetch
    case 79:  // ShareAcknowledge
      return true;
    default:
      return false;
  }
}

// Decoded and re-encoded by the proxy: the codec must know the version.
bool Decoded(int16_t key) {
  return key == msg::MetadataRequest::kApiKey || key == msg::FindCoordinatorRequest::kApiKey ||
         key == msg::DescribeClusterRequest::kApiKey || key == msg::ListOffsetsRequest::kApiKey ||
         key == msg::ApiVersionsRequest::kApiKey || key == msg::FetchRequest::kApiKey ||
         key == msg::ProduceRequest::kApiKey;
}

}  // namespace

std::optional<std::pair<int16_t, int16_t>> NarrowedRange(int16_t api_key, int16_t upstream_min, int16_t upstream_max) {
  if (Dropped(api_key)) return std::nullopt;
  int16_t lo = upstream_min, hi = upstream_max;
  if (Decoded(api_key)) {
    const kafka::ApiSpec* spec = kafka::FindApiSpec(api_key);
    if (!spec) return std::nullopt;
    const int16_t codec_max = spec->latest_version_unstable ? spec->max_version - 1 : spec->max_version;
    lo = std::max(lo, spec->min_version);
    hi = std::min(hi, codec_max);
  }
  if (api_key == msg::FetchRequest::kApiKey) hi = std::min(hi, kFetchMaxByName);
  if (api_key == msg::ProduceRequest::kApiKey) hi = std::min(hi, kProduceMaxNoEndpoints);
  // After SaslHandshake v0 the client sends raw SASL tokens, not Kafka
  // frames, which the proxy could not pass on frame by frame; v1 sends them
  // in SaslAuthenticate requests (KIP-152).
  if (api_key == kSaslHandshakeKey) lo = std::max(lo, kSaslHandshakeFramed);
  if (hi < lo) return std::nullopt;
  return std::make_pair(lo, hi);
}

void NarrowApiVersions(msg::ApiVersionsResponse& resp) {
  std::vector<msg::ApiVersionsResponse::ApiVersion> kept;
  kept.reserve(resp.api_keys.size());
  for (auto v : resp.api_keys) {
    auto range = NarrowedRange(v.api_key, v.min_version, v.max_version);
    if (!range) continue;
    v.min_version = range->first;
    v.max_version = range->second;
    kept.push_back(v);
  }
  resp.api_keys = std::move(kept);
}

}  // namespace thaw::merged
