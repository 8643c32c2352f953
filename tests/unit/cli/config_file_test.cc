#include "thaw/cli/config_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "thaw/cli/replay.h"

namespace thaw::cli {
namespace {

struct Fixture : ::testing::Test {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("thaw_config_test_" + std::to_string(::getpid()));
  CLI::App app{"t"};
  CLI::App* cmd = nullptr;
  bool exactly_once = false, dry_run = false;
  int64_t every = 0;
  double rate = 0;
  std::string brokers, from_time;
  std::vector<std::string> props, topics;

  void SetUp() override {
    std::filesystem::create_directories(dir);
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    cmd = app.add_subcommand("replay", "r");
    app.add_subcommand("inspect", "i");
    cmd->add_flag("--exactly-once", exactly_once, "");
    cmd->add_flag("--dry-run", dry_run, "");
    cmd->add_option("--checkpoint-every", every, "");
    cmd->add_option("--rate", rate, "");
    cmd->add_option("-b,--brokers", brokers, "");
    cmd->add_option("--from-time", from_time, "");
    cmd->add_option("-X", props, "");
    cmd->add_option("--topic", topics, "");  // repeatable, not name=value
    AddConfigOption(cmd);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string Write(const std::string& text) {
    auto p = dir / "c.toml";
    std::ofstream(p) << text;
    return p.string();
  }
  Result<ExpandedArgs> Expand(std::vector<std::string> args) { return ExpandConfigFiles(args, app); }
  void Parse(const ExpandedArgs& e) {
    std::vector<const char*> c;
    for (const auto& a : e.args) c.push_back(a.c_str());
    app.parse(static_cast<int>(c.size()), c.data());
  }
};

TEST_F(Fixture, RealTomlInlineCommentsUnderscoresSectionsAndDates) {
  auto f = Write(R"(brokers = "h:9092"   # an inline comment
checkpoint-every = 1_000
rate = 2.5
exactly-once = true
from-time = 2024-05-01T12:00:00+02:00
X = ["acks=all", "linger.ms=5"]
[replay]
brokers = "section:9092"
[inspect]
brokers = "not-for-replay:1"
)");
  auto e = Expand({"thaw", "replay", "--config", f});
  ASSERT_TRUE(e.ok()) << e.status().message();
  Parse(*e);
  EXPECT_EQ(every, 1000);
  EXPECT_EQ(rate, 2.5);
  EXPECT_TRUE(exactly_once);
  EXPECT_EQ(brokers, "section:9092");  // the command's own section wins
  EXPECT_EQ(from_time, "2024-05-01T12:00:00.000000000+02:00");
  EXPECT_EQ(props, (std::vector<std::string>{"acks=all", "linger.ms=5"}));
}

TEST_F(Fixture, CommandLineWinsAndTurnsAFileFlagOff) {
  auto f = Write("exactly-once = true\ndry-run = true\nbrokers = \"file:1\"\nX = { \"acks\" = \"all\" }\n");
  auto e = Expand({"thaw", "replay", "--config", f, "--exactly-once=false", "-b", "cli:2", "-X", "acks=1"});
  ASSERT_TRUE(e.ok()) << e.status().message();
  Parse(*e);
  EXPECT_FALSE(exactly_once);
  EXPECT_TRUE(dry_run);
  EXPECT_EQ(brokers, "cli:2");
  EXPECT_EQ(props, (std::vector<std::string>{"acks=all", "acks=1"}));  // the later -X wins when applied
}

TEST_F(Fixture, ARepeatableOptionOnTheCommandLineReplacesTheFilesNeverMerges) {
  auto f = Write("topic = [\"a\", \"b\"]\nbrokers = \"top:1\"\n[replay]\ntopic = [\"c\"]\n");
  auto e = Expand({"thaw", "replay", "--config", f});
  ASSERT_TRUE(e.ok()) << e.status().message();
  Parse(*e);
  EXPECT_EQ(topics, (std::vector<std::string>{"c"}));  // the [replay] table's, not a, b and c
  EXPECT_EQ(brokers, "top:1");
  EXPECT_TRUE(CheckRepeatedOptions(e->args, app).ok());

  topics.clear();
  e = Expand({"thaw", "replay", "--config", f, "--topic", "d", "-b", "cli:2"});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_TRUE(CheckRepeatedOptions(e->args, app).ok()) << "the file's --brokers is dropped, not given twice";
  Parse(*e);
  EXPECT_EQ(topics, (std::vector<std::string>{"d"}));
  EXPECT_EQ(brokers, "cli:2");

  // A later file replaces an earlier one's setting too.
  auto g = (dir / "d.toml").string();
  std::ofstream(g) << "topic = [\"e\"]\n";
  topics.clear();
  e = Expand({"thaw", "replay", "--config", f, "--config", g});
  ASSERT_TRUE(e.ok()) << e.status().message();
  Parse(*e);
  EXPECT_EQ(topics, (std::vector<std::string>{"e"}));
}

TEST_F(Fixture, AnOptionThatTakesOneValueGivenTwiceIsAUsageError) {
  auto st = CheckRepeatedOptions({"thaw", "replay", "-b", "a:1", "--rate", "5", "--brokers=b:2"}, app);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--brokers is given more than once, and it takes one value"), std::string::npos)
      << st.message();
  st = CheckRepeatedOptions({"thaw", "replay", "--dry-run", "--dry-run"}, app);
  EXPECT_NE(st.message().find("--dry-run is given more than once: give it once"), std::string::npos) << st.message();
  // A value that looks like an option is the value, not a second option.
  EXPECT_TRUE(CheckRepeatedOptions({"thaw", "replay", "--from-time", "--rate", "--rate", "1"}, app).ok());
  // Repeatable options add up; other commands' options are not counted.
  EXPECT_TRUE(CheckRepeatedOptions({"thaw", "replay", "-X", "a=1", "-Xb=2", "--topic", "t", "--topic", "u"}, app).ok());
  EXPECT_TRUE(CheckRepeatedOptions({"thaw", "inspect", "--rate", "1", "--rate", "2"}, app).ok());
}

TEST_F(Fixture, ErrorsNameFileLineAndKey) {
  auto f = Write("brokers = \"h:1\"\n\nparallel = 3\n");
  auto e = Expand({"thaw", "replay", "--config", f});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("--config " + f +
                                      " line 3 key 'parallel': `thaw replay` has no option "
                                      "--parallel"),
            std::string::npos)
      << e.status().message();

