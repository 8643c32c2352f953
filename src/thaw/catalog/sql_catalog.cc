#include "thaw/catalog/sql_catalog.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "thaw/common/log.h"
#include "thaw/iceberg/metadata_text.h"
#include "thaw/storage/file_io_registry.h"

namespace thaw::catalog {

// A table's metadata document as this catalog last committed it.
struct CommittedDocument {
  std::string location;
  nlohmann::json json;
  iceberg::MetadataText text;
};

using Row = std::vector<std::optional<std::string>>;
using Params = std::vector<std::optional<std::string>>;

// One database connection. SQL uses $1, $2 ... parameters (PostgreSQL's
// form; rewritten to ?1, ?2 ... for SQLite).
class SqlBackend {
 public:
  virtual ~SqlBackend() = default;
  virtual Result<std::vector<Row>> Query(const std::string& sql, const Params& params) = 0;
  // Runs a write and returns the number of rows it changed. A write whose
  // outcome is unknown (the connection dropped) is kCommitStateUnknown.
  virtual Result<int64_t> Exec(const std::string& sql, const Params& params) = 0;
  // Makes the connection writable (SQLite opens read-only until a write).
  virtual Status PrepareWrite() = 0;
  virtual const std::string& where() const = 0;  // for messages; never a password
  // A SQLite database file that does not exist yet: every read finds no
  // table, and the first write (archive --create) creates it, as pyiceberg's
  // SqlCatalog does.
  virtual bool missing() const { return false; }
};

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// The password of scheme://user:PASS@host/..., as written (percent-encoded).
std::string UserInfoPassword(std::string_view uri) {
  size_t scheme = uri.find("://");
  if (scheme == std::string_view::npos) return "";
  size_t start = scheme + 3;
  size_t end = uri.find_first_of("/?#", start);
  std::string_view authority = uri.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return "";
  std::string_view userinfo = authority.substr(0, at);
  size_t colon = userinfo.find(':');
  return colon == std::string_view::npos ? "" : std::string(userinfo.substr(colon + 1));
}

std::string PercentDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int h = hex(s[i + 1]), l = hex(s[i + 2]);
      if (h >= 0 && l >= 0) {
        out.push_back(static_cast<char>(h * 16 + l));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

// Replaces every occurrence of each secret in `text` with ***.
std::string Scrub(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets) {
    if (s.size() < 2) continue;  // a one-character password would blank out the message
    for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 3))
      text.replace(at, s.size(), "***");
  }
  return text;
}

