#include "thaw/storage/object_store.h"

#include <arrow/buffer.h>
#include <arrow/filesystem/azurefs.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/filesystem/gcsfs.h>
#include <arrow/filesystem/s3fs.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/future.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>

#include "thaw/common/log.h"
#include "thaw/storage/lru_cache.h"

namespace thaw::storage {

namespace {

// Every object-store FileIO's requests also count in the process's totals
// (ObjectStoreTotals, for /metrics).
IOCounters& Totals() {
  static IOCounters totals;
  return totals;
}
void CountRead(IOCounters& c, int64_t bytes) {
  c.Read(bytes);
  Totals().Read(bytes);
}
void CountRequest(IOCounters& c) {
  c.requests.fetch_add(1, std::memory_order_relaxed);
  Totals().requests.fetch_add(1, std::memory_order_relaxed);
}
void CountRetry(IOCounters& c) {
  c.retries.fetch_add(1, std::memory_order_relaxed);
  Totals().retries.fetch_add(1, std::memory_order_relaxed);
}

std::atomic<uint64_t> g_next_id{1};

// ---- process-wide S3 life cycle --------------------------------------------

std::mutex g_hooks_mu;
std::vector<void (*)()>& Hooks() {
  static auto* hooks = new std::vector<void (*)()>();  // never destroyed: used at exit
  return *hooks;
}

void ShutdownObjectStores() {
  std::vector<void (*)()> hooks;
  {
    std::lock_guard lock(g_hooks_mu);
    hooks = Hooks();
  }
  for (auto h : hooks) h();
  if (arrow::fs::IsS3Initialized() && !arrow::fs::IsS3Finalized()) {
    auto st = arrow::fs::FinalizeS3();
    (void)st;
  }
}

Status EnsureS3() {
  static std::once_flag once;
  static arrow::Status init;
  std::call_once(once, [] {
    auto opts = arrow::fs::S3GlobalOptions::Defaults();  // log level from ARROW_S3_LOG_LEVEL (default: fatal only)
    init = arrow::fs::InitializeS3(opts);
  });
  if (!init.ok()) return Status::IOError("cannot initialise the S3 client (AWS SDK): {}", init.message());
  return Status::OK();
}

// The AWS SDK must be shut down (FinalizeS3) before static destructors run, or
// the process can crash at exit. Registered after the first S3FileSystem
// exists: Arrow creates the statics FinalizeS3 uses with the first client,
// and atexit handlers run before the destructors of statics made earlier.
void RegisterS3Shutdown() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(ShutdownObjectStores); });
}

// ---- retries --------------------------------------------------------------

class BackoffRetryStrategy : public arrow::fs::S3RetryStrategy {
 public:
  BackoffRetryStrategy(RetryPolicy policy, std::shared_ptr<IOCounters> counters)
      : policy_(policy), counters_(std::move(counters)) {}
  bool ShouldRetry(const AWSErrorDetail& error, int64_t attempted_retries) override {
    RequestError e{error.error_type, error.exception_name, error.message, error.should_retry};
    bool retry = policy_.ShouldRetry(e, attempted_retries);
    if (retry) {
      CountRetry(*counters_);
      log::Debug("object store: retrying after {} ({}), retry {} of {}",
                 error.exception_name.empty() ? "error" : error.exception_name, error.error_type, attempted_retries + 1,
                 policy_.max_attempts - 1);
    }
    return retry;
  }
  int64_t CalculateDelayBeforeNextRetry(const AWSErrorDetail& error, int64_t attempted_retries) override {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return policy_.DelayMs(attempted_retries, rng());
  }

 private:
  RetryPolicy policy_;
  std::shared_ptr<IOCounters> counters_;
};

// ---- reads ----------------------------------------------------------------

