#include "thaw/catalog/sql_catalog.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace thaw::catalog {
namespace {

namespace fs = std::filesystem;

struct SqliteCatalogTest : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("thaw_sql_catalog_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::string db;

  void SetUp() override {
    fs::create_directories(dir);
    db = (dir / "catalog.db").string();
  }
  void TearDown() override { fs::remove_all(dir); }

  void Sql(const std::string& sql) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(h);
  }
  std::string Scalar(const std::string& sql) {
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
    std::string out = "<none>";
    if (sqlite3_step(st) == SQLITE_ROW) {
      auto* t = sqlite3_column_text(st, 0);
      out = t ? reinterpret_cast<const char*>(t) : "<null>";
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
  }
  std::unique_ptr<SqlCatalog> Open(const std::string& name = "", const storage::PropertyMap& props = {}) {
    CatalogConfig c;
    c.type = "sql";
    c.name = name;
    c.uri = "sqlite:///" + db;
    c.properties = props;
    auto cat = SqlCatalog::Make(c);
    EXPECT_TRUE(cat.ok()) << cat.status().ToString();
    return cat.ok() ? std::move(*cat) : nullptr;
  }
  static TableIdentifier Id(const char* s) { return *TableIdentifier::Parse(s); }
};

TEST_F(SqliteCatalogTest, RegisterCreatesTheV1SchemaAndSwapIsCompareAndSwap) {
  Sql("SELECT 1");  // an empty database file
  auto cat = Open();
  ASSERT_TRUE(cat);
  EXPECT_EQ(cat->catalog_name(), "default");
  ASSERT_TRUE(cat->RegisterTable(Id("ns.t"), "/wh/ns/t/metadata/v1.metadata.json").ok());
  EXPECT_EQ(Scalar("SELECT iceberg_type FROM iceberg_tables WHERE table_name = 't'"), "TABLE");
  EXPECT_EQ(Scalar("SELECT catalog_name || '|' || table_namespace FROM iceberg_tables"), "default|ns");
  auto tables = cat->ListTables();
  ASSERT_TRUE(tables.ok());
  ASSERT_EQ(tables->size(), 1u);
  EXPECT_EQ((*tables)[0].ToString(), "ns.t");

  auto again = cat->RegisterTable(Id("ns.t"), "/elsewhere.json");
  EXPECT_EQ(again.code(), StatusCode::kCommitConflict);
  EXPECT_NE(again.message().find("already exists"), std::string::npos) << again.message();
  EXPECT_NE(again.message().find("v1.metadata.json"), std::string::npos) << again.message();

  ASSERT_TRUE(
      cat->SwapMetadataLocation(Id("ns.t"), "/wh/ns/t/metadata/v1.metadata.json", "/wh/ns/t/metadata/v2.metadata.json")
          .ok());
  EXPECT_EQ(Scalar("SELECT metadata_location || ' ' || previous_metadata_location FROM iceberg_tables"),
            "/wh/ns/t/metadata/v2.metadata.json /wh/ns/t/metadata/v1.metadata.json");
  // A writer that still believes v1 is current loses.
  auto lost = cat->SwapMetadataLocation(Id("ns.t"), "/wh/ns/t/metadata/v1.metadata.json", "/wh/v3.json");
  ASSERT_EQ(lost.code(), StatusCode::kCommitConflict);
  EXPECT_NE(lost.message().find("'ns.t'"), std::string::npos) << lost.message();
  EXPECT_NE(lost.message().find("expected its metadata at /wh/ns/t/metadata/v1.metadata.json"), std::string::npos)
      << lost.message();
  EXPECT_NE(lost.message().find("now at /wh/ns/t/metadata/v2.metadata.json"), std::string::npos) << lost.message();
  EXPECT_EQ(Scalar("SELECT metadata_location FROM iceberg_tables"), "/wh/ns/t/metadata/v2.metadata.json");

  auto missing = cat->SwapMetadataLocation(Id("ns.nope"), "/a", "/b");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
}

TEST_F(SqliteCatalogTest, V0SchemaOfJdbcCatalogAndViewsOfV1) {
  Sql("CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
      "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
      "PRIMARY KEY (catalog_name, table_namespace, table_name));"
      "INSERT INTO iceberg_tables VALUES ('java', 'a.b', 't', '/m/v1.json', NULL);");
  auto cat = Open();
  ASSERT_TRUE(cat);
  EXPECT_EQ(cat->catalog_name(), "java");
  auto tables = cat->ListTables();
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  ASSERT_EQ(tables->size(), 1u);
  EXPECT_EQ((*tables)[0].ToString(), "a.b.t");
  ASSERT_TRUE(cat->SwapMetadataLocation(Id("a.b.t"), "/m/v1.json", "/m/v2.json").ok());
  ASSERT_TRUE(cat->RegisterTable(Id("a.u"), "/m/u1.json").ok());  // V0: no iceberg_type column
  EXPECT_EQ(Scalar("SELECT count(*) FROM iceberg_tables"), "2");

  // V1 (pyiceberg): views are not tables.
  fs::remove(db);
  Sql("CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
      "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), "
      "iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name));"
      "INSERT INTO iceberg_tables VALUES ('c', 'ns', 'v', '/m/view.json', NULL, 'VIEW');"
      "INSERT INTO iceberg_tables VALUES ('c', 'ns', 't', '/m/t.json', NULL, NULL);");
  auto v1 = Open();
  ASSERT_TRUE(v1);
  auto listed = v1->ListTables();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].ToString(), "ns.t");
  EXPECT_EQ(v1->SwapMetadataLocation(Id("ns.v"), "/m/view.json", "/m/x.json").code(), StatusCode::kNotFound);
  EXPECT_EQ(Scalar("SELECT metadata_location FROM iceberg_tables WHERE table_name = 'v'"), "/m/view.json");
}