class SqliteBackend : public SqlBackend {
 public:
  static Result<std::unique_ptr<SqliteBackend>> Open(const std::string& path) {
    auto b = std::unique_ptr<SqliteBackend>(new SqliteBackend(path));
    if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
      // Not there yet: an empty in-memory database stands in until a write creates the file.
      b->missing_ = true;
      RETURN_NOT_OK(b->Connect(SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, ":memory:"));
      return b;
    }
    // A writer killed in a transaction leaves a hot journal that only a read-write connection rolls back (on a
    // read-only one every query fails): open read-write when the file allows it (never creating it), else read-only.
    if (::access(path.c_str(), W_OK) == 0 && b->Connect(SQLITE_OPEN_READWRITE).ok()) {
      b->writable_ = true;
      return b;
    }
    RETURN_NOT_OK(b->Connect(SQLITE_OPEN_READONLY));
    return b;
  }
  ~SqliteBackend() override { sqlite3_close(db_); }

  Result<std::vector<Row>> Query(const std::string& sql, const Params& params) override {
    ASSIGN_OR_RAISE(sqlite3_stmt * st, Prepare(sql, params));
    std::vector<Row> rows;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      Row row;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
        row.push_back(text ? std::optional<std::string>(text) : std::nullopt);
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return Status::IOError("SQLite catalog {}: {}", path_, sqlite3_errmsg(db_));
    return rows;
  }

  Result<int64_t> Exec(const std::string& sql, const Params& params) override {
    ASSIGN_OR_RAISE(sqlite3_stmt * st, Prepare(sql, params));
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return Status::IOError("SQLite catalog {}: {}", path_, sqlite3_errmsg(db_));
    return static_cast<int64_t>(sqlite3_changes(db_));
  }

  Status PrepareWrite() override {
    if (writable_) return Status::OK();
    sqlite3_close(db_);
    db_ = nullptr;
    RETURN_NOT_OK(Connect(missing_ ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READWRITE));
    missing_ = false;
    writable_ = true;
    return Status::OK();
  }

  const std::string& where() const override { return path_; }
  bool missing() const override { return missing_; }

 private:
  explicit SqliteBackend(std::string path) : path_(std::move(path)) {}

  Status Connect(int flags, const std::string& file = "") {
    if (sqlite3_open_v2(file.empty() ? path_.c_str() : file.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      std::string err = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      std::string hint =
          !path_.empty() && path_[0] != '/'
              ? fmt::format(" (relative to the working directory; for /{} write sqlite:////{})", path_, path_)
              : "";
      return Status::NotFound("catalog database '{}' cannot be opened{}: {}", path_, hint, err);
    }
    sqlite3_busy_timeout(db_, 5000);
    return Status::OK();
  }

  Result<sqlite3_stmt*> Prepare(const std::string& sql, const Params& params) {
    std::string s = sql;  // $N -> ?N
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      if (s[i] == '$' && s[i + 1] >= '0' && s[i + 1] <= '9') s[i] = '?';
    }
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, s.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      return Status::IOError("SQLite catalog {}: {}", path_, sqlite3_errmsg(db_));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i]) {
        sqlite3_bind_text(st, static_cast<int>(i + 1), params[i]->c_str(), -1, SQLITE_TRANSIENT);
      } else {
        sqlite3_bind_null(st, static_cast<int>(i + 1));
      }
    }
    return st;
  }

  sqlite3* db_ = nullptr;
  std::string path_;
  bool writable_ = false;
  bool missing_ = false;
};

class PostgresBackend : public SqlBackend {
 public:
  static Result<std::unique_ptr<PostgresBackend>> Open(const SqlTarget& t) {
    auto b = std::unique_ptr<PostgresBackend>(new PostgresBackend(t.redacted));
    if (!t.password.empty()) b->secrets_.push_back(t.password);
    std::string uri_password = UserInfoPassword(t.libpq_uri);
    if (!uri_password.empty()) {
      b->secrets_.push_back(uri_password);
      b->secrets_.push_back(PercentDecode(uri_password));
    }
    // Processed in order, later ones win: defaults, then the URI, then properties.
    std::vector<const char*> keys = {"connect_timeout", "application_name", "dbname"};
    std::vector<const char*> values = {"10", "thaw", t.libpq_uri.c_str()};
    if (!t.user.empty()) keys.push_back("user"), values.push_back(t.user.c_str());
    if (!t.password.empty()) keys.push_back("password"), values.push_back(t.password.c_str());
    if (!t.sslmode.empty()) keys.push_back("sslmode"), values.push_back(t.sslmode.c_str());
    keys.push_back(nullptr);
    values.push_back(nullptr);
    b->conn_ = PQconnectdbParams(keys.data(), values.data(), 1);
    if (!b->conn_) return Status::IOError("catalog {}: libpq could not allocate a connection", t.redacted);
    PQsetNoticeProcessor(
        b->conn_, [](void*, const char*) {}, nullptr);  // no NOTICE lines on stderr
    if (PQstatus(b->conn_) != CONNECTION_OK) {
      std::string err = b->Message(PQerrorMessage(b->conn_));
      if (err.find("password authentication failed") != std::string::npos ||
          err.find("no password supplied") != std::string::npos ||
          err.find("authentication failed") != std::string::npos) {
        return Status::PermissionDenied(
            "catalog {}: PostgreSQL refused the credentials: {} (check the user and password in the URI, or "
            "jdbc.user / jdbc.password)",
            t.redacted, err);
      }
      return Status::IOError("catalog {}: cannot connect to PostgreSQL: {}", t.redacted, err);
    }
    return b;
  }
  ~PostgresBackend() override {
    if (conn_) PQfinish(conn_);
  }