// Counts requests and bytes of an Arrow file in IOCounters.
class CountingFile : public arrow::io::RandomAccessFile {
 public:
  CountingFile(std::shared_ptr<arrow::io::RandomAccessFile> inner, std::shared_ptr<IOCounters> counters, int64_t size)
      : inner_(std::move(inner)), counters_(std::move(counters)), size_(size) {}
  arrow::Status Close() override { return inner_->Close(); }
  bool closed() const override { return inner_->closed(); }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }
  arrow::Status Seek(int64_t pos) override { return inner_->Seek(pos); }
  arrow::Result<int64_t> GetSize() override { return size_; }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    CountRead(*counters_, Clip(-1, nbytes));
    return inner_->Read(nbytes, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    CountRead(*counters_, Clip(-1, nbytes));
    return inner_->Read(nbytes);
  }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    CountRead(*counters_, Clip(position, nbytes));
    return inner_->ReadAt(position, nbytes, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    CountRead(*counters_, Clip(position, nbytes));
    return inner_->ReadAt(position, nbytes);
  }
  arrow::Future<std::shared_ptr<arrow::Buffer>> ReadAsync(const arrow::io::IOContext& ctx, int64_t position,
                                                          int64_t nbytes, bool allow_short_read) override {
    CountRead(*counters_, Clip(position, nbytes));
    return inner_->ReadAsync(ctx, position, nbytes, allow_short_read);
  }
  arrow::Future<std::shared_ptr<arrow::Buffer>> ReadAsync(const arrow::io::IOContext& ctx, int64_t position,
                                                          int64_t nbytes) override {
    CountRead(*counters_, Clip(position, nbytes));
    return inner_->ReadAsync(ctx, position, nbytes);
  }
  arrow::Status WillNeed(const std::vector<arrow::io::ReadRange>& ranges) override { return inner_->WillNeed(ranges); }

 private:
  int64_t Clip(int64_t position, int64_t nbytes) const {
    if (position < 0 || size_ < 0) return nbytes;
    return std::max<int64_t>(0, std::min(nbytes, size_ - position));
  }
  std::shared_ptr<arrow::io::RandomAccessFile> inner_;
  std::shared_ptr<IOCounters> counters_;
  int64_t size_;
};

// Thaw's RandomAccessFile over an Arrow file.
class ArrowBackedFile : public RandomAccessFile {
 public:
  ArrowBackedFile(std::shared_ptr<arrow::io::RandomAccessFile> f, int64_t size, std::string location,
                  const ArrowFileIO* io)
      : f_(std::move(f)), size_(size), location_(std::move(location)), io_(io) {}
  int64_t size() const override { return size_; }
  const std::string& location() const override { return location_; }
  Status ReadAt(int64_t offset, int64_t length, void* out) override {
    if (offset < 0 || length < 0 || offset + length > size_) {
      return Status::Corrupt("{}: read of {} bytes at {} is past the end of the object ({} bytes; truncated?)",
                             location_, length, offset, size_);
    }
    auto n = f_->ReadAt(offset, length, out);
    if (!n.ok()) return io_->ErrorStatus(n.status(), location_, "read");
    if (*n != length) {
      return Status::Corrupt("{}: short read: {} of {} bytes at {} (object changed while read?)", location_, *n, length,
                             offset);
    }
    return Status::OK();
  }

 private:
  std::shared_ptr<arrow::io::RandomAccessFile> f_;
  int64_t size_;
  std::string location_;
  const ArrowFileIO* io_;  // the FileIO outlives its files (callers hold its shared_ptr)
};

// ---- writes ---------------------------------------------------------------

class ArrowOutputFile : public OutputFile {
 public:
  ArrowOutputFile(std::shared_ptr<arrow::io::OutputStream> out, std::string location, const ArrowFileIO* io,
                  std::shared_ptr<IOCounters> counters)
      : out_(std::move(out)), location_(std::move(location)), io_(io), counters_(std::move(counters)) {}
  // Arrow's S3 stream completes the upload when destroyed unclosed; an
  // unclosed OutputFile must not leave an object behind, so abort first.
  ~ArrowOutputFile() override { Abort(); }

