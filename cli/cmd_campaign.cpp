// flce campaign (placeholder registration; implemented in this file).
#include "cli/commands.hpp"

namespace flce::cli {

void add_campaign_commands(CLI::App& app) { (void)app; }

}  // namespace flce::cli
