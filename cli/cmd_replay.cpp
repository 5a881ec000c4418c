// flce replay [corpus/expectations.json]: re-run the pinned corpus and compare each
// outcome with the one expected on this torch and device: as-expected, fixed,
// regressed, changed (one failure turned into another), or new (no expectation).
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "case/sequence.hpp"
#include "judge/differential.hpp"
#include "judge/expectations.hpp"
#include "judge/signature.hpp"
#include "judge/sequence_run.hpp"
#include "oracles/subject_worker.hpp"

namespace flce::cli {

namespace {

struct Pinned {
  std::string file, subject, expected;  // expected empty: none for this environment
  bool has_expectation = false;
};

std::string verdict_of(const Pinned& p, const std::string& got) {
  if (!p.has_expectation) return "new";
  if (outcome_matches(p.expected, got)) return "as-expected";
  if (got == "pass") return "fixed";
  if (p.expected == "pass") return "regressed";
  return "changed";
}

}  // namespace

int replay_corpus(const std::string& file, const std::string& only, bool as_json, bool expected_only,
                  const std::string& subject_path) {
  {
    // The whole file and every case it names are checked before the subject host starts.
    const std::vector<LoadedPin> pinned = load_expectations(file);
    SubjectWorker& host = default_subject_worker();
    const std::string tv = host.torch_version();
    const bool cuda = host.cuda_available();
    int bad = 0, n = 0;
    std::map<std::string, std::string> versions;  // subject -> its version string here ("" unknown)
    auto version_of = [&](const std::string& subject) -> const std::string& {
      auto it = versions.find(subject);
      if (it == versions.end()) it = versions.emplace(subject, host.describe(subject, subject_path).version).first;
      return it->second;
    };
    if (!as_json) std::printf("%-44s %-16s %-12s %s\n", "case", "subject", "verdict", "outcome (expected)");
    for (auto& lp : pinned) {
      const PinnedCase& e = lp.pin;
      Pinned p;
      p.file = e.case_file;
      if (!only.empty() && p.file.find(only) == std::string::npos) continue;
      p.subject = e.subject;
      const std::string& sv = version_of(p.subject);
      if (const Expectation* x = expectation_here(e.expect, tv, cuda, sv)) {
        p.expected = x->outcome;
        p.has_expectation = true;
      }
      const Sequence& seq = lp.calls;  // a plain case or a sequence case
      const Case& c = seq.last();
      if (expected_only) {  // what the corpus says this torch and device show, without running
        if (as_json)
          std::printf("%s\n", nlohmann::ordered_json{{"case", p.file}, {"subject", p.subject}, {"expected", p.expected},
                                                     {"torch", tv}, {"device", cuda ? "cuda" : "cpu"},
                                                     {"subject_version", sv}}
                                   .dump()
                                   .c_str());
        else
          std::printf("%-44s %-16s %-12s %s\n", p.file.c_str(), p.subject.c_str(), "expected",
                      p.has_expectation ? p.expected.c_str() : "- (no expectation here)");
        continue;
      }
      if (c.device == Device::CUDA && !cuda) {
        std::printf("%-44s %-16s %-12s %s\n", p.file.c_str(), p.subject.c_str(), "skipped", "needs CUDA (runs on the GPU box)");
        continue;
      }
      RunOptions opt;
      opt.subject = p.subject;
      opt.subject_path = subject_path;
      RunReport rep = run_sequence(seq, opt).last;
      std::string v = verdict_of(p, rep.outcome);
      ++n;
      if (v == "regressed" || v == "changed") ++bad;
      if (as_json) {
        nlohmann::ordered_json o{{"case", p.file}, {"subject", p.subject}, {"verdict", v}, {"outcome", rep.outcome},
                                 {"expected", p.expected}, {"torch", tv}, {"subject_version", rep.subject_version}};
        std::printf("%s\n", o.dump().c_str());
      } else {
        std::printf("%-44s %-16s %-12s %s%s\n", p.file.c_str(), p.subject.c_str(), v.c_str(), rep.outcome.c_str(),
                    v == "as-expected" ? "" : fmt::format(" (expected {})", p.has_expectation ? p.expected : "-").c_str());
      }
    }
    if (!expected_only) std::printf("%d replayed, %d regressed or changed\n", n, bad);
    return bad ? kFinding : kOk;
  }
}

void add_replay_command(CLI::App& app) {
  auto* r = app.add_subcommand("replay", "Replay the pinned corpus and report fixed / regressed / changed outcomes");
  static std::string file = std::string(FLCE_SOURCE_DIR) + "/corpus/expectations.json";
  static std::string only;
  static bool as_json = false, expected_only = false;
  static std::string subject_path, subject_git;
  r->add_option("expectations", file, "Expectations file (corpus/expectations.json)")->capture_default_str();
  r->add_option("--only", only, "Replay only entries whose case path contains this text");
  r->add_flag("--json", as_json, "JSON lines, one per case");
  r->add_flag("--expected", expected_only, "Print each case's expected outcome on this torch and device; run nothing");
  r->add_option("--subject-path", subject_path,
                "Load the subjects from this source tree (e.g. a Liger-Kernel checkout's src/); expectations with a "
                "subject_version pick by the version loaded");
  r->add_option("--subject-git", subject_git, "REPO@REV: export that commit's tree and load the subjects from it");
  r->callback([] {
    if (!resolve_subject_git(subject_git, subject_path, "replay")) return;
    exit_code() = replay_corpus(file, only, as_json, expected_only, subject_path);
  });
}

}  // namespace flce::cli