  Status Write(const void* data, int64_t size) override {
    if (done_) return Status::Invalid("{}: write after Close or Abort", location_);
    auto st = out_->Write(data, size);
    if (!st.ok()) return io_->ErrorStatus(st, location_, "write");
    return Status::OK();
  }
  Status Close() override {
    if (done_) return Status::Invalid("{}: Close after Close or Abort", location_);
    auto st = out_->Close();
    if (!st.ok()) {
      Abort();
      return io_->ErrorStatus(st, location_, "upload");
    }
    CountRequest(*counters_);
    done_ = true;
    return Status::OK();
  }
  void Abort() override {
    if (done_) return;
    done_ = true;
    auto st = out_->Abort();
    if (!st.ok())
      log::Warn("{}: aborting the upload failed: {}", location_, io_->ErrorStatus(st, location_, "abort").message());
  }
  const std::string& location() const override { return location_; }

 private:
  std::shared_ptr<arrow::io::OutputStream> out_;
  std::string location_;
  const ArrowFileIO* io_;
  std::shared_ptr<IOCounters> counters_;
  bool done_ = false;
};

// ---- caches ---------------------------------------------------------------

constexpr int64_t kReadAllCacheBytes = 64 << 20;
constexpr int64_t kReadAllMaxFileBytes = 16 << 20;

ByteLruCache<std::shared_ptr<const std::string>>& ReadAllCache() {
  static auto* cache = new ByteLruCache<std::shared_ptr<const std::string>>(kReadAllCacheBytes);
  return *cache;
}

// Iceberg files never change once written; version-hint.text does.
bool Cacheable(const std::string& location) { return !location.ends_with("version-hint.text"); }

bool Contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

}  // namespace

ReadAllCacheStats GetReadAllCacheStats() {
  auto& c = ReadAllCache();
  return {c.hits(), c.misses(), c.used_bytes()};
}

void AddObjectStoreShutdownHook(void (*hook)()) {
  std::lock_guard lock(g_hooks_mu);
  Hooks().push_back(hook);
}

ArrowFileIO::~ArrowFileIO() = default;

