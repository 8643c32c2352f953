// FileIO: how Thaw reads table files. Everything above this interface works
// with locations (URIs or paths) and never knows whether they are local files
// or objects in S3; an S3 implementation slots in beside LocalFileIO.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::storage {

class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  virtual int64_t size() const = 0;
  // Reads exactly `length` bytes at `offset` into `out` (error if past the end).
  virtual Status ReadAt(int64_t offset, int64_t length, void* out) = 0;
  virtual const std::string& location() const = 0;
};

// What a FileIO has done since it was made: requests sent (object-store
// GET/HEAD/PUT requests; local reads), bytes read, and retries after
// transient errors.
struct IOStats {
  int64_t requests = 0;
  int64_t bytes_read = 0;
  int64_t retries = 0;
};

// Thread-safe counters behind IOStats, shared by a FileIO and the files it opened.
struct IOCounters {
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> bytes_read{0};
  std::atomic<int64_t> retries{0};
  void Read(int64_t bytes) {
    requests.fetch_add(1, std::memory_order_relaxed);
    bytes_read.fetch_add(bytes, std::memory_order_relaxed);
  }
  IOStats Snapshot() const {
    return {requests.load(std::memory_order_relaxed), bytes_read.load(std::memory_order_relaxed),
            retries.load(std::memory_order_relaxed)};
  }
};

// A file being written (for archive). The file exists, complete, only once
// Close() has returned OK: until then readers never see it.
class OutputFile {
 public:
  virtual ~OutputFile() = default;  // destroying an unclosed file aborts it
  virtual Status Write(const void* data, int64_t size) = 0;
  virtual Status Close() = 0;  // the object exists (complete) only after Close() returns OK
  virtual void Abort() = 0;    // multipart uploads aborted, temp files removed
  virtual const std::string& location() const = 0;
};

// One listed file: its full location (same scheme as the prefix listed),
// size and last modification time.
struct FileInfo {
  std::string location;
  int64_t size = 0;
  int64_t mtime_ms = 0;
};

class FileIO {
 public:
  virtual ~FileIO() = default;
  virtual Result<std::unique_ptr<RandomAccessFile>> Open(const std::string& location) = 0;
  // Whole-file read, for metadata, manifests and delete files.
  virtual Result<std::string> ReadAll(const std::string& location);
  // The same for a file whose length its writer recorded (a manifest list's
  // manifest_length): an object store can then read it with no request for
  // its size. A wrong length costs requests, never bytes. Default: ReadAll.
  virtual Result<std::string> ReadAllWithLength(const std::string& location, int64_t length);
  virtual Result<bool> Exists(const std::string& location) = 0;
  // A new file at `location`, replacing any file there when closed.
  virtual Result<std::unique_ptr<OutputFile>> Create(const std::string& location);
  // Removes the file; kNotFound if there is none.
  virtual Status Delete(const std::string& location);
  // Every file under `prefix` (a directory location; recursive), for
  // `thaw maintain --remove-orphans`. Default: kUnsupported.
  virtual Result<std::vector<FileInfo>> List(const std::string& prefix);
  virtual IOStats stats() const;
};

// Local filesystem: plain paths and file:// URIs (file:/x, file:///x).
class LocalFileIO : public FileIO {
 public:
  Result<std::unique_ptr<RandomAccessFile>> Open(const std::string& location) override;
  Result<bool> Exists(const std::string& location) override;
  // Writes a temporary file beside the target (creating missing parent
  // directories), renamed over it by Close() after an fsync.
  Result<std::unique_ptr<OutputFile>> Create(const std::string& location) override;
  Status Delete(const std::string& location) override;
  // Regular files only (no directories, no symlinks followed); a missing
  // prefix is an empty list.
  Result<std::vector<FileInfo>> List(const std::string& prefix) override;
  IOStats stats() const override { return counters_->Snapshot(); }
  static std::string ToPath(const std::string& location);

 private:
  std::shared_ptr<IOCounters> counters_ = std::make_shared<IOCounters>();
};

}  // namespace thaw::storage
