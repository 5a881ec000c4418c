// Behaviour features for libFuzzer. flce's fuzzers are guided by what the *case*
// makes happen (dtype combination, flags, outcome, signature, error/bound bucket,
// ladder stage), not by flce's own C++ coverage: each distinct feature bumps one of
// libFuzzer's extra counters, so inputs that show new behaviour join the corpus.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace flce::fuzz {

inline constexpr size_t kFeatureSlots = 1 << 14;
extern uint8_t feature_counters[kFeatureSlots];

inline uint32_t hash(std::string_view s, uint32_t h = 2166136261u) {
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}
// Record the feature "<kind>=<value>" (and its pair with a second value when given).
inline void feature(std::string_view kind, std::string_view value) {
  uint32_t h = hash(value, hash(kind));
  uint8_t& c = feature_counters[h % kFeatureSlots];
  if (c < 255) ++c;
}
inline void feature(std::string_view kind, int64_t value) {
  char buf[24];
  int n = 0;
  uint64_t v = static_cast<uint64_t>(value);
  do { buf[n++] = static_cast<char>('0' + v % 10); v /= 10; } while (v && n < 20);
  feature(kind, std::string_view(buf, static_cast<size_t>(n)));
}
// Log2 bucket of an error/bound ratio: ..., [1/4,1/2), [1/2,1), [1,2) (a failure), ...
inline int ratio_bucket(double r) {
  if (!(r > 0)) return -64;
  int b = 0;
  while (r >= 1 && b < 64) { r /= 2; ++b; }
  while (r < 0.5 && b > -63) { r *= 2; --b; }
  return b;
}

}  // namespace flce::fuzz
