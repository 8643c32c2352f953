// Moves bytes from one TCP socket to another through a pipe with splice(2),
// so that the bytes of a response relayed as it is never enter user space:
// the tiered proxy's passthrough of large responses (Fetch above all), where
// a copying relay costs as much CPU per GB as the broker that sends from its
// page cache.
//
//   SplicePipe pipe;                                  // per connection, opened on first use
//   auto r = co_await SpliceBytes(upstream, client, n, pipe);
//   if (r.error) ... r.upstream_side says which socket failed
//
// Both sockets are switched to non-blocking mode; the relay waits on
// whichever side holds it up. Linux only (splice is).
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <system_error>

namespace thaw::merged {

class SplicePipe {
 public:
  SplicePipe() = default;
  SplicePipe(const SplicePipe&) = delete;
  SplicePipe& operator=(const SplicePipe&) = delete;
  ~SplicePipe();

  // Opens the pipe (at most 1 MiB, the kernel's default pipe-max-size);
  // false when the system refuses (then callers copy instead).
  bool Open();
  bool open() const { return fds_[0] >= 0; }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  size_t capacity() const { return capacity_; }

 private:
  int fds_[2] = {-1, -1};
  size_t capacity_ = 0;
};

struct SpliceResult {
  std::error_code error;      // empty: all n bytes reached `to`
  bool upstream_side = false;  // the error came from `from` (reading) rather than `to`
  bool eof = false;            // `from` closed before n bytes
};

// Moves exactly n bytes from `from` to `to`. On an error the pipe may still
// hold bytes: the connection is then closed by the caller, never reused.
asio::awaitable<SpliceResult> SpliceBytes(asio::ip::tcp::socket& from, asio::ip::tcp::socket& to, size_t n,
                                          SplicePipe& pipe);

}  // namespace thaw::merged
