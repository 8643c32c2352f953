#include "thaw/serve/serve_main.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <future>
#include <thread>

#include "thaw/common/log.h"
#include "thaw/metrics/metrics.h"
#include "thaw/serve/serve_metrics.h"
#include "thaw/kafka/server/group_coordinator.h"

namespace thaw::serve {

namespace {

namespace fs = std::filesystem;
using kafka::server::Broker;
using kafka::server::GroupCoordinator;
using kafka::server::GroupCoordinatorOptions;
using kafka::server::OffsetFetchRequest;
using kafka::server::OffsetFetchResult;
using kafka::server::TopicLogs;
using kafka::server::RunBlocking;
using kafka::server::Server;

// A Kafka cluster id (22 characters of URL-safe base64 over 16 random
// bytes), kept in the state directory so that it is stable across restarts.
Result<std::string> ClusterId(const std::string& state_dir) {
  const fs::path path = fs::path(state_dir) / "cluster.id";
  std::ifstream in(path);
  std::string id;
  if (in && std::getline(in, id) && id.size() == 22) return id;
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::random_device rd;
  id.clear();
  for (int i = 0; i < 22; ++i) id += kAlphabet[rd() % 64];
  std::ofstream out(path, std::ios::trunc);
  out << id << "\n";
  if (!out) return Status::IOError("--state {}: cannot write {}", state_dir, path.string());
  return id;
}

std::string WildcardHostName(const std::string& host) {
  if (host != "0.0.0.0" && host != "::") return host;
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) == 0 && name[0]) return name;
  return "127.0.0.1";
}

// A brief account of the batch cache at info level, every ten refresh
// intervals at most (50 s by default) and only after Fetches used it: how
// full, and how often it answered.
class CacheReport {
 public:
  CacheReport(const BatchCache& cache, std::chrono::milliseconds every)
      : cache_(cache), every_(every), last_(cache.stats()) {}
  void MaybeLog() {
    const auto now = std::chrono::steady_clock::now();
    if (now - at_ < every_) return;
    const BatchCache::Stats s = cache_.stats();
    const int64_t hits = s.hits - last_.hits, misses = s.misses - last_.misses + (s.waits - last_.waits);
    if (hits + misses == 0) return;
    log::Info("batch cache: {} segments, {:.0f} of {:.0f} MiB; {:.0f}% of {} segment lookups in the last {:.0f} s were hits, "
              "{} segments read, {} evicted",
              s.entries, s.bytes / 1048576.0, cache_.capacity() / 1048576.0, 100.0 * hits / (hits + misses),
              hits + misses, std::chrono::duration<double>(now - at_).count(), s.loads - last_.loads,
              s.evictions - last_.evictions);
    last_ = s;
    at_ = now;
  }

 private:
  const BatchCache& cache_;
  const std::chrono::milliseconds every_;
  BatchCache::Stats last_;
  std::chrono::steady_clock::time_point at_ = std::chrono::steady_clock::now();
};

asio::awaitable<void> RefreshLoop(Broker& broker, asio::steady_timer& timer, std::chrono::milliseconds every,
                                  ReadyState& ready, const BatchCache* cache) {
  std::optional<CacheReport> report;
  if (cache) report.emplace(*cache, std::max<std::chrono::milliseconds>(10 * every, std::chrono::seconds(10)));
  for (;;) {
    timer.expires_after(every);
    asio::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec || broker.stopping) co_return;
    Status st = co_await RunBlocking(*broker.blocking, [&broker]() { return broker.topics->RefreshAll(); });
    ready.Set("catalog", st);
    if (!st.ok()) log::Warn("refreshing the served tables: {} (the previous snapshot stays served)", st.message());
    if (report) report->MaybeLog();
  }
}

