#include "thaw/merged/proxy.h"

#include "thaw/kafka/client/sasl_client.h"

#include "thaw/common/log.h"
#include "thaw/merged/proxy_connection.h"

namespace thaw::merged {

namespace msg = kafka::msg;

Proxy::Proxy(asio::io_context& io, ProxyOptions options, kafka::server::TopicLogs* tables, asio::thread_pool* pool)
    : io_(io),
      options_(std::move(options)),
      brokers_(options_.advertised_host.empty() ? options_.listen_host : options_.advertised_host,
               options_.broker_ports) {
  tiers_.tables = tables;
  tiers_.pool = pool;
  tiers_.lost = &lost_;
  tiers_.prefer_table = options_.prefer_table;
}

Proxy::~Proxy() = default;

Result<std::unique_ptr<Proxy>> Proxy::Make(asio::io_context& io, ProxyOptions options,
                                           kafka::server::TopicLogs* tables, asio::thread_pool* pool) {
  if (options.upstream.empty()) return Status::Invalid("--upstream: no bootstrap address given");
  if (options.broker_ports.first == 0) {
    if (options.listen_port == 0) {
      return Status::Invalid("--broker-ports is required when --listen's port is 0 (any free port)");
    }
    const int first = options.listen_port + 1;
    if (first > 65535) return Status::Invalid("--broker-ports: no port above --listen's {}", options.listen_port);
    options.broker_ports = {static_cast<uint16_t>(first), static_cast<uint16_t>(std::min(65535, first + 99))};
  }
  if (options.listen_port != 0 && options.listen_port >= options.broker_ports.first &&
      options.listen_port <= options.broker_ports.last) {
    return Status::Invalid("--broker-ports {}-{} contains --listen's port {}", options.broker_ports.first,
                           options.broker_ports.last, options.listen_port);
  }
  // Views (`:cold_suffix`) are led by Thaw's own broker on the range's last
  // port; upstream brokers get the ports before it.
  uint16_t cold_port = 0;
  if (!options.cold_views.empty()) {
    if (options.broker_ports.last <= options.broker_ports.first) {
      return Status::Invalid(
          "--broker-ports {}-{}: with cold views (cold_suffix) the range needs two ports or more: its last is Thaw's "
          "own broker's",
          options.broker_ports.first, options.broker_ports.last);
    }
    cold_port = options.broker_ports.last;
    options.broker_ports.last = static_cast<uint16_t>(options.broker_ports.last - 1);
  }
  std::unique_ptr<Proxy> proxy(new Proxy(io, std::move(options), tables, pool));
  ASSIGN_OR_RAISE(proxy->bootstrap_port_, proxy->Listen(-1, proxy->options_.listen_port));
  if (cold_port != 0) {
    ASSIGN_OR_RAISE(auto bound, proxy->Listen(-1, cold_port, "Thaw's own broker of the cold views (--broker-ports' last)"));
    proxy->views_ = ColdViews(proxy->options_.cold_views, proxy->brokers_.advertised_host(), bound);
    proxy->tiers_.views = &proxy->views_;
  }
  proxy->brokers_.OnNewNode([p = proxy.get()](int32_t node) { p->OpenBrokerListener(node); });
  return proxy;
}

Result<uint16_t> Proxy::Listen(int32_t node_id, uint16_t port, std::string what) {
  if (what.empty()) {
    what = node_id < 0 ? std::string("--listen") : fmt::format("upstream broker {}'s port (--broker-ports)", node_id);
  }
  asio::error_code ec;
  auto address = asio::ip::make_address(options_.listen_host, ec);
  if (ec) {
    asio::ip::tcp::resolver resolver(io_);
    auto found = resolver.resolve(options_.listen_host, std::to_string(port), ec);
    if (ec || found.empty()) {
      return Status::Invalid("{}: cannot resolve '{}': {}", what, options_.listen_host, ec.message());
    }
    address = found.begin()->endpoint().address();
  }
  asio::ip::tcp::endpoint endpoint(address, port);
  Listener& l = listeners_.emplace_back(Listener{node_id, asio::ip::tcp::acceptor(io_)});
  auto fail = [&](const char* step) {
    Status st = Status::IOError("{}: cannot {} {}:{}: {}", what, step, options_.listen_host, port, ec.message());
    listeners_.pop_back();
    return st;
  };
  l.acceptor.open(endpoint.protocol(), ec);
  if (ec) return fail("open");
  l.acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  l.acceptor.bind(endpoint, ec);
  if (ec) return fail("listen on");
  l.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen on");
  const uint16_t bound = l.acceptor.local_endpoint(ec).port();
  if (started_) asio::co_spawn(io_, Accept(l), asio::detached);
  return bound;
}

void Proxy::OpenBrokerListener(int32_t node_id) {
  if (stopping_) return;
  auto port = brokers_.PortFor(node_id);
  if (!port) {
    log::Warn("upstream broker {} has no port in --broker-ports {}-{}: clients cannot reach it through Thaw "
              "(widen the range)",
              node_id, options_.broker_ports.first, options_.broker_ports.last);
    return;
  }
  auto bound = Listen(node_id, *port);
  if (!bound.ok()) {
    // Clients would be sent to whatever holds the port: stop.
    fatal_ = Status::IOError("{} (another process holds it: choose a free range with --broker-ports)",
                             bound.status().message());
    Stop();
    CloseAll();
    io_.stop();
    return;
  }
  auto up = brokers_.Upstream(node_id);
  log::Info("upstream broker {} ({}:{}) is reachable through {}:{}", node_id, up ? up->host : "?",
            up ? up->port : 0, brokers_.advertised_host(), *bound);
}

namespace {
std::string NodeName(int32_t node_id) {
  return node_id < 0 ? std::string("the upstream's bootstrap servers") : fmt::format("upstream broker {}", node_id);
}
}  // namespace

void Proxy::NoteUpstream(int32_t node_id, const Status& connect) {
  UpstreamHealth& h = health_[node_id];
  if (!connect.ok()) {
    if (h.refused++ == 0) {
      log::Warn("{}: {}; clients arriving for it are closed (they retry) until it answers", NodeName(node_id),
                connect.message());
    }
    return;
  }
  if (h.refused > 0) {
    log::Info("{}: reachable again ({} client connections closed meanwhile)", NodeName(node_id), h.refused);
    h.refused = 0;
  }
}

void Proxy::NoteLost(int32_t node_id, const std::string& line) {
  UpstreamHealth& h = health_[node_id];
  const auto now = std::chrono::steady_clock::now();
  if (h.last_lost != std::chrono::steady_clock::time_point{} && now - h.last_lost < std::chrono::seconds(10)) {
    ++h.lost_held_back;
    return;
  }
  if (h.lost_held_back > 0) {
    log::Warn("{} (and {} more connections to {} in the 10 s before)", line, h.lost_held_back, NodeName(node_id));
  } else {
    log::Warn("{}", line);
  }
  h.last_lost = now;
  h.lost_held_back = 0;
}

void Proxy::Start() {
  started_ = true;
  for (Listener& l : listeners_) asio::co_spawn(io_, Accept(l), asio::detached);
  asio::co_spawn(
      io_,
      [this]() -> asio::awaitable<void> {
        Status st = co_await LearnBrokers();
        if (!st.ok() && !stopping_) {
          log::Warn("learning the upstream's brokers: {} (their ports open when a client's Metadata names them)",
                    st.message());
        }
      },
      asio::detached);
}

void Proxy::Stop() {
  stopping_ = true;
  for (Listener& l : listeners_) {
    asio::error_code ignored;
    l.acceptor.close(ignored);
  }
  for (auto& c : connections_) {
    if (!c->busy()) c->Close();
  }
  for (auto& c : control_) c->Close();
}

size_t Proxy::open_connections() const {
  size_t n = 0;
  for (const auto& c : connections_) n += c->closed() ? 0 : 1;
  return n;
}

void Proxy::CloseAll() {
  for (auto& c : connections_) c->Close();
}

asio::awaitable<void> Proxy::Accept(Listener& l) {
  for (;;) {
    asio::error_code ec;
    asio::ip::tcp::socket socket = co_await l.acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (stopping_ || ec == asio::error::operation_aborted) co_return;
      log::Warn("accepting a connection: {}", ec.message());
      continue;
    }
    connections_.remove_if([](const auto& c) { return c->closed(); });
    auto conn = std::make_shared<ProxyConnection>(
        *this, options_.tls ? kafka::Stream(std::move(socket), options_.tls->Current()) : kafka::Stream(std::move(socket)),
        l.node_id);
    connections_.push_back(conn);
    asio::co_spawn(io_, [conn]() { return conn->Run(); }, asio::detached);
  }
}