  Result<std::vector<Row>> Query(const std::string& sql, const Params& params) override {
    ASSIGN_OR_RAISE(PGresult * r, Run(sql, params, /*write=*/false));
    std::vector<Row> rows;
    for (int i = 0; i < PQntuples(r); ++i) {
      Row row;
      for (int j = 0; j < PQnfields(r); ++j) {
        row.push_back(PQgetisnull(r, i, j) ? std::nullopt : std::optional<std::string>(PQgetvalue(r, i, j)));
      }
      rows.push_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }

  Result<int64_t> Exec(const std::string& sql, const Params& params) override {
    ASSIGN_OR_RAISE(PGresult * r, Run(sql, params, /*write=*/true));
    const char* n = PQcmdTuples(r);
    int64_t changed = n && *n ? std::strtoll(n, nullptr, 10) : 0;
    PQclear(r);
    return changed;
  }

  Status PrepareWrite() override { return Status::OK(); }
  const std::string& where() const override { return where_; }

 private:
  explicit PostgresBackend(std::string where) : where_(std::move(where)) {}

  std::string Message(const char* m) const {
    // libpq's messages span lines ("...failed: Connection refused\n\tIs the server running..."): one line.
    std::string s;
    for (const char* p = m ? m : ""; *p; ++p) {
      if (*p == '\n' || *p == '\t') {
        if (!s.empty() && s.back() != ' ') s += *p == '\n' ? "; " : " ";
      } else {
        s += *p;
      }
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == ';')) s.pop_back();
    return Scrub(s, secrets_);
  }

  Result<PGresult*> Run(const std::string& sql, const Params& params, bool write) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    PGresult* r =
        PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) return r;
    std::string err = Message(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
    if (r) PQclear(r);
    if (PQstatus(conn_) == CONNECTION_BAD) {
      PQreset(conn_);  // for the next statement
      if (write) {
        return Status::CommitStateUnknown(
            "catalog {}: the connection to PostgreSQL dropped during a write ({}); it may or may not have been "
            "applied: reload the table before retrying",
            where_, err);
      }
      return Status::IOError("catalog {}: the connection to PostgreSQL dropped: {}", where_, err);
    }
    return Status::IOError("catalog {}: {}", where_, err);
  }

  PGconn* conn_ = nullptr;
  std::string where_;
  std::vector<std::string> secrets_;
};

std::string JoinNames(const std::vector<TableIdentifier>& ids) {
  std::string names;
  for (const auto& t : ids) names += (names.empty() ? "" : ", ") + t.ToString();
  return names.empty() ? "none" : names;
}

}  // namespace

std::string RedactUri(std::string_view uri) {
  std::string out(uri);
  std::string pass = UserInfoPassword(out);
  if (!pass.empty()) {
    size_t scheme = out.find("://");
    size_t colon = out.find(':', scheme + 3);
    out.replace(colon + 1, pass.size(), "***");
  }
  // password=... in the query string (libpq and JDBC URIs).
  size_t q = out.find('?');
  while (q != std::string::npos && q < out.size()) {
    size_t start = q + 1;
    size_t end = out.find('&', start);
    std::string_view param =
        std::string_view(out).substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (StartsWith(Lower(param), "password=")) {
      out.replace(start + 9, param.size() - 9, "***");
      end = out.find('&', start);
    }
    q = end;
  }
  return out;
}

