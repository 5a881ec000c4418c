// flce run | calibrate | env | main: verbs that need the embedded Python oracles.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <fmt/format.h>

#include "case/memory.hpp"
#include "cli/commands.hpp"
#include "case/sequence.hpp"
#include "judge/differential.hpp"
#include "judge/sequence_run.hpp"
#include "oracles/subject_worker.hpp"
#include "oracles/golden.hpp"
#include "oracles/reference_cuda.hpp"
#include "case/sampler.hpp"
#include "judge/summary.hpp"

namespace flce::cli {

namespace {

int exit_for(const RunReport& r) {
  // Cannot run here, or the subject lacks a parameter the case uses: nothing judged.
  if (r.unsupported() || is_unsupported_outcome(r.outcome)) return kUnsupported;
  for (auto& o : r.oracles)
    if (o.status == SubjectStatus::ERROR && o.phase == "setup" && o.signature &&
        o.signature->title.find("ModuleNotFoundError") != std::string::npos)
      return kBadInput;  // the plug-in itself cannot be imported
  return r.outcome == "pass" ? kOk : kFinding;
}

// Per oracle and output: the distribution of err/bound over n seeds of one configuration.
int calibrate_template(Case base, const std::string& subject, const std::string& subject_path, int n, uint64_t seed,
                       bool compiled) {
  std::map<std::string, std::vector<double>> ratios;  // "oracle output" -> worst ratio per case
  std::map<std::string, int> fails;
  int total_fail = 0;
  for (int k = 0; k < n; ++k) {
    Case c = base;
    c.seed = seed * 1000003ULL + static_cast<uint64_t>(k);
    RunOptions opt;
    opt.subject = subject;
    opt.subject_path = subject_path;
    opt.compiled = compiled;
    opt.ladder = false;
    for (auto& ref : reference_cuda_oracles(c)) opt.extra_oracles.push_back(ref);
    RunReport rep = run_case(c, opt);
    for (auto& o : rep.oracles) {
      if (o.status != SubjectStatus::OK || !o.verdict) continue;
      for (auto& ov : o.verdict->outputs) {
        const std::string key = o.oracle + " " + ov.output;
        ratios[key].push_back(ov.worst_ratio);
        if (ov.finding != Flaw::OK) {
          ++fails[key];
          ++total_fail;
          std::fprintf(stderr, "calibrate: %s %s %s (%.3gx) on %s\n", o.oracle.c_str(), ov.output.c_str(),
                       std::string(name(ov.finding)).c_str(), ov.worst_ratio, to_json(c, -1).c_str());
        }
      }
    }
  }
  std::printf("%-28s %6s %6s %10s %10s %10s %10s\n", "oracle output", "cases", "fails", "p50", "p90", "p99", "max");
  for (auto& [key, v] : ratios) {
    std::sort(v.begin(), v.end());
    auto q = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]; };
    std::printf("%-28s %6zu %6d %10.3g %10.3g %10.3g %10.3g\n", key.c_str(), v.size(), fails[key], q(0.5), q(0.9), q(0.99),
                v.back());
  }
  return total_fail ? kFinding : kOk;
}

}  // namespace

