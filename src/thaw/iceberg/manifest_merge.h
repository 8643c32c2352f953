// Merging a snapshot's small data manifests, as Iceberg Java's merge append
// does (MergingSnapshotProducer with commit.manifest-merge.enabled): without
// it a table committed every few seconds carries one more manifest per
// commit forever, and every read and commit reads them all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::iceberg {

struct ManifestMergeOptions {
  bool enabled = true;             // commit.manifest-merge.enabled
  int64_t min_count = 100;         // commit.manifest.min-count-to-merge
  int64_t target_bytes = 8 << 20;  // commit.manifest.target-size-bytes
  // The table's properties, Iceberg's names and defaults (bad values keep
  // the defaults).
  static ManifestMergeOptions FromProperties(const TableMetadata& md);
};

// A manifest merging may rewrite: a data manifest of the default spec
// smaller than options.target_bytes.
bool MergeCandidate(const ManifestFile& m, const TableMetadata& md, const ManifestMergeOptions& options);

// `manifests` as a new snapshot `snapshot_id` carries them (its own new
// manifests first, then its parent's). When the data manifests of the
// default spec smaller than target_bytes number at least min_count, those
// of the parent are rewritten into manifests of about target_bytes at
// `location_prefix`-m<N>.avro: live entries only (ADDED ones become
// EXISTING, keeping snapshot ids and sequence numbers), manifests without
// live files dropped. This snapshot's own manifests, delete manifests and
// other specs' manifests are kept as they are. Format v1 and v3 tables
// (whose row-id lineage a rewrite must carry) are returned unchanged.
Result<std::vector<ManifestFile>> MergeManifests(storage::FileIO& io, const TableMetadata& md, int64_t snapshot_id,
                                                 const std::vector<ManifestFile>& manifests,
                                                 const std::string& location_prefix,
                                                 const ManifestMergeOptions& options);

}  // namespace thaw::iceberg
