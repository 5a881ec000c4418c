#include "case/memory.hpp"

#include <sys/resource.h>

#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace flce {

uint64_t estimated_bytes(const Case& c) {
  const double BT = static_cast<double>(c.BT) * static_cast<double>(c.batch), H = static_cast<double>(c.H),
               V = static_cast<double>(c.V);
  // Inputs in their float staging (x, w, op operands), then per output in float64: the golden,
  // its bounds, one oracle's outputs and the judge's working copy.
  double elems = BT * H + V * H;
  if (c.is_op()) elems += V * BT + V * H;
  const double bytes = 4 * elems + 4 * 8 * elems + 16 * (BT + V) * 8;
  return bytes > 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

namespace {

std::optional<uint64_t> rlimit_of(int which) {
  rlimit rl{};
  if (::getrlimit(which, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(rl.rlim_cur);
}

std::optional<uint64_t> cgroup_max() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string v;
  if (!(in >> v) || v == "max") return std::nullopt;
  try {
    return std::stoull(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<uint64_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream ss(line.substr(13));
      uint64_t kib = 0;
      if (ss >> kib) return kib * 1024;
    }
  return std::nullopt;
}

}  // namespace

std::optional<MemoryLimit> memory_limit() {
  if (auto v = rlimit_of(RLIMIT_AS)) return MemoryLimit{*v, "RLIMIT_AS"};
  if (auto v = rlimit_of(RLIMIT_DATA)) return MemoryLimit{*v, "RLIMIT_DATA"};
  if (auto v = cgroup_max()) return MemoryLimit{*v, "the cgroup's memory.max"};
  if (auto v = mem_available()) return MemoryLimit{*v, "MemAvailable"};
  return std::nullopt;
}

void check_fits_memory(const Case& c) {
  const auto limit = memory_limit();
  const uint64_t need = estimated_bytes(c);
  if (!limit || need <= limit->bytes) return;
  const char* field = c.BT * c.batch >= c.V ? "BT" : "V";
  throw CaseError(field, fmt::format("needs about {:.1f} GiB in flce's process (fp64 golden, bounds and outputs for "
                                     "BT={} H={} V={}), more than the {:.1f} GiB it may use ({}): lower {} (or H)",
                                     static_cast<double>(need) / (1ull << 30), c.BT, c.H, c.V,
                                     static_cast<double>(limit->bytes) / (1ull << 30), limit->what, field));
}

}  // namespace flce
