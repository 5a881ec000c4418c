// flce case validate FILE... | flce case example | flce case canonical FILE
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "case/case.hpp"
#include "case/sampler.hpp"
#include "fuzz/campaign/coverage_guide.hpp"

namespace flce::cli {

void add_case_commands(CLI::App& app) {
  auto* c = app.add_subcommand("case", "Work with case files (canonical JSON)");
  c->require_subcommand(1);

  auto* validate = c->add_subcommand("validate", "Check case files; print every broken rule, naming the field");
  static std::vector<std::string> files;
  validate->add_option("files", files, "Case JSON files ('-' for stdin)")->required();
  validate->callback([] {
    int bad = 0;
    for (auto& f : files) {
      std::string text;
      if (f == "-") {
        std::stringstream ss;
        ss << std::cin.rdbuf();
        text = ss.str();
      } else {
        std::ifstream in(f);
        if (!in) {
          std::fprintf(stderr, "%s: case: cannot read file\n", f.c_str());
          ++bad;
          continue;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
      }
      try {
        Case cs = from_json(text);
        std::printf("%s: valid\n", f.c_str());
      } catch (const CaseError& e) {
        std::fprintf(stderr, "%s: %s\n", f.c_str(), e.what());
        ++bad;
      }
    }
    exit_code() = bad ? kBadInput : kOk;
  });

  auto* example = c->add_subcommand("example", "Print the embedded example case (Liger #1327's seed configuration)");
  example->callback([] { std::printf("%s\n", to_json(example_case()).c_str()); });

  auto* canon = c->add_subcommand("canonical", "Print a case file in canonical form (all fields, fixed order)");
  static std::string canon_file;
  canon->add_option("file", canon_file, "Case JSON file")->required()->check(CLI::ExistingFile);
  canon->callback([] { std::printf("%s\n", to_json(from_json_file(canon_file)).c_str()); });

  // A campaign names sampled cases "sample:SEED#INDEX"; this prints one back as a file.
  auto* samp = c->add_subcommand("sample", "Print sampled case INDEX of SEED as a campaign (key sample:SEED#INDEX) or gate (sample-SEED-INDEX) draws it");
  static uint64_t samp_seed = 1, samp_index = 0;
  static std::string samp_device = "cpu";
  static bool samp_ops = false;
  samp->add_option("--seed", samp_seed, "Sampler seed")->required();
  samp->add_option("--index", samp_index, "Case index in that seed's stream")->required();
  samp->add_option("--device", samp_device, "As the campaign's --device")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  samp->add_flag("--op-kinds", samp_ops, "As a campaign of aten-dtype-out (op cases included)");
  static bool samp_fixed_compile = false;
  samp->add_flag("--fixed-compile", samp_fixed_compile, "As `flce gate` without --vary-compile (default compile options)");
  static uint64_t samp_family = 1;
  samp->add_option("--family", samp_family,
                   "The campaign's --family (family_size in its state.json; campaigns default to 8); 1: the plain "
                   "stream gates draw from")
      ->check(CLI::Range(uint64_t{1}, uint64_t{4096}))
      ->capture_default_str();
  static std::vector<std::string> samp_without;
  samp->add_option("--without", samp_without,
                   "Parameters the subject lacks, as the campaign drew without them (capabilities.lacks in its "
                   "state.json)")
      ->delimiter(',')
      ->check(CLI::IsMember(flce_parameters()));
  static uint32_t samp_candidate = 0;
  samp->add_option("--candidate", samp_candidate,
                   "Coverage guidance's candidate J (key sample:SEED#INDEX~J); 0: the plain stream")
      ->capture_default_str();
  samp->callback([] {
    SampleSpace sp;
    sp.op_kinds = samp_ops;
    sp.compile_options = !samp_fixed_compile;
    sp.device = samp_device == "cuda" ? Device::CUDA : Device::CPU;
    sp.family_size = samp_family;
    sp.without = {samp_without.begin(), samp_without.end()};
    std::printf("%s\n", to_json(sample_case(candidate_seed(samp_seed, samp_candidate), samp_index, sp), 2).c_str());
  });
}

}  // namespace flce::cli
