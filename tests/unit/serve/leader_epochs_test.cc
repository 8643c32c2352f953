// LeaderEpochs: the epoch history a served topic keeps per partition
// (truncations, OffsetForLeaderEpoch's answers as Kafka's leader-epoch cache
// gives them) and its file across restarts.
#include "thaw/serve/leader_epochs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace thaw::serve {
namespace {

namespace fs = std::filesystem;

using History = std::vector<EpochStart>;

TEST(LeaderEpochs, AppendsNeverStartAnEpoch) {
  auto e = *LeaderEpochs::Open("", "uuid");
  EXPECT_EQ(e->Current(0), 0);
  e->Observe(0, 100);
  EXPECT_EQ(e->Truncate(0, 100), std::nullopt);  // the same end
  EXPECT_EQ(e->Truncate(0, 150), std::nullopt);  // more
  EXPECT_EQ(e->Truncate(3, 0), std::nullopt);    // never served: nothing a consumer read
  EXPECT_EQ(e->History(0), (History{{0, 0}}));
  EXPECT_EQ(e->EndOffsetFor(0, 0, 150), std::make_pair(0, int64_t{150}));
}

TEST(LeaderEpochs, ATruncationStartsTheNextEpochAtTheNewEnd) {
  auto e = *LeaderEpochs::Open("", "uuid");
  e->Observe(0, 100);
  EXPECT_EQ(e->Truncate(0, 80), 1);
  EXPECT_EQ(e->History(0), (History{{0, 0}, {1, 80}}));
  EXPECT_EQ(e->Current(0), 1);
  EXPECT_EQ(e->Current(1), 0);  // per partition
  EXPECT_EQ(e->EpochAt(0, 79), 0);
  EXPECT_EQ(e->EpochAt(0, 80), 1);
  EXPECT_EQ(e->EndOffsetFor(0, 0, 90), std::make_pair(0, int64_t{80}));
  EXPECT_EQ(e->EndOffsetFor(0, 1, 90), std::make_pair(1, int64_t{90}));
  EXPECT_EQ(e->EndOffsetFor(0, 2, 90), std::make_pair(-1, int64_t{-1}));
  EXPECT_EQ(e->EndOffsetFor(0, -1, 90), std::make_pair(-1, int64_t{-1}));
  // Served to 80 in epoch 1: a lower end again starts epoch 2.
  EXPECT_EQ(e->Truncate(0, 80), std::nullopt);
  e->Observe(0, 120);
  EXPECT_EQ(e->Truncate(0, 110), 2);
  EXPECT_EQ(e->History(0), (History{{0, 0}, {1, 80}, {2, 110}}));
  EXPECT_EQ(e->EndOffsetFor(0, 1, 115), std::make_pair(1, int64_t{110}));
}

TEST(LeaderEpochs, ATruncationBelowAnEpochsStartDropsItAsAKafkaReplicaDoes) {
  auto e = *LeaderEpochs::Open("", "uuid");
  e->Observe(0, 100);
  ASSERT_EQ(e->Truncate(0, 80), 1);
  e->Observe(0, 90);
  EXPECT_EQ(e->Truncate(0, 60), 2);
  EXPECT_EQ(e->History(0), (History{{0, 0}, {2, 60}}));
  // A consumer still on epoch 1 learns that epoch 0 (the greatest below it
  // still known) ended at 60.
  EXPECT_EQ(e->EndOffsetFor(0, 1, 70), std::make_pair(0, int64_t{60}));
  // Down to nothing: the epoch starts at 0, numbers still ascend.
  e->Observe(0, 70);
  EXPECT_EQ(e->Truncate(0, 0), 3);
  EXPECT_EQ(e->History(0), (History{{3, 0}}));
  EXPECT_EQ(e->EndOffsetFor(0, 0, 5), std::make_pair(0, int64_t{0}));  // older than every entry: itself, ending at 0
  e->Observe(0, 5);
  EXPECT_EQ(e->Truncate(0, 2), 4);  // never 3 again, nor reused after a drop
}

class LeaderEpochsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/thaw_leader_epochs_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = (dir_ / "epochs" / "t.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

TEST_F(LeaderEpochsFile, EpochsAndServedEndsSurviveARestart) {
  {
    auto e = *LeaderEpochs::Open(path_, "uuid-a");
    EXPECT_EQ(e->saved_snapshot(), std::nullopt);
    e->Observe(0, 100);
    e->Observe(2, 7);
    ASSERT_EQ(e->Truncate(0, 80), 1);
    ASSERT_TRUE(e->Save(42).ok());
  }
  auto e = *LeaderEpochs::Open(path_, "uuid-a");
  EXPECT_EQ(e->saved_snapshot(), 42);
  EXPECT_EQ(e->History(0), (History{{0, 0}, {1, 80}}));
  EXPECT_EQ(e->Observed(), (std::map<int32_t, int64_t>{{0, 80}, {2, 7}}));
  EXPECT_EQ(e->Truncate(2, 3), 1);  // what the last run served counts
  // Another table under the same topic name starts over.
  auto other = *LeaderEpochs::Open(path_, "uuid-b");
  EXPECT_EQ(other->Current(0), 0);
  EXPECT_TRUE(other->Observed().empty());
}

TEST_F(LeaderEpochsFile, ABrokenFileIsAnErrorNamingItAndTheWayOut) {
  fs::create_directories(fs::path(path_).parent_path());
  std::ofstream(path_) << "{\"table-uuid\": \"u\", \"partitions\": {\"0\": {\"high-watermark\": 5, \"epochs\": "
                          "[[1, 10], [0, 20]]}}}";
  auto e = LeaderEpochs::Open(path_, "u");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find(path_), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("must ascend"), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("remove it"), std::string::npos) << e.status().message();
  std::ofstream(path_, std::ios::trunc) << "not json";
  e = LeaderEpochs::Open(path_, "u");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("not a JSON object"), std::string::npos) << e.status().message();
}

}  // namespace
}  // namespace thaw::serve