asio::awaitable<Result<std::unique_ptr<kafka::client::Connection>>> Proxy::ConnectUpstream(int32_t node_id) {
  auto executor = co_await asio::this_coro::executor;
  if (node_id < 0) {
    // Each new client starts at the next address: a broker that accepts and
    // never answers (paused) holds up one attempt, not every retry.
    std::string errors;
    const size_t n = options_.upstream.size();
    const size_t first = next_bootstrap_++ % n;
    for (size_t i = 0; i < n; ++i) {
      const UpstreamAddress& a = options_.upstream[(first + i) % n];
      auto conn = co_await kafka::client::Connection::Open(executor, a.host, a.port, options_.upstream_options);
      if (conn.ok()) co_return std::move(*conn);
      errors += (errors.empty() ? "" : "; ") + conn.status().message();
    }
    co_return Status::IOError("no --upstream address answers: {}", errors);
  }
  auto address = brokers_.Upstream(node_id);
  if (!address) {
    // A client that kept the addresses from before a restart of Thaw.
    Status st = co_await LearnBrokers();
    address = brokers_.Upstream(node_id);
    if (!address) {
      co_return Status::NotFound("upstream broker {} is not in the cluster's metadata{}", node_id,
                                 st.ok() ? "" : " (" + st.message() + ")");
    }
  }
  co_return co_await kafka::client::Connection::Open(executor, address->host, address->port,
                                                     options_.upstream_options);
}

