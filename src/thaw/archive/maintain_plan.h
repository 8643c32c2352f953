// The decisions of `thaw maintain`, as pure functions over plain structs so
// that they are unit-tested without a table: which data files a compaction
// groups, which snapshots an expiry drops, which files only the dropped
// snapshots reach, and which listed files are orphans.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/iceberg/table_metadata.h"

namespace thaw::archive {

// One live data file of one Kafka partition, as compaction sees it.
struct CompactionInput {
  std::string path;
  int64_t file_size = 0;
  int64_t record_count = 0;
  bool has_offset_bounds = false;
  int64_t offset_lo = 0, offset_hi = 0;  // kafka_offset lower / upper bounds (inclusive)
  bool has_deletes = false;              // delete files attached (applied by the rewrite)
  bool rewritable = true;                // false: keep as is (e.g. a v3 file without first_row_id)
  int64_t data_sequence_number = 0;
};

// A run of files rewritten into one: indices into the input vector, in
// offset order, and the offset range they cover.
struct CompactionGroup {
  std::vector<size_t> inputs;
  int64_t offset_lo = 0, offset_hi = 0;
  int64_t bytes = 0;
  int64_t records = 0;
  int64_t max_data_sequence_number = 0;
};

// A file is "small" below 3/4 of the target (Iceberg's RewriteDataFiles
// default min-file-size-bytes).
int64_t SmallFileThreshold(int64_t target_bytes);

// Groups the files of one partition: files ordered by offset lower bound;
// a run is broken by a file that is not small, is not rewritable, has no
// offset bounds, or whose offset range overlaps any other file's (reading an
// offset range must find exactly the group's files). Within a run, files are
// packed in order into groups of at most `target_bytes` (a group always takes
// at least two files); groups of one file are not rewritten.
std::vector<CompactionGroup> PlanCompactionGroups(const std::vector<CompactionInput>& files, int64_t target_bytes);

// The sort order id data files written by archive and compaction may name:
// the table's default order when it is > 0 and every row of such a file (one
// Kafka partition, one topic, offsets ascending) is in that order -- all its
// fields identity and ascending over kafka_partition (1) or kafka_topic (11),
// with kafka_offset (2) allowed as the last. nullopt otherwise (the files
// then name no order).
// `metadata_json` is the table metadata file's text (null on a parse error).
std::optional<int32_t> FileSortOrderId(std::string_view metadata_json);

// The tag a replay job keeps at the snapshot it has replayed up to
// (replay/replay.h): thaw-replay/JOB.
inline constexpr std::string_view kReplayTagPrefix = "thaw-replay/";

// Snapshots an expiry drops: older than `cutoff_ms` (timestamp < cutoff),
// never the current snapshot, a ref's head, one of the newest `retain_last`
// snapshots of main's ancestry, or a snapshot a replay job still has to
// read: for each thaw-replay/JOB tag, the snapshots after the tagged one on
// the ancestry of a branch that descends from it (what `replay --follow`
// reads next). `held` (when given) gets, per job, how many snapshots older
// than the cutoff only its tag keeps. Ascending ids.
std::vector<int64_t> SnapshotsToExpire(const iceberg::TableMetadata& md, int64_t cutoff_ms, int retain_last,
                                       std::map<std::string, int64_t>* held = nullptr);

// Files a set of snapshots reaches: manifest lists, manifests, data and
// delete files (locations normalised, see NormalizeLocation).
struct ReachableFiles {
  std::set<std::string> manifest_lists, manifests, content_files;
  size_t size() const { return manifest_lists.size() + manifests.size() + content_files.size(); }
};

// What `before` reaches and `after` does not, in deletion order: content
// files, then manifests, then manifest lists.
std::vector<std::string> FilesOnlyIn(const ReachableFiles& before, const ReachableFiles& after);

// A location in the form used to compare listed and referenced files:
// file:/x, file:///x and /x are the path /x; s3a:// and s3n:// are s3://;
// repeated slashes in the path collapse.
std::string NormalizeLocation(std::string_view location);

struct ListedFile {
  std::string location;
  int64_t size = 0;
  int64_t mtime_ms = 0;
};

// Orphans among `listed`: not in `referenced` (normalised locations) and
// last modified before `older_than_ms` (a timestamp). Sorted by location.
std::vector<ListedFile> FindOrphans(const std::vector<ListedFile>& listed, const std::set<std::string>& referenced,
                                    int64_t older_than_ms);

}  // namespace thaw::archive
