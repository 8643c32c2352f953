#include "thaw/catalog/catalog_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "thaw/catalog/sql_catalog.h"

namespace thaw::catalog {
namespace {

TEST(RedactUri, HidesUserInfoAndQueryPasswords) {
  EXPECT_EQ(RedactUri("postgresql://alice:s3cr%40t@db.example:5432/iceberg"),
            "postgresql://alice:***@db.example:5432/iceberg");
  EXPECT_EQ(RedactUri("postgresql+psycopg2://alice:pw@db/iceberg?sslmode=require"),
            "postgresql+psycopg2://alice:***@db/iceberg?sslmode=require");
  EXPECT_EQ(RedactUri("jdbc:postgresql://db:5432/iceberg?user=bob&password=hunter2&ssl=true"),
            "jdbc:postgresql://db:5432/iceberg?user=bob&password=***&ssl=true");
  EXPECT_EQ(RedactUri("postgresql://alice@db/iceberg"), "postgresql://alice@db/iceberg");
  EXPECT_EQ(RedactUri("sqlite:////tmp/catalog.db"), "sqlite:////tmp/catalog.db");
  EXPECT_EQ(RedactUri("https://rest.example/api/catalog"), "https://rest.example/api/catalog");
}

TEST(ParseSqlUri, SqliteForms) {
  auto abs = ParseSqlUri("sqlite:////data/cat.db", {});
  ASSERT_TRUE(abs.ok()) << abs.status().ToString();
  EXPECT_EQ(abs->backend, SqlTarget::Backend::kSqlite);
  EXPECT_EQ(abs->sqlite_path, "/data/cat.db");
  auto rel = ParseSqlUri("sqlite:///cat.db", {});
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->sqlite_path, "cat.db");
  auto jdbc = ParseSqlUri("jdbc:sqlite:file:/data/cat.db", {});
  ASSERT_TRUE(jdbc.ok());
  EXPECT_EQ(jdbc->sqlite_path, "/data/cat.db");
  auto mem = ParseSqlUri("sqlite:///:memory:", {});
  EXPECT_EQ(mem.status().code(), StatusCode::kInvalidArgument);
}

TEST(ParseSqlUri, PostgresFormsOfPyicebergAndJdbcCatalog) {
  auto py = ParseSqlUri("postgresql+psycopg2://alice:pw@127.0.0.1:5433/thaw", {});
  ASSERT_TRUE(py.ok()) << py.status().ToString();
  EXPECT_EQ(py->backend, SqlTarget::Backend::kPostgres);
  EXPECT_EQ(py->libpq_uri, "postgresql://alice:pw@127.0.0.1:5433/thaw");
  EXPECT_EQ(py->redacted, "postgresql+psycopg2://alice:***@127.0.0.1:5433/thaw");
  auto plain = ParseSqlUri("postgresql://alice:pw@h/thaw", {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->libpq_uri, "postgresql://alice:pw@h/thaw");
  storage::PropertyMap props{{"jdbc.user", "bob"}, {"jdbc.password", "hunter2"}, {"jdbc.sslmode", "disable"}};
  auto jdbc = ParseSqlUri("jdbc:postgresql://h:5432/thaw", props);
  ASSERT_TRUE(jdbc.ok());
  EXPECT_EQ(jdbc->libpq_uri, "postgresql://h:5432/thaw");
  EXPECT_EQ(jdbc->user, "bob");
  EXPECT_EQ(jdbc->password, "hunter2");
  EXPECT_EQ(jdbc->sslmode, "disable");
}

TEST(ParseSqlUri, UnknownSchemeNamesTheFormsWithoutThePassword) {
  auto r = ParseSqlUri("mysql://root:hunter2@db/iceberg", {});
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("mysql://root:***@db/iceberg"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("postgresql://"), std::string::npos);
}

// A ~/.pyiceberg.yaml as pyiceberg's docs write them (mkdocs/docs/configuration.md).
constexpr const char* kYaml = R"(# pyiceberg configuration
default-catalog: prod
catalog:
  default:
    uri: sqlite:////var/lib/iceberg/catalog.db
  Prod:
    type: rest
    uri: https://rest.example.com/api/catalog
    credential: client-id:client-secret
    warehouse: s3://warehouse/
    s3.endpoint: http://127.0.0.1:9000
    S3.Region: us-east-1
    s3.path-style-access: true
  pg:
    uri: postgresql+psycopg2://thaw:pw@127.0.0.1:5432/thaw
    init_catalog_tables: "false"
)";

TEST(PyicebergYaml, RealFileLowerCasesKeysAndNames) {
  PyicebergConfig c;
  ASSERT_TRUE(ParsePyicebergYaml(kYaml, "/home/me/.pyiceberg.yaml", &c).ok());
  ASSERT_EQ(c.catalogs.size(), 3u);
  const auto& prod = c.catalogs.at("prod");
  EXPECT_EQ(prod.at("type"), "rest");
  EXPECT_EQ(prod.at("uri"), "https://rest.example.com/api/catalog");
  EXPECT_EQ(prod.at("s3.region"), "us-east-1");
  EXPECT_EQ(prod.at("s3.path-style-access"), "true");
  EXPECT_EQ(prod.at("credential"), "client-id:client-secret");
  EXPECT_EQ(c.catalogs.at("pg").at("init_catalog_tables"), "false");
  EXPECT_EQ(c.sources.at("prod").at("s3.endpoint"), "/home/me/.pyiceberg.yaml key catalog.prod.s3.endpoint");
}

TEST(PyicebergYaml, ErrorsNameTheFileAndLine) {
  PyicebergConfig c;
  auto st = ParsePyicebergYaml("catalog:\n  prod:\n    uri: [unclosed\n", "/x/.pyiceberg.yaml", &c);
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("/x/.pyiceberg.yaml line"), std::string::npos) << st.message();
  auto list = ParsePyicebergYaml("catalog:\n  prod:\n    uri:\n      - a\n      - b\n", "/x/.pyiceberg.yaml", &c);
  ASSERT_EQ(list.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(list.message().find("key catalog.prod.uri"), std::string::npos) << list.message();
}

TEST(PyicebergEnvironment, MapsVariablesAsPyicebergDoes) {
  PyicebergConfig c;
  ASSERT_TRUE(ParsePyicebergYaml(kYaml, "/h/.pyiceberg.yaml", &c).ok());
  ApplyPyicebergEnvironment({{"PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID", "AKIA"},
                             {"PYICEBERG_CATALOG__PROD__URI", "http://override:8181"},
                             {"PYICEBERG_CATALOG__PROD__WAREHOUSE", ""},
                             {"pyiceberg_catalog__my_cat__uri", "sqlite:////x.db"},
                             {"PYICEBERG_CATALOG__DEV__REST__SIGV4_ENABLED", "true"},
                             {"PYICEBERG_DEFAULT_CATALOG", "dev"},
                             {"PYICEBERG_CATALOG__ONLYNAME", "x"},
                             {"PATH", "/usr/bin"}},
                            &c);
  const auto& prod = c.catalogs.at("prod");
  EXPECT_EQ(prod.at("s3.access-key-id"), "AKIA");
  EXPECT_EQ(prod.at("uri"), "http://override:8181");                 // env wins over yaml
  EXPECT_EQ(prod.at("warehouse"), "s3://warehouse/");                // an empty value keeps the file's
  EXPECT_EQ(prod.at("s3.region"), "us-east-1");                      // untouched
  EXPECT_EQ(c.catalogs.at("my-cat").at("uri"), "sqlite:////x.db");   // '_' -> '-', case-insensitive
  EXPECT_EQ(c.catalogs.at("dev").at("rest.sigv4-enabled"), "true");  // '__' in the key -> '.'
  EXPECT_EQ(c.catalogs.count("onlyname"), 0u);
  EXPECT_EQ(c.sources.at("prod").at("uri"), "PYICEBERG_CATALOG__PROD__URI");
}

PyicebergConfig Sample() {
  PyicebergConfig c;
  c.file = "/h/.pyiceberg.yaml";
  c.searched = {"/h/.pyiceberg.yaml"};
  EXPECT_TRUE(ParsePyicebergYaml(kYaml, c.file, &c).ok());
  ApplyPyicebergEnvironment({{"PYICEBERG_CATALOG__PROD__S3__REGION", "eu-west-1"},
                             {"PYICEBERG_CATALOG__PROD__S3__ENDPOINT", "http://env:9000"},
                             {"PYICEBERG_CATALOG__LOCAL__URI", "sqlite:////env.db"}},
                            &c);
  return c;
}

TEST(ResolveCatalogConfig, PrecedenceCliOverConfigFileOverEnvOverYaml) {
  storage::PropertyMap file{{"s3.endpoint", "http://file:9000"}, {"s3.connect-timeout", "5"}};
  auto r = ResolveCatalogConfig("prod", {"s3.connect-timeout=9", "token=abc=def"}, file, "", Sample());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->type, "rest");
  EXPECT_EQ(r->uri, "https://rest.example.com/api/catalog");       // yaml
  EXPECT_EQ(r->properties.at("s3.region"), "eu-west-1");           // env over yaml
  EXPECT_EQ(r->properties.at("s3.endpoint"), "http://file:9000");  // config file over env
  EXPECT_EQ(r->properties.at("s3.connect-timeout"), "9");          // command line over config file
  EXPECT_EQ(r->properties.at("token"), "abc=def");                 // the first '=' splits
  EXPECT_EQ(r->name, "prod");
  EXPECT_EQ(r->sources.at("s3.region"), "PYICEBERG_CATALOG__PROD__S3__REGION");
  EXPECT_EQ(r->sources.at("s3.connect-timeout"), "--catalog-property s3.connect-timeout");
}

