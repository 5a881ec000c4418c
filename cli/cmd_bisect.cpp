// flce bisect --git REPO --good REF --bad REF CASE.json --subject NAME: the first commit
// at which the case's outcome turns into the bad one (gate/bisect.hpp).
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "gate/bisect.hpp"
#include "report/markdown.hpp"
#include "report/write.hpp"

namespace flce::cli {

void add_bisect_command(CLI::App& app) {
  auto* b = app.add_subcommand("bisect", "Find the first commit of a subject's git repository at which a case's outcome "
                                         "turns into the bad one (each commit in its own subject host)");
  static BisectOptions o;
  static std::string out;
  static bool no_eager = false, no_compiled = false, no_ladder = false, quiet = false;
  b->add_option("case", o.case_file, "Case JSON file")->required();
  b->add_option("--git", o.repo, "The subject's git repository (only read: trees are exported into the tree cache)")
      ->required();
  b->add_option("--good", o.good, "A commit (ref) without the bad outcome")->required();
  b->add_option("--bad", o.bad, "A later commit (ref) with it; GOOD must be its ancestor. Bisected: git rev-list "
                                  "--ancestry-path --topo-order --reverse GOOD..BAD; commits that cannot run the case "
                                  "(export or import failure, unsupported) are skipped and listed")->required();
  b->add_option("--subject", o.subject, "Subject: built-in name or package.module:callable")->required();
  b->add_option("--subject-path", o.subject_path, "Directory inside the tree put first on sys.path (default: src/ or the root)");
  b->add_option("--python", o.python, "Interpreter of the subject hosts (default: flce's venv)");
  b->add_option("--expect", o.expect, "The bad outcome line (default: the outcome at --bad)");
  b->add_option("--expect-good", o.expect_good,
                "The outcome --good must show (e.g. pass); one that does not is refused (exit 1) before any commit "
                "between the ends runs. Without it, a good end that fails another way is accepted and noted");
  b->add_option("--out", out, "Directory for bisect.md and bisect.json");
  b->add_option("--timeout", o.timeout_s, "Seconds per subject call before its host is killed")->capture_default_str();
  b->add_flag("--no-eager", no_eager, "Skip the eager oracle");
  b->add_flag("--no-compiled", no_compiled, "Skip the compiled oracle (eager-only bisection: no compile per commit)");
  b->add_flag("--no-ladder", no_ladder, "Do not walk the backend ladder on compiled failures");
  b->add_flag("-q,--quiet", quiet, "No per-step progress on stderr");
  b->callback([] {
    if (!check_out_option(out, "--out", "bisect")) return;
    o.c = from_json_file(o.case_file);
    o.eager = !no_eager;
    o.compiled = !no_compiled;
    o.ladder = !no_ladder;
    int n = 0;
    if (!quiet) o.progress = [&n](const std::string& line) { std::fprintf(stderr, "[bisect %d] %s\n", ++n, line.c_str()); };
    BisectReport r;
    try {
      r = run_bisect(o);
    } catch (const BisectInputError& e) {
      std::fprintf(stderr, "flce bisect: %s\n", e.what());
      exit_code() = kBadInput;
      return;
    }
    const Report rep = bisect_report(r);
    std::printf("%s", render_markdown(rep.markdown).c_str());
    if (!out.empty()) {
      std::filesystem::create_directories(out);
      write_report(out, rep, ReportFiles{"bisect.md", "bisect.json", ""});
    }
    if (r.status != BisectStatus::FOUND) std::fprintf(stderr, "flce bisect: %s\n", r.message.c_str());
    exit_code() = r.status == BisectStatus::FOUND ? kOk : kFinding;
  });
}

}  // namespace flce::cli
