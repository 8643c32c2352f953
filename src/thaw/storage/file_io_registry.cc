#include "thaw/storage/file_io_registry.h"

#include <map>
#include <mutex>

#include "thaw/common/log.h"
#include "thaw/storage/object_store.h"
#include "thaw/storage/store_options.h"

namespace thaw::storage {

namespace {

struct Registry {
  std::mutex mu;
  // Key: kind, ADLS account, then the relevant properties (secrets included, never printed).
  std::map<std::string, std::shared_ptr<FileIO>> ios;
};

Registry& GetRegistry() {
  static auto* r = [] {
    auto* reg = new Registry();  // never destroyed: cleared at exit before the AWS SDK shuts down
    AddObjectStoreShutdownHook([] {
      std::map<std::string, std::shared_ptr<FileIO>> drop;
      {
        std::lock_guard lock(GetRegistry().mu);
        drop.swap(GetRegistry().ios);
      }
      for (const auto& [key, io] : drop) {
        const IOStats s = io->stats();
        log::Debug("{}: {} requests, {} bytes read, {} retries", static_cast<ArrowFileIO&>(*io).description(),
                   s.requests, s.bytes_read, s.retries);
      }
    });
    return reg;
  }();
  return *r;
}

std::string KeyOf(const StoreLocation& loc, const PropertyMap& relevant) {
  std::string key = std::to_string(static_cast<int>(loc.kind));
  key += '\x1e';
  if (loc.kind == StoreKind::kAzure) key += loc.account_host;
  for (const auto& [k, v] : relevant) {
    key += '\x1e';
    key += k;
    key += '\x1f';
    key += v;
  }
  return key;
}

}  // namespace

Result<std::shared_ptr<FileIO>> FileIOFor(const std::string& location, const PropertyMap& properties) {
  ASSIGN_OR_RAISE(auto loc, ParseStoreLocation(location));
  if (loc.kind == StoreKind::kLocal) {
    static auto local = std::make_shared<LocalFileIO>();
    return std::shared_ptr<FileIO>(local);
  }
  PropertyMap relevant = RelevantProperties(loc.kind, properties);
  const std::string key = KeyOf(loc, relevant);
  auto& reg = GetRegistry();
  std::lock_guard lock(reg.mu);
  if (auto it = reg.ios.find(key); it != reg.ios.end()) return it->second;
  ASSIGN_OR_RAISE(auto io, ArrowFileIO::Make(loc, relevant));
  reg.ios.emplace(key, io);
  return std::shared_ptr<FileIO>(std::move(io));
}

size_t FileIORegistrySize() {
  auto& reg = GetRegistry();
  std::lock_guard lock(reg.mu);
  return reg.ios.size();
}

}  // namespace thaw::storage
