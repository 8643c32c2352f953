// Cost of a durable OffsetCommit in `thaw serve`: commits through the group
// coordinator (strand hop + one SQLite transaction in WAL mode with
// synchronous=FULL) from one simple consumer, one commit at a time, as a
// consumer's auto-commit does. Prints one JSON line: commits, partitions per
// commit, commits per second and latency percentiles.
//
//   offset_commit_bench STATE_DIR [COMMITS [PARTITIONS_PER_COMMIT]]
//
// STATE_DIR is created if missing; its groups.sqlite is removed first. Put it
// on the disk `thaw serve --state` would use (a tmpfs hides the fsync cost).
#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "thaw/kafka/server/group_coordinator.h"

using Clock = std::chrono::steady_clock;
using namespace thaw::kafka::server;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: offset_commit_bench STATE_DIR [COMMITS [PARTITIONS_PER_COMMIT]]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int commits = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int partitions = argc > 3 ? std::atoi(argv[3]) : 8;
  std::filesystem::create_directories(dir);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(dir + "/groups.sqlite" + suffix);

  asio::io_context io;
  GroupCoordinatorOptions options;
  options.state_dir = dir;
  auto coord = GroupCoordinator::Make(io.get_executor(), options);
  if (!coord.ok()) {
    std::fprintf(stderr, "%s\n", coord.status().ToString().c_str());
    return 1;
  }
  std::vector<double> latency_ms;
  latency_ms.reserve(commits);
  int failures = 0;
  double total_s = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        const auto start = Clock::now();
        for (int i = 0; i < commits; ++i) {
          OffsetCommitRequest req;
          req.group_id = "bench";
          OffsetCommitTopic topic{"orders", {}};
          for (int p = 0; p < partitions; ++p) topic.partitions.push_back({p, int64_t{i} * 100 + p, -1, ""});
          req.topics.push_back(std::move(topic));
          const auto t0 = Clock::now();
          OffsetCommitResult r = co_await (*coord)->OffsetCommit(std::move(req));
          latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          for (const auto& t : r.topics) {
            for (const auto& p : t.partitions) failures += p.error != GroupError::kNone;
          }
        }
        total_s = std::chrono::duration<double>(Clock::now() - start).count();
        (void)co_await (*coord)->Stop();
      },
      asio::detached);
  io.run();
  std::sort(latency_ms.begin(), latency_ms.end());
  auto pct = [&](double q) {
    return latency_ms.empty() ? 0.0 : latency_ms[static_cast<size_t>(q * (latency_ms.size() - 1))];
  };
  std::printf(
      "{\"bench\":\"offset_commit\",\"commits\":%d,\"partitions_per_commit\":%d,\"failures\":%d,\"seconds\":%.3f,"
      "\"commits_per_s\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f}\n",
      commits, partitions, failures, total_s, total_s > 0 ? commits / total_s : 0.0, pct(0.5), pct(0.99), pct(1.0));
  return failures == 0 ? 0 : 1;
}