TEST(ResolveCatalogConfig, NamesAreCaseInsensitiveAndNameTheJdbcCatalog) {
  auto r = ResolveCatalogConfig("PG", {}, {}, "", Sample());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->type, "sql");  // inferred from postgresql+psycopg2://
  EXPECT_EQ(r->name, "PG");
  auto flagged = ResolveCatalogConfig("pg", {}, {}, "other", Sample());
  ASSERT_TRUE(flagged.ok());
  EXPECT_EQ(flagged->name, "other");  // --catalog-name wins
  auto env_only = ResolveCatalogConfig("local", {}, {}, "", Sample());
  ASSERT_TRUE(env_only.ok());
  EXPECT_EQ(env_only->uri, "sqlite:////env.db");
}

TEST(ResolveCatalogConfig, UrisAreUsedDirectly) {
  auto rest = ResolveCatalogConfig("http://127.0.0.1:8181", {"warehouse=wh"}, {}, "", Sample());
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->type, "rest");
  EXPECT_EQ(rest->name, "rest");
  EXPECT_EQ(rest->properties.at("uri"), "http://127.0.0.1:8181");
  EXPECT_EQ(rest->properties.count("s3.region"), 0u);  // no named catalog's properties
  auto sql = ResolveCatalogConfig("sqlite:////d/c.db", {}, {{"uri", "http://ignored"}}, "", Sample());
  ASSERT_TRUE(sql.ok());
  EXPECT_EQ(sql->type, "sql");
  EXPECT_EQ(sql->name, "");                  // the only catalog in the database
  EXPECT_EQ(sql->uri, "sqlite:////d/c.db");  // --catalog wins over the config file's uri
  auto from_file = ResolveCatalogConfig("", {}, {{"uri", "https://r.example/api"}}, "", Sample());
  ASSERT_TRUE(from_file.ok());
  EXPECT_EQ(from_file->type, "rest");
  EXPECT_EQ(from_file->sources.at("uri"), "the [catalog] table of the config file");
}

