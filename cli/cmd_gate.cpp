// flce gate --base SPEC --candidate SPEC: the pre-merge check (Markdown for the PR comment,
// JSON, JUnit XML); exit 1 on any regression.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "cli/commands.hpp"
#include "gate/gate.hpp"
#include "report/write.hpp"

namespace flce::cli {

void add_gate_commands(CLI::App& app) {
  auto* g = app.add_subcommand(
      "gate", "Diff a candidate subject against a base on the pinned corpus and sampled cases; exit 1 on regressions");
  static std::string base, candidate, out;
  static std::vector<std::string> corpora{std::string(FLCE_SOURCE_DIR) + "/corpus/expectations.json"};
  static int sample = 10;
  static uint64_t seed = 1;
  static double fuzz_minutes = 0, timeout_s = 600;
  static bool no_corpus = false, vary_compile = false, quiet = false;
  g->add_option("--base", base,
                "SPEC: subject=NAME[,path=SRC_TREE][,python=VENV/bin/python][,git=REPO@REF] (git=: REF's tree, "
                "exported into ~/.cache/flce/trees; path= is then inside it); optional with --merge-base");
  g->add_option("--candidate", candidate, "SPEC of the candidate (same keys)")->required();
  static std::string merge_base_branch;
  auto* mb = g->add_option("--merge-base", merge_base_branch,
                           "Gate the candidate's git= ref (a PR head) against its merge base with BRANCH "
                           "(default main): the base is the same repository at that commit, with --base's "
                           "other keys if given")
                 ->expected(0, 1)
                 ->type_name("[BRANCH]");
  g->add_option("--corpus", corpora, "Pinned cases (expectations.json; repeatable); subjects replaced by the specs'")
      ->capture_default_str();
  g->add_flag("--no-corpus", no_corpus, "Skip the pinned cases");
  g->add_option("--sample", sample, "Random cases (fixed seed)")->capture_default_str();
  g->add_option("--seed", seed, "Sampler seed")->capture_default_str();
  g->add_option("--fuzz-minutes", fuzz_minutes, "After the sample, keep sampling for this many minutes");
  g->add_flag("--vary-compile", vary_compile, "Sampled cases also vary dynamic/fullgraph (more compiles)");
  g->add_option("--timeout", timeout_s, "Seconds per subject call before its worker is killed")->capture_default_str();
  g->add_option("--out", out, "Directory for gate.md, gate.json, gate.xml (JUnit) and cases/ of regressed and fixed cases");
  g->add_flag("-q,--quiet", quiet, "No per-case progress on stderr");
  static bool strict_changes = false;
  g->add_flag("--strict-changes", strict_changes,
              "A case failing to compile on both sides with different signatures fails the gate too");
  static std::string device = "cpu";
  g->add_option("--device", device, "Device of the sampled cases (pinned cases keep theirs)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  static std::string lanes = "eager,compiled";
  g->add_option("--lanes", lanes,
                "Oracles of every case: eager (golden + eager subject: no torch.compile), compiled or "
                "eager,compiled (also the compiled run and the backend ladder)")
      ->capture_default_str();
  g->callback([mb] {
    if (!check_out_option(out, "--out", "gate")) return;
    GateOptions opt;
    opt.cuda = device == "cuda";
    if (lanes != "eager" && lanes != "compiled" && lanes != "eager,compiled" && lanes != "compiled,eager") {
      std::fprintf(stderr, "flce gate: --lanes %s: one of eager, compiled, eager,compiled\n", lanes.c_str());
      exit_code() = kBadInput;
      return;
    }
    opt.compiled = lanes != "eager";
    try {
      opt.candidate = parse_gate_spec(candidate);
      if (mb->count()) {
        opt.base = merge_base_spec(opt.candidate, merge_base_branch.empty() ? "main" : merge_base_branch, base);
        std::fprintf(stderr, "flce gate: base is the merge base of %s and %s: %s\n",
                     merge_base_branch.empty() ? "main" : merge_base_branch.c_str(), opt.candidate.git_ref.c_str(),
                     opt.base.git_ref.c_str());
      } else if (base.empty()) {
        throw std::invalid_argument("--base is required (or --merge-base with a git= candidate)");
      } else {
        opt.base = parse_gate_spec(base);
      }
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "flce gate: bad SPEC: %s\n", e.what());
      exit_code() = kBadInput;
      return;
    } catch (const SubjectTreeError& e) {
      std::fprintf(stderr, "flce gate: --merge-base: %s\n", e.what());
      exit_code() = kBadInput;
      return;
    }
    if (sample < 0 || fuzz_minutes < 0) {
      std::fprintf(stderr, "flce gate: --sample and --fuzz-minutes must be >= 0\n");
      exit_code() = kBadInput;
      return;
    }
    if (!no_corpus) opt.corpora = corpora;
    opt.sample = sample;
    opt.seed = seed;
    opt.fuzz_minutes = fuzz_minutes;
    opt.vary_compile = vary_compile;
    opt.timeout_s = timeout_s;
    opt.strict_changes = strict_changes;
    int n = 0;
    if (!quiet) opt.progress = [&n](const std::string& line) { std::fprintf(stderr, "[gate %d] %s\n", ++n, line.c_str()); };
    GateReport rep;
    try {
      rep = run_gate(opt);
    } catch (const GateSetupError& e) {
      std::fprintf(stderr, "flce gate: %s\n", e.what());
      exit_code() = kBadInput;
      return;
    }
    const std::string md = gate_markdown(rep);
    std::printf("%s", md.c_str());
    if (!out.empty()) {
      namespace fs = std::filesystem;
      fs::create_directories(fs::path(out) / "cases");
      write_atomic(fs::path(out) / "gate.md", md);
      write_atomic(fs::path(out) / "gate.json", gate_json(rep).dump(2) + "\n");
      write_atomic(fs::path(out) / "gate.xml", gate_junit(rep));
      // Each regressed or fixed case as a file `flce run` takes.
      for (auto& row : rep.rows)
        if (is_regression(row.verdict) || row.verdict == GateVerdict::FIXED || row.verdict == GateVerdict::STILL_FAILING) {
          std::string fname = row.gc.id;
          for (char& ch : fname)
            if (ch == '/') ch = '-';
          if (fname.size() < 5 || fname.substr(fname.size() - 5) != ".json") fname += ".json";
          write_atomic(fs::path(out) / "cases" / fname, to_json(row.gc.c) + "\n");
        }
    }
    if (rep.judged() == 0) {
      std::fprintf(stderr, "flce gate: no case could be judged (every case skipped or unsupported)\n");
      exit_code() = kUnsupported;
      return;
    }
    exit_code() = rep.regressions() ? kFinding : kOk;
  });
}

}  // namespace flce::cli
