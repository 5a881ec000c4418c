// flce reference FILE [--json] [--values]: the fp64 golden reference on one case.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "case/memory.hpp"
#include "cli/commands.hpp"
#include "oracles/golden.hpp"
#include "judge/summary.hpp"

namespace flce::cli {

void add_reference_command(CLI::App& app) {
  auto* r = app.add_subcommand("reference", "Run the CPU fp64 golden reference on a case and summarize every output");
  static std::string file;
  static bool as_json = false, values = false;
  r->add_option("file", file, "Case JSON file (omit for the embedded example)");
  r->add_flag("--json", as_json, "Print one JSON object");
  r->add_flag("--values", values, "With --json: include every value");
  r->callback([] {
    Case c = file.empty() ? example_case() : from_json_file(file);
    check_fits_memory(c);  // before any allocation: a clear refusal, not std::bad_alloc halfway
    Inputs in = make_inputs(c);
    Outputs out = golden(c, in);
    if (as_json) {
      nlohmann::ordered_json j;
      j["case"] = nlohmann::ordered_json::parse(to_json(c));
      j["ignored_targets"] = in.n_ignored();
      j["outputs"] = summary_json(out, values);
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("fp64 golden reference: kind %s, BT=%lld H=%lld V=%lld, %s/%s, reduction %s, %lld of %lld targets ignored\n",
                  std::string(name(c.kind)).c_str(), (long long)c.BT, (long long)c.H, (long long)c.V,
                  std::string(dtype_name(c.input_dtype)).c_str(), std::string(dtype_name(c.weight_dtype)).c_str(),
                  std::string(name(c.reduction)).c_str(), (long long)in.n_ignored(), (long long)in.BT);
      std::printf("%s", summary_table(out).c_str());
    }
  });
}

}  // namespace flce::cli
