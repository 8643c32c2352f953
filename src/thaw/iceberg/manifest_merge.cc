#include "thaw/iceberg/manifest_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "thaw/iceberg/manifest_writer.h"

namespace thaw::iceberg {

namespace {

std::optional<int64_t> PositiveProperty(const TableMetadata& md, const std::string& key) {
  const std::string v = md.Property(key);
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || n < 1) return std::nullopt;
  return n;
}

}  // namespace

ManifestMergeOptions ManifestMergeOptions::FromProperties(const TableMetadata& md) {
  ManifestMergeOptions o;
  std::string enabled = md.Property("commit.manifest-merge.enabled", "true");
  std::transform(enabled.begin(), enabled.end(), enabled.begin(), [](unsigned char c) { return std::tolower(c); });
  o.enabled = enabled != "false";
  if (auto n = PositiveProperty(md, "commit.manifest.min-count-to-merge")) o.min_count = *n;
  if (auto n = PositiveProperty(md, "commit.manifest.target-size-bytes")) o.target_bytes = *n;
  return o;
}

bool MergeCandidate(const ManifestFile& m, const TableMetadata& md, const ManifestMergeOptions& options) {
  return m.content == ManifestContent::kData && m.spec_id == md.default_spec_id && m.length < options.target_bytes;
}

Result<std::vector<ManifestFile>> MergeManifests(storage::FileIO& io, const TableMetadata& md, int64_t snapshot_id,
                                                 const std::vector<ManifestFile>& manifests,
                                                 const std::string& location_prefix,
                                                 const ManifestMergeOptions& options) {
  if (!options.enabled || md.format_version != 2) return manifests;
  const PartitionSpec* spec = md.SpecById(md.default_spec_id);
  if (!spec) return manifests;
  auto small = [&](const ManifestFile& m) { return MergeCandidate(m, md, options); };
  int64_t count = 0;
  for (const auto& m : manifests) count += small(m) ? 1 : 0;
  if (count < options.min_count) return manifests;

  std::vector<ManifestFile> out;
  std::vector<ManifestEntry> bin;
  int64_t bin_bytes = 0;
  int written = 0;
  auto flush = [&]() -> Status {
    if (bin.empty()) return Status::OK();
    const std::string location = fmt::format("{}-m{}.avro", location_prefix, ++written);
    auto m = WriteManifest(io, location, md, *spec, snapshot_id, bin);
    if (!m.ok()) return m.status().WithContext(fmt::format("merging manifests into {}", location));
    out.push_back(std::move(*m));
    bin.clear();
    bin_bytes = 0;
    return Status::OK();
  };
  for (const auto& m : manifests) {
    if (!small(m) || m.added_snapshot_id == snapshot_id) {
      out.push_back(m);
      continue;
    }
    if (!m.may_have_live_files()) continue;  // only DELETED entries: nothing to carry
    ASSIGN_OR_RAISE(auto entries, ReadManifest(io, md, m));
    for (auto& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      e.status = EntryStatus::kExisting;
      bin.push_back(std::move(e));
    }
    bin_bytes += m.length;
    if (bin_bytes >= options.target_bytes) RETURN_NOT_OK(flush());
  }
  RETURN_NOT_OK(flush());
  return out;
}

}  // namespace thaw::iceberg
