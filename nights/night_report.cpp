// The night's sections of report.md and report.json: New, Fixed, Still open, from the store after
// tonight was recorded, so each line carries the finding's history (first night, identities,
// triage state), not only tonight's run.
#include <fmt/format.h>

#include "nights/night.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

std::string verdict_of(const std::vector<ProgressionResult>& progression, const std::string& id) {
  for (auto& p : progression)
    if (p.id == id)
      return p.verdict == "changed"        ? "changed: now " + p.outcome
             : p.verdict == "passes-alone" ? "passes alone (order-dependent: a pass alone is not a fix)"
                                           : p.verdict;
  return "";
}

std::string what_of(const RecordOutcome& rec, const std::string& id) {
  for (auto& [fid, what] : rec.findings)
    if (fid == id) return what;
  return "";
}

nlohmann::ordered_json line_of(const StoredFinding& f) {
  nlohmann::ordered_json x{{"id", f.id}, {"key", f.key}, {"outcome", f.outcome}, {"state", name(f.state)},
                           {"first_night", f.first_night}, {"last_night", f.last_night}, {"identities", f.identities},
                           {"hits", f.hits}};
  if (!f.link.empty()) x["link"] = f.link;
  if (!f.owner.empty()) x["owner"] = f.owner;
  if (!f.why.empty()) x["why"] = f.why;
  if (!f.fixed_night.empty()) x["fixed_night"] = f.fixed_night, x["fixed_identity"] = f.fixed_identity;
  if (!f.note.empty()) x["note"] = f.note;
  if (!f.aliases.empty()) {  // its symptoms and variants (fuzz/findings/root_cause.hpp)
    auto a = nlohmann::ordered_json::array();
    for (auto& al : f.aliases) a.push_back(al.key);
    x["also_shows_as"] = a;
  }
  return x;
}

// A finding first stored tonight that a pin already names: the pin's source, from its note.
std::string note_known(const StoredFinding& f) {
  const size_t at = f.note.find("; known: ");
  return at == std::string::npos ? "" : f.note.substr(at + 9);
}

std::string cell(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return o;
}

// "`key`", and the other keys it showed as.
std::string key_cell(const nlohmann::ordered_json& x) {
  std::string s = "`" + cell(x.value("key", "")) + "`";
  if (x.contains("also_shows_as"))
    for (auto& k : x["also_shows_as"]) s += "<br>also shows as `" + cell(k.get<std::string>()) + "`";
  return s;
}

std::string triage_cell(const nlohmann::ordered_json& x) {
  std::string s = x.value("state", "");
  if (x.contains("owner")) s += ", " + x.value("owner", "");
  if (x.contains("link")) s += ", " + x.value("link", "");
  if (x.contains("why")) s += ": " + x.value("why", "");
  return s;
}

