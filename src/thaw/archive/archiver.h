// `thaw archive`: Kafka -> Iceberg with exact offsets, exactly once.
//
// Loop: KafkaSource::Poll -> per-partition DataFileWriter (rows in offset
// order, rolled at --target-file-size) -> at every --commit-interval, when
// buffered bytes reach the memory bound, at the end (no --follow) and on
// SIGINT/SIGTERM: close the files, write a manifest and a manifest list on
// the current snapshot, and commit one append snapshot through the catalog
// whose summary records every partition's next offset (archive_state.h).
// A commit conflict reloads the table: if another writer advanced any of our
// partitions' offsets, archive stops (exit 1, naming the writer and the
// offsets) -- two archivers never both commit the same offsets; otherwise
// (maintenance, an unrelated writer) the list is rewritten on the new parent
// and retried (commit.retry.num-retries, default 4, with backoff). A commit
// whose state is unknown stops with an error and keeps every file.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "thaw/archive/archive_state.h"
#include "thaw/archive/kafka_source.h"
#include "thaw/catalog/catalog.h"
#include "thaw/common/status.h"

namespace thaw::registry {
class SchemaRegistry;
}

namespace thaw::archive {

enum class Layout { kThaw, kRow };

struct ArchiveOptions {
  kafka::rdkafka::KafkaConfig kafka;
  std::vector<std::string> topics;  // one table per run; several topics add the kafka_topic column
  catalog::TableIdentifier table;
  bool create = false;
  std::string warehouse;  // location root for a new table when the catalog has no default
  int format_version = 2;
  bool follow = false;
  int64_t commit_interval_ms = 10000;
  int64_t target_file_bytes = 128LL << 20;
  int64_t memory_bytes = 256LL << 20;  // buffered (unflushed) bytes that force a commit
  std::vector<int32_t> partitions;
  FromOffset from;
  Layout layout = Layout::kThaw;
  // --layout thaw-row: the values' Avro writer schema, as JSON text (--value-schema
  // FILE.avsc); empty: JSON values. With value_avro_schema_id, the values
  // carry the Confluent header with that schema registry id.
  std::string value_avro_schema;
  std::optional<int32_t> value_avro_schema_id;
  // --layout thaw-row --value-format registry: values framed for this schema
  // registry (row_registry.h), decoded by the id in each record.
  std::shared_ptr<registry::SchemaRegistry> value_registry;
  // --key-format registry (row layout): keys framed for this registry, also
  // decoded into the key_decoded struct (row_registry.h); the key bytes stay.
  std::shared_ptr<registry::SchemaRegistry> key_registry;
  std::string group_id;  // consumer group for monitoring commits; empty = none
  int timeout_ms = 30000;
  const std::atomic<bool>* stop = nullptr;  // SIGINT/SIGTERM: commit what is buffered, then return
  // Progress callback (terminal line), called about once a second.
  std::function<void(const std::string&)> progress;
  // A line per commit at info level (records, Parquet bytes, next offsets,
  // time) rather than debug: for stderr that is not a terminal.
  bool log_commits = false;
  // --dry-run: check the options, the table and the topics and say what a run
  // would archive (ArchiveSummary::plan); nothing is created, written,
  // committed or consumed.
  bool dry_run = false;
};

// A partition as a dry run plans it: records [from, to) would be archived
// (to: the last stable offset at the start; nullopt with --follow).
struct PlannedPartition {
  std::string topic;
  int32_t partition = 0;
  int64_t from = 0;
  std::optional<int64_t> to;
  bool resumed = false;  // from the table's committed offset (else --from-offset)
};

struct ArchiveSummary {
  std::string table;
  int64_t records = 0;
  int64_t bytes = 0;  // key + value + headers
  int64_t commits = 0;
  int64_t data_files = 0;
  int64_t conflicts_retried = 0;
  int64_t manifest_merges = 0;  // merges of small manifests a commit took from beside the archive
  int64_t snapshot_id = 0;    // the last one committed (0: none)
  TopicOffsets next_offsets;  // as committed
  bool interrupted = false;
  double seconds = 0;
  // Dry run only.
  bool dry_run = false;
  bool table_exists = false;  // else a run would create it (--create)
  std::vector<PlannedPartition> plan;
};

// Runs one archive. The catalog is used for loading, creating and committing.
Result<ArchiveSummary> RunArchive(catalog::Catalog& catalog, const ArchiveOptions& options);

}  // namespace thaw::archive
