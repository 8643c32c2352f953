#include "thaw/merged/splice_relay.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace thaw::merged {

namespace {

constexpr int kPipeBytes = 1 << 20;

std::error_code Errno() { return std::error_code(errno, std::system_category()); }

}  // namespace

SplicePipe::~SplicePipe() {
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

bool SplicePipe::Open() {
  if (open()) return true;
  if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    fds_[0] = fds_[1] = -1;
    return false;
  }
  const int size = ::fcntl(fds_[1], F_SETPIPE_SZ, kPipeBytes);
  capacity_ = size > 0 ? static_cast<size_t>(size) : static_cast<size_t>(::fcntl(fds_[1], F_GETPIPE_SZ));
  if (capacity_ == 0) capacity_ = 65536;
  return true;
}

asio::awaitable<SpliceResult> SpliceBytes(asio::ip::tcp::socket& from, asio::ip::tcp::socket& to, size_t n,
                                          SplicePipe& pipe) {
  SpliceResult r;
  asio::error_code ec;
  from.native_non_blocking(true, ec);
  if (!ec) to.native_non_blocking(true, ec);
  if (ec) {
    r.error = ec;
    co_return r;
  }
  size_t to_read = n;   // still in `from`
  size_t in_pipe = 0;   // read from `from`, not yet written to `to`
  while (to_read > 0 || in_pipe > 0) {
    bool moved = false;
    bool read_blocked = false, write_blocked = false;
    if (to_read > 0 && in_pipe < pipe.capacity()) {
      const ssize_t got = ::splice(from.native_handle(), nullptr, pipe.write_end(), nullptr,
                                   std::min(to_read, pipe.capacity() - in_pipe), SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (got > 0) {
        to_read -= static_cast<size_t>(got);
        in_pipe += static_cast<size_t>(got);
        moved = true;
      } else if (got == 0) {
        r.eof = true;
        r.upstream_side = true;
        r.error = asio::error::eof;
        co_return r;
      } else if (errno == EAGAIN) {
        read_blocked = true;
      } else if (errno != EINTR) {
        r.error = Errno();
        r.upstream_side = true;
        co_return r;
      }
    }
    if (in_pipe > 0) {
      const ssize_t put = ::splice(pipe.read_end(), nullptr, to.native_handle(), nullptr, in_pipe,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (put > 0) {
        in_pipe -= static_cast<size_t>(put);
        moved = true;
      } else if (put < 0 && errno == EAGAIN) {
        write_blocked = true;
      } else if (put < 0 && errno != EINTR) {
        r.error = Errno();
        co_return r;
      }
    }
    if (moved) continue;
    // Nothing moved: wait for the side holding the relay up. Bytes waiting in
    // the pipe go first (the client is slow); otherwise the upstream is.
    if (write_blocked || (in_pipe > 0 && !read_blocked)) {
      co_await to.async_wait(asio::socket_base::wait_write, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        r.error = ec;
        co_return r;
      }
    } else {
      co_await from.async_wait(asio::socket_base::wait_read, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        r.error = ec;
        r.upstream_side = true;
        co_return r;
      }
    }
  }
  co_return r;
}

}  // namespace thaw::merged
