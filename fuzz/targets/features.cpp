#include "fuzz/targets/features.hpp"

namespace flce::fuzz {
// libFuzzer collects every byte of this section as extra coverage counters
// (it finds it through the linker's __start_/__stop_ symbols, with gcc or clang).
__attribute__((section("__libfuzzer_extra_counters"), used)) uint8_t feature_counters[kFeatureSlots];
}  // namespace flce::fuzz
