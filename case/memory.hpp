// Will a case fit? The fp64 golden, its bounds, the outputs of each oracle (held as float64) and
// the inputs are all in memory at once; a case that cannot fit is refused before anything runs,
// with the estimate and the field to lower, instead of dying in an allocation halfway.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "case/case.hpp"

namespace flce {

// Bytes a run of the case holds at its peak in flce's process (an upper estimate).
uint64_t estimated_bytes(const Case& c);

// What this process may use: its RLIMIT_AS / RLIMIT_DATA when set, else the cgroup's memory.max,
// else the machine's available memory; with what it is ("RLIMIT_DATA", "MemAvailable", ...).
struct MemoryLimit {
  uint64_t bytes = 0;
  std::string what;
};
std::optional<MemoryLimit> memory_limit();

// Throws CaseError naming the dimension to lower when the estimate exceeds the limit.
void check_fits_memory(const Case& c);

}  // namespace flce
