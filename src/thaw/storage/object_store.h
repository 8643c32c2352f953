// FileIO over Arrow's filesystems: S3 (and S3-compatible stores) through
// libarrow_s3's S3FileSystem (AWS SDK: SigV4, the credential chain,
// multipart uploads), GCS and ADLS Gen2 through libarrow's GcsFileSystem and
// AzureFileSystem. Locations are s3://, s3a://, s3n://, gs:// and
// abfs[s]://container@account.dfs.core.windows.net/...; options come from
// the catalog properties (storage/store_options.h). Use FileIOFor
// (file_io_registry.h) rather than Make, so filesystems are shared.
#pragma once

#include <arrow/filesystem/type_fwd.h>
#include <arrow/io/type_fwd.h>
#include <arrow/util/future.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/storage/file_io.h"
#include "thaw/storage/property_map.h"
#include "thaw/storage/retry_policy.h"
#include "thaw/storage/store_options.h"

namespace thaw::storage {

class ArrowFileIO : public FileIO {
 public:
  // A FileIO for locations of `sample`'s kind (and, for ADLS, its account), configured by `properties`.
  static Result<std::shared_ptr<ArrowFileIO>> Make(const StoreLocation& sample, const PropertyMap& properties,
                                                   const RetryPolicy& retry = RetryPolicy());
  ~ArrowFileIO() override;

  Result<std::unique_ptr<RandomAccessFile>> Open(const std::string& location) override;
  // Small immutable files (metadata, manifest lists, manifests, delete files) are
  // cached per process (64 MiB LRU), so a second read costs no request.
  Result<std::string> ReadAll(const std::string& location) override;
  // One GET, no HEAD: the length is trusted, as Iceberg Java's FileIO does.
  Result<std::string> ReadAllWithLength(const std::string& location, int64_t length) override;
  Result<bool> Exists(const std::string& location) override;
  // An output stream (multipart upload for large objects); the object appears on Close().
  Result<std::unique_ptr<OutputFile>> Create(const std::string& location) override;
  Status Delete(const std::string& location) override;
  // Objects under the prefix (recursive), directories and directory markers
  // skipped; locations keep the prefix's scheme and bucket as written.
  Result<std::vector<FileInfo>> List(const std::string& prefix) override;
  IOStats stats() const override { return counters_->Snapshot(); }

  // The Arrow file, counted in stats(), for Parquet's pre-buffered async reads.
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenArrowFile(const std::string& location);
  // The same when the size is known: no HEAD request.
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenArrowFile(const std::string& location, int64_t size);

  StoreKind kind() const { return kind_; }
  // Unique per instance, for per-process cache keys (credentials differ between instances).
  uint64_t id() const { return id_; }
  // "s3 (endpoint http://127.0.0.1:9000, region us-east-1, keys from the catalog properties)": no secrets.
  const std::string& description() const { return description_; }

  // An Arrow error as a Thaw Status naming the object: kNotFound, kPermissionDenied (401/403, bad keys),
  // kIOError otherwise; secret values are masked. For tests and the Parquet reader.
  Status ErrorStatus(const arrow::Status& st, const std::string& location, std::string_view what) const;

 private:
  ArrowFileIO() = default;
  Result<std::string> PathOf(const std::string& location) const;
  Result<std::string> ReadWhole(const std::string& location, int64_t length);
  static constexpr int64_t kOverlapBytes = int64_t{1} << 20;
  std::optional<arrow::Future<std::shared_ptr<arrow::Buffer>>> ReadFirstBytes(const std::string& location);

  StoreKind kind_ = StoreKind::kS3;
  std::string account_;  // ADLS
  uint64_t id_ = 0;
  std::string description_;
  std::vector<std::string> secrets_;  // values masked in error messages
  RetryPolicy retry_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::shared_ptr<IOCounters> counters_ = std::make_shared<IOCounters>();
};

// True when `io` reads an object store (ArrowFileIO), not local files.
inline bool IsObjectStore(const FileIO& io) { return dynamic_cast<const ArrowFileIO*>(&io) != nullptr; }

// Requests, bytes read and retries of every object-store FileIO of the
// process so far (for /metrics).
IOStats ObjectStoreTotals();

// Stats of the per-process whole-file cache (ArrowFileIO::ReadAll).
struct ReadAllCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t bytes = 0;
};
ReadAllCacheStats GetReadAllCacheStats();

// Runs `hook` at process exit before arrow::fs::FinalizeS3 (the registry drops its filesystems there).
void AddObjectStoreShutdownHook(void (*hook)());

}  // namespace thaw::storage
