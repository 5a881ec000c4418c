// flce conformance: the cross-implementation table. One `flce campaign` per subject (same seed,
// so the same case keys and inputs), each judged by its own contract, run as child processes of
// this binary; the table is built from their directories (fuzz/campaign/conformance.hpp).
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "fuzz/campaign/conformance.hpp"
#include "oracles/subject_worker.hpp"
#include "process/command.hpp"
#include "report/write.hpp"

namespace flce::cli {

namespace {

namespace fs = std::filesystem;

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  return std::string(buf, static_cast<size_t>(n));
}

// A subject's campaign directory under --out: its name with anything but [A-Za-z0-9._-] as '_'.
std::string dir_name(const std::string& subject) {
  std::string d = subject;
  for (char& ch : d)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-') ch = '_';
  return d;
}

std::string tail(const std::string& s, size_t n) {
  std::string t = s.size() > n ? s.substr(s.size() - n) : s;
  for (char& ch : t)
    if (ch == '\n' || ch == '|') ch = ' ';
  return t;
}

struct Options {
  std::string subjects, out, lanes, device = "cpu", subject_path;
  std::vector<std::string> known;
  double minutes = 0;
  uint64_t seed = 1;
  int workers = 0;
  int64_t max_cases = -1;
  double minimize_s = 0;
};

}  // namespace

void add_conformance_command(CLI::App& app) {
  auto* c = app.add_subcommand(
      "conformance",
      "The cross-implementation table: one campaign per subject on the same seed (same case keys, same inputs), "
      "each judged by its own contract; rows the coverage table's field values, columns the subjects; "
      "DIR/report.md and DIR/conformance.json (docs/conformance.md)");
  static Options o;
  c->add_option("--subjects", o.subjects, "Comma-separated subjects (built-in names or package.module:callable), "
                                          "one column each")
      ->required();
  c->add_option("--minutes", o.minutes, "Time budget of each subject's campaign (they run one after another)")
      ->required()
      ->check(CLI::PositiveNumber);
  c->add_option("--seed", o.seed, "Sampler seed shared by every subject's campaign")->capture_default_str();
  c->add_option("--out", o.out, "Directory: DIR/<subject>/ (each campaign; rerun to resume), DIR/report.md, "
                                "DIR/conformance.json")
      ->required();
  c->add_option("--workers", o.workers, "Workers of each campaign (default: the campaign's)");
  c->add_option("--lanes", o.lanes, "Lanes of each campaign, as flce campaign --lanes (e.g. eager: no torch.compile)");
  c->add_option("--max-cases", o.max_cases, "Stop each campaign after this many cases");
  c->add_option("--device", o.device, "Device of the sampled cases")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  c->add_option("--subject-path", o.subject_path, "Directory put first on sys.path in every campaign's workers");
  c->add_option("--known", o.known, "As flce campaign --known (repeatable): each campaign's known list; the table "
                                    "marks the findings it explains [known]");
  c->add_option("--minimize-s", o.minimize_s, "Shrink each new finding for up to this many seconds (0: off)")
      ->capture_default_str();
  c->callback([] {
    // Checked before anything runs: bad input never touches what an earlier run wrote.
    std::vector<std::string> subjects;
    std::set<std::string> seen;
    std::stringstream ss(o.subjects);
    for (std::string s; std::getline(ss, s, ',');) {
      std::string why;
      if (s.empty()) why = "an empty subject name";
      else if (!seen.insert(dir_name(s)).second) why = "named twice";
      else if (!known_subject(s, &why) && why.empty()) why = "unknown subject";
      if (!why.empty()) {
        std::fprintf(stderr, "flce conformance: --subjects %s: must be comma-separated subjects flce can run, each "
                     "once: '%s': %s\n", o.subjects.c_str(), s.c_str(), why.c_str());
        exit_code() = kBadInput;
        return;
      }
      subjects.push_back(s);
    }
    if (subjects.empty()) {
      std::fprintf(stderr, "flce conformance: --subjects: must name at least one subject\n");
      exit_code() = kBadInput;
      return;
    }
    if (!check_out_option(o.out, "--out", "conformance")) return;
    if (!o.subject_path.empty() && !check_dir_option(o.subject_path, "--subject-path", "conformance")) return;
    for (auto& k : o.known)
      if (!fs::exists(k)) {
        std::fprintf(stderr, "flce conformance: --known %s: must be an expectations file or a campaign directory; "
                     "it does not exist\n", k.c_str());
        exit_code() = kBadInput;
        return;
      }
    try {
      const std::string exe = self_exe();
      fs::create_directories(o.out);
      std::vector<ConformanceColumn> cols;
      for (auto& s : subjects) {
        ConformanceColumn col{s, fs::path(o.out) / dir_name(s), 0, ""};
        std::vector<std::string> args{exe, "campaign", "--subject", s, "--seed", std::to_string(o.seed),
                                      "--minutes", fmt::format("{}", o.minutes), "--out", col.dir.string(),
                                      "--candidates", "1", "--quiet", "--device", o.device,
                                      "--minimize-s", fmt::format("{}", o.minimize_s)};
        if (o.workers > 0) args.insert(args.end(), {"--workers", std::to_string(o.workers)});
        if (!o.lanes.empty()) args.insert(args.end(), {"--lanes", o.lanes});
        if (o.max_cases >= 0) args.insert(args.end(), {"--max-cases", std::to_string(o.max_cases)});
        if (!o.subject_path.empty()) args.insert(args.end(), {"--subject-path", o.subject_path});
        for (auto& k : o.known) args.insert(args.end(), {"--known", k});
        std::fprintf(stderr, "conformance: %s: flce campaign --out %s\n", s.c_str(), col.dir.c_str());
        CommandResult r = run_command(args);
        col.exit_status = r.status;
        if (r.status != 0 && r.status != 1) col.why = tail(r.err, 300);
        std::fprintf(stderr, "conformance: %s: campaign exit %d\n", s.c_str(), r.status);
        cols.push_back(std::move(col));
      }
      const auto table = conformance_table(cols, o.seed);
      write_atomic(fs::path(o.out) / "conformance.json", table.dump(2) + "\n");
      write_atomic(fs::path(o.out) / "report.md", conformance_markdown(table));
      std::printf("conformance: %zu subjects; table: %s\n", cols.size(), (fs::path(o.out) / "report.md").c_str());
      exit_code() = kOk;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "flce conformance: internal error: %s\n", e.what());
      exit_code() = kInternal;
    }
  });
}

}  // namespace flce::cli
