#include "thaw/storage/file_io.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace thaw::storage {

Result<std::string> FileIO::ReadAll(const std::string& location) {
  ASSIGN_OR_RAISE(auto file, Open(location));
  std::string data(static_cast<size_t>(file->size()), '\0');
  RETURN_NOT_OK(file->ReadAt(0, file->size(), data.data()));
  return data;
}

namespace {

class LocalFile : public RandomAccessFile {
 public:
  LocalFile(int fd, int64_t size, std::string location)
      : fd_(fd), size_(size), location_(std::move(location)) {}
  ~LocalFile() override { ::close(fd_); }
  int64_t size() const override { return size_; }
  const std::string& location() const override { return location_; }
  Status ReadAt(int64_t offset, int64_t length, void* out) override {
    if (offset < 0 || length < 0 || offset + length > size_) {
      return Status::Corrupt("{}: read of {} bytes at {} is past the end of the file ({} bytes; truncated?)",
                             location_, length, offset, size_);
    }
    auto* p = static_cast<char*>(out);
    while (length > 0) {
      ssize_t n = ::pread(fd_, p, static_cast<size_t>(length), offset);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::IOError("{}: read failed: {}", location_, std::strerror(errno));
      }
      if (n == 0) return Status::Corrupt("{}: unexpected end of file", location_);
      p += n; offset += n; length -= n;
    }
    return Status::OK();
  }

 private:
  int fd_;
  int64_t size_;
  std::string location_;
};

}  // namespace

std::string LocalFileIO::ToPath(const std::string& location) {
  if (location.rfind("file://", 0) == 0) return location.substr(7);
  if (location.rfind("file:", 0) == 0) return location.substr(5);
  return location;
}

Result<std::unique_ptr<RandomAccessFile>> LocalFileIO::Open(const std::string& location) {
  const std::string path = ToPath(location);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("{}: file does not exist", location);
    return Status::IOError("{}: cannot open: {}", location, std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Status::IOError("{}: cannot stat: {}", location, std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::Invalid("{}: is a directory, expected a file", location);
  }
  return std::unique_ptr<RandomAccessFile>(new LocalFile(fd, st.st_size, location));
}

Result<bool> LocalFileIO::Exists(const std::string& location) {
  struct stat st;
  return ::stat(ToPath(location).c_str(), &st) == 0;
}

Result<std::shared_ptr<FileIO>> FileIOForLocation(const std::string& location) {
  auto colon = location.find("://");
  std::string scheme = colon == std::string::npos ? "" : location.substr(0, colon);
  if (scheme.empty() || scheme == "file" || location.rfind("file:", 0) == 0) {
    return std::shared_ptr<FileIO>(std::make_shared<LocalFileIO>());
  }
  return Status::Unsupported("location '{}': storage scheme '{}' is not supported yet (Thaw reads local files; S3 is planned)",
                             location, scheme);
}

}  // namespace thaw::storage
