// Seeded random cases for campaigns and calibration (RapidCheck's generators in
// properties/ are for properties with shrinking; this one is a plain, replayable
// stream: case k of seed s is always the same case).
#pragma once
#include <cstdint>
#include <optional>

#include "case.hpp"

namespace flce {

struct SampleSpace {
  int64_t max_BT = 32, max_H = 32, max_V = 64;
  std::optional<DType> dtype;  // fix input/weight dtype (calibration per dtype)
  bool special_values = false;
  bool op_kinds = false;
  bool compile_options = true;  // vary backend/dynamic/fullgraph
  Device device = Device::CPU;
};

Case sample_case(uint64_t seed, uint64_t index, const SampleSpace& space);

}  // namespace flce
