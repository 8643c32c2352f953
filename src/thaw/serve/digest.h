// Hashes for served topics' ids and segment cache keys (not cryptographic).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace thaw::serve {

inline uint64_t Fnv1a(std::string_view s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

inline uint64_t Mix(uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A 128-bit digest of `s` as hex (cache keys: collisions are not a concern
// at this width for the few million segments a server sees).
inline std::string Digest(std::string_view s) {
  uint64_t a = Mix(Fnv1a(s, 0xcbf29ce484222325ULL));
  uint64_t b = Mix(Fnv1a(s, 0x84222325cbf29ce4ULL) ^ s.size());
  return fmt::format("{:016x}{:016x}", a, b);
}

}  // namespace thaw::serve
