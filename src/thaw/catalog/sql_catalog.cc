#include "thaw/catalog/sql_catalog.h"

#include <sqlite3.h>

#include <optional>

namespace thaw::catalog {

namespace {

class SqlCatalog : public Catalog {
 public:
  SqlCatalog(sqlite3* db, std::string path, std::string name)
      : db_(db), path_(std::move(path)), name_(std::move(name)) {}
  ~SqlCatalog() override { sqlite3_close(db_); }

  std::string description() const override { return "SQL catalog " + path_; }

  Result<std::vector<TableIdentifier>> ListTables() override {
    std::vector<TableIdentifier> out;
    const char* sql =
        "SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ?1 "
        "ORDER BY table_namespace, table_name";
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) return Error("listing tables");
    sqlite3_bind_text(st, 1, name_.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string ns = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      std::string tn = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
      auto id = TableIdentifier::Parse(ns + "." + tn);
      if (id.ok()) out.push_back(*id);
    }
    sqlite3_finalize(st);
    return out;
  }

  Result<iceberg::Table> LoadTable(const TableIdentifier& id) override {
    const char* sql =
        "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2 "
        "AND table_name = ?3";
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) return Error("loading table");
    const std::string ns = id.ns_string();
    sqlite3_bind_text(st, 1, name_.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, ns.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, id.name.c_str(), -1, SQLITE_TRANSIENT);
    std::optional<std::string> location;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
      location = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    if (!location) {
      auto all = ListTables();
      std::string names;
      if (all.ok()) {
        for (const auto& t : *all) names += (names.empty() ? "" : ", ") + t.ToString();
      }
      return Status::NotFound("table '{}' not found in {} (catalog '{}'; tables: {})", id.ToString(), path_, name_,
                              names.empty() ? "none" : names);
    }
    auto table = catalog::LoadTableFromMetadata(*location);
    if (!table.ok()) return table.status();
    table->name = id.ToString();
    return table;
  }

 private:
  Status Error(const char* what) {
    return Status::IOError("{} in {}: {} (is this an Iceberg SQL catalog?)", what, path_, sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::string path_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Catalog>> OpenSqliteCatalog(const std::string& uri, const std::string& catalog_name) {
  const std::string prefix = "sqlite:///";
  if (uri.rfind(prefix, 0) != 0) {
    return Status::Invalid(
        "catalog URI '{}' is not supported: use sqlite:////absolute/path/catalog.db "
        "(or --metadata PATH for a table without a catalog)",
        uri);
  }
  std::string path = uri.substr(prefix.size());
  if (path.empty()) return Status::Invalid("catalog URI '{}' has no database path", uri);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string hint =
        path[0] != '/' ? fmt::format(" (relative to the working directory; for /{} write sqlite:////{})", path, path)
                       : "";
    sqlite3_close(db);
    return Status::NotFound("catalog database '{}' cannot be opened{}", path, hint);
  }
  sqlite3_busy_timeout(db, 5000);
  // Pick the catalog name: the one given, else the only one in the table.
  std::string name = catalog_name;
  if (name.empty()) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT DISTINCT catalog_name FROM iceberg_tables", -1, &st, nullptr) != SQLITE_OK) {
      std::string err = sqlite3_errmsg(db);
      sqlite3_close(db);
      return Status::Corrupt("catalog database '{}' has no iceberg_tables table ({}): not an Iceberg SQL catalog", path,
                             err);
    }
    std::vector<std::string> names;
    while (sqlite3_step(st) == SQLITE_ROW)
      names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    if (names.size() > 1) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      sqlite3_close(db);
      return Status::Invalid("catalog database '{}' holds several catalogs ({}): pick one with --catalog-name", path,
                             all);
    }
    name = names.empty() ? "default" : names[0];
  }
  return std::unique_ptr<Catalog>(new SqlCatalog(db, path, name));
}

}  // namespace thaw::catalog
