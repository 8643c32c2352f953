// Cost of one archive-style commit through the SQL catalog (SQLite, local
// warehouse) as the table's metadata grows: the part of `thaw archive`'s
// commit latency that depends on how many snapshots metadata.json keeps
// (issue 20). For each size in SIZES the table is grown to that many
// snapshots (bulk commits of up to 1,000 snapshots), then COMMITS single
// append commits are timed, each adding a snapshot whose summary carries 64
// partitions' next offsets as archive's do (manifest lists are not written:
// the catalog never reads them). Prints one JSON line per size.
//
//   catalog_commit_bench DIR [COMMITS [SIZES...]]     defaults: 50, 100 1000 10000
//
// DIR is created if missing and emptied first.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "thaw/archive/archive_state.h"
#include "thaw/catalog/sql_catalog.h"
#include "thaw/iceberg/table_update.h"

using Clock = std::chrono::steady_clock;
using namespace thaw;

namespace {

constexpr int kPartitions = 64;

double Pct(std::vector<double> xs, double q) {
  std::sort(xs.begin(), xs.end());
  return xs[std::min(xs.size() - 1, static_cast<size_t>(q * static_cast<double>(xs.size())))];
}

// What a commit builds on: the table's main snapshot, sequence number and time.
struct Head {
  std::optional<int64_t> snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
};

iceberg::Snapshot NextSnapshot(const Head& head, const std::string& location, int64_t n) {
  iceberg::Snapshot s;
  s.snapshot_id = iceberg::NewSnapshotId();
  s.parent_snapshot_id = head.snapshot_id;
  s.sequence_number = head.sequence_number + 1;
  s.timestamp_ms = std::max<int64_t>(head.timestamp_ms, 1'700'000'000'000) + 1;
  s.schema_id = 0;
  s.manifest_list = fmt::format("{}/metadata/snap-{}-1-bench.avro", location, s.snapshot_id);
  archive::TopicOffsets next;
  for (int p = 0; p < kPartitions; ++p) next["growth-topic"][p] = 1'000'000 + n * 17 + p;
  s.summary = {{"operation", "append"},
               {"added-data-files", "64"},
               {"added-records", "6400"},
               {"added-files-size", "412345"},
               {"changed-partition-count", "64"},
               {"total-records", std::to_string(n * 6400)},
               {"total-files-size", std::to_string(n * 412345)},
               {"total-data-files", std::to_string(n * 64)},
               {"total-delete-files", "0"},
               {"total-position-deletes", "0"},
               {"total-equality-deletes", "0"},
               {"thaw.archive.next-offsets", archive::EncodeNextOffsets(next)},
               {"thaw.archive.writer", "bench-0123456789abcdef"}};
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: catalog_commit_bench DIR [COMMITS [SIZES...]]\n");
    return 2;
  }
  const std::string dir = std::filesystem::absolute(argv[1]).string();
  const int commits = argc > 2 ? std::atoi(argv[2]) : 50;
  std::vector<int64_t> sizes;
  for (int i = 3; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {100, 1000, 10000};
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  auto cat = catalog::OpenSqliteCatalog("sqlite:///" + dir + "/catalog.db", "bench");
  if (!cat.ok()) {
    std::fprintf(stderr, "%s\n", cat.status().ToString().c_str());
    return 1;
  }
  const auto id = *catalog::TableIdentifier::Parse("bench.growth");
  iceberg::TableCreate create;
  create.schema = {{"type", "struct"},
                   {"schema-id", 0},
                   {"fields",
                    {{{"id", 1}, {"name", "kafka_partition"}, {"required", true}, {"type", "int"}},
                     {{"id", 2}, {"name", "kafka_offset"}, {"required", true}, {"type", "long"}}}}};
  create.partition_spec = {
      {"spec-id", 0},
      {"fields", {{{"source-id", 1}, {"field-id", 1000}, {"name", "kafka_partition"}, {"transform", "identity"}}}}};
  create.location = dir + "/warehouse/bench.db/growth";
  create.properties = {{"write.metadata.delete-after-commit.enabled", "true"},
                       {"write.metadata.previous-versions-max", "10"}};
  auto table = (*cat)->CreateTable(id, create);
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.status().ToString().c_str());
    return 1;
  }
  iceberg::Table t = std::move(*table);
  int64_t n = 0;
  auto commit = [&](int count) -> bool {
    std::vector<iceberg::TableUpdate> updates;
    Head head{t.metadata.current_snapshot_id, t.metadata.last_sequence_number, t.metadata.last_updated_ms};
    for (int i = 0; i < count; ++i) {
      iceberg::Snapshot s = NextSnapshot(head, t.metadata.location, ++n);
      head = {s.snapshot_id, s.sequence_number, s.timestamp_ms};
      updates.push_back(iceberg::TableUpdate::AddSnapshot(s));
    }
    updates.push_back(iceberg::TableUpdate::SetBranch("main", *head.snapshot_id));
    std::vector<iceberg::TableRequirement> reqs{
        iceberg::TableRequirement::AssertTableUuid(t.metadata.table_uuid),
        iceberg::TableRequirement::AssertRefSnapshotId("main", t.metadata.current_snapshot_id)};
    auto c = (*cat)->CommitTable(id, t, reqs, updates);
    if (!c.ok()) {
      std::fprintf(stderr, "commit %lld: %s\n", static_cast<long long>(n), c.status().ToString().c_str());
      return false;
    }
    t = std::move(*c);
    return true;
  };
  for (int64_t size : sizes) {
    while (n < size) {
      if (!commit(static_cast<int>(std::min<int64_t>(1000, size - n)))) return 1;
    }
    std::vector<double> ms;
    for (int i = 0; i < commits; ++i) {
      const auto start = Clock::now();
      if (!commit(1)) return 1;
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    const auto bytes = std::filesystem::file_size(t.metadata_location.substr(t.metadata_location.find('/')));
    std::printf(
        "{\"snapshots\": %lld, \"commits\": %d, \"p50_ms\": %.2f, \"p99_ms\": %.2f, \"max_ms\": %.2f, "
        "\"metadata_json_bytes\": %llu}\n",
        static_cast<long long>(n), commits, Pct(ms, 0.5), Pct(ms, 0.99), Pct(ms, 1.0),
        static_cast<unsigned long long>(bytes));
    std::fflush(stdout);
  }
  return 0;
}