void add_run_commands(CLI::App& app) {
  {
    auto* r = app.add_subcommand("run", "Run one case through golden, eager and compiled oracles and judge each");
    static std::string file, subject = "model", subject_path, subject_git;
    static bool as_json = false, no_eager = false, no_compiled = false, no_ladder = false;
    r->add_option("case", file, "Case JSON file, or a sequence case (its calls in order, in one process; the last judged; "
                                "corpus/README.md); omit for the embedded example");
    r->add_option("--subject", subject, "Subject: built-in name or package.module:callable")->capture_default_str();
    r->add_option("--subject-path", subject_path, "Directory put first on sys.path (e.g. a Liger checkout's src/)");
    add_subject_git_option(r, subject_git);
    r->add_flag("--json", as_json, "One JSON object with the verdicts and the environment fingerprint");
    r->add_flag("--no-eager", no_eager, "Skip the eager oracle");
    r->add_flag("--no-compiled", no_compiled, "Skip the compiled oracle");
    r->add_flag("--no-ladder", no_ladder, "Do not walk the backend ladder on compiled failures");
    r->callback([] {
      const Sequence seq = file.empty() ? Sequence{{example_case()}} : any_case_from_json_file(file);
      for (auto& call : seq.calls) check_fits_memory(call);
      const Case& c = seq.last();
      nlohmann::json git_record;
      if (!resolve_subject_git(subject_git, subject_path, "run", &git_record)) return;  // before the host starts
      std::string why;
      if (!known_subject(subject, &why)) {
        std::fprintf(stderr, "flce run: %s\n", why.c_str());
        exit_code() = kBadInput;
        return;
      }
      if (!check_subject_usable(subject, subject_path, "run")) return;
      RunOptions opt;
      opt.subject = subject;
      opt.subject_path = subject_path;
      opt.eager = !no_eager;
      opt.compiled = !no_compiled;
      opt.ladder = !no_ladder;
      for (auto& ref : reference_cuda_oracles(c)) opt.extra_oracles.push_back(ref);
      const SequenceReport sr = run_sequence(seq, opt);
      const RunReport& rep = sr.last;
      if (as_json) {
        auto j = report_json(rep);
        if (seq.calls.size() > 1) j["earlier_outcomes"] = sr.earlier;
        if (!git_record.is_null()) j["subject_git"] = git_record;  // flce report names the tree by it
        std::printf("%s\n", j.dump(2).c_str());
      } else {
        for (size_t k = 0; k < sr.earlier.size(); ++k)
          std::printf("earlier call %zu/%zu: %s\n", k + 1, seq.calls.size() - 1, sr.earlier[k].c_str());
        if (seq.calls.size() > 1) std::printf("last call (after %zu earlier, same process):\n", seq.calls.size() - 1);
        std::printf("%s", report_table(rep).c_str());
      }
      exit_code() = exit_for(rep);
    });
  }
  {
    auto* cal = app.add_subcommand("calibrate", "Distribution of error/bound ratios over random cases, per dtype");
    static std::string subject = "model";
    static int n = 50;
    static uint64_t seed = 1;
    static bool compiled = false;
    static std::string tmpl, cal_subject_path;
    cal->add_option("--subject", subject, "Subject")->capture_default_str();
    cal->add_option("--subject-path", cal_subject_path, "Directory put first on sys.path");
    // Triage of one configuration: n seeds of the template case (its dtype, device, flags),
    // judged per output for the subject and, on CUDA, the same-contract CUDA reference.
    cal->add_option("--template", tmpl, "Case JSON: calibrate n seeds of this configuration only")
        ->check(CLI::ExistingFile);
    cal->add_option("-n", n, "Cases per dtype")->capture_default_str();
    cal->add_option("--seed", seed, "Sampler seed")->capture_default_str();
    cal->add_flag("--compiled", compiled, "Also judge the compiled oracle (slow: one compile per graph key)");
    cal->callback([] {
      if (!tmpl.empty()) {
        exit_code() = calibrate_template(from_json_file(tmpl), subject, cal_subject_path, n, seed, compiled);
        return;
      }
      std::printf("%-6s %-9s %6s %6s %10s %10s %10s %10s %8s\n", "dtype", "oracle", "cases", "fails", "p50", "p90", "p99",
                  "max", "<1e-3");
      int total_fail = 0;
      for (DType d : {DType::BF16, DType::F16, DType::F32}) {
        SampleSpace sp;
        sp.dtype = d;
        std::vector<double> ratios_e, ratios_c;
        int fails_e = 0, fails_c = 0;
        for (int k = 0; k < n; ++k) {
          Case c = sample_case(seed, static_cast<uint64_t>(k), sp);
          RunOptions opt;
          opt.subject = subject;
          opt.compiled = compiled;
          opt.ladder = false;
          RunReport rep = run_case(c, opt);
          for (auto& o : rep.oracles) {
            if (o.status != SubjectStatus::OK) {
              if (o.status == SubjectStatus::ERROR) (o.oracle == "eager" ? fails_e : fails_c)++;
              continue;
            }
            auto& v = o.oracle == "eager" ? ratios_e : ratios_c;
            v.push_back(o.verdict->worst_ratio());
            if (!o.verdict->pass()) {
              (o.oracle == "eager" ? fails_e : fails_c)++;
              std::fprintf(stderr, "calibrate: %s failed on %s\n", o.oracle.c_str(), to_json(c, -1).c_str());
            }
          }
        }
        auto show = [&](const char* oracle, std::vector<double>& v, int fails) {
          if (v.empty()) return;
          std::sort(v.begin(), v.end());
          auto q = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]; };
          size_t tiny = static_cast<size_t>(std::count_if(v.begin(), v.end(), [](double r) { return r < 1e-3; }));
          std::printf("%-6s %-9s %6zu %6d %10.3g %10.3g %10.3g %10.3g %8zu\n", std::string(dtype_name(d)).c_str(), oracle,
                      v.size(), fails, q(0.5), q(0.9), q(0.99), v.back(), tiny);
        };
        show("eager", ratios_e, fails_e);
        show("compiled", ratios_c, fails_c);
        total_fail += fails_e + fails_c;
      }
      exit_code() = total_fail ? kFinding : kOk;
    });
  }
  {
    auto* m = app.add_subcommand("main", "The default job: environment, golden reference and differential run of the "
                                         "embedded example (Liger #1327's configuration), then the pinned-corpus replay");
    m->callback([] {
      SubjectWorker& host = default_subject_worker();
      std::printf("== environment\n%s\n", host.environment().to_json().c_str());
      Case c = example_case();
      std::printf("== example case (Liger #1327 seed: bf16 operands, fp32 accumulator, torch.compile/Inductor)\n%s\n",
                  to_json(c, -1).c_str());
      Inputs in = make_inputs(c);
      std::printf("== fp64 golden reference\n%s", summary_table(golden(c, in)).c_str());
      for (const char* subject : {"model", "aten-dtype-out"}) {
        Case sc = c;
        if (std::string(subject) == "aten-dtype-out") {
          sc = Case{};
          sc.kind = Kind::ADDMM;
          sc.BT = c.BT; sc.H = c.H; sc.V = c.V;
          sc.input_dtype = sc.weight_dtype = DType::BF16;
          sc.accum_dtype = DType::F32;
          sc.requires_grad = {false, false, false};
          sc.seed = c.seed;
        }
        RunOptions opt;
        opt.subject = subject;
        std::printf("== flce run --subject %s\n%s", subject, report_table(run_case(sc, opt)).c_str());
      }
      std::printf("== flce replay (pinned corpus)\n");
      std::fflush(stdout);
      exit_code() = replay_corpus(std::string(FLCE_SOURCE_DIR) + "/corpus/expectations.json", "", false);
    });
  }
  {
    auto* e = app.add_subcommand("env", "Print the environment fingerprint (torch, triton, CUDA, GPU, Python)");
    e->callback([] { std::printf("%s\n", default_subject_worker().environment().to_json().c_str()); });
  }
}

}  // namespace flce::cli
