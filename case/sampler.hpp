// Seeded random cases for campaigns and calibration (RapidCheck's generators in
// properties/ are for properties with shrinking; this one is a plain, replayable
// stream: case k of seed s is always the same case).
#pragma once
#include <cstdint>
#include <optional>

#include "case/case.hpp"

namespace flce {

struct SampleSpace {
  int64_t max_BT = 32, max_H = 32, max_V = 64;
  std::optional<DType> dtype;  // fix input/weight dtype (calibration per dtype)
  bool special_values = false;
  bool op_kinds = false;
  bool compile_options = true;  // vary backend/dynamic/fullgraph
  Device device = Device::CPU;
  // Families (campaigns): index k belongs to family k / family_size. A family fixes every
  // field that shapes the compiled graph (dtypes, flags, compile options) and varies only
  // what it feeds: seed, values regime, ignored targets, upstream gradient, and a shape
  // drawn from the family's pool of kShapePool shapes. A worker that runs a whole family
  // compiles its graph a few times (once per shape with dynamic=False), not once per case.
  // 1 = every case its own configuration (the plain stream gates and tests replay).
  // With families, families 0..5 are the plain configurations: defaults, each dtype,
  // accum_dtype none and fp32 (what most users run; a campaign should speak for them first).
  uint64_t family_size = 1;
};

inline constexpr int kShapePool = 3;

Case sample_case(uint64_t seed, uint64_t index, const SampleSpace& space);

// The graph-relevant part of a case: its canonical JSON with the fields a family varies
// (seed, shape, regime, ignored fraction, upstream gradient) set to fixed values. Two cases
// with one graph key differ only in what they feed the same compiled function.
std::string graph_key(const Case& c);

}  // namespace flce
