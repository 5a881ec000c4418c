// flce: differential fuzzing and conformance for fused linear cross entropy.
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"
#include "flce_build_info.hpp"
#include "process/bytecode_cache.hpp"
#include "case/case.hpp"

namespace flce::cli {
int& exit_code() {
  static int code = kOk;
  return code;
}
}  // namespace flce::cli

int main(int argc, char** argv) {
  using namespace flce::cli;
  flce::use_bytecode_cache();  // before any interpreter starts, ours or a child's
  CLI::App app{"flce: differential fuzzing and conformance for fused linear cross entropy (FLCE)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every verb");
  app.set_version_flag("--version",
                       std::string("flce " FLCE_VERSION " (git " FLCE_GIT_COMMIT "), built against torch ") +
                           (*FLCE_TORCH_VERSION ? FLCE_TORCH_VERSION : "(none: FLCE_PYTHON was not set)") +
#ifdef FLCE_HAVE_CUDA
                           ", with the CUDA reference"
#else
                           ", without the CUDA reference"
#endif
                       );
  add_case_commands(app);
  add_reference_command(app);
  add_run_commands(app);
  add_replay_command(app);
  add_campaign_commands(app);
  add_campaign_merge_command(app);
  add_repro_commands(app);
  add_gate_commands(app);
  add_matrix_commands(app);
  add_bisect_command(app);
  add_report_command(app);
  add_conformance_command(app);
  add_nights_commands(app);
#ifdef FLCE_HAVE_CUDA
  add_cuda_commands(app);
#endif
  add_exit_code_footers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  } catch (const flce::CaseError& e) {
    std::fprintf(stderr, "flce: bad input: %s\n", e.what());  // a case or an expectations file
    return kBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flce: error: %s\n", e.what());
    return kInternal;
  }
  return exit_code();
}