TEST_F(SqliteCatalogTest, CreateNamespaceOnlyWhenMissing) {
  Sql("SELECT 1");
  auto cat = Open("mine");
  ASSERT_TRUE(cat);
  ASSERT_TRUE(cat->CreateNamespace({"archive", "kafka"}).ok());
  ASSERT_TRUE(cat->CreateNamespace({"archive", "kafka"}).ok());
  EXPECT_EQ(Scalar("SELECT count(*) || ' ' || namespace || ' ' || property_key || '=' || property_value "
                   "FROM iceberg_namespace_properties WHERE catalog_name = 'mine'"),
            "1 archive.kafka exists=true");
  ASSERT_TRUE(cat->RegisterTable(Id("withtables.t"), "/m.json").ok());
  ASSERT_TRUE(cat->CreateNamespace({"withtables"}).ok());  // exists through its table
  EXPECT_EQ(Scalar("SELECT count(*) FROM iceberg_namespace_properties WHERE namespace = 'withtables'"), "0");
}

TEST_F(SqliteCatalogTest, ReadsNeverCreateTheDatabaseWritesDoAndReadsBesideAWriter) {
  CatalogConfig c;
  c.type = "sql";
  c.uri = "sqlite:///" + (dir / "absent.db").string();
  auto cat = SqlCatalog::Make(c);
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  auto tables = (*cat)->ListTables();
  EXPECT_EQ(tables.status().code(), StatusCode::kNotFound);
  EXPECT_NE(tables.status().message().find("does not exist"), std::string::npos) << tables.status().ToString();
  EXPECT_EQ((*cat)->LoadTable(TableIdentifier{{"ns"}, "t"}).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(dir / "absent.db"));
  // The first write creates it, with the JDBC tables, as pyiceberg's SqlCatalog does.
  ASSERT_TRUE((*cat)->CreateNamespace({"ns"}).ok());
  EXPECT_TRUE(fs::exists(dir / "absent.db"));
  auto after = (*cat)->ListTables();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(after->empty());
  // Reading takes no write lock: it works while another connection holds one.
  Sql("CREATE TABLE iceberg_tables (catalog_name TEXT, table_namespace TEXT, table_name TEXT, "
      "metadata_location TEXT, previous_metadata_location TEXT, iceberg_type TEXT)");
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto reader = Open("c");
  ASSERT_TRUE(reader);
  EXPECT_TRUE(reader->ListTables().ok());
  sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
}

