// What archive keeps in the table itself, the only source of truth for
// exactly-once: every snapshot archive commits carries, in its summary,
// `thaw.archive.next-offsets` = {"<topic>": {"<partition>": next offset}}
// for every partition archived so far (not only those in the commit), and
// `thaw.archive.writer` = the archiving process's id (for messages).
// Maintenance snapshots (compaction) copy the property forward; resume walks
// back through parents to the newest snapshot that has it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "thaw/common/status.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::archive {

inline constexpr char kNextOffsetsKey[] = "thaw.archive.next-offsets";
inline constexpr char kWriterKey[] = "thaw.archive.writer";
// Table property archive sets on the tables it creates: each data file holds
// one Kafka partition's records in offset order, so the files' offset
// bounds prove what was archived (NextOffsetsFromData). Set it by hand on a
// table archive created before it existed.
inline constexpr char kOrderedFilesKey[] = "thaw.archive.ordered-files";

// Field ids of Thaw's layouts (docs/layouts.md).
inline constexpr int32_t kPartitionFieldId = 1;  // kafka_partition
inline constexpr int32_t kOffsetFieldId = 2;     // kafka_offset
inline constexpr int32_t kTopicFieldId = 11;     // kafka_topic

using TopicOffsets = std::map<std::string, std::map<int32_t, int64_t>>;

std::string EncodeNextOffsets(const TopicOffsets& offsets);
Result<TopicOffsets> DecodeNextOffsets(const std::string& text);

// The next offsets recorded by the newest snapshot on `main`'s ancestry that
// has them; empty when none does (a new table). kCorrupt when the property
// does not parse.
Result<TopicOffsets> ReadNextOffsets(const iceberg::TableMetadata& md);

// When no snapshot has them any more -- another engine compacted the table
// (a replace snapshot without the property) and expired every snapshot
// archive wrote -- what the data itself proves: per topic and partition, one
// past the greatest offset in the upper bounds of the live data files of
// `snapshot` (main's). `single_topic` names the topic of a table without a
// kafka_topic column. A file without offset bounds, or whose partition or
// topic is not known, is kCorrupt naming it: nothing is guessed.
Result<TopicOffsets> NextOffsetsFromData(std::shared_ptr<storage::FileIO> io, const iceberg::TableMetadata& md,
                                         const iceberg::Snapshot& snapshot, const std::string& single_topic);

// The Kafka partition and topic of a data file: from its partition tuple
// (identity fields), the topic else from equal topic column bounds.
Status FileKafkaKey(const iceberg::TableMetadata& md, const iceberg::DataFile& f, bool has_topic_column,
                    int32_t* partition, std::optional<std::string>* topic);

}  // namespace thaw::archive
