// FileIO: how Thaw reads table files. Everything above this interface works
// with locations (URIs or paths) and never knows whether they are local files
// or objects in S3; an S3 implementation slots in beside LocalFileIO.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

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

class FileIO {
 public:
  virtual ~FileIO() = default;
  virtual Result<std::unique_ptr<RandomAccessFile>> Open(const std::string& location) = 0;
  // Whole-file read, for metadata, manifests and delete files.
  virtual Result<std::string> ReadAll(const std::string& location);
  virtual Result<bool> Exists(const std::string& location) = 0;
};

// Local filesystem: plain paths and file:// URIs (file:/x, file:///x).
class LocalFileIO : public FileIO {
 public:
  Result<std::unique_ptr<RandomAccessFile>> Open(const std::string& location) override;
  Result<bool> Exists(const std::string& location) override;
  static std::string ToPath(const std::string& location);
};

// Picks the FileIO for a location's scheme. Unknown schemes get an error
// naming the scheme and what Thaw supports.
Result<std::shared_ptr<FileIO>> FileIOForLocation(const std::string& location);

}  // namespace thaw::storage
