// Writing manifests and manifest lists (Avro object container files) that
// Iceberg Java, pyiceberg and DuckDB read: the spec's field ids, Java's
// record names, the header keys ManifestWriter / ManifestListWriter write
// (schema, schema-id, partition-spec, partition-spec-id, format-version,
// content; snapshot-id, parent-snapshot-id, sequence-number, first-row-id),
// deflate like Java's default. Format v2 and v3.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::iceberg {

// Writes one manifest of `entries` (all data files, or all delete files, of
// one partition spec) at `location`. ADDED entries written by `snapshot_id`
// leave snapshot id and sequence numbers null (inherited from the manifest
// list entry, so a retried commit reuses the file) -- except an ADDED entry
// with sequence_number > 0, whose data sequence number is written as given
// (a rewrite keeping its inputs' number, as Java's
// RewriteFiles.dataSequenceNumber); EXISTING and DELETED
// entries keep their sequence numbers, EXISTING ones their snapshot id, and
// DELETED ones name `snapshot_id` (the snapshot deleting them, as the spec
// and Java do). Returns the manifest-list entry: path, length, counts,
// partition field summaries (bounds in the partition type's single-value
// encoding), added_snapshot_id = snapshot_id; sequence_number 0 and
// min_sequence_number the smallest written entry's (0 when all inherit),
// both settled by WriteManifestList. Manifests of format v1 are not written.
Result<ManifestFile> WriteManifest(storage::FileIO& io, const std::string& location, const TableMetadata& md,
                                   const PartitionSpec& spec, int64_t snapshot_id,
                                   const std::vector<ManifestEntry>& entries);

// Writes a snapshot's manifest list: `manifests` in order. Entries added by
// this snapshot (added_snapshot_id == snapshot.snapshot_id) get
// sequence_number = min_sequence_number = snapshot.sequence_number; the others
// are written as read. v3: data manifests added by this snapshot get
// first_row_id assigned from snapshot.first_row_id onwards (as Java does,
// any data manifest without one: added + existing rows each); returns the
// rows assigned (the snapshot's `added-rows`, by which next-row-id advances),
// 0 for format v2. The snapshot id must stay the same across commit retries:
// the manifests' ADDED entries inherit it.
Result<int64_t> WriteManifestList(storage::FileIO& io, const std::string& location, const TableMetadata& md,
                                  const Snapshot& snapshot, const std::vector<ManifestFile>& manifests);

// Single-value encodings (spec Appendix D) for the bounds archive writes.
std::string EncodeIntBound(int32_t v);
std::string EncodeLongBound(int64_t v);

}  // namespace thaw::iceberg