Result<SqlTarget> ParseSqlUri(const std::string& uri, const storage::PropertyMap& properties) {
  SqlTarget t;
  t.redacted = RedactUri(uri);
  auto prop = [&](const char* key) {
    auto it = properties.find(key);
    return it == properties.end() ? std::string() : it->second;
  };
  const std::string lower = Lower(uri.substr(0, std::min<size_t>(uri.size(), 32)));
  if (StartsWith(lower, "sqlite:///")) {
    t.backend = SqlTarget::Backend::kSqlite;
    t.sqlite_path = uri.substr(10);
  } else if (StartsWith(lower, "jdbc:sqlite:")) {
    t.backend = SqlTarget::Backend::kSqlite;
    t.sqlite_path = uri.substr(12);
    if (StartsWith(t.sqlite_path, "file:")) t.sqlite_path = t.sqlite_path.substr(5);
    t.sqlite_path = t.sqlite_path.substr(0, t.sqlite_path.find('?'));
  } else if (StartsWith(lower, "postgresql://") || StartsWith(lower, "postgres://") ||
             StartsWith(lower, "postgresql+") || StartsWith(lower, "jdbc:postgresql://")) {
    t.backend = SqlTarget::Backend::kPostgres;
    size_t sep = uri.find("://");
    if (sep == std::string::npos) {
      return Status::Invalid("catalog URI '{}' is not postgresql://USER:PASSWORD@HOST:PORT/DATABASE", t.redacted);
    }
    t.libpq_uri = "postgresql://" + uri.substr(sep + 3);
    t.user = prop("jdbc.user");
    t.password = prop("jdbc.password");
    t.sslmode = prop("jdbc.sslmode");
  } else {
    return Status::Invalid(
        "catalog URI '{}' is not a SQL catalog: use sqlite:////absolute/path/catalog.db, "
        "postgresql://USER:PASSWORD@HOST:PORT/DATABASE (also postgresql+psycopg2://...), or "
        "jdbc:postgresql://HOST:PORT/DATABASE with jdbc.user and jdbc.password properties",
        t.redacted);
  }
  if (t.backend == SqlTarget::Backend::kSqlite) {
    if (t.sqlite_path.empty()) return Status::Invalid("catalog URI '{}' has no database path", t.redacted);
    if (t.sqlite_path == ":memory:") {
      return Status::Invalid("catalog URI '{}' is an in-memory database, which no other process can see", t.redacted);
    }
  }
  return t;
}

SqlCatalog::SqlCatalog(std::unique_ptr<SqlBackend> db, std::string name, storage::PropertyMap properties)
    : db_(std::move(db)), name_(std::move(name)), properties_(std::move(properties)) {
  // properties_ go to the tables' FileIO: not the database's URI and credentials.
  properties_.erase("uri");
  for (auto it = properties_.begin(); it != properties_.end();) {
    it = StartsWith(it->first, "jdbc.") ? properties_.erase(it) : std::next(it);
  }
}

SqlCatalog::~SqlCatalog() = default;

Result<std::unique_ptr<SqlCatalog>> SqlCatalog::Make(const CatalogConfig& config) {
  ASSIGN_OR_RAISE(SqlTarget t, ParseSqlUri(config.uri, config.properties));
  std::unique_ptr<SqlBackend> db;
  if (t.backend == SqlTarget::Backend::kSqlite) {
    ASSIGN_OR_RAISE(db, SqliteBackend::Open(t.sqlite_path));
  } else {
    ASSIGN_OR_RAISE(db, PostgresBackend::Open(t));
  }
  auto cat = std::unique_ptr<SqlCatalog>(new SqlCatalog(std::move(db), config.name, config.properties));
  RETURN_NOT_OK(cat->DetectSchema());
  if (cat->name_.empty()) {
    // The only catalog name in the database; "default" in an empty one.
    std::vector<Row> rows;
    if (cat->has_schema_) {
      ASSIGN_OR_RAISE(rows, cat->db_->Query("SELECT DISTINCT catalog_name FROM iceberg_tables ORDER BY 1", {}));
    }
    if (rows.size() > 1) {
      std::string all;
      for (const auto& r : rows) all += (all.empty() ? "" : ", ") + r[0].value_or("");
      return Status::Invalid("catalog database {} holds several catalogs ({}): pick one with --catalog-name",
                             cat->db_->where(), all);
    }
    cat->name_ = rows.empty() ? "default" : rows[0][0].value_or("default");
  }
  return cat;
}