TEST(ResolveCatalogConfig, MissingNamedCatalogListsWhatExistsAndWhere) {
  auto r = ResolveCatalogConfig("staging", {}, {}, "", Sample());
  ASSERT_EQ(r.status().code(), StatusCode::kNotFound);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("catalog 'staging' is not configured"), std::string::npos) << m;
  EXPECT_NE(m.find("/h/.pyiceberg.yaml has no catalog.staging"), std::string::npos) << m;
  EXPECT_NE(m.find("PYICEBERG_CATALOG__STAGING__URI"), std::string::npos) << m;
  EXPECT_NE(m.find("prod (/h/.pyiceberg.yaml)"), std::string::npos) << m;
  EXPECT_NE(m.find("local (environment)"), std::string::npos) << m;
  PyicebergConfig none;
  none.searched = {"/a/.pyiceberg.yaml", "/b/.pyiceberg.yaml"};
  auto r2 = ResolveCatalogConfig("prod", {}, {}, "", none);
  ASSERT_EQ(r2.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r2.status().message().find("no .pyiceberg.yaml found (looked for /a/.pyiceberg.yaml, /b/.pyiceberg.yaml)"),
            std::string::npos)
      << r2.status().message();
}

TEST(ResolveCatalogConfig, BadInputsSayWhatAndNeverShowSecrets) {
  auto no_eq = ResolveCatalogConfig("prod", {"s3.endpoint"}, {}, "", Sample());
  EXPECT_EQ(no_eq.status().code(), StatusCode::kInvalidArgument);
  auto glue = ResolveCatalogConfig("prod", {"type=glue"}, {}, "", Sample());
  EXPECT_EQ(glue.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(glue.status().message().find("--catalog-property type"), std::string::npos) << glue.status().message();
  auto scheme = ResolveCatalogConfig("mysql://root:hunter2@db/x", {}, {}, "", Sample());
  EXPECT_EQ(scheme.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scheme.status().message().find("hunter2"), std::string::npos) << scheme.status().message();
  auto nothing = ResolveCatalogConfig("", {}, {}, "", Sample());
  EXPECT_EQ(nothing.status().code(), StatusCode::kInvalidArgument);
  PyicebergConfig no_uri;
  ApplyPyicebergEnvironment({{"PYICEBERG_CATALOG__X__WAREHOUSE", "s3://w"}}, &no_uri);
  auto r = ResolveCatalogConfig("x", {}, {}, "", no_uri);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("PYICEBERG_CATALOG__X__URI"), std::string::npos) << r.status().message();
  CatalogConfig pg;
  pg.type = "sql";
  pg.name = "pg";
  pg.uri = "postgresql://thaw:hunter2@db/thaw";
  pg.sources["uri"] = "--catalog";
  EXPECT_EQ(pg.Describe(), "sql catalog 'pg' at postgresql://thaw:***@db/thaw (uri from --catalog)");
}

