// A byte budget shared by readers that decode at the same time.
//
// Each RecordReader bounds what it holds itself (ReadOptions::memory_budget),
// but readers that live side by side (serve keeps a cursor open per
// partition being read, each with its own decode threads) would otherwise
// decode all at once: a row group's transient decoding state (a dictionary
// page decoded twice over, the arrays of a cluster before it is emitted)
// times the readers. Readers given the same gate take a row group's cost
// from it before decoding and give it back when done, so decoding in
// progress stays within the gate's capacity, whatever the number of readers.
// A cost above the capacity waits until nothing else is held, then runs
// alone. Holders never wait on one another: a hold covers decoding that
// finishes on its own.
//
// Freed is not returned: Arrow's allocator keeps what was freed in the last
// second (MIMALLOC_PURGE_DELAY, cli/main.cc) for the next decode. Release()
// says each time the holds given back reach half the capacity again, so
// that a caller short of memory can have the allocator return what it keeps
// (RecordReader, ReadOptions::return_freed: MemoryPool::ReleaseUnused): what
// it keeps then stays within about the capacity too, however fast readers
// decode.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace thaw::records {

class DecodeGate {
 public:
  explicit DecodeGate(int64_t capacity) : capacity_(std::max<int64_t>(capacity, 1)) {}
  DecodeGate(const DecodeGate&) = delete;
  DecodeGate& operator=(const DecodeGate&) = delete;

  // Released when destroyed.
  class [[nodiscard]] Hold {
   public:
    Hold() = default;
    Hold(Hold&& o) noexcept : gate_(o.gate_), bytes_(o.bytes_) { o.gate_ = nullptr; }
    Hold& operator=(Hold&& o) noexcept {
      if (this != &o) {
        Release();
        gate_ = o.gate_;
        bytes_ = o.bytes_;
        o.gate_ = nullptr;
      }
      return *this;
    }
    ~Hold() { Release(); }
    // True when the allocator should return what it keeps (above).
    bool Release() {
      const bool collect = gate_ && gate_->Give(bytes_);
      gate_ = nullptr;
      return collect;
    }

   private:
    friend class DecodeGate;
    Hold(DecodeGate* gate, int64_t bytes) : gate_(gate), bytes_(bytes) {}
    DecodeGate* gate_ = nullptr;
    int64_t bytes_ = 0;
  };

  // Blocks until `bytes` (at most the capacity) fit beside what is held.
  Hold Acquire(int64_t bytes) {
    bytes = std::clamp<int64_t>(bytes, 0, capacity_);
    std::unique_lock<std::mutex> lock(mu_);
    if (held_ + bytes > capacity_) {
      ++waits_;
      freed_.wait(lock, [&] { return held_ + bytes <= capacity_; });
    }
    held_ += bytes;
    peak_ = std::max(peak_, held_);
    return Hold(this, bytes);
  }

  int64_t capacity() const { return capacity_; }
  int64_t held() const {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }
  int64_t peak() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }
  // Acquisitions that had to wait for others to finish.
  int64_t waits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waits_;
  }

 private:
  bool Give(int64_t bytes) {
    bool collect = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_ -= bytes;
      given_ += bytes;
      if (given_ >= capacity_ / 2) {
        given_ = 0;
        collect = true;
      }
    }
    freed_.notify_all();
    return collect;
  }

  const int64_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  int64_t held_ = 0;
  int64_t peak_ = 0;
  int64_t waits_ = 0;
  int64_t given_ = 0;  // given back since Give last returned true
};

}  // namespace thaw::records
