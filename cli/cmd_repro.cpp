// flce repro | minimize: re-run a finding and say whether it reproduces, write it as a
// standalone Python script, and shrink it (optionally pinning it into the corpus).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "cli/commands.hpp"
#include "case/sequence.hpp"
#include "judge/differential.hpp"
#include "judge/sequence_run.hpp"
#include "oracles/subject_worker.hpp"
#include "repro/emit_python.hpp"
#include "fuzz/findings/minimize.hpp"
#include "repro/repro.hpp"
#include "repro/script_check.hpp"

namespace flce::cli {

namespace {

// Built-ins the emitted script knows by name (flce_subjects/registry.py's BUILTIN); other
// names are checked against the runner, which costs starting the interpreter.
constexpr const char* kScriptSubjects[] = {"model", "model-bug-smoothing", "model-bug-bf16-accum", "model-bug-drop-chunk",
                                           "model-bug-second-shape", "model-bug-trace-error", "model-bug-token-grad-rows", "model-bug-autocast-no-bias",
                                           "model-bug-input-no-grad", "model-bug-two-causes", "model-dtype-out", "liger", "torch-native", "torch-native-reference", "torch-native-accurate",
                                           "torch-native-balanced", "torch-native-chunk1", "cce", "aten-dtype-out",
                                           "segfault", "hang", "cuda-oob"};

std::string base_subject(std::string s) {
  const std::string suffix = "+workaround";
  if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    s.resize(s.size() - suffix.size());
  return s;
}

// A built-in name or a plug-in "package.module:callable"; prints why not and returns false.
bool check_subject(const std::string& full, const char* verb, bool host_ok) {
  const std::string s = base_subject(full);
  if (s.find(':') != std::string::npos) return true;
  if (std::find(std::begin(kScriptSubjects), std::end(kScriptSubjects), s) != std::end(kScriptSubjects)) return true;
  if (host_ok) {
    std::string why;
    if (known_subject(s, &why)) return true;
    std::fprintf(stderr, "flce %s: %s\n", verb, why.c_str());
    exit_code() = kBadInput;
    return false;
  }
  std::fprintf(stderr, "flce %s: unknown subject '%s': use a built-in or a plug-in 'package.module:callable'\n", verb,
               s.c_str());
  exit_code() = kBadInput;
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunOptions run_options(const std::string& subject, const std::string& subject_path) {
  RunOptions opt;
  opt.subject = subject;
  opt.subject_path = subject_path;
  return opt;
}

std::string describe(const std::vector<ExpectedOutcome>& v) {
  std::string s;
  for (auto& e : v)
    s += fmt::format("{}{} (torch {}, device {})", s.empty() ? "" : "; ", e.outcome, e.torch.empty() ? "any" : e.torch,
                     e.device);
  return s;
}

struct ReproArgs {
  std::string file, subject = "model", subject_path, subject_git, expect, out;
  bool emit = false, dump = false, quiet = false, long_form = false, check = false;
};

struct Verdict {
  std::string line;  // what flce repro prints last
  int code = kOk;
};

Verdict verdict_of(const RunReport& rep, const std::string& expected) {
  const std::string want = expected.empty() ? "a failure" : expected;
  if (is_unsupported_outcome(rep.outcome) && expected != rep.outcome)
    return {fmt::format("NOT REPRODUCED: got {} (the subject cannot run this case here), expected {}", rep.outcome, want),
            kUnsupported};
  if (reproduces(rep.outcome, expected)) return {"REPRODUCED: " + rep.outcome, kOk};
  return {fmt::format("NOT REPRODUCED: got {}, expected {}", rep.outcome, want), kFinding};
}

// --check: the script just written, run alone, against flce's own verdict; the two and whether
// they agree go to <script>.check.json, where `flce report` finds them.
void check_alone(const ReproArgs& a, const Verdict& ours) {
  std::printf("flce repro: %s\n", ours.line.c_str());
  std::fflush(stdout);
  ScriptCheck sc;
  try {
    sc = check_script_alone(a.out, {"", script_imports_flce_subjects(a.subject)});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flce repro: --check: %s\n", e.what());
    exit_code() = kInternal;
    return;
  }
  const std::string again = reproduce_command(a.file, a.subject, a.subject_path, a.subject_git);
  const bool same = write_check(a.out, ours.line, ours.code, sc, again);
  std::printf("script alone: %s (exit %d, %.1f s%s)\n", sc.line.empty() ? "(no verdict line)" : sc.line.c_str(), sc.exit,
              sc.seconds, sc.timed_out ? ", killed at the time limit: no verdict" : "");
  if (!same) std::printf("its output ended:\n%s", sc.tail.c_str());
  if (same && ours.code != kFinding) {
    std::printf("CHECKED: the script alone gives flce's verdict\n");
    exit_code() = ours.code;
  } else if (same) {
    std::printf("CHECKED, NOT REPRODUCED: neither flce nor the script alone reproduces\n");
    exit_code() = kFinding;
  } else {
    std::printf("SCRIPT DIFFERS: alone it does not give flce's verdict; reproduce with %s\n", again.c_str());
    exit_code() = kFinding;
  }
}

void repro(ReproArgs a) {
  const Sequence seq = any_case_from_json_file(a.file);  // a sequence case: its calls in order, the last judged
  const Case& c = seq.last();
  auto run = [&] { return run_sequence(seq, run_options(a.subject, a.subject_path)).last; };
  if (!check_out_file_option(a.out, "--out", "repro")) return;
  if (a.dump) {  // no subject involved: the inputs flce generates for this case
    std::printf("%s", input_dump(c).c_str());
    return;
  }
  if (a.check && (!a.emit || a.out.empty())) {
    std::fprintf(stderr, "flce repro: --check needs --emit-python and -o FILE (the script is run from there)\n");
    exit_code() = kBadInput;
    return;
  }
  if (!resolve_subject_git(a.subject_git, a.subject_path, "repro")) return;
  if (!check_subject(a.subject, "repro", !a.emit || a.check)) return;
  if ((!a.emit || a.check) && !check_subject_usable(a.subject, a.subject_path, "repro")) return;
  std::string from = "--expect";
  std::vector<ExpectedOutcome> expect;
  if (!a.expect.empty()) expect = {{"", "any", a.expect}};
  else expect = find_expectations(a.file, a.subject, &from);

  if (a.emit) {
    std::optional<RunReport> here;
    if (expect.empty()) {  // learn what this finding is here, so the script checks that exact outcome
      const RunReport& rep = here.emplace(run());
      if (rep.outcome != "pass" && !is_unsupported_outcome(rep.outcome)) expect = {{"", "any", rep.outcome}};
      std::fprintf(stderr, "flce repro: no expectation found; outcome here: %s%s\n", rep.outcome.c_str(),
                   expect.empty() ? " (the script will accept any failure)" : "");
    } else {
      std::fprintf(stderr, "flce repro: expecting %s (from %s)\n", describe(expect).c_str(), from.c_str());
    }
    EmitSpec spec{c, a.subject, a.subject_path, a.file, expect,
                  read_file(std::string(FLCE_SOURCE_DIR) + "/judge/signatures.json"), a.long_form};
    std::string script = emit_python(spec, std::vector<Case>(seq.calls.begin(), seq.calls.end() - 1),
                                     seq.scope == SequenceScope::PROCESS ? "process" : "compiled");
    if (a.out.empty()) {
      std::fwrite(script.data(), 1, script.size(), stdout);
    } else {
      std::ofstream(a.out, std::ios::binary) << script;
      std::fprintf(stderr, "flce repro: wrote %s\n", a.out.c_str());
    }
    if (a.check) {
      SubjectWorker& host = default_subject_worker();
      if (!here) here = run();
      check_alone(a, verdict_of(*here, expected_here(expect, host.torch_version(), host.cuda_available())));
    }
    return;
  }

  SubjectWorker& host = default_subject_worker();
  const std::string expected = expected_here(expect, host.torch_version(), host.cuda_available());
  if (expect.empty())
    std::fprintf(stderr, "flce repro: no expectation (--expect, report.json, expectation file, corpus entry): "
                         "any failure reproduces\n");
  else if (expected.empty())
    std::fprintf(stderr, "flce repro: %s lists no outcome for torch %s here; any failure reproduces\n", from.c_str(),
                 host.torch_version().c_str());
  else
    std::fprintf(stderr, "flce repro: expecting %s (from %s)\n", expected.c_str(), from.c_str());
  RunReport rep = run();
  if (!a.quiet) std::printf("%s", report_table(rep).c_str());
  if (const std::string named = restaged(rep.outcome, expected); !named.empty())
    std::printf("note: %s is the failure %s names, first shown at another rung of the backend ladder here\n",
                rep.outcome.c_str(), named.c_str());
  const Verdict v = verdict_of(rep, expected);
  std::printf("%s\n", v.line.c_str());
  exit_code() = v.code;
}

struct MinimizeArgs {
  std::string file, subject = "model", subject_path, subject_git, out, pin, corpus = std::string(FLCE_SOURCE_DIR) + "/corpus";
  double budget_s = 60;
  bool verbose = false;
};

void minimize_verb(MinimizeArgs a) {
  Case c = from_json_file(a.file);
  if (!check_out_file_option(a.out, "--out", "minimize")) return;
  if (!a.pin.empty()) {  // refused now, not after the budget is spent (pin_case checks again)
    if (!check_dir_option(a.corpus, "--corpus", "minimize")) return;
    if (!std::regex_match(a.pin, std::regex("[A-Za-z0-9][A-Za-z0-9._-]{0,99}"))) {
      std::fprintf(stderr, "flce minimize: --pin %s: must be letters, digits, '.', '_', '-' (not starting with a symbol)\n",
                   a.pin.c_str());
      exit_code() = kBadInput;
      return;
    }
  }
  if (!resolve_subject_git(a.subject_git, a.subject_path, "minimize")) return;
  if (!check_subject(a.subject, "minimize", true)) return;
  if (!check_subject_usable(a.subject, a.subject_path, "minimize")) return;
  SubjectWorker& host = default_subject_worker();
  const RunOptions opt = run_options(a.subject, a.subject_path);
  MinimizeOptions mo;
  mo.budget_s = a.budget_s;
  // Each candidate runs on a fresh Dynamo state, so its outcome is what `flce run` would see.
  mo.outcome = [&](const Case& k) {
    host.reset();
    return run_case(k, opt).outcome;
  };
  mo.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  if (a.verbose) mo.trace = mo.log;
  const CaseSize before = case_size(c);
  std::printf("minimizing %s with subject %s (budget %.0f s)\n", a.file.c_str(), a.subject.c_str(), a.budget_s);
  std::fflush(stdout);
  MinimizeResult r = minimize(c, mo);
  const CaseSize after = case_size(r.minimized);
  std::printf("outcome kept: %s\n", r.outcome.c_str());
  std::printf("minimized in %.1f s, %d runs, %d accepted steps (%s)\n", r.seconds, r.runs, r.accepted,
              r.fixed_point ? "fixed point" : "budget reached");
  std::printf("size: %lld -> %lld input elements, %d -> %d non-default fields\n", (long long)before.elements,
              (long long)after.elements, before.non_default, after.non_default);
  std::printf("%s\n", to_json(r.minimized).c_str());
  if (!a.out.empty()) {
    std::ofstream(a.out, std::ios::binary) << to_json(r.minimized) << "\n";
    std::printf("wrote %s\n", a.out.c_str());
  }
  if (!a.pin.empty()) {
    PinEntry e;
    e.name = a.pin;
    e.subject = a.subject;
    e.note = fmt::format("minimized by flce minimize from {} ({} runs)", std::filesystem::path(a.file).filename().string(),
                         r.runs);
    e.expect = {torch_minor_range(host.torch_version()), host.cuda_available() ? "cuda" : "cpu", r.outcome};
    std::printf("pinned: %s (expectation appended to %s/expectations.json)\n", pin_case(a.corpus, r.minimized, e).c_str(),
                a.corpus.c_str());
  }
  exit_code() = kOk;
}

}  // namespace

void add_repro_commands(CLI::App& app) {
  {
    auto* r = app.add_subcommand("repro", "Re-run a case and say whether its finding reproduces (or write a Python reproducer)");
    static ReproArgs a;
    r->add_option("case", a.file, "Case JSON file")->required();
    r->add_option("--subject", a.subject, "Subject: built-in name or package.module:callable")->capture_default_str();
    r->add_option("--subject-path", a.subject_path, "Directory put first on sys.path (e.g. a Liger checkout's src/)");
    add_subject_git_option(r, a.subject_git);
    r->add_option("--expect", a.expect,
                  "Expected outcome line (default: sibling report.json / expectation file, the corpus entry, "
                  "else any failure)");
    r->add_flag("--emit-python", a.emit, "Write a standalone Python reproducer to stdout (needs torch, not flce)");
    r->add_option("-o,--out", a.out, "With --emit-python: write the script to this file");
    r->add_flag("--long-form", a.long_form,
                "With --emit-python: the generator-port script even for a case the short literal one expresses");
    r->add_flag("--check", a.check,
                "With --emit-python -o FILE: run the script alone (fresh interpreter, empty directory, fresh Inductor "
                "and Triton caches, no FLCE_* variables) and compare its verdict with flce's; both go to "
                "FILE's .check.json, which flce report quotes");
    r->add_flag("--dump-inputs", a.dump, "Print the generated inputs' bits (what the script's --dump-inputs writes)");
    r->add_flag("-q,--quiet", a.quiet, "Print only the verdict line");
    r->callback([] { repro(a); });
  }
  {
    auto* m = app.add_subcommand("minimize", "Shrink a failing case while its outcome stays exactly the same");
    static MinimizeArgs a;
    m->add_option("case", a.file, "Case JSON file")->required();
    m->add_option("--subject", a.subject, "Subject: built-in name or package.module:callable")->capture_default_str();
    m->add_option("--subject-path", a.subject_path, "Directory put first on sys.path");
    add_subject_git_option(m, a.subject_git);
    m->add_option("--budget-s", a.budget_s, "Stop after this many seconds (a run is never started past it)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    m->add_option("--out", a.out, "Write the minimized case here");
    m->add_flag("-v,--verbose", a.verbose, "Print every run (candidate, time, outcome), not only the kept steps");
    m->add_option("--pin", a.pin, "Pin it: write <corpus>/cases/NAME.json and append its expectation");
    m->add_option("--corpus", a.corpus, "Corpus directory for --pin")->capture_default_str();
    m->callback([] { minimize_verb(a); });
  }
}

}  // namespace flce::cli
