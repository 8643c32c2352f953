// What every request handler of `thaw serve` shares: this broker's identity
// (node id, advertised address, cluster id), the served topics (as
// TopicLogs: the server does not know what backs them), the group
// coordinator, and the pool that runs blocking work (Iceberg reads, catalog
// loads) off the network thread.
//
// Thaw presents itself as a one-broker cluster: node 0 leads every partition
// of every served topic and is the coordinator of every group.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "thaw/kafka/server/topic_log.h"

namespace thaw::kafka::server {

class GroupCoordinator;

struct BrokerIdentity {
  int32_t node_id = 0;
  std::string advertised_host = "127.0.0.1";
  int32_t advertised_port = 9092;
  std::string cluster_id;  // stable per --state directory
};

struct Broker {
  BrokerIdentity identity;
  TopicLogs* topics = nullptr;
  GroupCoordinator* groups = nullptr;
  asio::thread_pool* blocking = nullptr;
  // How long a Fetch at the end of the log waits at most between checks for a
  // new snapshot (the request's max_wait bounds the whole wait).
  std::chrono::milliseconds end_of_log_poll{500};
  std::atomic<bool> stopping{false};
};

// Runs `f` (blocking) on the broker's pool and resumes the calling coroutine
// on its own executor with f's result.
template <typename F>
auto RunBlocking(asio::thread_pool& pool, F f) -> asio::awaitable<decltype(f())> {
  using T = decltype(f());
  std::optional<T> out;
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [&out, &pool, &f](auto handler) {
        asio::post(pool, [&out, &f, handler = std::move(handler)]() mutable {
          out.emplace(f());
          auto ex = asio::get_associated_executor(handler);
          asio::post(ex, std::move(handler));
        });
      },
      asio::use_awaitable);
  co_return std::move(*out);
}

}  // namespace thaw::kafka::server