std::string markdown_of(const nlohmann::ordered_json& s) {
  std::string md = fmt::format("## Night {}: {} new, {} fixed, {} still open\n\n", s.value("night", ""), s["new"].size(),
                               s["fixed"].size(), s["still_open"].size());
  md += fmt::format("Subject identity: {} · store `{}` ({} findings)\n\n", s.value("identity", ""), s.value("store", ""),
                    s.value("store_findings", 0));
  md += fmt::format("### New ({})\n\n", s["new"].size());
  if (s["new"].empty()) md += "Nothing new tonight.\n\n";
  else {
    md += "| finding | outcome | seen on | cases |\n|---|---|---|---|\n";
    for (auto& x : s["new"])
      md += fmt::format("| {}{} | {} | {} | {} |\n", key_cell(x),
                        x.value("regressed", false) ? " **regressed**: " + cell(x.value("note", "")) : "",
                        cell(x.value("outcome", "")), cell(x["identities"].empty() ? "" : x["identities"].back().get<std::string>()),
                        x.value("hits", 0));
    md += "\n";
  }
  md += fmt::format("### Fixed ({})\n\n", s["fixed"].size());
  if (s["fixed"].empty()) md += "Nothing fixed tonight.\n\n";
  else {
    md += "| finding | was | first seen | last failing | fixed on |\n|---|---|---|---|---|\n";
    for (auto& x : s["fixed"])
      md += fmt::format("| `{}` | {} | night {} | night {}, {} | night {}, {} |\n", cell(x.value("key", "")),
                        cell(x.value("outcome", "")), x.value("first_night", ""), x.value("last_night", ""),
                        cell(x.value("last_failing", "")), x.value("fixed_night", ""), cell(x.value("fixed_identity", "")));
    md += "\n";
  }
  if (!s["fixed_earlier"].empty()) {
    md += "Fixed on earlier nights (not re-run):";
    for (auto& x : s["fixed_earlier"])
      md += fmt::format(" `{}` (night {});", cell(x.value("key", "")), x.value("fixed_night", ""));
    md += "\n\n";
  }
  md += fmt::format("### Still open ({})\n\n", s["still_open"].size());
  if (s["still_open"].empty()) md += "Nothing open.\n\n";
  else {
    md += "| finding | triage | tonight | first night | last seen | identities |\n|---|---|---|---|---|---|\n";
    for (auto& x : s["still_open"]) {
      std::string ids;
      for (auto& i : x["identities"]) ids += (ids.empty() ? "" : "; ") + i.get<std::string>();
      md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", key_cell(x), cell(triage_cell(x)),
                        cell(x.value("tonight", "")), x.value("first_night", ""), x.value("last_night", ""), cell(ids));
    }
    md += "\n";
  }
  return md;
}

}  // namespace

nlohmann::ordered_json night_section(const Store& store, const std::string& night, const SubjectIdentity& identity,
                                     const std::vector<ProgressionResult>& progression, const RecordOutcome& rec) {
  nlohmann::ordered_json s{{"night", night}, {"identity", identity.text()}, {"identity_key", identity.key()},
                           {"store", store.path()}};
  auto news = nlohmann::ordered_json::array(), fixed = nlohmann::ordered_json::array(),
       earlier = nlohmann::ordered_json::array(), open = nlohmann::ordered_json::array();
  const std::vector<StoredFinding> all = store.findings();
  for (auto& f : all) {
    nlohmann::ordered_json x = line_of(f);
    const std::string what = what_of(rec, f.id), verdict = verdict_of(progression, f.id);
    if (what == "new" || what == "regressed") {
      x["regressed"] = what == "regressed";
      news.push_back(x);
    } else if (!f.open() && verdict == "fixed" && f.fixed_night == night) {
      // The range it was fixed in: the last identity it failed on, the first it passed on (with
      // --subject-git or an identity index, two commits).
      x["last_failing"] = f.identities.empty() ? "" : f.identities.back();
      fixed.push_back(x);
    } else if (!f.open()) {
      earlier.push_back(x);
    } else {
      x["tonight"] = !verdict.empty()      ? verdict
                     : what == "seen"     ? "seen while exploring"
                     : what == "known"    ? "first stored tonight, known: " + note_known(f)
                                          : "not re-run";
      open.push_back(x);
    }
  }
  s["store_findings"] = all.size();
  s["new"] = news;
  s["fixed"] = fixed;
  s["still_open"] = open;
  s["fixed_earlier"] = earlier;
  return s;
}

void write_night_sections(const fs::path& dir, const nlohmann::ordered_json& section) {
  // report.md: right under its title, so the night's news is what a reader sees first.
  std::string md = read_text(dir / "report.md");
  const size_t title_end = md.find('\n');
  const std::string sections = markdown_of(section);
  if (title_end == std::string::npos) md = sections + md;
  else md.insert(title_end + 1, "\n" + sections);
  write_atomic(dir / "report.md", md);
  // report.json: "night" first, the campaign's fields after it.
  const nlohmann::ordered_json rep = nlohmann::ordered_json::parse(read_text(dir / "report.json"), nullptr, false);
  nlohmann::ordered_json out{{"night", section}};
  if (rep.is_object())
    for (auto it = rep.begin(); it != rep.end(); ++it)
      if (it.key() != "night") out[it.key()] = it.value();
  write_atomic(dir / "report.json", out.dump(2) + "\n");
}

}  // namespace flce