asio::awaitable<Status> Proxy::LearnBrokers() {
  CO_ASSIGN_OR_RAISE(auto opened, co_await ConnectUpstream(-1));
  std::shared_ptr<kafka::client::Connection> conn = std::move(opened);
  if (stopping_) {
    conn->Close();
    co_return Status::Aborted("stopping");
  }
  // Closing the connection ends the call: on a timer, or from Stop(). The
  // handler owns what it touches (it may run after this frame is gone).
  auto timed_out = std::make_shared<bool>(false);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_after(options_.upstream_options.request_timeout);
  timer.async_wait([conn, timed_out](const asio::error_code& ec) {
    if (ec) return;
    *timed_out = true;
    conn->Close();
  });
  auto it = control_.insert(control_.end(), conn);
  if (options_.upstream_options.sasl.enabled) {
    // Thaw's own connection authenticates as Thaw (-X sasl.*), bounded by the same timer.
    Status auth = co_await kafka::client::Authenticate(*conn, options_.upstream_options.sasl);
    if (!auth.ok()) {
      timer.cancel();
      control_.erase(it);
      conn->Close();
      if (*timed_out) {
        co_return Status::IOError("{}: no answer to SASL within {} ms (request.timeout.ms)", conn->address(),
                                  options_.upstream_options.request_timeout.count());
      }
      co_return auth;
    }
  }
  msg::MetadataRequest req;
  req.topics = std::vector<msg::MetadataRequest::MetadataRequestTopic>();  // brokers only
  req.allow_auto_topic_creation = false;
  auto resp = co_await conn->Call<msg::MetadataRequest, msg::MetadataResponse>(req, 9);
  timer.cancel();
  control_.erase(it);
  conn->Close();
  if (!resp.ok()) {
    if (*timed_out) {
      co_return Status::IOError("{}: no answer to Metadata within {} ms (request.timeout.ms)", conn->address(),
                                options_.upstream_options.request_timeout.count());
    }
    co_return resp.status();
  }
  brokers_.RewriteMetadata(*resp);
  co_return Status::OK();
}

}  // namespace thaw::merged
