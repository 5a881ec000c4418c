// Human and JSON summaries of Outputs (shape, dtype, finite stats, a few values).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "case/outputs.hpp"

namespace flce {

std::string summary_table(const Outputs& o);
nlohmann::ordered_json summary_json(const Outputs& o, bool with_values = false);

}  // namespace flce
