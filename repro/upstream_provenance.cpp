#include "repro/upstream_provenance.hpp"

#include <fmt/format.h>
#include <regex>

#include "repro/upstream_report.hpp"
#include "judge/signature.hpp"
#include "report/markdown.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string json_str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

namespace {

std::string short_id(const std::string& c) { return c.substr(0, 12); }

const json& member(const json& j, const char* key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}

}  // namespace

// ---------------------------------------------------------------- the subject's source

SubjectSource subject_source(const FindingFiles& f) {
  SubjectSource s;
  const std::string version = json_str(f.report, "subject_version");
  // The run's own record of --subject-git (flce run --json, the campaign's state.json).
  json git = member(f.report, "subject_git");
  if (!git.is_object()) git = member(f.campaign, "subject_git");
  s.commit = json_str(git, "commit");
  // Else the tree cache's commit-named folder (trees/<40 hex>/) in the paths that ran. Reports
  // written before liger.py named trees carry the installed wheel's number for one
  // ("liger-kernel 0.8.5 (.../trees/<hex>/...)"): the commit wins over it.
  static const std::regex hex40("/([0-9a-f]{40})(/|$)");
  std::smatch m;
  for (const std::string& p : {json_str(f.campaign, "subject_path"), json_str(f.report, "subject_path"), version})
    if (s.commit.empty() && std::regex_search(p, m, hex40)) s.commit = m[1];
  if (!s.commit.empty()) {
    const std::string dist = version.empty() || version.rfind("unknown", 0) == 0 ? f.subject() : version.substr(0, version.find(' '));
    const std::string ref = json_str(git, "ref");
    s.text = fmt::format("{} git {}", dist, md_code(short_id(s.commit)));
    // A ref that only abbreviates the commit says nothing more.
    const bool abbreviation = ref.size() >= 4 && s.commit.rfind(ref, 0) == 0;
    if (!ref.empty() && !abbreviation) s.text += " (" + ref + ")";
    if (!json_str(git, "repo").empty()) {
      s.text += ", a tree exported from " + md_code(json_str(git, "repo") + "@" + (ref.empty() ? short_id(s.commit) : ref));
    } else {
      const size_t open = version.rfind(" (");
      const std::string file = open != std::string::npos && version.back() == ')' ? version.substr(open + 2, version.size() - open - 3) : "";
      s.text += ", a tree exported by `--subject-git`" + (file.empty() ? "" : " (" + md_code(file) + ")");
    }
    s.tree = true;
    return s;
  }
  s.text = version.empty() ? "" : md_code(version);
  s.tree = version.find("source tree at ") != std::string::npos || !json_str(f.campaign, "subject_path").empty();
  return s;
}

// ---------------------------------------------------------------- the bisect

json read_bisect(const fs::path& dir, const fs::path& given, fs::path& found_at) {
  auto result = [](const fs::path& p) {
    json j = nullptr;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) j = json::parse(read_text(p), nullptr, false);
    return j.is_object() && j.contains("status") && j.contains("steps") && j["steps"].is_array() ? j : json(nullptr);
  };
  std::error_code ec;
  if (!given.empty()) {
    if (!fs::exists(given, ec)) throw FindingInputError(fmt::format("--bisect {}: no such directory", given.string()));
    if (!fs::is_directory(given, ec))
      throw FindingInputError(fmt::format("--bisect {}: not a directory (give the DIR of `flce bisect --out DIR`)", given.string()));
    const fs::path p = given / "bisect.json";
    if (!fs::exists(p, ec))
      throw FindingInputError(fmt::format("--bisect {}: no bisect.json in it (what `flce bisect --out DIR` writes)", given.string()));
    json j = result(p);
    if (j.is_null())
      throw FindingInputError(fmt::format("--bisect {}: {} is not a flce bisect result (JSON with \"status\" and \"steps\")",
                                          given.string(), p.string()));
    found_at = p;
    return j;
  }
  for (const fs::path& p : {dir / "bisect.json", dir / "bisect" / "bisect.json"})
    if (json j = result(p); !j.is_null()) {
      found_at = p;
      return j;
    }
  return nullptr;
}