Status SqlCatalog::DetectSchema() {
  if (db_->Query("SELECT iceberg_type FROM iceberg_tables WHERE 1 = 0", {}).ok()) {
    has_schema_ = v1_ = true;
  } else if (db_->Query("SELECT metadata_location FROM iceberg_tables WHERE 1 = 0", {}).ok()) {
    has_schema_ = true;
    v1_ = false;
  } else {
    has_schema_ = v1_ = false;
  }
  return Status::OK();
}

Status SqlCatalog::EnsureSchema() {
  RETURN_NOT_OK(db_->PrepareWrite());
  // The V1 schema, as pyiceberg creates it; only what is missing (an existing
  // V0 iceberg_tables stays as it is), so that a user allowed only to update
  // rows can commit.
  if (!has_schema_) {
    RETURN_NOT_OK(db_->Exec("CREATE TABLE IF NOT EXISTS iceberg_tables (catalog_name VARCHAR(255) NOT NULL, "
                            "table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, "
                            "metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
                            "iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name))",
                            {})
                      .status());
    RETURN_NOT_OK(DetectSchema());
  }
  if (!db_->Query("SELECT property_key FROM iceberg_namespace_properties WHERE 1 = 0", {}).ok()) {
    RETURN_NOT_OK(db_->Exec("CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (catalog_name VARCHAR(255) NOT "
                            "NULL, namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255), property_value "
                            "VARCHAR(1000), PRIMARY KEY (catalog_name, namespace, property_key))",
                            {})
                      .status());
  }
  return Status::OK();
}

std::string SqlCatalog::TypeFilter() const {
  return v1_ ? " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)" : "";
}

Status SqlCatalog::NoSchema() const {
  if (db_->missing()) {
    return Status::NotFound("catalog database {} does not exist (check the path; `thaw archive --create` creates it)",
                            db_->where());
  }
  return Status::Corrupt("catalog database {} has no iceberg_tables table: not an Iceberg SQL catalog", db_->where());
}

std::string SqlCatalog::description() const {
  return fmt::format("SQL catalog {} (catalog '{}')", db_->where(), name_);
}

Result<std::vector<TableIdentifier>> SqlCatalog::ListTables() {
  if (!has_schema_) {
    return NoSchema();
  }
  ASSIGN_OR_RAISE(auto rows, db_->Query("SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = "
                                        "$1" +
                                            TypeFilter() + " ORDER BY table_namespace, table_name",
                                        {name_}));
  std::vector<TableIdentifier> out;
  for (const auto& r : rows) {
    auto id = TableIdentifier::Parse(r[0].value_or("") + "." + r[1].value_or(""));
    if (id.ok()) out.push_back(*id);
  }
  return out;
}

Result<std::optional<std::string>> SqlCatalog::CurrentLocation(const TableIdentifier& id) {
  if (!has_schema_) {
    return NoSchema();
  }
  ASSIGN_OR_RAISE(auto rows, db_->Query("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 AND "
                                        "table_namespace = $2 AND table_name = $3" +
                                            TypeFilter(),
                                        {name_, id.ns_string(), id.name}));
  if (rows.empty()) return std::optional<std::string>();
  return rows[0][0];
}

Result<iceberg::Table> SqlCatalog::LoadTable(const TableIdentifier& id) {
  ASSIGN_OR_RAISE(auto location, CurrentLocation(id));
  if (!location) {
    auto all = ListTables();
    return Status::NotFound("table '{}' not found in {} (catalog '{}'; tables: {})", id.ToString(), db_->where(), name_,
                            all.ok() ? JoinNames(*all) : "unknown");
  }
  ASSIGN_OR_RAISE(auto table, catalog::LoadTableFromMetadata(*location, properties_));
  table.name = id.ToString();
  return table;
}

