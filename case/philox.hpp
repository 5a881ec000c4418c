// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
// Counter-based: the value at (key, counter) needs no state, so every element of every
// input tensor can be drawn independently, on the CPU or in a CUDA thread, with
// bit-identical results. Integer arithmetic only.
#pragma once
#include <cstdint>

#include "case/hd.hpp"

namespace flce {

struct Philox4 {
  uint32_t v[4];
};

FLCE_HD void philox_mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

FLCE_HD Philox4 philox4x32_10(Philox4 ctr, uint32_t k0, uint32_t k1) {
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(M0, ctr.v[0], hi0, lo0);
    philox_mulhilo(M1, ctr.v[2], hi1, lo1);
    ctr = Philox4{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += W0;
    k1 += W1;
  }
  return ctr;
}

// One draw of four 32-bit words for element `index` of stream `stream` under `seed`.
FLCE_HD Philox4 philox_draw(uint64_t seed, uint32_t stream, uint64_t index) {
  Philox4 c{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, 0x666c6365u /* "flce" */}};
  return philox4x32_10(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

}  // namespace flce
