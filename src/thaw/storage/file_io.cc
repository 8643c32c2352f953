#include "thaw/storage/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

namespace thaw::storage {

Result<std::string> FileIO::ReadAll(const std::string& location) {
  ASSIGN_OR_RAISE(auto file, Open(location));
  std::string data(static_cast<size_t>(file->size()), '\0');
  RETURN_NOT_OK(file->ReadAt(0, file->size(), data.data()));
  return data;
}

Result<std::string> FileIO::ReadAllWithLength(const std::string& location, int64_t /*length*/) {
  return ReadAll(location);
}

Result<std::unique_ptr<OutputFile>> FileIO::Create(const std::string& location) {
  return Status::Unsupported("{}: this storage does not support writing files", location);
}

Status FileIO::Delete(const std::string& location) {
  return Status::Unsupported("{}: this storage does not support deleting files", location);
}

Result<std::vector<FileInfo>> FileIO::List(const std::string& prefix) {
  return Status::Unsupported("{}: this storage does not support listing files", prefix);
}

IOStats FileIO::stats() const { return {}; }

namespace {

class LocalFile : public RandomAccessFile {
 public:
  LocalFile(int fd, int64_t size, std::string location, std::shared_ptr<IOCounters> counters)
      : fd_(fd), size_(size), location_(std::move(location)), counters_(std::move(counters)) {}
  ~LocalFile() override { ::close(fd_); }
  int64_t size() const override { return size_; }
  const std::string& location() const override { return location_; }
  Status ReadAt(int64_t offset, int64_t length, void* out) override {
    if (offset < 0 || length < 0 || offset + length > size_) {
      return Status::Corrupt("{}: read of {} bytes at {} is past the end of the file ({} bytes; truncated?)", location_,
                             length, offset, size_);
    }
    counters_->Read(length);
    auto* p = static_cast<char*>(out);
    while (length > 0) {
      ssize_t n = ::pread(fd_, p, static_cast<size_t>(length), offset);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::IOError("{}: read failed: {}", location_, std::strerror(errno));
      }
      if (n == 0) return Status::Corrupt("{}: unexpected end of file", location_);
      p += n;
      offset += n;
      length -= n;
    }
    return Status::OK();
  }

 private:
  int fd_;
  int64_t size_;
  std::string location_;
  std::shared_ptr<IOCounters> counters_;
};

// Writes `<target>.<random>.thaw-tmp` and renames it over the target on Close.
class LocalOutputFile : public OutputFile {
 public:
  LocalOutputFile(int fd, std::string tmp_path, std::string path, std::string location)
      : fd_(fd), tmp_path_(std::move(tmp_path)), path_(std::move(path)), location_(std::move(location)) {}
  ~LocalOutputFile() override { Abort(); }

  Status Write(const void* data, int64_t size) override {
    if (fd_ < 0) return Status::Invalid("{}: write after Close or Abort", location_);
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = ::write(fd_, p, static_cast<size_t>(size));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::IOError("{}: write to {} failed: {}", location_, tmp_path_, std::strerror(errno));
      }
      p += n;
      size -= n;
    }
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::Invalid("{}: Close after Close or Abort", location_);
    if (::fsync(fd_) != 0) {
      Status st = Status::IOError("{}: fsync of {} failed: {}", location_, tmp_path_, std::strerror(errno));
      Abort();
      return st;
    }
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      Status st = Status::IOError("{}: close of {} failed: {}", location_, tmp_path_, std::strerror(errno));
      ::unlink(tmp_path_.c_str());
      return st;
    }
    if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
      Status st = Status::IOError("{}: rename from {} failed: {}", location_, tmp_path_, std::strerror(errno));
      ::unlink(tmp_path_.c_str());
      return st;
    }
    closed_ = true;
    return Status::OK();
  }

  void Abort() override {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (!closed_) {
      ::unlink(tmp_path_.c_str());
      closed_ = true;  // nothing left to remove
    }
  }

  const std::string& location() const override { return location_; }

 private:
  int fd_;
  bool closed_ = false;
  std::string tmp_path_;
  std::string path_;
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
  return std::unique_ptr<RandomAccessFile>(new LocalFile(fd, st.st_size, location, counters_));
}

Result<std::unique_ptr<OutputFile>> LocalFileIO::Create(const std::string& location) {
  const std::string path = ToPath(location);
  if (path.empty() || path.back() == '/') return Status::Invalid("{}: not a file name", location);
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return Status::IOError("{}: cannot create directory {}: {}", location, parent.string(), ec.message());
  }
  thread_local std::mt19937_64 rng{std::random_device{}()};
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string tmp = fmt::format("{}.{:016x}.thaw-tmp", path, rng());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return std::unique_ptr<OutputFile>(new LocalOutputFile(fd, tmp, path, location));
    if (errno != EEXIST) return Status::IOError("{}: cannot create {}: {}", location, tmp, std::strerror(errno));
  }
  return Status::IOError("{}: cannot find a free temporary file name beside it", location);
}

Status LocalFileIO::Delete(const std::string& location) {
  const std::string path = ToPath(location);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound("{}: cannot delete: file does not exist", location);
    return Status::IOError("{}: cannot delete: {}", location, std::strerror(errno));
  }
  return Status::OK();
}

Result<std::vector<FileInfo>> LocalFileIO::List(const std::string& prefix) {
  std::string base = prefix;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const std::string root = ToPath(base);
  std::vector<FileInfo> out;
  std::error_code ec;
  if (!std::filesystem::exists(root, ec)) {
    if (ec) return Status::IOError("{}: cannot list: {}", prefix, ec.message());
    return out;
  }
  if (!std::filesystem::is_directory(root, ec)) {
    return Status::Invalid("{}: cannot list: not a directory", prefix);
  }
  std::filesystem::recursive_directory_iterator it(root, ec), end;
  if (ec) return Status::IOError("{}: cannot list: {}", prefix, ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return Status::IOError("{}: cannot list: {}", prefix, ec.message());
    const auto& path = it->path();
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // removed while listing
      return Status::IOError("{}: cannot stat while listing: {}", path.string(), std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) continue;
    std::string rel = path.lexically_relative(root).generic_string();
    FileInfo info;
    info.location = base + "/" + rel;
    info.size = st.st_size;
    info.mtime_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
    out.push_back(std::move(info));
  }
  if (ec) return Status::IOError("{}: cannot list: {}", prefix, ec.message());
  counters_->requests.fetch_add(1, std::memory_order_relaxed);
  return out;
}

Result<bool> LocalFileIO::Exists(const std::string& location) {
  struct stat st;
  return ::stat(ToPath(location).c_str(), &st) == 0;
}

}  // namespace thaw::storage