Status SqlCatalog::CreateNamespace(const std::vector<std::string>& ns) {
  if (ns.empty()) return Status::Invalid("CreateNamespace needs a namespace name");
  TableIdentifier probe{ns, "x"};
  const std::string name = probe.ns_string();
  RETURN_NOT_OK(EnsureSchema());
  ASSIGN_OR_RAISE(auto props, db_->Query("SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = $1 AND "
                                         "namespace = $2",
                                         {name_, name}));
  if (!props.empty()) return Status::OK();
  ASSIGN_OR_RAISE(auto tables, db_->Query("SELECT 1 FROM iceberg_tables WHERE catalog_name = $1 AND "
                                          "table_namespace = $2",
                                          {name_, name}));
  if (!tables.empty()) return Status::OK();
  auto inserted = db_->Exec(
      "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) "
      "VALUES ($1, $2, 'exists', 'true')",
      {name_, name});
  if (inserted.ok()) return Status::OK();
  // Another writer may have created it meanwhile.
  ASSIGN_OR_RAISE(auto again, db_->Query("SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = $1 AND "
                                         "namespace = $2",
                                         {name_, name}));
  if (!again.empty()) return Status::OK();
  return inserted.status();
}

Status SqlCatalog::SwapMetadataLocation(const TableIdentifier& id, const std::string& expected_location,
                                        const std::string& new_location) {
  RETURN_NOT_OK(EnsureSchema());
  ASSIGN_OR_RAISE(int64_t changed,
                  db_->Exec("UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2 "
                            "WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND "
                            "metadata_location = $2" +
                                TypeFilter(),
                            {new_location, expected_location, name_, id.ns_string(), id.name}));
  if (changed == 1) return Status::OK();
  ASSIGN_OR_RAISE(auto now, CurrentLocation(id));
  if (!now) {
    return Status::NotFound("table '{}' not found in {} (catalog '{}'): cannot commit to it", id.ToString(),
                            db_->where(), name_);
  }
  return Status::CommitConflict(
      "table '{}' in {}: commit lost a race: expected its metadata at {} but it is now at {}; not moved to {} "
      "(reload the table and re-apply)",
      id.ToString(), db_->where(), expected_location, *now, new_location);
}

Status SqlCatalog::RegisterTable(const TableIdentifier& id, const std::string& metadata_location) {
  RETURN_NOT_OK(EnsureSchema());
  auto exists = [&]() -> Status {
    ASSIGN_OR_RAISE(auto rows, db_->Query("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 AND "
                                          "table_namespace = $2 AND table_name = $3",
                                          {name_, id.ns_string(), id.name}));
    if (rows.empty()) return Status::OK();
    return Status::CommitConflict(
        "table '{}' already exists in {} (catalog '{}', metadata at {}): not registered at {}", id.ToString(),
        db_->where(), name_, rows[0][0].value_or("NULL"), metadata_location);
  };
  RETURN_NOT_OK(exists());
  const std::string sql =
      v1_ ? "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
            "previous_metadata_location, iceberg_type) VALUES ($1, $2, $3, $4, NULL, 'TABLE')"
          : "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
            "previous_metadata_location) VALUES ($1, $2, $3, $4, NULL)";
  auto inserted = db_->Exec(sql, {name_, id.ns_string(), id.name, metadata_location});
  if (inserted.ok()) return Status::OK();
  if (inserted.status().code() == StatusCode::kCommitStateUnknown) return inserted.status();
  RETURN_NOT_OK(exists());  // lost the race to another creator
  return inserted.status();
}

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Writes a metadata file; it exists only once this returns OK.
Status WriteMetadataFile(storage::FileIO& io, const std::string& location, const std::string& text) {
  ASSIGN_OR_RAISE(auto out, io.Create(location));
  Status st = out->Write(text.data(), static_cast<int64_t>(text.size()));
  if (st.ok()) st = out->Close();
  if (!st.ok()) {
    out->Abort();
    return st.WithContext(fmt::format("writing table metadata {}", location));
  }
  return Status::OK();
}

// Deletes a metadata file no catalog row points at (best effort: a leftover
// is an orphan for `thaw maintain --remove-orphans`).
void DeleteUnreferenced(storage::FileIO& io, const std::string& location) { (void)io.Delete(location); }

