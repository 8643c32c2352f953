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
#include "thaw/iceberg/table_metadata.h"

namespace thaw::archive {

inline constexpr char kNextOffsetsKey[] = "thaw.archive.next-offsets";
inline constexpr char kWriterKey[] = "thaw.archive.writer";

using TopicOffsets = std::map<std::string, std::map<int32_t, int64_t>>;

std::string EncodeNextOffsets(const TopicOffsets& offsets);
Result<TopicOffsets> DecodeNextOffsets(const std::string& text);

// The next offsets recorded by the newest snapshot on `main`'s ancestry that
// has them; empty when none does (a new table). kCorrupt when the property
// does not parse.
Result<TopicOffsets> ReadNextOffsets(const iceberg::TableMetadata& md);

}  // namespace thaw::archive