namespace {

const json* step_with(const json& steps, const char* key, const std::string& value) {
  const json* hit = nullptr;
  for (auto& s : steps)
    if (json_str(s, key) == value) hit = &s;  // the last one
  return hit;
}

// A bisect.json written before flce bisect said so itself: the same caveat, in the same words
// (gate/bisect.cpp), from its steps. The last step marked good bounds the answer: each good
// mark moves the bisection's lower end up, so it is the commit before the one found.
std::string derived_note(const json& b) {
  const json& steps = b["steps"];
  const json* good = step_with(steps, "role", "good end");
  const std::string bad = json_str(b, "bad_outcome");
  if (!good || json_str(*good, "verdict") != "good" || json_str(*good, "outcome") == "pass" || outcome_matches(bad, "pass")) return "";
  const std::string go = json_str(*good, "outcome");
  std::string n = fmt::format("the good end {} ({}) does not pass: {}", json_str(member(b, "good"), "ref"),
                              short_id(json_str(*good, "commit")), go);
  if (json_str(b, "status") != "found") return n;
  const json* last = step_with(steps, "verdict", "good");
  const std::string done = "the commit found is where that failure turned into the bad one";
  if (last == good) return n + "; " + done;
  const std::string before = fmt::format("the commit before it in the order, {},", short_id(json_str(*last, "commit")));
  const std::string lo = json_str(*last, "outcome");
  if (lo == go) return n + fmt::format("; {} still shows it: {}", before, done);
  if (lo == "pass") return n + fmt::format("; but {} passes: the commit found is where a passing case broke", before);
  return n + fmt::format("; {} shows {}: the commit found is where that turned into the bad one", before, lo);
}

std::string end_words(const json& b, const char* which) {
  const json& e = member(b, which);
  return fmt::format("--{} {} ({})", which, md_code(json_str(e, "ref")), md_code(short_id(json_str(e, "commit"))));
}

}  // namespace

void bisect_section(Markdown& md, const FindingFiles& f) {
  const json& b = f.bisect;
  if (!b.is_object()) return;
  md.heading(2, "Bisect");
  const std::string status = json_str(b, "status");
  const json& first = member(b, "first_bad");
  std::string head;
  if (status == "found") head = fmt::format("first bad commit {} {}", md_code(short_id(json_str(first, "commit"))), json_str(first, "subject"));
  else if (status == "ambiguous") head = fmt::format("ambiguous, the first bad commit is one of {}", member(b, "suspects").size());
  else head = "no first bad commit (" + json_str(b, "message") + ")";
  md.paragraph(fmt::format("From `flce bisect` ({}): {}.", md_code(f.bisect_path.string()), head));
  const size_t n = member(b, "candidates").is_number_unsigned() ? b["candidates"].get<size_t>() : 0;
  double wall = member(b, "wall_s").is_number() ? b["wall_s"].get<double>() : 0;
  md.paragraph(fmt::format("Range: {} .. {} in {}, {} commit{} on the ancestry path, {} run{}, {} skipped, {:.0f} s. "
                           "Bad outcome: {} ({}).",
                           end_words(b, "good"), end_words(b, "bad"), md_code(json_str(b, "repo")), n, n == 1 ? "" : "s",
                           b["steps"].size(), b["steps"].size() == 1 ? "" : "s", member(b, "skipped").size(), wall,
                           md_code(json_str(b, "bad_outcome")), json_str(b, "bad_outcome_from")));
  if (const std::string o = f.outcome(); !o.empty() && !outcome_matches(json_str(b, "bad_outcome"), o))
    md.paragraph(fmt::format("The bisect looked for {}; this finding's outcome is {}.", md_code(json_str(b, "bad_outcome")), md_code(o)));
  const std::string note = b.contains("note") ? json_str(b, "note") : derived_note(b);
  if (!note.empty()) md.paragraph("**Note:** " + note + ".");
  if (status == "ambiguous") {
    List l;
    for (auto& s : member(b, "suspects")) l.items.push_back(md_code(short_id(json_str(s, "commit"))) + " " + json_str(s, "subject"));
    md.add(l);
  }
  Table t{{"#", "role", "commit", "subject", "outcome", "verdict"}, {}};
  for (auto& s : b["steps"])
    t.row({member(s, "n").is_number() ? s["n"].dump() : "", json_str(s, "role"), md_code(short_id(json_str(s, "commit"))),
           json_str(s, "subject"), json_str(s, "outcome").empty() ? "-" : md_code(json_str(s, "outcome")), json_str(s, "verdict")});
  if (!t.rows.empty()) md.add(t);
}

}  // namespace flce