// write.metadata.delete-after-commit.enabled (Iceberg's TableProperties,
// default false): after a commit, the metadata files that dropped out of the
// metadata-log (write.metadata.previous-versions-max bounds it) are deleted,
// as Iceberg Java's catalogs do, so a table committed every few seconds does
// not keep every metadata.json it ever had.
std::set<std::string> MetadataLogFiles(const nlohmann::json& md) {
  std::set<std::string> out;
  auto log = md.find("metadata-log");
  if (log == md.end() || !log->is_array()) return out;
  for (const auto& e : *log) {
    if (e.is_object() && e.contains("metadata-file") && e["metadata-file"].is_string()) {
      out.insert(e["metadata-file"].get<std::string>());
    }
  }
  return out;
}

// `before`: the base's metadata-log files and the base itself.
void DeleteDroppedMetadata(storage::FileIO& io, const std::set<std::string>& before, const nlohmann::json& next) {
  auto props = next.find("properties");
  if (props == next.end() || !props->is_object()) return;
  auto enabled = props->find("write.metadata.delete-after-commit.enabled");
  if (enabled == props->end() || !enabled->is_string()) return;
  std::string v = enabled->get<std::string>();
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v != "true") return;
  const std::set<std::string> kept = MetadataLogFiles(next);
  for (const auto& f : before) {
    if (kept.count(f)) continue;
    Status st = io.Delete(f);
    if (!st.ok()) log::Debug("deleting metadata file {} dropped from the metadata-log: {}", f, st.message());
  }
}

}  // namespace

Result<iceberg::Table> SqlCatalog::CreateTable(const TableIdentifier& id, const iceberg::TableCreate& create) {
  if (id.ns.empty()) return Status::Invalid("table '{}' needs a namespace", id.name);
  if (has_schema_) {
    ASSIGN_OR_RAISE(auto current, CurrentLocation(id));
    if (current) {
      return Status::AlreadyExists("table '{}' already exists in {} (catalog '{}', metadata at {})", id.ToString(),
                                   db_->where(), name_, *current);
    }
  }
  iceberg::TableCreate c = create;
  if (c.location.empty()) {
    auto it = properties_.find("warehouse");
    std::string warehouse = it == properties_.end() ? "" : it->second;
    while (!warehouse.empty() && warehouse.back() == '/') warehouse.pop_back();
    if (warehouse.empty()) {
      return Status::Invalid(
          "cannot create table '{}' in {}: no location for it; pass --warehouse URI (the table goes to "
          "URI/{}.db/{}) or set the catalog's `warehouse` property",
          id.ToString(), db_->where(), id.ns_string(), id.name);
    }
    c.location = fmt::format("{}/{}.db/{}", warehouse, id.ns_string(), id.name);
  }
  ASSIGN_OR_RAISE(nlohmann::json md, iceberg::NewTableMetadata(c, NowMs()));
  const std::string text = md.dump();
  const std::string location = iceberg::NextMetadataLocation(c.location, "");
  ASSIGN_OR_RAISE(auto parsed, iceberg::TableMetadata::Parse(text, location));
  RETURN_NOT_OK(CreateNamespace(id.ns));
  ASSIGN_OR_RAISE(std::shared_ptr<storage::FileIO> io, storage::FileIOFor(location, properties_));
  RETURN_NOT_OK(WriteMetadataFile(*io, location, text));
  Status registered = RegisterTable(id, location);
  if (!registered.ok()) {
    if (registered.code() == StatusCode::kCommitStateUnknown) return registered;  // the row may point at it
    DeleteUnreferenced(*io, location);
    if (registered.code() == StatusCode::kCommitConflict) return Status::AlreadyExists("{}", registered.message());
    return registered;
  }
  iceberg::Table t;
  t.name = id.ToString();
  t.metadata_location = location;
  t.metadata = std::move(parsed);
  t.io = std::move(io);
  return t;
}

