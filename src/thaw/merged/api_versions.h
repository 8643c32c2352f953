// What the tiered proxy tells clients it speaks (ApiVersions): the
// upstream's ranges, narrowed where Thaw reads or rewrites the messages.
//
//   - APIs Thaw decodes (Metadata, FindCoordinator, DescribeCluster,
//     ListOffsets, ApiVersions): intersected with the generated codec's
//     ranges, so every response Thaw rewrites is one it can decode.
//   - Fetch at most v12: topics by name (v13+ name them by id, which Thaw
//     could map only for topics whose Metadata it saw), and no KIP-951
//     node_endpoints (v16+), which would name the upstream's brokers.
//   - Produce at most v9: v10+ responses carry node_endpoints too.
//   - SaslHandshake at least v1: after v0 the SASL tokens travel unframed.
//   - Dropped: the APIs whose responses name brokers Thaw does not rewrite
//     (DescribeQuorum, the share-group APIs of KIP-932); clients fall back to
//     the others.
// An API outside these rules passes through with the upstream's range.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "thaw/kafka/protocol/messages.h"

namespace thaw::merged {

// The range Thaw lets through for `api_key` given the upstream's; nullopt to
// drop the API.
std::optional<std::pair<int16_t, int16_t>> NarrowedRange(int16_t api_key, int16_t upstream_min, int16_t upstream_max);

// Applies NarrowedRange to every API of an upstream ApiVersions response.
void NarrowApiVersions(kafka::msg::ApiVersionsResponse& resp);

}  // namespace thaw::merged