// Standalone serve's consumer lag: each group's committed offsets against
// the served high watermarks, read on the coordinator's thread.
void CollectConsumerLag(metrics::Metrics& m, asio::io_context& group_io, GroupCoordinator& groups,
                        TopicLogs& topics) {
  struct Seen {
    std::vector<std::pair<std::string, OffsetFetchResult>> offsets;
    std::vector<std::pair<std::string, size_t>> members;
  };
  auto work = [&groups]() -> asio::awaitable<Seen> {
    Seen out;
    // Named arguments, not temporaries inside co_await (GCC 12 destroys
    // those twice).
    std::vector<std::string> any_state, any_type, ids;
    for (const auto& g : co_await groups.ListGroups(std::move(any_state), std::move(any_type))) {
      ids.push_back(g.group_id);
      OffsetFetchRequest req;
      req.group_id = g.group_id;
      out.offsets.emplace_back(g.group_id, co_await groups.OffsetFetch(std::move(req)));
    }
    for (const auto& d : co_await groups.DescribeGroups(std::move(ids), 5)) {
      out.members.emplace_back(d.group_id, d.members.size());
    }
    co_return out;
  };
  auto future = asio::co_spawn(group_io, work(), asio::use_future);
  if (future.wait_for(std::chrono::seconds(2)) != std::future_status::ready) return;
  Seen seen = future.get();
  for (const auto& [group, count] : seen.members) {
    m.Gauge("thaw_group_members", "Members of each consumer group Thaw coordinates", {{"group", group}})
        .Set(static_cast<double>(count));
  }
  for (const auto& [group, result] : seen.offsets) {
    for (const auto& t : result.topics) {
      auto log = topics.Find(t.name);
      if (!log) continue;
      for (const auto& p : t.partitions) {
        if (p.committed_offset < 0) continue;
        auto o = log->Offsets(p.partition);
        if (!o.ok()) continue;
        m.Gauge("thaw_consumer_lag_records",
                "High watermark minus the group's committed offset, per group, topic and partition",
                {{"group", group}, {"topic", t.name}, {"partition", std::to_string(p.partition)}})
            .Set(static_cast<double>(std::max<int64_t>(0, o->high_watermark - p.committed_offset)));
      }
    }
  }
}

// After a signal: close the group coordinator, then give in-flight requests
// (a Fetch waiting at the end of the log answers at once when stopping) a
// bounded time to answer.
asio::awaitable<void> Drain(Server& server, GroupCoordinator& groups) {
  Status st = co_await groups.Stop();
  if (!st.ok()) log::Warn("closing the group state: {}", st.message());
  asio::steady_timer wait(co_await asio::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.open_connections() > 0) {
    if (std::chrono::steady_clock::now() >= give_up) {
      log::Warn("{} connections still busy 10 s after the signal; closing them", server.open_connections());
      server.CloseAll();
      co_return;
    }
    wait.expires_after(std::chrono::milliseconds(20));
    co_await wait.async_wait(asio::use_awaitable);
  }
}

// The cache's batches (up to --batch-bytes each, 256 KiB by default) come
// from glibc's malloc. By default glibc maps blocks of 128 KiB and more on
// their own only until it frees one, then raises that threshold to the
// largest block freed, and later batches are carved from per-thread arenas,
// which keep what the cache evicts resident among the blocks still live.
// A 512 MiB cache read to the end peaked at 2.0-2.3 GiB that way, 1.4-1.5
// GiB with the threshold kept at 128 KiB, so that a batch is unmapped when
// the cache and the responses let it go (docs/benchmarks.md, "The cache's
// batches unmapped when evicted"). GLIBC_TUNABLES=glibc.malloc.mmap_threshold=N
// still decides when given.
void MapCachedBatchesOnTheirOwn() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "mmap_threshold") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

}  // namespace