Result<iceberg::Table> SqlCatalog::CommitTable(const TableIdentifier& id, const iceberg::Table& base,
                                               const std::vector<iceberg::TableRequirement>& requirements,
                                               const std::vector<iceberg::TableUpdate>& updates) {
  const std::string what = fmt::format("committing to table '{}' in {}", id.ToString(), db_->where());
  if (base.metadata_location.empty()) return Status::Invalid("{}: the base table has no metadata location", what);
  std::shared_ptr<storage::FileIO> io = base.io;
  if (!io) {
    ASSIGN_OR_RAISE(io, storage::FileIOFor(base.metadata_location, properties_));
  }
  // The document this catalog committed last for the table, when it is the
  // base (metadata files never change once written); else the file, read.
  std::unique_ptr<CommittedDocument> doc;
  {
    std::lock_guard<std::mutex> lock(committed_mu_);
    auto it = committed_.find(id.ToString());
    if (it != committed_.end()) {
      if (it->second->location == base.metadata_location) doc = std::move(it->second);
      committed_.erase(it);
    }
  }
  if (!doc) {
    doc = std::make_unique<CommittedDocument>();
    ASSIGN_OR_RAISE(std::string base_text, iceberg::ReadMetadataText(base.metadata_location, *io));
    doc->json = nlohmann::json::parse(base_text, nullptr, /*allow_exceptions=*/false);
    if (doc->json.is_discarded()) {
      return Status::Corrupt("{}: table metadata {} is not valid JSON", what, base.metadata_location);
    }
  }
  std::set<std::string> before = MetadataLogFiles(doc->json);
  before.insert(base.metadata_location);
  auto applied = iceberg::ApplyCommit(std::move(doc->json), base.metadata_location, requirements, updates, NowMs());
  if (!applied.ok()) return applied.status().WithContext(what);
  std::string text;
  try {
    text = doc->text.Dump(*applied);
  } catch (const nlohmann::json::exception& e) {
    return Status::Invalid("{}: the new metadata cannot be written as JSON: {}", what, e.what());
  }
  std::string table_location = applied->value("location", base.metadata.location);
  const std::string location = iceberg::NextMetadataLocation(table_location, base.metadata_location);
  // Never publish metadata Thaw itself cannot read back.
  ASSIGN_OR_RAISE(auto parsed, iceberg::TableMetadata::FromJson(*applied, location, &base.metadata));
  RETURN_NOT_OK(WriteMetadataFile(*io, location, text));
  text.clear();
  text.shrink_to_fit();
  Status swapped = SwapMetadataLocation(id, base.metadata_location, location);
  auto committed = [&]() {
    doc->location = location;
    doc->json = std::move(*applied);
    {
      std::lock_guard<std::mutex> lock(committed_mu_);
      committed_[id.ToString()] = std::move(doc);
    }
    iceberg::Table t;
    t.name = id.ToString();
    t.metadata_location = location;
    t.metadata = std::move(parsed);
    t.io = io;
    return t;
  };
  if (swapped.ok()) {
    DeleteDroppedMetadata(*io, before, *applied);
    return committed();
  }
  if (swapped.code() == StatusCode::kCommitConflict || swapped.code() == StatusCode::kNotFound) {
    DeleteUnreferenced(*io, location);  // no row points at it
    return swapped;
  }
  // Anything else: a database that refused the statement did not apply it; a
  // dropped connection may have. Either way, look where the pointer is.
  auto now = CurrentLocation(id);
  if (now.ok() && *now && **now == location) return committed();
  if (swapped.code() != StatusCode::kCommitStateUnknown) {
    DeleteUnreferenced(*io, location);
    return swapped.WithContext(what);
  }
  return Status::CommitStateUnknown(
      "{}: swapping the metadata pointer to {} failed ({}); the commit may or may not have been applied: the file "
      "is kept, reload the table ({})",
      what, location, swapped.message(),
      now.ok() ? fmt::format("it points at {} now", now->value_or("nothing")) : now.status().message());
}

Result<std::unique_ptr<Catalog>> OpenSqliteCatalog(const std::string& uri, const std::string& catalog_name) {
  CatalogConfig config;
  config.name = catalog_name;
  config.type = "sql";
  config.uri = uri;
  config.properties["uri"] = uri;
  ASSIGN_OR_RAISE(auto cat, SqlCatalog::Make(config));
  return std::unique_ptr<Catalog>(std::move(cat));
}

}  // namespace thaw::catalog