Result<std::shared_ptr<ArrowFileIO>> ArrowFileIO::Make(const StoreLocation& sample, const PropertyMap& properties,
                                                       const RetryPolicy& retry) {
  auto io = std::shared_ptr<ArrowFileIO>(new ArrowFileIO());
  io->kind_ = sample.kind;
  io->id_ = g_next_id.fetch_add(1);
  io->retry_ = retry;
  for (const auto& [k, v] : properties) {
    if (IsSecretProperty(k) && v.size() >= 4) io->secrets_.push_back(v);
  }
  switch (sample.kind) {
    case StoreKind::kS3: {
      // The AWS SDKs' endpoint variables, which Arrow's S3 client does not read itself.
      PropertyMap with_env = properties;
      if (!with_env.contains("s3.endpoint")) {
        for (const char* var : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
          const char* v = std::getenv(var);
          if (v && *v) {
            with_env["s3.endpoint"] = v;
            break;
          }
        }
      }
      ASSIGN_OR_RAISE(auto s, S3SettingsFrom(with_env));
      // Only once the properties are valid: an initialised SDK with no client
      // yet has no shutdown registered (see RegisterS3Shutdown).
      RETURN_NOT_OK(EnsureS3());
      arrow::fs::S3Options o;
      std::string creds;
      if (s.anonymous) {
        o = arrow::fs::S3Options::Anonymous();
        creds = "anonymous";
      } else if (!s.access_key.empty()) {
        o = arrow::fs::S3Options::FromAccessKey(s.access_key, s.secret_key, s.session_token);
        creds = s.session_token.empty() ? "keys from the catalog properties" : "session credentials from the catalog";
      } else if (!s.role_arn.empty()) {
        o = arrow::fs::S3Options::FromAssumeRole(s.role_arn, s.role_session_name, s.external_id);
        creds = "assumed role " + s.role_arn;
      } else {
        o = arrow::fs::S3Options::Defaults();
        creds = "the AWS default credential chain";
      }
      o.region = s.region;
      if (!s.endpoint_override.empty()) {
        o.endpoint_override = s.endpoint_override;
        o.scheme = s.scheme;
        // S3-compatible stores ignore the region but the signature needs one.
        if (o.region.empty()) o.region = "us-east-1";
      }
      o.force_virtual_addressing = s.force_virtual_addressing;
      o.connect_timeout = s.connect_timeout_s;
      o.request_timeout = s.request_timeout_s;
      if (!s.proxy_uri.empty()) {
        auto proxy = arrow::fs::S3ProxyOptions::FromUri(s.proxy_uri);
        if (!proxy.ok())
          return Status::Invalid("catalog property 's3.proxy-uri' is not a proxy URI: {}", proxy.status().message());
        o.proxy_options = *proxy;
      }
      o.retry_strategy = std::make_shared<BackoffRetryStrategy>(retry, io->counters_);
      o.allow_bucket_creation = false;
      o.allow_bucket_deletion = false;
      auto fs = arrow::fs::S3FileSystem::Make(o);
      if (!fs.ok()) return Status::IOError("cannot create the S3 client: {}", fs.status().message());
      RegisterS3Shutdown();
      io->fs_ = *fs;
      io->description_ = fmt::format(
          "s3 ({}{}, {})", s.endpoint_override.empty() ? "AWS" : "endpoint " + s.scheme + "://" + s.endpoint_override,
          o.region.empty() ? "" : ", region " + o.region, creds);
      break;
    }
    case StoreKind::kGcs: {
      ASSIGN_OR_RAISE(auto g, GcsSettingsFrom(properties));
      arrow::fs::GcsOptions o;
      std::string creds;
      if (g.anonymous) {
        o = arrow::fs::GcsOptions::Anonymous();
        creds = "anonymous";
      } else if (!g.oauth2_token.empty()) {
        arrow::fs::TimePoint expiry = g.token_expires_at_ms > 0
                                          ? arrow::fs::TimePoint(std::chrono::milliseconds(g.token_expires_at_ms))
                                          : std::chrono::time_point_cast<std::chrono::nanoseconds>(
                                                std::chrono::system_clock::now() + std::chrono::hours(24 * 365));
        o = arrow::fs::GcsOptions::FromAccessToken(g.oauth2_token, expiry);
        creds = "OAuth2 token from the catalog";
      } else {
        o = arrow::fs::GcsOptions::Defaults();
        creds = "Google application default credentials";
      }
      if (!g.endpoint_override.empty()) o.endpoint_override = g.endpoint_override;
      if (!g.scheme.empty()) o.scheme = g.scheme;
      if (!g.project_id.empty()) o.project_id = g.project_id;
      if (!g.default_bucket_location.empty()) o.default_bucket_location = g.default_bucket_location;
      // Bounded retries (the client's own backoff) so an outage ends in an error, not a hang.
      o.retry_limit_seconds = static_cast<double>(retry.max_delay_ms) * retry.max_attempts / 1000.0;
      auto fs = arrow::fs::GcsFileSystem::Make(o);
      if (!fs.ok()) return Status::IOError("cannot create the GCS client: {}", fs.status().message());
      io->fs_ = *fs;
      io->description_ = fmt::format("gcs ({}, {})",
                                     g.endpoint_override.empty() ? "Google" : "endpoint " + g.endpoint_override, creds);
      break;
    }
    case StoreKind::kAzure: {
      ASSIGN_OR_RAISE(auto a, AzureSettingsFrom(properties, sample));
      arrow::fs::AzureOptions o;
      o.account_name = a.account_name;
      o.blob_storage_authority = a.blob_storage_authority;
      o.dfs_storage_authority = a.dfs_storage_authority;
      o.blob_storage_scheme = a.blob_storage_scheme;
      o.dfs_storage_scheme = a.dfs_storage_scheme;
      arrow::Status st;
      std::string creds;
      if (!a.account_key.empty()) {
        st = o.ConfigureAccountKeyCredential(a.account_key);
        creds = "account key";
      } else if (!a.sas_token.empty()) {
        st = o.ConfigureSASCredential(a.sas_token);
        creds = "SAS token";
      } else if (!a.client_secret.empty()) {
        st = o.ConfigureClientSecretCredential(a.tenant_id, a.client_id, a.client_secret);
        creds = "client secret of " + a.client_id;
      } else {
        st = o.ConfigureDefaultCredential();
        creds = "Azure default credentials";
      }
      if (!st.ok()) return io->ErrorStatus(st, "abfss://@" + sample.account_host, "configure credentials");
      auto fs = arrow::fs::AzureFileSystem::Make(o);
      if (!fs.ok()) return io->ErrorStatus(fs.status(), "abfss://@" + sample.account_host, "create the ADLS client");
      io->fs_ = *fs;
      io->account_ = a.account_name;
      io->description_ = fmt::format("adls (account {}, {})", a.account_name, creds);
      break;
    }
    case StoreKind::kLocal:
      return Status::Internal("ArrowFileIO::Make for a local path");
  }
  return io;
}

