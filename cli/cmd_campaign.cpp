// flce campaign: the nightly job (time-boxed, resumable, isolated exploration of one
// subject); flce worker: the hidden verb its worker processes run.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "cli/commands.hpp"
#include "fuzz/campaign/campaign.hpp"
#include "gate/gate.hpp"
#include "nights/night.hpp"
#include "oracles/git_object.hpp"
#include "oracles/subject_tree.hpp"

namespace flce::cli {

namespace {

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

void add_campaign_commands(CLI::App& app) {
  {
    auto* c = app.add_subcommand("campaign", "Time-boxed, resumable exploration of one subject in isolated workers; "
                                             "findings deduplicated by outcome signature under --out");
    static CampaignOptions o;
    // One worker per two cores: each worker's compiles run threads of their own.
    o.workers = std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
    c->add_option("--minutes", o.minutes, "Time budget of the campaign (summed over resumed runs)")->required();
    c->add_option("--max-cases", o.max_cases, "Stop after this many cases in all (summed over resumed runs)");
    c->add_option("--out", o.out, "Campaign directory: state, findings, reports (rerun to resume)")->required();
    c->add_option("--corpus", o.corpus, "Directory of case JSON files, run before the sampled cases");
    c->add_option("--subject", o.subject, "Subject: built-in name or package.module:callable")->required();
    c->add_option("--subject-path", o.subject_path, "Directory put first on sys.path in the workers");
    static std::string subject_git;
    add_subject_git_option(c, subject_git);
    auto* workers_opt = c->add_option("--workers", o.workers,
                                      "Worker processes, split between the lanes as the default split does unless --lanes says otherwise")
                            ->capture_default_str();
    static std::string lanes;
    c->add_option("--lanes", lanes,
                  "Workers per lane: eager=4,compiled=4 (eager: golden + eager subject, never torch.compile, plain "
                  "cases; compiled: + compiled run and backend ladder, families), or eager / compiled / "
                  "eager,compiled to split --workers. Default without --lanes and --workers: half of the "
                  "workers (at least one) compiled, the rest eager; one worker: compiled");
    c->add_option("--cpus", o.cpus,
                  "CPUs this campaign may use: its workers split them for OpenMP and Inductor's compile threads "
                  "(default: the CPUs of the affinity mask); for several campaigns on one box")
        ->check(CLI::Range(0, 4096));
    c->add_option("--seed", o.seed, "Sampler seed (case k of seed s is always the same case)")->capture_default_str();
    c->add_option("--case-timeout", o.case_timeout_s, "Seconds one case may take before its worker is killed")
        ->capture_default_str();
    c->add_option("--worker-mem-gib", o.worker_mem_gib, "Memory limit (RLIMIT_DATA) per worker; 0: none")
        ->capture_default_str();
    c->add_flag("--quiet", o.quiet, "No progress line and no per-finding lines (the summary is still printed)");
    static std::string device = "cpu";
    c->add_option("--device", device, "Device of the sampled cases (corpus cases keep theirs)")
        ->check(CLI::IsMember({"cpu", "cuda"}))
        ->capture_default_str();
    c->add_option("--gpus", o.gpus, "Spread workers round-robin over the first N visible GPUs (default: all; 0: none)");
    c->add_option("--minimize-s", o.minimize_s,
                  "After exploration, shrink each new finding for up to this many seconds (0: off); "
                  "writes minimized.json and repro.py next to it")
        ->capture_default_str();
    c->add_flag("--check-repros", o.check_repros,
                "With --minimize-s: run each new finding's repro.py alone as a maintainer would (flce repro --check) "
                "within the shrink phase's time; report.md and flce report say whether it printed the finding");
    c->add_option("--family", o.family_size,
                  "Sampled cases per graph configuration: a worker runs a family's cases in a row and reuses "
                  "its compiled function (1: every case its own configuration)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{4096}))
        ->capture_default_str();
    c->add_option("--eager-group", o.eager_group,
                  "Eager-lane cases per group: one worker runs a group's cases in a row, every flag and V fixed, "
                  "BT, H and values varied, so the subject's JIT kernels are compiled once per group (1: every "
                  "case its own configuration)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{4096}))
        ->capture_default_str();
    c->add_option("--candidates", o.candidates,
                  "Coverage guidance: draw this many candidates per sampled case (per family) and run the one "
                  "covering the most field values not yet run; a new finding's one-field neighbours run next "
                  "(1: the plain stream, no neighbours)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    c->add_option("--retire-after", o.retire_after,
                  "Stop a family at a compile failure its graph configuration has shown this many times in the "
                  "campaign (2: at the first repeat of a known failure; 0: never)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    c->add_option("--known", o.known,
                  "What is already known (repeatable): an expectations file (corpus/expectations.json: entries "
                  "for this subject matched by torch, device and subject version) or an earlier campaign "
                  "(its directory or report.json). Matching findings are filed under Known (counted, not shrunk "
                  "again); exit 1 then means a new finding");
    static std::string baseline;
    c->add_option("--baseline", baseline,
                  "A differential campaign: every case also runs on this subject, SPEC as flce gate's "
                  "(subject=NAME[,path=DIR][,git=REPO@REF]); findings are the cases whose outcome differs "
                  "(regressed, fixed, changed), grouped by cause");
    c->add_option("--analyze-s", o.analyze_s,
                  "Seconds one finding's analysis may take (its case alone, the one-feature ablation of its "
                  "cause, fresh seeds of a marginal one) in a fresh worker of its lane")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    c->add_option("--analysis-workers", o.analysis_workers,
                  "Analyses that run on workers of their own, beside the exploring ones; past that many at once "
                  "an analysis borrows a lane's slot (--lend-from; while exploring at most a quarter of the "
                  "lane, none of a lane of 1-3 workers). They also walk the backend ladder of compiled failures "
                  "with unknown signatures, after the verdict. Default: a quarter of the workers, at least one")
        ->check(CLI::Range(0, 64));
    c->add_option_function<std::string>(
         "--lend-from",
         [](const std::string& v) { o.lend_from_finder = v == "finder"; },
         "Whose slots a busy analysis borrows while exploring: eager (default; the eager lane's, with the "
         "compiled lane's share added, whichever lane found the failure, so compiled slots stay on new "
         "graph configurations) or finder (the lane that found the failure). After exploring: the finder's")
        ->check(CLI::IsMember({"eager", "finder"}));
    c->add_option("--spare-workers", o.spare_workers,
                  "Started workers kept aside for the compiled lane: a dead compiled worker (a CUDA fault, a crash, a "
                  "timeout) is replaced by the ready spare at once instead of a cold start. Default: 1 on CUDA when "
                  "there is a compiled lane, 0 on CPU")
        ->check(CLI::Range(0, 1));
    c->add_flag("--walk-ladders-in-lane", o.walk_in_lane,
                "Walk the backend ladder of an unknown compile failure in the lane's worker, before its verdict "
                "(the default walks it afterwards on an analysis worker, so no walk holds a lane's slot; also "
                "the behaviour with --analysis-workers 0)");
    c->add_option("--stop-after-findings", o.stop_after_findings,
                  "Stop exploring once this many new findings have a settled cause (their analysis ended); "
                  "0: run the whole budget")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    c->add_option("--grace-s", o.grace_s,
                  "After the exploration budget, the analyses still running and the shrinking end within this "
                  "many seconds (a resumed run continues what they cut). The default keeps a campaign's wall time "
                  "within --minutes plus 30 s; give more for longer shrinks")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    static NightOptions night;
    c->add_option("--store", night.store,
                  "A findings store across nights (SQLite; created on the first night): its open findings are the "
                  "known list too and are re-run on this subject first (still open, fixed, changed); tonight is "
                  "recorded in it at the end and report.md opens with New, Fixed, Still open (docs/nights.md)");
    c->add_option("--night", night.night,
                  "With --store: this night's label (default: today's UTC date; the shards of one night share it)");
    c->callback([workers_opt] {
      o.cuda = device == "cuda";
      try {
        const bool given = workers_opt->count() > 0;
        o.lanes = parse_lanes(lanes, o.workers, given);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "flce campaign: %s\n", e.what());
        exit_code() = kBadInput;
        return;
      }
      o.flce_exe = self_exe();
      if (!resolve_subject_git(subject_git, o.subject_path, "campaign", &o.subject_git)) return;
      if (!baseline.empty()) {  // checked before anything runs, as gate checks its SPECs
        try {
          const GateSpec b = parse_gate_spec(baseline);
          if (!b.python.empty()) throw std::invalid_argument("python=: a baseline runs in the campaign's interpreter");
          o.baseline = b.subject;
          o.baseline_path = b.path;
          if (!b.git_repo.empty()) o.baseline_path = export_subject_tree(b.git_repo, b.git_ref, b.path).subject_path;
          else if (!b.path.empty() && !std::filesystem::is_directory(b.path))
            throw std::invalid_argument("path=" + b.path + ": no such directory");
        } catch (const std::exception& e) {
          std::fprintf(stderr, "flce campaign: --baseline %s: %s\n", baseline.c_str(), e.what());
          exit_code() = kBadInput;
          return;
        }
      }
      try {  // the reports name the tree by its content: the same for every export of one commit
        night.identity = identify_subject(o.subject_path, o.subject_git.is_object() ? o.subject_git.value("commit", "") : "",
                                          builtin_identity(o.subject));
        o.identity = night.identity.text();
      } catch (const GitObjectError& e) {
        std::fprintf(stderr, "flce campaign: subject identity: %s\n", e.what());
        exit_code() = kBadInput;
        return;
      }
      if (!night.store.empty()) {
        try {
          const NightResult r = run_night(o, night);
          std::printf("night %s: %ld new (%ld regressed), %ld fixed, %ld still open; subject %s; store %s\n",
                      r.section.value("night", "").c_str(), static_cast<long>(r.new_findings), static_cast<long>(r.regressed),
                      static_cast<long>(r.fixed), static_cast<long>(r.still_open), night.identity.text().c_str(),
                      night.store.c_str());
          // Only news fails a night: what the store already holds is known, what it fixed is good news.
          exit_code() = r.new_findings ? kFinding : kOk;
        } catch (const StoreInputError& e) {
          std::fprintf(stderr, "flce campaign: --store: %s\n", e.what());
          exit_code() = kBadInput;
        } catch (const CampaignInputError& e) {
          std::fprintf(stderr, "flce campaign: %s\n", e.what());
          exit_code() = kBadInput;
        } catch (const std::exception& e) {
          std::fprintf(stderr, "flce campaign: internal error: %s\n", e.what());
          exit_code() = kInternal;
        }
        return;
      }
      try {
        CampaignResult r = run_campaign(o);
        // With a known list, only news fails the run: tonight's known bugs are last night's.
        exit_code() = (o.known.empty() ? r.findings : r.new_findings) ? kFinding : kOk;
      } catch (const CampaignInputError& e) {
        std::fprintf(stderr, "flce campaign: %s\n", e.what());
        exit_code() = kBadInput;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "flce campaign: internal error: %s\n", e.what());
        exit_code() = kInternal;
      }
    });
  }
  {
    // Not for people: the campaign talks to it over stdin/stdout (fuzz/campaign/campaign_worker.cpp).
    auto* w = app.add_subcommand("worker", "")->group("");
    static CampaignWorkerOptions o;
    w->add_option("--subject", o.subject)->required();
    w->add_option("--subject-path", o.subject_path);
    w->add_option("--mem-gib", o.mem_gib);
    w->add_option("--baseline", o.baseline);
    w->add_option("--baseline-path", o.baseline_path);
    w->callback([] { exit_code() = serve_worker(o); });
  }
}

}  // namespace flce::cli
