// `thaw serve --upstream`: a Kafka proxy in front of an upstream cluster
// whose tiered topics' history comes from Iceberg tables.
//
//   auto proxy = Proxy::Make(io, options, tables, pool);   binds the bootstrap listener
//   proxy->Start();            accepts; learns the brokers; opens a listener per broker
//   proxy->Stop();             stops accepting; connections close after their in-flight response
//
// Listeners: `--listen` (bootstrap: paired with the first reachable
// `--upstream` address) and one per upstream broker on BrokerMap's port
// (paired with that broker). Each accepted client connection gets its own
// upstream connection (1:1), so authentication and per-connection state stay
// the client's own; proxy_connection.cc runs the pair.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/kafka/client/connection.h"
#include "thaw/kafka/tls_context.h"
#include "thaw/kafka/server/topic_log.h"
#include "thaw/merged/broker_map.h"
#include "thaw/merged/cold_views.h"
#include "thaw/merged/tiered_requests.h"

namespace thaw::merged {

struct ProxyOptions {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 9092;  // 0: any free port
  std::string advertised_host;  // empty: the listen host
  BrokerPorts broker_ports;     // first == 0: listen_port + 1 .. + 100
  std::vector<UpstreamAddress> upstream;  // bootstrap servers, tried in order
  // Largest request frame accepted from a client (socket.request.max.bytes).
  int32_t max_frame_bytes = 100 << 20;
  kafka::client::ConnectionOptions upstream_options;
  std::set<std::string> prefer_table;  // topics with `:prefer=table`
  // `:cold_suffix` views: view name -> tiered topic (cold_views.h), led by
  // Thaw's own broker on broker_ports' last port (upstream brokers get the
  // ports before it).
  std::map<std::string, std::string> cold_views;
  // TLS on every listener (--tls-cert/--tls-key); null: plaintext.
  std::shared_ptr<kafka::TlsServerContext> tls;
};

class ProxyConnection;

class Proxy {
 public:
  static Result<std::unique_ptr<Proxy>> Make(asio::io_context& io, ProxyOptions options,
                                             kafka::server::TopicLogs* tables, asio::thread_pool* pool);
  ~Proxy();

  uint16_t port() const { return bootstrap_port_; }
  const BrokerMap& brokers() const { return brokers_; }
  void Start();
  void Stop();
  size_t open_connections() const;
  void CloseAll();
  bool stopping() const { return stopping_; }
  // Set when a broker's listener could not open (its port is taken): the
  // proxy stops then, rather than hand clients an address that is not Thaw.
  const Status& fatal() const { return fatal_; }

  // Used by the connections.
  BrokerMap& broker_map() { return brokers_; }
  const TierContext& tiers() const { return tiers_; }
  const ProxyOptions& options() const { return options_; }
  // One line when connecting to an upstream broker (node -1: the bootstrap
  // servers) starts failing, one when it works again; the clients closed in
  // between are counted, not logged one by one.
  void NoteUpstream(int32_t node_id, const Status& connect);
  // A paired connection lost its upstream leg: logged at most once per
  // broker every 10 s, with the number of lines held back.
  void NoteLost(int32_t node_id, const std::string& line);
  // An upstream connection for a client that arrived on `node_id`'s port (-1:
  // the bootstrap listener).
  asio::awaitable<Result<std::unique_ptr<kafka::client::Connection>>> ConnectUpstream(int32_t node_id);

 private:
  Proxy(asio::io_context& io, ProxyOptions options, kafka::server::TopicLogs* tables, asio::thread_pool* pool);
  struct Listener {
    int32_t node_id;  // -1: bootstrap
    asio::ip::tcp::acceptor acceptor;
  };
  Result<uint16_t> Listen(int32_t node_id, uint16_t port, std::string what = {});
  void OpenBrokerListener(int32_t node_id);
  asio::awaitable<void> Accept(Listener& l);
  // Learns the upstream's brokers with a Metadata request of Thaw's own,
  // within upstream_options.request_timeout; Stop() closes its connection (an upstream that
  // accepts and never answers must not keep Thaw from exiting).
  asio::awaitable<Status> LearnBrokers();

  asio::io_context& io_;
  ProxyOptions options_;
  BrokerMap brokers_;
  LostRanges lost_;
  TierContext tiers_;
  ColdViews views_;
  std::list<Listener> listeners_;
  uint16_t bootstrap_port_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  Status fatal_;
  struct UpstreamHealth {
    int64_t refused = 0;  // client connections closed since connecting failed
    std::chrono::steady_clock::time_point last_lost{};
    int64_t lost_held_back = 0;
  };
  std::map<int32_t, UpstreamHealth> health_;
  size_t next_bootstrap_ = 0;  // bootstrap pairing rotates over --upstream
  std::list<std::shared_ptr<ProxyConnection>> connections_;
  std::list<std::shared_ptr<kafka::client::Connection>> control_;  // LearnBrokers' connections in use
};

}  // namespace thaw::merged