  f = Write("brokers = \"h:1\"\ndry-run = \"yes\"\n");
  e = Expand({"thaw", "replay", "--config", f});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("line 2 key 'dry-run': --dry-run is a flag; give true or false"),
            std::string::npos)
      << e.status().message();

  f = Write("brokers localhost\n");
  e = Expand({"thaw", "replay", "--config", f});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--config " + f + " line 1 column"), std::string::npos) << e.status().message();

  f = Write("brokers = [\"a\", \"b\"]\n");
  e = Expand({"thaw", "replay", "--config", f});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--brokers takes one value, not an array"), std::string::npos);

  e = Expand({"thaw", "replay", "--config", (dir / "missing.toml").string()});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("cannot read the file"), std::string::npos);
}

TEST_F(Fixture, ParseErrorsOfFileValuesSayWhereTheValueCameFrom) {
  auto f = Write("brokers = \"h:1\"\n# comment\ncheckpoint-every = \"lots\"\n");
  auto e = Expand({"thaw", "replay", "--config", f});
  ASSERT_TRUE(e.ok()) << e.status().message();
  try {
    Parse(*e);
    FAIL() << "parsed";
  } catch (const CLI::ParseError& err) {
    std::string m = e->Explain(err.what());
    EXPECT_NE(m.find("(set by --config " + f + " line 3 key 'checkpoint-every')"), std::string::npos) << m;
  }
}

TEST(ConfigUpstream, UpstreamTableBecomesTheTieredProxysOptions) {
  CLI::App app{"t"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  CLI::App* serve = app.add_subcommand("serve", "s");
  CLI::App* replay = app.add_subcommand("replay", "r");
  std::vector<std::string> upstream, props, rprops;
  std::string ports;
  serve->add_option("--upstream", upstream, "");
  serve->add_option("--broker-ports", ports, "");
  serve->add_option("-X", props, "");
  replay->add_option("-X", rprops, "");
  const auto dir = std::filesystem::temp_directory_path() / ("thaw_upstream_cfg_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& text) {
    std::ofstream(dir / "u.toml") << text;
    return (dir / "u.toml").string();
  };
  auto f = write(
      "[upstream]\nbootstrap = \"k1:9092,k2:9092\"\nbroker-ports = \"19000-19099\"\n"
      "X = { \"request.timeout.ms\" = \"60000\" }\n");
  auto e = ExpandConfigFiles({"thaw", "serve", "--config", f}, app);
  ASSERT_TRUE(e.ok()) << e.status().message();
  std::vector<const char*> c;
  for (const auto& a : e->args) c.push_back(a.c_str());
  app.parse(static_cast<int>(c.size()), c.data());
  EXPECT_EQ(upstream, (std::vector<std::string>{"k1:9092,k2:9092"}));
  EXPECT_EQ(ports, "19000-19099");
  EXPECT_EQ(props, (std::vector<std::string>{"request.timeout.ms=60000"}));

  // An unknown key names itself. Replay has no upstream: at the top level the table is serve's and replay
  // passes over it (one file for every command); in [replay] it is a mistake.
  f = write("[upstream]\nbootstrap = \"k:1\"\nlisten = \"x\"\n");
  e = ExpandConfigFiles({"thaw", "serve", "--config", f}, app);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("[upstream] takes bootstrap, broker-ports, cold-suffix, X and F, not 'listen'"),
            std::string::npos)
      << e.status().message();
  f = write("[upstream]\nbootstrap = \"k:1\"\n");
  e = ExpandConfigFiles({"thaw", "replay", "--config", f}, app);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->args, (std::vector<std::string>{"thaw", "replay"}));
  f = write("[replay.upstream]\nbootstrap = \"k:1\"\n");
  e = ExpandConfigFiles({"thaw", "replay", "--config", f}, app);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("`thaw replay` has no upstream"), std::string::npos) << e.status().message();
  std::filesystem::remove_all(dir);
}

TEST(ConfigHelp, ConfigIsListedInTheCommandsHelp) {
  CLI::App app{"t"};
  int code = 0;
  RegisterReplay(&app, &code);
  for (auto* c : app.get_subcommands([](CLI::App*) { return true; })) AddConfigOption(c);
  EXPECT_NE(app.get_subcommand("replay")->help().find("--config"), std::string::npos);
}

}  // namespace
}  // namespace thaw::cli
