#include "thaw/catalog/catalog.h"

#include "thaw/catalog/catalog_config.h"
#include "thaw/storage/file_io_registry.h"

namespace thaw::catalog {

Result<TableIdentifier> TableIdentifier::Parse(std::string_view text) {
  TableIdentifier id;
  std::string part;
  std::vector<std::string> parts;
  for (char c : text) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part.push_back(c);
    }
  }
  parts.push_back(part);
  for (const auto& p : parts) {
    if (p.empty()) return Status::Invalid("table name '{}' is not NAMESPACE.TABLE (empty part)", text);
  }
  if (parts.size() < 2) return Status::Invalid("table name '{}' needs a namespace: use NAMESPACE.TABLE", text);
  id.name = parts.back();
  parts.pop_back();
  id.ns = std::move(parts);
  return id;
}

std::string TableIdentifier::ns_string() const {
  std::string s;
  for (size_t i = 0; i < ns.size(); ++i) s += (i ? "." : "") + ns[i];
  return s;
}

std::string TableIdentifier::ToString() const { return ns_string() + "." + name; }

Status Catalog::CreateNamespace(const std::vector<std::string>& ns) {
  return Status::Unsupported("{} cannot create namespaces ({})", description(), TableIdentifier{ns, "x"}.ns_string());
}

Result<iceberg::Table> Catalog::CreateTable(const TableIdentifier& id, const iceberg::TableCreate&) {
  return Status::Unsupported("{} cannot create tables ({})", description(), id.ToString());
}

Result<iceberg::Table> Catalog::CommitTable(const TableIdentifier& id, const iceberg::Table&,
                                            const std::vector<iceberg::TableRequirement>&,
                                            const std::vector<iceberg::TableUpdate>&) {
  return Status::Unsupported("{} cannot commit to tables ({})", description(), id.ToString());
}

Status MoveTag(Catalog& catalog, const TableIdentifier& id, const std::string& name,
               std::optional<int64_t> snapshot_id) {
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RAISE(auto table, catalog.LoadTable(id));
    const auto& refs = table.metadata.refs;
    auto it = refs.find(name);
    std::optional<int64_t> now;
    if (it != refs.end()) {
      if (it->second.type != "tag") {
        return Status::Invalid("table {}: '{}' is a branch, not a tag; Thaw keeps its own tags only", id.ToString(),
                               name);
      }
      now = it->second.snapshot_id;
    }
    if (now == snapshot_id) return Status::OK();
    std::vector<iceberg::TableUpdate> updates;
    updates.push_back(snapshot_id ? iceberg::TableUpdate::SetTag(name, *snapshot_id)
                                  : iceberg::TableUpdate::RemoveRef(name));
    auto committed = catalog.CommitTable(id, table,
                                         {iceberg::TableRequirement::AssertTableUuid(table.metadata.table_uuid),
                                          iceberg::TableRequirement::AssertRefSnapshotId(name, now)},
                                         updates);
    if (committed.ok()) return Status::OK();
    if (committed.status().code() != StatusCode::kCommitConflict || attempt >= 5) {
      return committed.status().WithContext(
          fmt::format("table {}: {} tag {}", id.ToString(), snapshot_id ? "moving" : "removing", name));
    }
  }
}

Result<std::unique_ptr<Catalog>> OpenCatalog(const std::string& uri, const std::string& catalog_name) {
  ASSIGN_OR_RAISE(CatalogConfig config, ResolveCatalogConfig(uri, {}, {}, catalog_name));
  return OpenCatalog(config);
}

Result<iceberg::Table> LoadTableFromMetadata(const std::string& metadata_location) {
  return LoadTableFromMetadata(metadata_location, storage::PropertyMap{});
}

Result<iceberg::Table> LoadTableFromMetadata(const std::string& metadata_location,
                                             const storage::PropertyMap& properties) {
  ASSIGN_OR_RAISE(auto io, storage::FileIOFor(metadata_location, properties));
  return iceberg::LoadTableFromMetadata(metadata_location, std::move(io));
}

}  // namespace thaw::catalog