// Starts every catalog's SwapMetadataLocation(id, expected -> /m/w<i>.json)
// at once; returns each writer's status.
std::vector<Status> RaceSwaps(const std::vector<std::unique_ptr<SqlCatalog>>& cats, const TableIdentifier& id,
                              const std::string& expected) {
  std::atomic<bool> go{false};
  std::vector<Status> results(cats.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cats.size(); ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      results[i] = cats[i]->SwapMetadataLocation(id, expected, "/m/w" + std::to_string(i) + ".json");
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  return results;
}

// Writers racing on one table: exactly one compare-and-swap wins, the rest
// get kCommitConflict, and the pointer is the winner's.
// A small table to create: two columns, identity-partitioned, sorted.
iceberg::TableCreate SmallCreate() {
  iceberg::TableCreate c;
  c.schema = nlohmann::json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "kafka_partition", "required": true, "type": "int"},
      {"id": 2, "name": "kafka_offset", "required": true, "type": "long"}]})");
  c.partition_spec = nlohmann::json::parse(
      R"({"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "kafka_partition",
          "transform": "identity"}]})");
  c.properties = {{"thaw.layout", "thaw/1"}};
  return c;
}

iceberg::Snapshot NewAppend(const iceberg::Table& base) {
  iceberg::Snapshot s;
  s.snapshot_id = iceberg::NewSnapshotId();
  s.parent_snapshot_id = base.metadata.current_snapshot_id;
  s.sequence_number = base.metadata.last_sequence_number + 1;
  s.timestamp_ms = 1700000000000 + s.sequence_number;
  s.manifest_list = base.metadata.location + "/metadata/snap-" + std::to_string(s.snapshot_id) + "-1-x.avro";
  s.summary = {{"operation", "append"}};
  s.schema_id = 0;
  return s;
}

std::string LocalPath(const std::string& location) {
  return location.rfind("file://", 0) == 0 ? location.substr(7) : location;
}

