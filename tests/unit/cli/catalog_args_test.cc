#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "thaw/cli/config_file.h"
#include "thaw/cli/table_args.h"

namespace thaw::cli {
namespace {

struct CatalogArgsTest : ::testing::Test {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("thaw_catalog_args_" + std::to_string(::getpid()));
  CLI::App app{"t"};
  CLI::App* inspect = nullptr;
  CLI::App* other = nullptr;
  CatalogArgs args;

  void SetUp() override {
    std::filesystem::create_directories(dir);
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    inspect = app.add_subcommand("inspect", "i");
    args.Register(inspect);
    AddConfigOption(inspect);
    other = app.add_subcommand("version", "v");
    AddConfigOption(other);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string Write(const std::string& text) {
    auto p = dir / "c.toml";
    std::ofstream(p) << text;
    return p.string();
  }
  void Parse(const ExpandedArgs& e) {
    std::vector<const char*> c;
    for (const auto& a : e.args) c.push_back(a.c_str());
    app.parse(static_cast<int>(c.size()), c.data());
  }
};

TEST_F(CatalogArgsTest, CatalogTableBecomesPropertiesBelowTheCommandLine) {
  auto f = Write(R"([catalog]
uri = "sqlite:////data/c.db"
"s3.endpoint" = "http://127.0.0.1:9000"   # quoted dotted key
s3.region = "us-east-1"                   # unquoted: a nested table, joined with '.'
s3.path-style-access = true
connect-timeout = 5
)");
  auto e = ExpandConfigFiles({"thaw", "inspect", "--config", f, "--catalog-property", "s3.region=eu-west-1"}, app);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Parse(*e);
  EXPECT_EQ(std::set<std::string>(args.config_properties.begin(), args.config_properties.end()),
            (std::set<std::string>{"uri=sqlite:////data/c.db", "s3.endpoint=http://127.0.0.1:9000",
                                   "s3.region=us-east-1", "s3.path-style-access=true", "connect-timeout=5"}));
  auto c = args.Resolve();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->uri, "sqlite:////data/c.db");
  EXPECT_EQ(c->type, "sql");
  EXPECT_EQ(c->properties.at("s3.region"), "eu-west-1");  // --catalog-property wins
  EXPECT_EQ(c->properties.at("s3.endpoint"), "http://127.0.0.1:9000");
  EXPECT_EQ(c->sources.at("s3.endpoint"), "the [catalog] table of the config file");
}

TEST_F(CatalogArgsTest, ErrorsNameFileLineAndKey) {
  auto f = Write("[catalog]\nuri = \"http://x\"\n\"s3.endpoint\" = [\"a\", \"b\"]\n");
  auto e = ExpandConfigFiles({"thaw", "inspect", "--config", f}, app);
  ASSERT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("--config " + f + " line 3 key 'catalog.s3.endpoint'"), std::string::npos)
      << e.status().message();
  // At the top level, a [catalog] table is for the commands that read one: one file serves every command,
  // and one without a catalog passes over it ...
  auto g = Write("[catalog]\nuri = \"http://x\"\n");
  auto top = ExpandConfigFiles({"thaw", "version", "--config", g}, app);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(top->args, (std::vector<std::string>{"thaw", "version"}));
  // ... but in the command's own table it is a mistake.
  auto h = Write("[version.catalog]\nuri = \"http://x\"\n");
  auto v = ExpandConfigFiles({"thaw", "version", "--config", h}, app);
  ASSERT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("reads no catalog"), std::string::npos) << v.status().message();
}

}  // namespace
}  // namespace thaw::cli
