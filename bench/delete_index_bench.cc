// Scan-planning cost of matching delete files to data files: builds a
// DeleteFileIndex over a partitioned table's delete files (position deletes,
// equality deletes, deletion vectors) and asks it for every data file's
// deletes, as TableScan::PlanFiles does. Prints one JSON line: the counts,
// the delete files attached in total, and the seconds matching took.
//
//   delete_index_bench [PARTITIONS [DATA_PER_PARTITION [DELETES_PER_PARTITION]]]
//
// Each partition gets DELETES_PER_PARTITION position delete files and as many
// equality delete files, and every other data file a deletion vector.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "thaw/iceberg/table_scan.h"

using Clock = std::chrono::steady_clock;
using namespace thaw::iceberg;

int main(int argc, char** argv) {
  const int partitions = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int data_per = argc > 2 ? std::atoi(argv[2]) : 10;
  const int deletes_per = argc > 3 ? std::atoi(argv[3]) : 2;

  TableMetadata md;
  PartitionSpec spec;
  spec.spec_id = 1;
  PartitionField field;
  field.source_ids = {1};
  field.field_id = 1000;
  field.name = "kafka_partition";
  spec.fields.push_back(field);
  md.specs = {spec};

  auto partition = [](int p) {
    Datum d;
    d.kind = Datum::kInt;
    d.i = p;
    return std::vector<Datum>{d};
  };
  auto data_path = [](int p, int i) {
    return "s3://b/t/data/p=" + std::to_string(p) + "/" + std::to_string(i) + ".parquet";
  };

  const auto t0 = Clock::now();
  DeleteFileIndex index;
  int64_t delete_files = 0;
  for (int p = 0; p < partitions; ++p) {
    for (int k = 0; k < deletes_per; ++k) {
      for (FileContent content : {FileContent::kPositionDeletes, FileContent::kEqualityDeletes}) {
        ManifestEntry e;
        e.sequence_number = 5;
        e.file.content = content;
        e.file.format = "parquet";
        e.file.spec_id = 1;
        e.file.partition = partition(p);
        e.file.path = "s3://b/t/deletes/p=" + std::to_string(p) + "/" + std::to_string(k) +
                      (content == FileContent::kEqualityDeletes ? "-eq" : "-pos") + ".parquet";
        if (content == FileContent::kEqualityDeletes) e.file.equality_ids = {2};
        index.Add(e, md);
        ++delete_files;
      }
    }
    for (int i = 0; i < data_per; i += 2) {
      ManifestEntry e;
      e.sequence_number = 5;
      e.file.content = FileContent::kPositionDeletes;
      e.file.format = "puffin";
      e.file.spec_id = 1;
      e.file.partition = partition(p);
      e.file.path = "s3://b/t/deletes/dvs.puffin";
      e.file.referenced_data_file = data_path(p, i);
      e.file.content_offset = 4 + (static_cast<int64_t>(p) * data_per + i) * 100;
      e.file.content_size = 100;
      index.Add(e, md);
      ++delete_files;
    }
  }
  const auto t1 = Clock::now();
  int64_t attached = 0, data_files = 0;
  for (int p = 0; p < partitions; ++p) {
    for (int i = 0; i < data_per; ++i) {
      DataFile f;
      f.path = data_path(p, i);
      f.spec_id = 1;
      f.partition = partition(p);
      attached += static_cast<int64_t>(index.ForDataFile(f, 4, md).size());
      ++data_files;
    }
  }
  const auto t2 = Clock::now();
  std::printf(
      "{\"partitions\": %d, \"data_files\": %lld, \"delete_files\": %lld, \"attached\": %lld, \"index_seconds\": %.4f, "
      "\"match_seconds\": %.4f}\n",
      partitions, static_cast<long long>(data_files), static_cast<long long>(delete_files),
      static_cast<long long>(attached), std::chrono::duration<double>(t1 - t0).count(),
      std::chrono::duration<double>(t2 - t1).count());
  return 0;
}
