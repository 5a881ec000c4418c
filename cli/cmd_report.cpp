// flce report: a finding directory (or a case file) written up as an upstream-ready issue
// body in Markdown (repro/upstream_report.hpp). A case without a report.json is run once
// (--subject) to learn its outcome; one without a repro.py gets one emitted.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "flce_build_info.hpp"
#include "repro/emit_python.hpp"
#include "case/sequence.hpp"
#include "repro/upstream_report.hpp"
#include "judge/differential.hpp"
#include "report/markdown.hpp"
#include "report/write.hpp"

namespace flce::cli {

namespace {

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ReportArgs {
  std::string path, out, matrix, bisect, subject, subject_path, subject_git;
};

void report_verb(ReportArgs a) {
  FindingFiles f;
  try {
    f = load_finding(a.path, a.matrix, a.bisect);
  } catch (const FindingInputError& e) {
    std::fprintf(stderr, "flce report: %s\n", e.what());
    exit_code() = kBadInput;
    return;
  }
  // Runs to make here, with --subject: the case when no report.json came with it (a bare case,
  // what repro/minimize wrote), and a shrunk case without its own run (an older campaign), so
  // the values quoted are the reproducer's.
  const bool run_found = f.report.is_null();
  const bool run_minimized = !a.subject.empty() && f.minimized_json.is_object() && f.minimized_report.is_null() &&
                             !is_sequence_json(f.minimized_json.dump());
  if (run_found && a.subject.empty()) {
    std::fprintf(stderr, "flce report: %s: no report.json (what `flce campaign` or `flce run --json` writes); "
                         "--subject: run the case once to make one\n", f.dir.c_str());
    exit_code() = kBadInput;
    return;
  }
  if (run_found || run_minimized) {
    nlohmann::json git_record;
    if (!resolve_subject_git(a.subject_git, a.subject_path, "report", &git_record)) return;
    RunOptions opt;
    opt.subject = a.subject;
    opt.subject_path = a.subject_path;
    auto run = [&](const nlohmann::json& c, const char* what) {
      const RunReport rep = run_case(from_json(c.dump()), opt);
      std::fprintf(stderr, "flce report: ran the %s with %s: %s\n", what, a.subject.c_str(), rep.outcome.c_str());
      return rep;
    };
    if (run_found) f.report = nlohmann::json::parse(report_json(run(f.case_json, "case")).dump());
    if (run_found && !git_record.is_null()) f.report["subject_git"] = git_record;
    if (run_minimized)
      if (const RunReport rep = run(f.minimized_json, "minimized case"); rep.outcome == f.outcome())
        f.minimized_report = nlohmann::json::parse(report_json(rep).dump());
  }
  if (f.repro_py.empty() && !f.subject().empty()) {
    const std::string outcome = f.outcome();
    std::vector<ExpectedOutcome> expect;
    if (outcome != "pass" && !outcome.empty()) expect = {{"", "any", outcome}};
    EmitSpec spec{from_json(f.case_json.dump()), f.subject(), a.subject_path, f.case_path.string(), expect,
                  file_text(std::filesystem::path(FLCE_SOURCE_DIR) / "judge" / "signatures.json")};
    f.repro_py = emit_python(spec);
    f.repro_path = "repro.py";
  }
  const std::string version = "flce " FLCE_VERSION " (git " FLCE_GIT_COMMIT ")";
  const std::string text = render_markdown(upstream_report(f, SignatureTable::load_default(), version));
  if (a.out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_atomic(a.out, text);
    std::fprintf(stderr, "flce report: wrote %s\n", a.out.c_str());
  }
  exit_code() = kOk;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* r = app.add_subcommand("report", "Write a finding up as an upstream-ready issue body (Markdown)");
  static ReportArgs a;
  r->add_option("finding", a.path,
                "A campaign finding directory (<out>/findings/<id>/), a folder with a case and its report.json or "
                "repro.py, or a case file")
      ->required();
  r->add_option("-o,--out", a.out, "Write the Markdown here (default: stdout)");
  r->add_option("--matrix", a.matrix,
                "A `flce matrix` matrix.json: the torch releases it reproduces on (default: one next to the finding)");
  r->add_option("--bisect", a.bisect,
                "The DIR of `flce bisect --out DIR` run on this finding: its first bad commit, range and steps "
                "(default: a bisect.json in the finding folder or its bisect/)");
  r->add_option("--subject", a.subject, "Without a report.json: run the case once with this subject");
  r->add_option("--subject-path", a.subject_path, "With --subject: directory put first on sys.path");
  add_subject_git_option(r, a.subject_git);
  r->callback([] { report_verb(a); });
}

}  // namespace flce::cli
