// Reading a Kafka frame's body over asio without trusting its size prefix
// with memory: the buffer grows as the bytes arrive (doubling from 64 KiB),
// so a peer that announces 100 MiB and sends 12 bytes costs 64 KiB, not
// 100 MiB. The server (kafka/server/connection.cc), Thaw's client
// connections (kafka/client/) and the tiered proxy (merged/) read through it.
#pragma once

#include <asio.hpp>
#include <algorithm>
#include <cstddef>
#include <string>

namespace thaw::kafka {

// Reads exactly `n` bytes into (*buffer)[at, at + n), resizing *buffer as
// they arrive. The error is the socket's (eof when the peer closed).
template <typename Socket>
asio::awaitable<asio::error_code> ReadGrowing(Socket& socket, std::string* buffer, size_t at, size_t n) {
  constexpr size_t kFirstChunk = size_t{64} << 10;
  size_t got = 0;
  asio::error_code ec;
  while (got < n) {
    const size_t chunk = std::min(n - got, std::max(kFirstChunk, got));
    buffer->resize(at + got + chunk);
    co_await asio::async_read(socket, asio::buffer(buffer->data() + at + got, chunk),
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return ec;
    got += chunk;
  }
  co_return ec;
}

}  // namespace thaw::kafka