std::vector<std::string> MetadataFiles(const fs::path& table_dir) {
  std::vector<std::string> names;
  if (!fs::exists(table_dir / "metadata")) return names;
  for (const auto& e : fs::directory_iterator(table_dir / "metadata")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// CreateTable + CommitTable on a SQL catalog, and a second writer (`other`,
// another connection to the same catalog) that commits from a stale base.
void CreateCommitAndConflict(SqlCatalog& cat, SqlCatalog& other, const fs::path& warehouse) {
  auto id = *TableIdentifier::Parse("arch.events");
  const fs::path table_dir = warehouse / "arch.db" / "events";
  auto created = cat.CreateTable(id, SmallCreate());
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->metadata.location, table_dir.string());
  auto files = MetadataFiles(table_dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].substr(0, 6), "00000-");
  EXPECT_EQ(created->metadata_location, (table_dir / "metadata" / files[0]).string());
  EXPECT_FALSE(created->metadata.current_snapshot_id);

  auto again = other.CreateTable(id, SmallCreate());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  EXPECT_NE(again.status().message().find(files[0]), std::string::npos) << again.status().message();

  auto base = other.LoadTable(id);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  EXPECT_EQ(base->metadata.table_uuid, created->metadata.table_uuid);

  iceberg::Snapshot s1 = NewAppend(*base);
  std::vector<iceberg::TableRequirement> reqs = {iceberg::TableRequirement::AssertTableUuid(base->metadata.table_uuid),
                                                 iceberg::TableRequirement::AssertRefSnapshotId("main", std::nullopt)};
  auto c1 =
      cat.CommitTable(id, *base, reqs,
                      {iceberg::TableUpdate::AddSnapshot(s1), iceberg::TableUpdate::SetBranch("main", s1.snapshot_id)});
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  EXPECT_EQ(c1->metadata.current_snapshot_id, s1.snapshot_id);
  EXPECT_NE(c1->metadata_location.find("/metadata/00001-"), std::string::npos) << c1->metadata_location;
  auto reloaded = other.LoadTable(id);
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ(reloaded->metadata_location, c1->metadata_location);
  EXPECT_EQ(reloaded->metadata.current_snapshot_id, s1.snapshot_id);
  EXPECT_EQ(reloaded->metadata.last_sequence_number, 1);

  // A writer still on the first metadata: its own requirement holds on its
  // stale base, but the pointer moved: conflict, and its file is gone.
  iceberg::Snapshot s2 = NewAppend(*base);
  auto stale = other.CommitTable(
      id, *base, reqs,
      {iceberg::TableUpdate::AddSnapshot(s2), iceberg::TableUpdate::SetBranch("main", s2.snapshot_id)});
  ASSERT_EQ(stale.status().code(), StatusCode::kCommitConflict) << stale.status().ToString();
  EXPECT_NE(stale.status().message().find(c1->metadata_location), std::string::npos) << stale.status().message();
  EXPECT_EQ(MetadataFiles(table_dir).size(), 2u);

  // Its requirement fails against the reloaded table: conflict before any file is written.
  auto refused = other.CommitTable(id, *reloaded, reqs, {iceberg::TableUpdate::SetProperties({{"k", "v"}})});
  ASSERT_EQ(refused.status().code(), StatusCode::kCommitConflict) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("expected ref 'main' at absent"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(MetadataFiles(table_dir).size(), 2u);

  // Re-applied on the reloaded table, it commits.
  iceberg::Snapshot s3 = NewAppend(*reloaded);
  auto c2 = other.CommitTable(
      id, *reloaded, {iceberg::TableRequirement::AssertRefSnapshotId("main", s1.snapshot_id)},
      {iceberg::TableUpdate::AddSnapshot(s3), iceberg::TableUpdate::SetBranch("main", s3.snapshot_id)});
  ASSERT_TRUE(c2.ok()) << c2.status().ToString();
  EXPECT_NE(c2->metadata_location.find("/metadata/00002-"), std::string::npos) << c2->metadata_location;
  EXPECT_EQ(c2->metadata.CurrentSnapshot()->parent_snapshot_id, s1.snapshot_id);
  EXPECT_EQ(c2->metadata.snapshot_log.size(), 2u);
  EXPECT_EQ(MetadataFiles(table_dir).size(), 3u);
}

TEST_F(SqliteCatalogTest, CreateTableUnderTheWarehouseAndCommit) {
  Sql("SELECT 1");
  const fs::path warehouse = dir / "wh";
  auto cat = Open("", {{"warehouse", "file://" + warehouse.string() + "/"}});
  auto other = Open("", {{"warehouse", warehouse.string()}});
  ASSERT_TRUE(cat && other);
  auto no_wh = Open();
  ASSERT_TRUE(no_wh);
  auto refused = no_wh->CreateTable(Id("arch.events"), SmallCreate());
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--warehouse"), std::string::npos) << refused.status().message();

  // The file:// warehouse: locations keep the scheme as given.
  auto created = cat->CreateTable(Id("arch.uri"), SmallCreate());
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->metadata.location, "file://" + (warehouse / "arch.db" / "uri").string());
  EXPECT_EQ(Scalar("SELECT namespace FROM iceberg_namespace_properties"), "arch");

  auto plain = Open("", {{"warehouse", warehouse.string()}});
  ASSERT_TRUE(plain);
  CreateCommitAndConflict(*plain, *other, warehouse);
  EXPECT_EQ(Scalar("SELECT count(*) FROM iceberg_tables WHERE table_namespace = 'arch'"), "2");

  // pyiceberg's SqlCatalog loads the table and sees the committed snapshots.
  const char* python = std::getenv("THAW_PYTHON");
  ASSERT_TRUE(python && *python) << "set THAW_PYTHON to the venv python with pyiceberg (make test does)";
  const std::string script =
      "import sys, json\n"
      "from pyiceberg.catalog.sql import SqlCatalog\n"
      "cat = SqlCatalog('default', uri='sqlite:///' + sys.argv[1], warehouse=sys.argv[2])\n"
      "t = cat.load_table('arch.events')\n"
      "print(json.dumps({'current': t.current_snapshot().snapshot_id, 'n': len(t.metadata.snapshots),\n"
      "  'layout': t.properties.get('thaw.layout'), 'spec': [f.name for f in t.spec().fields],\n"
      "  'history': len(t.metadata.metadata_log)}))\n";
  std::ofstream(dir / "load.py") << script;
  std::string cmd = fmt::format("'{}' '{}' '{}' '{}' 2>&1", python, (dir / "load.py").string(), db, warehouse.string());
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  auto loaded = cat->LoadTable(Id("arch.events"));
  ASSERT_TRUE(loaded.ok());
  auto got = nlohmann::json::parse(out);
  EXPECT_EQ(got["current"], *loaded->metadata.current_snapshot_id);
  EXPECT_EQ(got["n"], 2);
  EXPECT_EQ(got["layout"], "thaw/1");
  EXPECT_EQ(got["spec"], nlohmann::json::array({"kafka_partition"}));
  EXPECT_EQ(got["history"], 2);
}

