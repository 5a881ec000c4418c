// flce gate (placeholder registration; implemented in this file).
#include "cli/commands.hpp"

namespace flce::cli {

void add_gate_commands(CLI::App& app) { (void)app; }

}  // namespace flce::cli
