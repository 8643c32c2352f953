// `thaw serve --upstream`: the tiered proxy (merged/proxy.h) over the
// tables of the served topics, until SIGINT or SIGTERM. No group
// coordinator of Thaw's own: groups and their offsets stay in the upstream
// cluster (forwarded like every other request).
#include <filesystem>

#include "thaw/common/log.h"
#include "thaw/kafka/server/broker.h"
#include "thaw/merged/proxy.h"
#include "thaw/serve/serve_main.h"
#include "thaw/serve/serve_metrics.h"

namespace thaw::serve {

namespace {

asio::awaitable<void> RefreshTables(TopicRegistry& tables, asio::thread_pool& pool, asio::steady_timer& timer,
                                    std::chrono::milliseconds every, const bool& stopping, ReadyState& ready) {
  for (;;) {
    timer.expires_after(every);
    asio::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec || stopping) co_return;
    Status st = co_await kafka::server::RunBlocking(pool, [&tables]() { return tables.RefreshAll(); });
    ready.Set("catalog", st);
    if (!st.ok()) log::Warn("refreshing the tiered topics' tables: {} (the previous snapshot stays served)", st.message());
  }
}

asio::awaitable<void> Drain(merged::Proxy& proxy) {
  asio::steady_timer wait(co_await asio::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (proxy.open_connections() > 0) {
    if (std::chrono::steady_clock::now() >= give_up) {
      log::Warn("{} connections still busy 10 s after the signal; closing them", proxy.open_connections());
      proxy.CloseAll();
      co_return;
    }
    wait.expires_after(std::chrono::milliseconds(20));
    co_await wait.async_wait(asio::use_awaitable);
  }
}

}  // namespace

Status RunTieredServe(const ServeConfig& config, TopicRegistry& tables) {
  asio::io_context io(1);
  asio::thread_pool pool(static_cast<size_t>(config.threads));
  merged::ProxyOptions options;
  options.listen_host = config.server.listen_host;
  options.listen_port = config.server.listen_port;
  options.max_frame_bytes = config.server.max_frame_bytes;
  options.advertised_host = config.advertised_host;
  options.broker_ports = config.broker_ports;
  options.upstream = config.upstream;
  options.upstream_options = config.upstream_options;
  options.tls = config.server.tls;
  for (const auto& t : config.topics) {
    if (t.prefer_table) options.prefer_table.insert(t.name);
    if (!t.cold_suffix.empty()) options.cold_views[t.name + t.cold_suffix] = t.name;
  }
  ASSIGN_OR_RAISE(auto proxy, merged::Proxy::Make(io, options, &tables, &pool));

  std::string tiered, upstream;
  for (const auto& t : tables.topics()) {
    tiered += fmt::format("{}{} (history in {})", tiered.empty() ? "" : ", ", t->name(), t->config().table);
  }
  for (const auto& u : config.upstream) upstream += fmt::format("{}{}:{}", upstream.empty() ? "" : ",", u.host, u.port);
  const auto& ports = proxy->brokers().ports();
  log::Info(
      "listening on {}:{} in front of {}; upstream broker N is reachable through {}:{}+N (up to {}); tiered: {}",
      config.server.listen_host, proxy->port(), upstream, proxy->brokers().advertised_host(), ports.first, ports.last,
      tiered);
  proxy->Start();

  auto ready = std::make_shared<ReadyState>();
  metrics::HooksScope hooks_scope(metrics::Global());
  if (metrics::Metrics* m = metrics::Global()) {
    RegisterTableMetrics(*m, tables, ready);
    // Ready while one upstream bootstrap server accepts a connection.
    m->AddReadinessCheck("upstream", [upstream = config.upstream]() {
      std::string last;
      for (const auto& u : upstream) {
        Status st = kafka::client::CheckReachable(u.host, u.port, std::chrono::seconds(2));
        if (st.ok()) return st;
        last = st.message();
      }
      return Status::IOError("no upstream bootstrap server accepts a connection: {}", last);
    });
    m->OnCollect([&proxy = *proxy](metrics::Metrics& m) {
      m.Gauge("thaw_connections", "Open Kafka client connections", {})
          .Set(static_cast<double>(proxy.open_connections()));
    });
  }
  bool stopping = false;
  asio::steady_timer refresh_timer(io);
  asio::co_spawn(io, RefreshTables(tables, pool, refresh_timer, config.serve.refresh, stopping, *ready),
                 asio::detached);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code& ec, int signo) {
    if (ec) return;
    if (config.on_stop_signal) config.on_stop_signal(signo);
    log::Info("{}: stopping (in-flight requests finish; groups and offsets live in the upstream cluster)",
              signo == SIGINT ? "SIGINT" : "SIGTERM");
    stopping = true;
    proxy->Stop();
    refresh_timer.cancel();
    asio::co_spawn(io, Drain(*proxy), asio::detached);
  });
  io.run();
  pool.join();
  return proxy->fatal();
}

}  // namespace thaw::serve