// pyiceberg's `warehouse` (here from ~/.pyiceberg.yaml's form, and --catalog-property over it) reaches the
// SQL catalog opened from the resolved configuration.
TEST_F(SqliteCatalogTest, WarehouseFromTheCatalogConfiguration) {
  Sql("SELECT 1");
  PyicebergConfig py;
  ASSERT_TRUE(ParsePyicebergYaml(
                  fmt::format("catalog:\n  local:\n    uri: sqlite:///{}\n    warehouse: {}/yaml\n", db, dir.string()),
                  "test.yaml", &py)
                  .ok());
  for (const auto& [args, want] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{}, (dir / "yaml").string()}, {{"warehouse=" + (dir / "flag").string()}, (dir / "flag").string()}}) {
    auto config = ResolveCatalogConfig("local", args, {}, "", py);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    auto cat = OpenCatalog(*config);
    ASSERT_TRUE(cat.ok()) << cat.status().ToString();
    auto t = (*cat)->CreateTable(Id(args.empty() ? "ns.a" : "ns.b"), SmallCreate());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->metadata.location, want + (args.empty() ? "/ns.db/a" : "/ns.db/b"));
    EXPECT_TRUE(fs::exists(LocalPath(t->metadata_location))) << t->metadata_location;
  }
}

TEST_F(SqliteCatalogTest, ConcurrentSwapsHaveOneWinner) {
  Sql("SELECT 1");
  {
    auto cat = Open();
    ASSERT_TRUE(cat);
    ASSERT_TRUE(cat->RegisterTable(Id("ns.t"), "/m/v0.json").ok());
  }
  constexpr int kWriters = 8;
  std::vector<std::unique_ptr<SqlCatalog>> cats;
  for (int i = 0; i < kWriters; ++i) {
    cats.push_back(Open());
    ASSERT_TRUE(cats.back());
  }
  auto results = RaceSwaps(cats, Id("ns.t"), "/m/v0.json");
  int winners = 0, conflicts = 0, winner = -1;
  for (int i = 0; i < kWriters; ++i) {
    if (results[i].ok()) winners++, winner = i;
    if (results[i].code() == StatusCode::kCommitConflict) conflicts++;
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(conflicts, kWriters - 1);
  ASSERT_GE(winner, 0);
  EXPECT_EQ(Scalar("SELECT metadata_location FROM iceberg_tables"), "/m/w" + std::to_string(winner) + ".json");
}

// A real PostgreSQL 15 (Debian's, a test dependency: scripts/deps/debian-test-packages.txt), initdb'd into a
// temp dir, on a free loopback port; as the `postgres` user when we run as root (the server refuses root).
class PostgresServer {
 public:
  static constexpr const char* kBin = "/usr/lib/postgresql/15/bin";
  std::string dir, error;
  int port = 0;

  PostgresServer() {
    char tmpl[] = "/tmp/thaw-pg-unit-XXXXXX";
    if (!::mkdtemp(tmpl)) {
      error = "mkdtemp failed";
      return;
    }
    dir = tmpl;
    if (::geteuid() == 0) {
      const passwd* pw = ::getpwnam("postgres");
      if (!pw || ::chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        error = "no postgres user to run the server as";
        return;
      }
      as_ = "runuser -u postgres -- ";
    }
    if (!Run(fmt::format("{}/initdb -D {}/data -U postgres --auth-local=trust --auth-host=scram-sha-256 --no-sync "
                         "-E UTF8 --locale=C",
                         kBin, dir))) {
      return;
    }
    for (int attempt = 0; attempt < 5; ++attempt) {
      port = FreePort();
      if (Run(fmt::format("{}/pg_ctl start -w -t 60 -D {}/data -l {}/log -o \"-p {} -k {} -c "
                          "listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off\"",
                          kBin, dir, dir, port, dir))) {
        started_ = true;
        break;
      }
    }
    if (!started_) return;
    error.clear();
    Run(
        fmt::format("{}/psql -h {} -p {} -U postgres -d postgres -v ON_ERROR_STOP=1 -q -c \"CREATE ROLE thaw LOGIN "
                    "PASSWORD 'unit-pw'\" -c \"CREATE DATABASE thaw OWNER thaw\"",
                    kBin, dir, port));
  }
  ~PostgresServer() {
    if (started_) Run(fmt::format("{}/pg_ctl stop -D {}/data -m immediate -w", kBin, dir));
    if (!dir.empty()) fs::remove_all(dir);
  }
  std::string Uri(const std::string& password = "unit-pw") const {
    return fmt::format("postgresql://thaw:{}@127.0.0.1:{}/thaw", password, port);
  }

 private:
  bool Run(const std::string& cmd) {
    const std::string out = dir + "/cmd.out";
    int rc = std::system((as_ + cmd + " > " + out + " 2>&1").c_str());
    if (rc != 0) {
      std::ifstream in(out);
      std::stringstream text;
      text << in.rdbuf();
      std::ifstream log(dir + "/log");
      text << "\nserver log:\n" << log.rdbuf();
      error = cmd + " failed: " + text.str();
      return false;
    }
    return true;
  }
  static int FreePort() {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
  }
  std::string as_;
  bool started_ = false;
};

Result<std::unique_ptr<SqlCatalog>> OpenPg(const std::string& uri, const storage::PropertyMap& props = {},
                                           const std::string& name = "") {
  CatalogConfig c;
  c.type = "sql";
  c.name = name;
  c.uri = uri;
  c.properties = props;
  return SqlCatalog::Make(c);
}

// One server for the checks below (each gtest runs in its own process under ctest).
TEST(PostgresCatalog, CommitPrimitivesRacingWritersAndCredentials) {
  PostgresServer pg;
  ASSERT_TRUE(pg.error.empty()) << pg.error;
  auto id = *TableIdentifier::Parse("ns.t");

  // A wrong password: refused, clearly, without the password.
  auto wrong = OpenPg(pg.Uri("Wrong-Pw-4417"));
  ASSERT_EQ(wrong.status().code(), StatusCode::kPermissionDenied) << wrong.status().ToString();
  EXPECT_EQ(wrong.status().message().find("Wrong-Pw-4417"), std::string::npos) << wrong.status().message();
  EXPECT_NE(wrong.status().message().find("password authentication failed"), std::string::npos)
      << wrong.status().message();
  EXPECT_NE(wrong.status().message().find("postgresql://thaw:***@127.0.0.1"), std::string::npos);

  // An empty database: the first write creates the V1 schema.
  auto cat = OpenPg(pg.Uri());
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  EXPECT_EQ((*cat)->catalog_name(), "default");
  EXPECT_EQ((*cat)->description().find("unit-pw"), std::string::npos);
  ASSERT_TRUE((*cat)->CreateNamespace({"ns"}).ok());
  ASSERT_TRUE((*cat)->RegisterTable(id, "/m/v0.json").ok());
  EXPECT_EQ((*cat)->RegisterTable(id, "/m/other.json").code(), StatusCode::kCommitConflict);
  auto listed = (*cat)->ListTables();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);

  // JdbcCatalog's form: credentials as properties.
  auto jdbc = OpenPg(fmt::format("jdbc:postgresql://127.0.0.1:{}/thaw", pg.port),
                     {{"jdbc.user", "thaw"}, {"jdbc.password", "unit-pw"}});
  ASSERT_TRUE(jdbc.ok()) << jdbc.status().ToString();
  ASSERT_TRUE((*jdbc)->SwapMetadataLocation(id, "/m/v0.json", "/m/v1.json").ok());
  auto stale = (*cat)->SwapMetadataLocation(id, "/m/v0.json", "/m/stale.json");
  ASSERT_EQ(stale.code(), StatusCode::kCommitConflict) << stale.ToString();
  EXPECT_NE(stale.message().find("now at /m/v1.json"), std::string::npos) << stale.message();

  // Eight connections race from v1: one wins.
  constexpr int kWriters = 8;
  std::vector<std::unique_ptr<SqlCatalog>> cats;
  for (int i = 0; i < kWriters; ++i) {
    auto c = OpenPg(pg.Uri());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cats.push_back(std::move(*c));
  }
  auto results = RaceSwaps(cats, id, "/m/v1.json");
  int winners = 0, conflicts = 0;
  for (const auto& r : results) {
    winners += r.ok();
    conflicts += r.code() == StatusCode::kCommitConflict;
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(conflicts, kWriters - 1);

  // Creating and committing tables, metadata under a local warehouse.
  const fs::path warehouse = fs::path(pg.dir) / "wh";
  auto a = OpenPg(pg.Uri(), {{"warehouse", warehouse.string()}});
  auto b = OpenPg(pg.Uri(), {{"warehouse", warehouse.string()}});
  ASSERT_TRUE(a.ok() && b.ok());
  CreateCommitAndConflict(**a, **b, warehouse);
}

}  // namespace
}  // namespace thaw::catalog