// The files are found where pyiceberg looks: $PYICEBERG_HOME first, then $HOME.
TEST(LoadPyicebergConfig, ReadsPyicebergHomeThenHomeAndTheEnvironment) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("thaw_pyiceberg_" + std::to_string(::getpid()));
  fs::create_directories(dir / "home");
  fs::create_directories(dir / "pyhome");
  std::ofstream(dir / "home" / ".pyiceberg.yaml") << "catalog:\n  fromhome:\n    uri: sqlite:////home.db\n";
  std::ofstream(dir / "pyhome" / ".pyiceberg.yaml") << "catalog:\n  frompyhome:\n    uri: sqlite:////py.db\n";
  const char* old_home = std::getenv("HOME");
  std::string saved_home = old_home ? old_home : "";
  ::setenv("HOME", (dir / "home").c_str(), 1);
  ::setenv("PYICEBERG_CATALOG__ENVCAT__URI", "http://127.0.0.1:1", 1);
  auto home = LoadPyicebergConfig();
  ::setenv("PYICEBERG_HOME", (dir / "pyhome").c_str(), 1);
  auto pyhome = LoadPyicebergConfig();
  ::unsetenv("PYICEBERG_HOME");
  ::unsetenv("PYICEBERG_CATALOG__ENVCAT__URI");
  if (old_home) ::setenv("HOME", saved_home.c_str(), 1);
  fs::remove_all(dir);
  ASSERT_TRUE(home.ok()) << home.status().ToString();
  EXPECT_EQ(home->file, (dir / "home" / ".pyiceberg.yaml").string());
  EXPECT_EQ(home->catalogs.count("fromhome"), 1u);
  EXPECT_EQ(home->catalogs.at("envcat").at("uri"), "http://127.0.0.1:1");
  ASSERT_TRUE(pyhome.ok());
  EXPECT_EQ(pyhome->catalogs.count("frompyhome"), 1u);
  EXPECT_EQ(pyhome->catalogs.count("fromhome"), 0u);  // only the first file found
}

}  // namespace
}  // namespace thaw::catalog
