#include "thaw/kafka/protocol/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define THAW_CRC32C_X86 1
#endif

namespace thaw::kafka {

namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// Slicing-by-8 tables: kTables[0] is the classic byte table, kTables[k][b] the
// CRC of byte b followed by k zero bytes.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
    }
  }
};
constexpr Tables kTables;

inline uint64_t LoadLE64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#ifdef THAW_CRC32C_X86
// Three lanes at once: the crc32 instruction takes three cycles and can
// start one a cycle, so one chain of it runs at a third of its throughput.
// A block of 3 × L bytes is taken as three lanes, the second and third
// started from 0; the CRC state after lane A then B is B's state xor A's
// state carried over L zero bytes (the CRC is linear in its state), which
// ZeroShift does with four table lookups.
constexpr size_t kLongLane = 8192, kShortLane = 256;

// ZeroShift tables for a lane of `lane` bytes: t[k][b] = the state reached
// from state b << 8k after `lane` zero bytes.
struct ZeroShift {
  std::array<std::array<uint32_t, 256>, 4> t{};
  __attribute__((target("sse4.2"))) explicit ZeroShift(size_t lane) {
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint64_t s = static_cast<uint64_t>(b) << (8 * k);
        for (size_t i = 0; i < lane; i += 8) s = _mm_crc32_u64(s, 0);
        t[k][b] = static_cast<uint32_t>(s);
      }
    }
  }
  uint32_t operator()(uint32_t s) const {
    return t[0][s & 0xFF] ^ t[1][(s >> 8) & 0xFF] ^ t[2][(s >> 16) & 0xFF] ^ t[3][s >> 24];
  }
};

template <size_t Lane>
__attribute__((target("sse4.2"))) inline uint64_t ThreeLanes(const unsigned char*& p, size_t& n, uint64_t c,
                                                             const ZeroShift& shift) {
  while (n >= 3 * Lane) {
    uint64_t a = c, b = 0, d = 0;
    for (size_t i = 0; i < Lane; i += 8) {
      uint64_t x, y, z;
      std::memcpy(&x, p + i, 8);
      std::memcpy(&y, p + Lane + i, 8);
      std::memcpy(&z, p + 2 * Lane + i, 8);
      a = _mm_crc32_u64(a, x);
      b = _mm_crc32_u64(b, y);
      d = _mm_crc32_u64(d, z);
    }
    c = shift(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
    c = shift(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(d);
    p += 3 * Lane;
    n -= 3 * Lane;
  }
  return c;
}

__attribute__((target("sse4.2"))) uint32_t HardwareImpl(const unsigned char* p, size_t n, uint32_t crc) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  if (n >= 3 * kShortLane) {
    static const ZeroShift kLong(kLongLane), kShort(kShortLane);
    c = ThreeLanes<kLongLane>(p, n, c, kLong);
    c = ThreeLanes<kShortLane>(p, n, c, kShort);
  }
  while (n >= 32) {
    uint64_t a, b, d, e;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, 8);
    std::memcpy(&d, p + 16, 8);
    std::memcpy(&e, p + 24, 8);
    c = _mm_crc32_u64(c, a);
    c = _mm_crc32_u64(c, b);
    c = _mm_crc32_u64(c, d);
    c = _mm_crc32_u64(c, e);
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    uint64_t a;
    std::memcpy(&a, p, 8);
    c = _mm_crc32_u64(c, a);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return ~static_cast<uint32_t>(c);
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace

uint32_t Crc32cSoftware(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  const auto& t = kTables.t;
  while (n >= 8) {
    uint64_t v = LoadLE64(p) ^ c;
    c = t[7][v & 0xFF] ^ t[6][(v >> 8) & 0xFF] ^ t[5][(v >> 16) & 0xFF] ^ t[4][(v >> 24) & 0xFF] ^
        t[3][(v >> 32) & 0xFF] ^ t[2][(v >> 40) & 0xFF] ^ t[1][(v >> 48) & 0xFF] ^ t[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
    --n;
  }
  return ~c;
}

bool Crc32cHardwareAvailable() {
#ifdef THAW_CRC32C_X86
  static const bool available = DetectHardware();
  return available;
#else
  return false;
#endif
}

uint32_t Crc32cHardware(const void* data, size_t size, uint32_t crc) {
#ifdef THAW_CRC32C_X86
  return HardwareImpl(static_cast<const unsigned char*>(data), size, crc);
#else
  return Crc32cSoftware(data, size, crc);
#endif
}

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
#ifdef THAW_CRC32C_X86
  if (Crc32cHardwareAvailable()) return HardwareImpl(static_cast<const unsigned char*>(data), size, crc);
#endif
  return Crc32cSoftware(data, size, crc);
}

}  // namespace thaw::kafka