Status RunServe(const ServeConfig& config) {
  MapCachedBatchesOnTheirOwn();
  std::error_code fs_ec;
  fs::create_directories(config.state_dir, fs_ec);
  if (fs_ec) {
    return Status::IOError("--state {}: cannot create the directory: {}", config.state_dir, fs_ec.message());
  }
  ASSIGN_OR_RAISE(std::string cluster_id, ClusterId(config.state_dir));
  ASSIGN_OR_RAISE(auto catalog_unique, catalog::OpenCatalog(config.catalog));
  std::shared_ptr<catalog::Catalog> catalog(std::move(catalog_unique));

  std::vector<TopicConfig> topics = config.topics;
  if (!config.table_prefix.empty()) {
    std::vector<std::string> skipped;
    ASSIGN_OR_RAISE(auto found,
                    TopicRegistry::DiscoverTopics(*catalog, config.table_prefix,
                                                  config.prefix_defaults.value_or(TopicConfig{}), &skipped));
    for (const auto& s : skipped) log::Info("--table-prefix {}: not served: {}", config.table_prefix, s);
    for (auto& t : found) {
      bool dup = false;
      for (const auto& have : topics) dup |= have.name == t.name;
      if (!dup) topics.push_back(std::move(t));
    }
    if (topics.empty()) {
      return Status::NotFound("--table-prefix {}: the namespace has no Kafka-shaped table to serve",
                              config.table_prefix);
    }
  }
  ServeOptions serve_options = config.serve;
  serve_options.state_dir = config.state_dir;  // leader epochs beside the group offsets
  // The tiered proxy sends the table's batches without an epoch: cached so.
  if (!config.upstream.empty()) serve_options.batch_leader_epoch = -1;
  ASSIGN_OR_RAISE(auto registry, TopicRegistry::Make(catalog, topics, serve_options));
  if (!config.upstream.empty()) return RunTieredServe(config, *registry);

  asio::io_context io(1);
  asio::thread_pool pool(static_cast<size_t>(config.threads));
  Broker broker;
  broker.identity.cluster_id = cluster_id;
  broker.topics = registry.get();
  broker.blocking = &pool;
  // Bound before anything else starts: a port in use fails here.
  ASSIGN_OR_RAISE(auto server, Server::Make(io, broker, config.server));
  // The group coordinator runs on a thread of its own: an OffsetCommit waits
  // for SQLite's fsync, which must not stall the connections.
  asio::io_context group_io(1);
  auto group_work = asio::make_work_guard(group_io);
  std::thread group_thread([&group_io]() { group_io.run(); });
  struct JoinGroupThread {
    asio::executor_work_guard<asio::io_context::executor_type>& work;
    std::thread& thread;
    ~JoinGroupThread() {
      work.reset();
      if (thread.joinable()) thread.join();
    }
  } join_group_thread{group_work, group_thread};
  GroupCoordinatorOptions group_options;
  group_options.state_dir = config.state_dir;
  group_options.initial_rebalance_delay = config.initial_rebalance_delay;
  ASSIGN_OR_RAISE(auto groups, GroupCoordinator::Make(group_io.get_executor(), group_options));

  broker.groups = groups.get();
  broker.identity.advertised_host =
      config.advertised_host.empty() ? WildcardHostName(config.server.listen_host) : config.advertised_host;
  broker.identity.advertised_port = config.advertised_port >= 0 ? config.advertised_port : server->port();

  std::string served;
  for (const auto& t : registry->topics()) {
    served += fmt::format("{}{} ({}, {} partitions)", served.empty() ? "" : ", ", t->name(), t->config().table,
                          t->partition_count());
  }
  log::Info(
      "listening on {}:{} (advertised as {}:{}); serving {}; state (group offsets, leader epochs, cluster id) in {}",
      config.server.listen_host, server->port(), broker.identity.advertised_host, broker.identity.advertised_port,
      served, fs::absolute(config.state_dir).string());
  server->Start();

  auto ready = std::make_shared<ReadyState>();
  ready->Set("catalog", Status::OK());
  metrics::HooksScope hooks_scope(metrics::Global());
  if (metrics::Metrics* m = metrics::Global()) {
    RegisterTableMetrics(*m, *registry, ready);
    m->OnCollect([&server = *server, &group_io, &groups = *groups, &topics = *registry](metrics::Metrics& m) {
      m.Gauge("thaw_connections", "Open Kafka client connections", {})
          .Set(static_cast<double>(server.open_connections()));
      CollectConsumerLag(m, group_io, groups, topics);
    });
  }
  asio::steady_timer refresh_timer(io);
  asio::co_spawn(io, RefreshLoop(broker, refresh_timer, config.serve.refresh, *ready, registry->cache().get()),
                 asio::detached);

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code& ec, int signo) {
    if (ec) return;
    if (config.on_stop_signal) config.on_stop_signal(signo);
    log::Info("{}: stopping (in-flight requests finish, group offsets are already durable)",
              signo == SIGINT ? "SIGINT" : "SIGTERM");
    broker.stopping = true;
    server->Stop();
    refresh_timer.cancel();
    asio::co_spawn(io, Drain(*server, *groups), asio::detached);
  });
  io.run();
  pool.join();
  return Status::OK();
}

}  // namespace thaw::serve
