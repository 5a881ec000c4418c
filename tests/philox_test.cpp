// Philox4x32-10 against the published known-answer vectors (Random123's kat_vectors).
#include <gtest/gtest.h>

#include "case/philox.hpp"

using namespace flce;

static void expect_kat(Philox4 ctr, uint32_t k0, uint32_t k1, Philox4 want) {
  Philox4 got = philox4x32_10(ctr, k0, k1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], want.v[i]) << "word " << i;
}

TEST(Philox, KnownAnswerZero) {
  expect_kat({{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}});
}
TEST(Philox, KnownAnswerOnes) {
  expect_kat({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
             {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}});
}
TEST(Philox, KnownAnswerPi) {
  expect_kat({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
             {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}});
}
TEST(Philox, StreamsAndIndicesAreIndependent) {
  Philox4 a = philox_draw(7, 1, 0), b = philox_draw(7, 2, 0), c = philox_draw(7, 1, 1), d = philox_draw(8, 1, 0);
  EXPECT_NE(a.v[0], b.v[0]);
  EXPECT_NE(a.v[0], c.v[0]);
  EXPECT_NE(a.v[0], d.v[0]);
  Philox4 again = philox_draw(7, 1, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.v[i], again.v[i]);
}