Result<std::string> ArrowFileIO::PathOf(const std::string& location) const {
  ASSIGN_OR_RAISE(auto loc, ParseStoreLocation(location));
  if (loc.kind != kind_ || (kind_ == StoreKind::kAzure && loc.account != account_)) {
    return Status::Internal("{}: given to the FileIO for {}", location, description_);
  }
  return loc.ArrowPath();
}

Status ArrowFileIO::ErrorStatus(const arrow::Status& st, const std::string& location, std::string_view what) const {
  std::string msg = st.message();
  for (const auto& secret : secrets_) {
    for (size_t p = msg.find(secret); p != std::string::npos; p = msg.find(secret, p))
      msg.replace(p, secret.size(), "***");
  }
  // SAS signatures in URLs.
  for (size_t p = msg.find("sig="); p != std::string::npos; p = msg.find("sig=", p + 4)) {
    size_t end = msg.find_first_of("&\" \n", p);
    msg.replace(p + 4, (end == std::string::npos ? msg.size() : end) - p - 4, "***");
  }
  auto has = [&](std::string_view s) { return Contains(msg, s); };
  auto errno_detail = st.detail() ? st.detail()->ToString() : std::string();
  if (has("Path does not exist") || has("HTTP status 404") || has("NoSuchKey") || has("RESOURCE_NOT_FOUND") ||
      has("NoSuchBucket") || has("BlobNotFound") || has("PathNotFound") || Contains(errno_detail, "[errno 2]")) {
    return Status::NotFound("{}: object does not exist ({} failed: {})", location, what, msg);
  }
  if (has("HTTP status 403") || has("HTTP status 401") || has("ACCESS_DENIED") || has("AccessDenied") ||
      has("InvalidAccessKeyId") || has("SignatureDoesNotMatch") || has("INVALID_ACCESS_KEY_ID") ||
      has("SIGNATURE_DOES_NOT_MATCH") || has("AuthenticationFailed") || has("AuthorizationFailure") ||
      has("ExpiredToken")) {
    return Status::PermissionDenied(
        "{}: the store refused access ({} failed: {}). Check the credentials ({}) and that they may read this object",
        location, what, msg, description_);
  }
  // The SDK names some errors without their HTTP status (a GET's 503 is
  // "SERVICE_UNAVAILABLE"): say the status too, as the store sent it.
  if (!has("HTTP status")) {
    if (has("SERVICE_UNAVAILABLE") || has("SLOW_DOWN")) msg += " (HTTP status 503)";
  }
  bool transient = has("HTTP status 5") || has("HTTP status 429") || has("SLOW_DOWN") || has("SlowDown") ||
                   has("NETWORK_CONNECTION") || has("THROTTLING") || has("REQUEST_TIMEOUT") ||
                   has("SERVICE_UNAVAILABLE") || has("INTERNAL_FAILURE") || has("curlCode");
  if (transient && kind_ == StoreKind::kS3) {
    return Status::IOError("{}: {} failed after {} tries with backoff: {}", location, what, retry_.max_attempts, msg);
  }
  return Status::IOError("{}: {} failed: {}", location, what, msg);
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> ArrowFileIO::OpenArrowFile(const std::string& location) {
  ASSIGN_OR_RAISE(auto path, PathOf(location));
  CountRequest(*counters_);  // HEAD
  auto f = fs_->OpenInputFile(path);
  if (!f.ok()) return ErrorStatus(f.status(), location, "open");
  auto size = (*f)->GetSize();
  if (!size.ok()) return ErrorStatus(size.status(), location, "size");
  return std::shared_ptr<arrow::io::RandomAccessFile>(std::make_shared<CountingFile>(*f, counters_, *size));
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> ArrowFileIO::OpenArrowFile(const std::string& location,
                                                                                int64_t size) {
  ASSIGN_OR_RAISE(auto path, PathOf(location));
  arrow::fs::FileInfo info(path, arrow::fs::FileType::File);
  info.set_size(size);
  auto f = fs_->OpenInputFile(info);
  if (!f.ok()) return ErrorStatus(f.status(), location, "open");
  return std::shared_ptr<arrow::io::RandomAccessFile>(std::make_shared<CountingFile>(*f, counters_, size));
}

Result<std::unique_ptr<RandomAccessFile>> ArrowFileIO::Open(const std::string& location) {
  ASSIGN_OR_RAISE(auto f, OpenArrowFile(location));
  auto size = f->GetSize();
  if (!size.ok()) return ErrorStatus(size.status(), location, "size");
  return std::unique_ptr<RandomAccessFile>(new ArrowBackedFile(std::move(f), *size, location, this));
}

Result<std::string> ArrowFileIO::ReadAll(const std::string& location) { return ReadWhole(location, -1); }

Result<std::string> ArrowFileIO::ReadAllWithLength(const std::string& location, int64_t length) {
  return ReadWhole(location, length);
}

Result<std::string> ArrowFileIO::ReadWhole(const std::string& location, int64_t length) {
  const bool cacheable = Cacheable(location);
  const std::string key = fmt::format("{}\x1f{}", id_, location);
  if (cacheable) {
    if (auto hit = ReadAllCache().Get(key)) return **hit;
  }
  // Metadata files, manifest lists and manifests are read one after the other
  // before the first data byte, so each round trip saved here is one off the
  // critical path. Arrow's files need their size:
  // - a manifest's is recorded in the manifest list: one GET, no HEAD (Iceberg
  //   Java trusts that length the same way, newInputFile(path, length));
  // - otherwise a HEAD, and on S3 a GET of the first kOverlapBytes at the same
  //   time: S3 answers a range that runs past the end with the bytes there
  //   are, and the HEAD says how many of them are the file, so a file that
  //   small costs one round trip instead of two (a larger one reads the rest).
  std::shared_ptr<arrow::io::RandomAccessFile> f;
  std::optional<arrow::Future<std::shared_ptr<arrow::Buffer>>> first_bytes;
  if (length >= 0) {
    ASSIGN_OR_RAISE(f, OpenArrowFile(location, length));
  } else {
    if (kind_ == StoreKind::kS3) first_bytes = ReadFirstBytes(location);
    ASSIGN_OR_RAISE(f, OpenArrowFile(location));
  }
  auto size = f->GetSize();
  if (!size.ok()) return ErrorStatus(size.status(), location, "size");
  auto data = std::make_shared<std::string>(static_cast<size_t>(*size), '\0');
  int64_t have = 0;
  if (first_bytes) {
    // A failed early GET (an empty object's 416, retries exhausted) is only
    // a lost head start: the plain read below asks again and names any error.
    auto got = first_bytes->result();
    CountRead(*counters_, got.ok() ? std::min<int64_t>(*size, (*got)->size()) : 0);
    if (got.ok() && ((*got)->size() >= *size || (*got)->size() == kOverlapBytes)) {
      have = std::min<int64_t>(*size, (*got)->size());
      std::memcpy(data->data(), (*got)->data(), static_cast<size_t>(have));
    }
  }
  if (have < *size) {
    auto n = f->ReadAt(have, *size - have, data->data() + have);
    if (!n.ok()) return ErrorStatus(n.status(), location, "read");
    if (*n != *size - have) return Status::Corrupt("{}: short read: {} of {} bytes", location, have + *n, *size);
  }
  if (cacheable && *size <= kReadAllMaxFileBytes) {
    ReadAllCache().Put(key, std::shared_ptr<const std::string>(data), *size);
  }
  return *data;  // a copy: the cache keeps the shared string
}

// The first kOverlapBytes of an object whose size is not known yet, fetched on
// Arrow's IO thread pool (see ReadWhole). Not counted until used.
std::optional<arrow::Future<std::shared_ptr<arrow::Buffer>>> ArrowFileIO::ReadFirstBytes(
    const std::string& location) {
  auto path = PathOf(location);
  if (!path.ok()) return std::nullopt;
  arrow::fs::FileInfo info(*path, arrow::fs::FileType::File);
  info.set_size(kOverlapBytes);
  auto file = fs_->OpenInputFile(info);  // no request: the size is given
  if (!file.ok()) return std::nullopt;
  return (*file)->ReadAsync(arrow::io::default_io_context(), 0, kOverlapBytes);
}

Result<bool> ArrowFileIO::Exists(const std::string& location) {
  ASSIGN_OR_RAISE(auto path, PathOf(location));
  CountRequest(*counters_);
  auto info = fs_->GetFileInfo(path);
  if (!info.ok()) return ErrorStatus(info.status(), location, "stat");
  return info->type() == arrow::fs::FileType::File;
}

Result<std::unique_ptr<OutputFile>> ArrowFileIO::Create(const std::string& location) {
  ASSIGN_OR_RAISE(auto path, PathOf(location));
  auto out = fs_->OpenOutputStream(path);
  if (!out.ok()) return ErrorStatus(out.status(), location, "create");
  return std::unique_ptr<OutputFile>(new ArrowOutputFile(*out, location, this, counters_));
}

Status ArrowFileIO::Delete(const std::string& location) {
  ASSIGN_OR_RAISE(auto path, PathOf(location));
  CountRequest(*counters_);
  auto st = fs_->DeleteFile(path);
  if (!st.ok()) return ErrorStatus(st, location, "delete");
  return Status::OK();
}

Result<std::vector<FileInfo>> ArrowFileIO::List(const std::string& prefix) {
  std::string base = prefix;
  while (!base.empty() && base.back() == '/') base.pop_back();
  ASSIGN_OR_RAISE(auto path, PathOf(base));
  while (!path.empty() && path.back() == '/') path.pop_back();
  arrow::fs::FileSelector selector;
  selector.base_dir = path;
  selector.recursive = true;
  selector.allow_not_found = true;
  CountRequest(*counters_);
  auto infos = fs_->GetFileInfo(selector);
  if (!infos.ok()) return ErrorStatus(infos.status(), prefix, "list");
  std::vector<FileInfo> out;
  for (const auto& info : *infos) {
    if (info.type() != arrow::fs::FileType::File) continue;
    const std::string& p = info.path();
    // Directory markers ("dir/" objects) some stores keep.
    if (p.empty() || p.back() == '/') continue;
    if (p.size() <= path.size() || p.compare(0, path.size(), path) != 0 || p[path.size()] != '/') {
      return Status::Internal("{}: listing returned {} outside the prefix", prefix, p);
    }
    FileInfo f;
    f.location = base + p.substr(path.size());
    f.size = info.size();
    f.mtime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(info.mtime().time_since_epoch()).count();
    out.push_back(std::move(f));
  }
  return out;
}

IOStats ObjectStoreTotals() { return Totals().Snapshot(); }

}  // namespace thaw::storage
