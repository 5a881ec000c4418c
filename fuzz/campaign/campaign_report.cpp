#include "fuzz/campaign/campaign_report.hpp"

#include "fuzz/findings/root_cause.hpp"
#include "report/markdown.hpp"
#include "report/write.hpp"

#include <fmt/format.h>

#include "judge/ratio.hpp"
#include "judge/signature.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

double cases_per_min(const RunStats& rs) {
  return rs.wall_s > 0 ? static_cast<double>(rs.cases_this_run) * 60.0 / rs.wall_s : 0.0;
}

double graphs_per_min(const RunStats& rs) {
  return rs.wall_s > 0 ? static_cast<double>(rs.graphs_this_run) * 60.0 / rs.wall_s : 0.0;
}

// The same rates over the time after the first worker was ready: a one-minute run on a cold box
// spends a sixth of it importing torch, which a nightly of an hour does not.
double after_ready_s(const RunStats& rs) {
  return rs.first_ready_s >= 0 && rs.wall_s > rs.first_ready_s ? rs.wall_s - rs.first_ready_s : 0.0;
}
double cases_per_min_ready(const RunStats& rs) {
  const double s = after_ready_s(rs);
  return s > 0 ? static_cast<double>(rs.cases_this_run) * 60.0 / s : 0.0;
}
double graphs_per_min_ready(const RunStats& rs) {
  const double s = after_ready_s(rs);
  return s > 0 ? static_cast<double>(rs.graphs_this_run) * 60.0 / s : 0.0;
}

int64_t bucket(const CampaignState& st, const std::string& name) {
  auto it = st.outcomes.find(name);
  return it == st.outcomes.end() ? 0 : it->second;
}

// Cases the subject could not run because it lacks a parameter they use, per parameter (a case
// lacking two counts for each), from the outcome buckets "unsupported-by-subject:<p>[+<p>]".
std::map<std::string, int64_t> unsupported_by_param(const CampaignState& st) {
  std::map<std::string, int64_t> n;
  for (auto& [outcome, count] : st.outcomes)
    for (auto& p : unsupported_params(outcome)) n[p] += count;
  return n;
}

int64_t unsupported_by_subject(const CampaignState& st) {
  int64_t n = 0;
  for (auto& [outcome, count] : st.outcomes)
    if (outcome.rfind(kUnsupportedBySubject, 0) == 0) n += count;
  return n;
}

std::string join(const nlohmann::json& names) {
  std::string s;
  for (auto& v : names)
    if (v.is_string()) s += (s.empty() ? "" : ", ") + v.get<std::string>();
  return s.empty() ? "none" : s;
}

// "supports: bias, ce_weight, ...; not: return_token_accuracy, ..." (empty: not known).
std::string capability_line(const CampaignState& st) {
  if (!st.capabilities.is_object()) return "";
  const auto lacks = st.capabilities.value("lacks", nlohmann::json::array());
  const auto contract = st.capabilities.value("contract", nlohmann::json());
  // Whose rules the cases were judged by: the subject's own, or (undeclared) Liger's.
  std::string judged = "no contract declared: judged under liger semantics";
  if (contract.is_object()) {
    judged = fmt::format("contract: {} semantics", contract.value("semantics", "liger"));
    if (contract.contains("dtypes")) judged += fmt::format(", dtypes {}", join(contract["dtypes"]));
    if (contract.contains("source")) judged += fmt::format(" ({})", contract.value("source", ""));
  }
  return fmt::format("supports: {}; not: {}{}; {}", join(st.capabilities.value("params", nlohmann::json::array())),
                     join(lacks), lacks.empty() ? "" : " (no sampled case uses those)", judged);
}

std::string per_param_text(const std::map<std::string, int64_t>& n) {
  std::string s;
  for (auto& [p, count] : n) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", p, count);
  return s;
}

// Where a finding was first seen: its case key, behind the shard's directory when merged.
std::string first_where(const Finding& f) {
  return f.first_shard.empty() ? f.first_case : f.first_shard + ": " + f.first_case;
}

std::string alone_words(const Finding& f) {
  if (f.repro_alone.empty()) return "";
  if (f.repro_alone == "same") return "; run alone: reproduces";
  if (f.repro_alone.rfind("same failure", 0) == 0) return "; run alone: reproduces, the " + f.repro_alone;
  if (f.repro_alone.rfind("differs", 0) == 0)
    return fmt::format("; **run alone it does not reproduce** ({}; [repro.check.json](findings/{}/repro.check.json))",
                       f.repro_alone, f.id);
  return "; " + f.repro_alone;
}

std::string shrink_cell(const Finding& f) {
  if (f.shrink.empty()) return "not yet";
  const auto is = [&](const char* status) {  // "minimized", or "minimized (each try in a fresh worker: ...)"
    return f.shrink == status || f.shrink.rfind(std::string(status) + " (", 0) == 0;
  };
  if (is("minimized") || is("smallest") || is("budget"))
    return fmt::format("{}: {} -> {} input elements in {} runs; [minimized.json](findings/{}/minimized.json), "
                       "[repro.py](findings/{}/repro.py){}",
                       f.shrink, f.elements, f.min_elements, f.shrink_runs, f.id, f.id, alone_words(f));
  if (f.shrink.rfind("minimized-sequence", 0) == 0)  // fuzz/findings/history_shrink.hpp: passes alone, fails after earlier calls
    return fmt::format("{}; [minimized.json](findings/{}/minimized.json) (a sequence case), [repro.py](findings/{}/repro.py){}",
                       f.shrink, f.id, f.id, alone_words(f));
  return f.shrink;
}

// "grad_weight (1428), loss (3)": the outputs out of line under the finding's cause.
std::string outputs_cell(const Finding& f) {
  std::string s;
  for (auto& [o, n] : f.outputs) s += fmt::format("{}{} ({})", s.empty() ? "" : ", ", o, n);
  return s.empty() ? "-" : s;
}

std::string join_words(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// What the analysis found: the essential features (or why there are none), and for a marginal
// numeric finding what its fresh seeds showed.
std::string cause_cell(const Finding& f) {
  std::string s;
  switch (f.cause_status) {
    case CauseStatus::ABLATED:
      s = fmt::format("essential: {} (of {} features tried, {} runs)",
                      f.essential.empty() ? "none: it fails at every default" : join_words(f.essential), f.tested.size(),
                      f.ablation_runs);
      break;
    case CauseStatus::PENDING: s = "analysis not finished"; break;
    case CauseStatus::NOT_RUN: s = "not ablated: " + f.cause_note + fmt::format(" ({} runs); keyed by its outcome line", f.ablation_runs); break;
    case CauseStatus::NONE: s = "no failure class (crash, timeout): keyed by its outcome line"; break;
  }
  if (f.confirm.ran())
    s += fmt::format("; marginal ({}): {} of {} fresh seeds exceed (worst {})", ratio_text(f.confirm.first_ratio),
                     f.confirm.exceed, f.confirm.seeds, ratio_text(f.confirm.max_ratio));
  if (f.change != Change::NONE) s += fmt::format("; baseline: `{}`", f.baseline_outcome);
  return s;
}

// New findings first (each in order of first sight), then known ones, then those listed under
// a root (findings/root_cause.hpp).
std::vector<const Finding*> in_report_order(const CampaignState& st) {
  std::vector<const Finding*> v;
  for (auto& f : st.findings)
    if (f.is_new()) v.push_back(&f);
  for (auto& f : st.findings)
    if (!f.known.empty() && !is_symptom(f)) v.push_back(&f);
  for (auto& f : st.findings)
    if (is_symptom(f)) v.push_back(&f);
  return v;
}

int64_t count_known(const CampaignState& st) {
  return std::count_if(st.findings.begin(), st.findings.end(),
                       [](const Finding& f) { return !f.known.empty() && !is_symptom(f); });
}

int64_t count_symptoms(const CampaignState& st) {
  return std::count_if(st.findings.begin(), st.findings.end(), [](const Finding& f) { return is_symptom(f); });
}

const Finding* by_id(const CampaignState& st, const std::string& id) {
  for (auto& f : st.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// "`key` (12 cases), ...": the symptoms and variants listed under a root.
std::string symptoms_of(const CampaignState& st, const Finding& root) {
  std::string s;
  for (auto& f : st.findings)
    if (f.root == root.id) s += fmt::format("{}`{}` ({} cases)", s.empty() ? "" : ", ", f.key(), f.count);
  return s;
}

double lane_cases_per_min(const CampaignState& st, const LaneTotals& t) {
  return st.elapsed_s > 0 ? static_cast<double>(t.cases) * 60.0 / st.elapsed_s : 0.0;
}

// "eager 1234 cases (600.0/min), 0 compiled runs; compiled ..." for the summary.
std::string lanes_line(const CampaignState& st) {
  std::string s;
  for (auto& [name, t] : st.lanes)
    if (t.cases || t.workers)
      s += fmt::format("{}{} {} cases ({:.1f}/min, {} workers), {} compiled runs", s.empty() ? "" : "; ", name, t.cases,
                       lane_cases_per_min(st, t), t.workers, t.compiled_runs);
  return s;
}

int64_t ladder_walks(const CampaignState& st) {
  int64_t n = 0;
  for (auto& [k, l] : st.ladders) n += l.walks;
  return n;
}

}  // namespace

std::string repro_command(const fs::path& dir, const CampaignState& st, const Finding& f) {
  // An order-dependent finding reproduces as its sequence case, not as its case alone.
  const char* file = f.shrink.rfind("minimized-sequence", 0) == 0 ? "minimized.json" : "case.json";
  std::string cmd = fmt::format("flce run {} --subject {}", (dir / "findings" / f.id / file).string(), st.subject);
  if (!st.subject_path.empty()) cmd += " --subject-path " + st.subject_path;
  return cmd;
}

void write_finding_json_to(const fs::path& finding_dir, const Finding& f) {
  write_atomic(finding_dir / "finding.json", f.to_json().dump(2) + "\n");
}

namespace {

// report.md: the totals, the shards of a merge, the findings with their repro commands.
Markdown markdown_of(const fs::path& dir, const CampaignState& st, const RunStats& rs, const std::string& torch) {
  Markdown md;
  md.heading(1, fmt::format("flce campaign: `{}`", st.subject));
  const bool merged = rs.shards.is_array();
  if (merged) {
    std::string seeds;
    for (auto& [seed, cur] : st.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(seed);
    md.paragraph(fmt::format("torch {} · merged from {} shards · seeds {}", torch, rs.shards.size(), seeds));
  } else {
    md.paragraph(fmt::format("torch {} · seed {} · {} workers · budget {} min{}", torch, rs.seed, rs.workers, rs.minutes,
                             rs.max_cases > 0 ? fmt::format(" / {} cases", rs.max_cases) : ""));
  }
  Table totals{{"", ""}, {}};
  if (!rs.identity.empty()) totals.row({"subject identity", rs.identity});
  if (merged)
    totals.row({"cases run", fmt::format("{} (in {} shards, {} runs)", st.cases_done, rs.shards.size(), st.runs)});
  else
    totals.row({"cases run", fmt::format("{} ({} in this run; {} run{} of this campaign)", st.cases_done,
                                         rs.cases_this_run, st.runs, st.runs == 1 ? "" : "s")});
  totals.row({"pass / unsupported", fmt::format("{} / {}", bucket(st, "pass"), bucket(st, "unsupported"))});
  if (const std::string caps = capability_line(st); !caps.empty()) totals.row({"subject parameters", caps});
  if (const int64_t n = unsupported_by_subject(st))
    totals.row({"unsupported by subject", fmt::format("{} cases (not findings), by parameter: {}", n,
                                                      per_param_text(unsupported_by_param(st)))});
  // Symptoms listed under a root are not counted again, as in report.json and the summary line.
  const int64_t known = count_known(st), under_n = count_symptoms(st);
  const int64_t roots = static_cast<int64_t>(st.findings.size()) - under_n;
  const std::string under_text = under_n ? fmt::format(", {} more listed under a root", under_n) : "";
  totals.row({"findings", rs.known.empty() ? fmt::format("{} (one per cause{})", roots, under_text)
                                           : fmt::format("**{} new**, {} known (one per cause{})", roots - known, known,
                                                         under_text)});
  if (!rs.known.empty()) totals.row({"known list", join_words(rs.known)});
  if (!rs.baseline.empty())
    totals.row({"baseline", fmt::format("`{}`: findings are the cases whose outcome differs from it (regressed, fixed, "
                                        "changed)", rs.baseline)});
  totals.row({"throughput", fmt::format("{:.1f} cases/min{}", cases_per_min(rs),
                                         after_ready_s(rs) > 0 ? fmt::format(" ({:.1f}/min after the first worker was ready)",
                                                                             cases_per_min_ready(rs))
                                                               : "")});
  totals.row({"graph configurations",
              fmt::format("{} distinct{}", st.graphs.size(),
                          merged ? "" : fmt::format(" ({:.1f}/min this run, {:.1f}/min after the first worker was ready; "
                                                    "families of {} cases)",
                                                    graphs_per_min(rs), graphs_per_min_ready(rs), rs.family_size))});
  if (!rs.analyses.empty()) {
    const auto n = [&](const char* k) { return rs.analyses.count(k) ? rs.analyses.at(k) : 0; };
    totals.row({"analyses", fmt::format("{} on analysis workers, {} on a lane's lent slot ({} eager, {} compiled; "
                                        "lent from the {} lane while exploring)",
                                        n("own"), n("lent"), n("lent_eager"), n("lent_compiled"),
                                        rs.lend_from == "finder" ? "finder's" : "eager")});
  }
  if (rs.neighbours_dropped)
    totals.row({"neighbours not run", fmt::format("{} (of findings the known list explains)", rs.neighbours_dropped)});
  if (rs.spare_swaps)
    totals.row({"spare worker", fmt::format("took the place of {} dead compiled workers (no cold start)", rs.spare_swaps)});
  if (rs.walks_deferred)
    totals.row({"ladder walks after the verdict",
                fmt::format("{} queued, {} walked on analysis workers (unknown signatures; none held a lane's slot)",
                            rs.walks_deferred, rs.walks_deferred_done)});
  if (!st.ladders.empty()) {
    const LaneTotals* c = st.lanes.count("compiled") ? &st.lanes.at("compiled") : nullptr;
    totals.row({"shared ladders", fmt::format("{} (graph, signature) pairs, {} walks; {} reused ({} traces saved)",
                                              st.ladders.size(), ladder_walks(st), c ? c->memo_hits : 0,
                                              c ? c->traces_saved : 0)});
  }
  if (st.families_retired)
    totals.row({"retired families", fmt::format("{} ({} cases not run: each would re-show its family's compile failure)",
                                                st.families_retired, st.cases_retired)});
  if (!st.abandoned.empty()) {
    std::string what;
    int64_t n = 0;
    for (auto& [stage, k] : st.abandoned) what += fmt::format("{}{} {}", what.empty() ? "" : ", ", stage, k), n += k;
    totals.row({"killed at the budget", fmt::format("{} cases in flight, not waited for ({}); a resume runs them", n, what)});
  }
  totals.row({"time to first finding", st.first_finding_s ? duration(*st.first_finding_s) : "none"});
  totals.row({"time spent", duration(st.elapsed_s)});
  if (rs.interrupted) totals.row({"note", "interrupted; rerun the same command to resume"});
  if (!st.unusable.empty())
    totals.row({"stopped", "**subject unusable**: " + st.unusable + " (exit 2; rerun the same command once fixed)"});
  md.add(totals);
  if (!st.approximated.empty()) {
    // Passes that needed the subject's declared approximation: neither a plain pass nor a
    // finding (judge/MATH.md, "Declared approximations").
    const auto contract = st.capabilities.value("contract", nlohmann::json());
    const auto approx = contract.is_object() ? contract.value("approximation", nlohmann::json()) : nlohmann::json();
    md.heading(2, "Approximations within their declared tolerance");
    md.paragraph(fmt::format("The subject declares {}; these cases exceed the exact bound and stay within the "
                             "allowance derived for it, so they are not findings.",
                             approx.is_object() ? fmt::format("`{}` ({})", approx.value("name", "?"),
                                                              approx.value("source", "no source given"))
                                                : std::string("an approximation")));
    Table t{{"oracle:output", "cases", "worst err / exact bound"}, {}};
    for (auto& [k, a] : st.approximated)
      t.row({md_code(k), std::to_string(a.cases), fmt::format("{:.3g}", a.worst_over_exact)});
    md.add(t);
  }
  if (!st.lanes.empty()) {
    // Where each lane's time went: the sums of RunTiming over its cases (worker-side clocks;
    // workers run side by side, so a lane's sums can exceed the wall time).
    md.heading(2, "Lanes");
    std::vector<std::string> head{"lane", "workers", "cases", "cases/min", "compiled runs"};
    for (auto& [field, label] : lane_time_fields()) head.push_back(label + " (s)");
    head.push_back("shrink (s)");
    Table lanes{head, {}};
    for (auto& [name, t] : st.lanes) {
      std::vector<std::string> row{name, std::to_string(t.workers), std::to_string(t.cases),
                                   fmt::format("{:.1f}", lane_cases_per_min(st, t)), std::to_string(t.compiled_runs)};
      for (auto& [field, label] : lane_time_fields())
        row.push_back(fmt::format("{:.1f}", (t.ms.count(field) ? t.ms.at(field) : 0.0) / 1000));
      row.push_back(fmt::format("{:.1f}", t.shrink_s));
      lanes.row(row);
    }
    md.add(lanes);
  }
  if (merged) {
    md.heading(2, "Shards");
    Table shards{{"shard", "seeds", "cases", "findings", "time spent"}, {}};
    for (auto& sh : rs.shards) {
      std::string seeds;
      for (auto& v : sh.value("seeds", nlohmann::ordered_json::array()))
        seeds += (seeds.empty() ? "" : ", ") + v.dump();
      shards.row({sh.value("dir", ""), seeds, std::to_string(sh.value("cases_done", 0)),
                  std::to_string(sh.value("findings", 0)), duration(sh.value("elapsed_s", 0.0))});
    }
    md.add(shards);
  }
  md.add(coverage_details(st.coverage));  // fuzz/campaign/coverage.cpp
  if (const auto ex = st.explained.explained(); !ex.empty()) {
    // Field values whose compiled outcome is known: the sampler gives them a small share (one
    // family in kExplainedShare) and spends the lane where the outcome has not been seen.
    md.heading(2, "Explained field values (compiled lane)");
    Table t{{"field value", "compiled outcome", "configurations", "cases since"}, {}};
    for (auto& [cell, why] : ex) {
      int64_t compiled = 0;
      if (auto l = st.coverage.lanes.find("compiled"); l != st.coverage.lanes.end())
        if (auto c = l->second.find(cell); c != l->second.end()) compiled = c->second.cases;
      t.row({md_code(cell), md_code(why.signature), fmt::format("{} of {}", why.configurations, why.of),
             fmt::format("{} compiled cases in all; 1 family in {} may still draw it", compiled, kExplainedShare)});
    }
    md.add(t);
  }
  if (st.findings.empty()) {
    md.paragraph("No findings.");
    return md;
  }
  auto table = [&](const std::vector<const Finding*>& fs, bool known_list) {
    Table t{known_list ? std::vector<std::string>{"finding", "known as", "cases", "outputs", "first case", "cause"}
                       : std::vector<std::string>{"finding", "outputs", "cases", "first seen", "first case", "cause",
                                                  "shrunk", "repro"},
            {}};
    for (auto* f : fs) {
      const std::string first = fmt::format("[{}](findings/{}/case.json)", first_where(*f), f->id);
      // The cause, and the outcome line of its first case (what `flce run` and repro.py print).
      std::string name =
          f->key() == f->signature ? md_code(f->key()) : md_code(f->key()) + "<br>first: " + md_code(f->signature);
      if (const std::string sy = symptoms_of(st, *f); !sy.empty()) name += "<br>also shows as: " + sy;
      if (known_list)
        t.row({name, f->known, std::to_string(f->count), outputs_cell(*f), first, cause_cell(*f)});
      else
        t.row({name, outputs_cell(*f), std::to_string(f->count),
               fmt::format("{} ({})", duration(f->first_seen_s), f->first_seen), first, cause_cell(*f), shrink_cell(*f),
               md_code(repro_command(dir, st, *f))});
    }
    return t;
  };
  std::vector<const Finding*> fresh, old, under;
  for (auto* f : in_report_order(st)) (f->is_new() ? fresh : is_symptom(*f) ? under : old).push_back(f);
  // A merge without --known keeps what its shards filed as known: those are listed too.
  const bool with_known = !rs.known.empty() || !old.empty();
  md.heading(2, with_known ? fmt::format("New findings ({})", fresh.size()) : "Findings");
  md.paragraph("One finding per cause: its failure class and the features whose reset to the default makes it go "
               "away (findings/cause.hpp); every output out of line under that cause is listed with it.");
  if (fresh.empty()) md.paragraph("None.");
  else md.add(table(fresh, false));
  if (with_known) {
    md.heading(2, fmt::format("Known findings ({})", old.size()));
    if (old.empty()) md.paragraph("None.");
    else md.add(table(old, true));
  }
  if (!under.empty()) {
    md.heading(2, fmt::format("Listed under their root cause ({})", under.size()));
    md.paragraph("Symptoms (another failure class with the root's essential features, on the same oracle) and "
                 "order-dependent variants of a finding above: not counted again (findings/root_cause.hpp).");
    Table t{{"finding", "under", "why", "cases", "outputs", "first case"}, {}};
    for (auto* f : under) {
      const Finding* r = by_id(st, f->root);
      t.row({md_code(f->key()), r ? md_code(r->key()) : md_code(f->root), f->root_why, std::to_string(f->count),
             outputs_cell(*f), fmt::format("[{}](findings/{}/case.json)", first_where(*f), f->id)});
    }
    md.add(t);
  }
  List details;
  for (auto* fp : in_report_order(st)) {
    const Finding& f = *fp;
    const bool stacks = fs::exists(dir / "findings" / f.id / "stacks.txt");  // a timeout: where it hung
    if (!f.detail.empty() || f.cuda_poisoned || stacks)
      details.items.push_back(fmt::format("{}: {}{}{}", md_code(f.key()),
                                          f.cuda_poisoned ? "**CUDA context poisoned** " : "", f.detail,
                                          stacks ? fmt::format("; Python stacks when killed: [stacks.txt](findings/{}/stacks.txt)", f.id) : ""));
  }
  md.add(details);
  return md;
}

// report.json: everything above, for tools.
nlohmann::ordered_json json_of(const fs::path& dir, const CampaignState& st, const RunStats& rs) {
  nlohmann::ordered_json j;
  j["subject"] = st.subject;
  j["subject_path"] = st.subject_path;
  if (!rs.identity.empty()) j["subject_identity"] = rs.identity;
  j["environment"] = st.environment;
  if (rs.shards.is_array()) {
    j["seed"] = nullptr;  // one per shard, below
    j["shards"] = rs.shards;
  } else {
    j["seed"] = rs.seed;
  }
  j["workers"] = rs.workers;
  if (!rs.lanes.empty()) j["lanes_run"] = rs.lanes;
  auto lj = nlohmann::ordered_json::object();
  for (auto& [name, t] : st.lanes) {
    lj[name] = t.to_json();
    lj[name]["cases_per_min"] = lane_cases_per_min(st, t);
  }
  j["lanes"] = lj;
  auto ladders = nlohmann::ordered_json::array();
  for (auto& [key, l] : st.ladders)
    ladders.push_back({{"key", key}, {"walks", l.walks}, {"hits", l.hits}, {"first_failing_stage", l.first_failing_stage}});
  j["ladders"] = ladders;
  j["families_retired"] = st.families_retired;
  j["cases_retired"] = st.cases_retired;
  j["abandoned"] = st.abandoned;
  j["cases_done"] = st.cases_done;
  j["cases_this_run"] = rs.cases_this_run;
  j["runs"] = st.runs;
  j["elapsed_s"] = st.elapsed_s;
  j["cases_per_min"] = cases_per_min(rs);
  j["cases_per_min_after_ready"] = cases_per_min_ready(rs);
  j["graphs_this_run"] = rs.graphs_this_run;
  j["graphs_per_min"] = graphs_per_min(rs);
  j["graphs_per_min_after_ready"] = graphs_per_min_ready(rs);
  j["first_ready_s"] = rs.first_ready_s;
  j["worker_starts"] = rs.worker_starts;
  j["zygote"] = rs.zygote;
  j["analyses"] = rs.analyses;
  j["lend_from"] = rs.lend_from;
  j["neighbours_dropped"] = rs.neighbours_dropped;
  j["ladder_walks_deferred"] = {{"queued", rs.walks_deferred}, {"walked", rs.walks_deferred_done}};
  j["spare_swaps"] = rs.spare_swaps;
  if (!rs.ending.empty()) j["ending"] = rs.ending;
  j["time_to_first_finding_s"] = st.first_finding_s ? nlohmann::ordered_json(*st.first_finding_s) : nlohmann::ordered_json();
  j["worker_restarts"] = st.worker_restarts;
  j["interrupted"] = rs.interrupted;
  if (!st.unusable.empty()) j["unusable"] = st.unusable;
  j["capabilities"] = st.capabilities;
  j["unsupported_by_subject"] = {{"cases", unsupported_by_subject(st)}, {"by_param", unsupported_by_param(st)}};
  j["outcomes"] = st.outcomes;
  auto aj = nlohmann::ordered_json::object();
  for (auto& [k, a] : st.approximated) aj[k] = {{"cases", a.cases}, {"worst_over_exact", a.worst_over_exact}};
  j["approximated"] = aj;
  j["coverage"] = coverage_report_json(st.coverage);
  auto ex = nlohmann::ordered_json::object();
  for (auto& [cell, why] : st.explained.explained())
    ex[cell] = {{"signature", why.signature}, {"configurations", why.configurations}, {"of", why.of}};
  j["explained"] = ex;
  auto fj = nlohmann::ordered_json::array();
  for (auto* fp : in_report_order(st)) {
    const Finding& f = *fp;
    nlohmann::ordered_json x = f.to_json();
    x["key"] = f.key();
    x["new"] = f.is_new();
    x["case"] = (fs::path("findings") / f.id / "case.json").string();
    x["repro"] = repro_command(dir, st, f);
    if (fs::exists(dir / "findings" / f.id / "stacks.txt")) x["stacks"] = (fs::path("findings") / f.id / "stacks.txt").string();
    fj.push_back(x);
  }
  j["new_findings"] = static_cast<int64_t>(st.findings.size()) - count_known(st) - count_symptoms(st);
  j["known_findings"] = count_known(st);
  j["under_a_root"] = count_symptoms(st);
  j["known"] = rs.known;
  if (!rs.baseline.empty()) j["baseline"] = rs.baseline;
  j["findings"] = fj;
  return j;
}

// junit.xml: one failing testcase per finding signature, beside the pass and unsupported buckets.
JUnit junit_of(const fs::path& dir, const CampaignState& st) {
  JUnitSuite suite{"flce.campaign." + st.subject, st.elapsed_s, {}};
  const std::string& cls = suite.name;
  suite.cases.push_back({cls, "pass", std::nullopt, JUnitPass{fmt::format("{} cases passed", bucket(st, "pass"))}});
  if (const int64_t unsupported = bucket(st, "unsupported"))
    suite.cases.push_back(
        {cls, "unsupported", std::nullopt, JUnitSkipped{fmt::format("{} cases cannot run here", unsupported)}});
  for (auto& [p, n] : unsupported_by_param(st))
    suite.cases.push_back({cls, std::string(kUnsupportedBySubject) + p, std::nullopt,
                           JUnitSkipped{fmt::format("{} cases use {}, which the subject lacks", n, p)}});
  for (auto* fp : in_report_order(st)) {
    const Finding& f = *fp;
    if (is_symptom(f)) {  // its root fails (or is known) once for it
      const Finding* r = by_id(st, f.root);
      suite.cases.push_back({cls, f.key(), std::nullopt,
                             JUnitSkipped{fmt::format("listed under {}: {} hits; {}", r ? r->key() : f.root, f.count, f.root_why)}});
    } else if (!f.known.empty())  // a known bug is not tonight's failure; it is listed, not failed
      suite.cases.push_back({cls, f.key(), std::nullopt,
                             JUnitSkipped{fmt::format("known ({}): {} hits", f.known, f.count)}});
    else
      suite.cases.push_back({cls, f.key(), std::nullopt,
                             JUnitFailure{"finding", fmt::format("{} hits, first {} ({}); outputs {}", f.count,
                                                                 first_where(f), f.signature, outputs_cell(f)),
                                          cause_cell(f) + "\n" + f.detail + "\nrepro: " + repro_command(dir, st, f)}});
  }
  return {{suite}};
}

}  // namespace

void write_reports(const fs::path& to, const CampaignState& st, const RunStats& rs, const fs::path& named) {
  const fs::path& dir = named.empty() ? to : named;
  const std::string torch = st.environment.is_object() ? st.environment.value("torch", "?") : "?";
  write_report(to, {markdown_of(dir, st, rs, torch), json_of(dir, st, rs), junit_of(dir, st)});
}

std::string summary_text(const fs::path& dir, const CampaignState& st, const RunStats& rs) {
  const std::string run = rs.shards.is_array() ? fmt::format("merged from {} shards", rs.shards.size())
                                               : fmt::format("{} this run in {}", rs.cases_this_run, duration(rs.wall_s));
  std::string s = fmt::format("campaign {}: {} cases ({}), {} distinct outcomes, {} findings{}{}\n", st.subject,
                              st.cases_done, run, st.outcomes.size(), st.findings.size(),
                              rs.known.empty() && !count_symptoms(st)
                                  ? ""
                                  : fmt::format(" ({} new, {} known{})", st.findings.size() - count_known(st) - count_symptoms(st),
                                                count_known(st),
                                                count_symptoms(st) ? fmt::format(", {} under a root", count_symptoms(st)) : ""),
                              rs.interrupted ? " (interrupted)" : "");
  s += fmt::format("throughput: {:.2f} cases/min\n", cases_per_min(rs));
  if (const std::string l = lanes_line(st); !l.empty()) s += "lanes: " + l + "\n";
  if (!st.ladders.empty())
    s += fmt::format("shared ladders: {} walked, {} reused ({} traces saved)\n", ladder_walks(st),
                     st.lanes.count("compiled") ? st.lanes.at("compiled").memo_hits : 0,
                     st.lanes.count("compiled") ? st.lanes.at("compiled").traces_saved : 0);
  if (const std::string caps = capability_line(st); !caps.empty()) s += "subject " + caps + "\n";
  if (const int64_t n = unsupported_by_subject(st))
    s += fmt::format("unsupported by subject: {} cases (not findings): {}\n", n, per_param_text(unsupported_by_param(st)));
  if (!st.unusable.empty()) s += "stopped: subject unusable: " + st.unusable + "\n";
  s += fmt::format("graph configurations: {} distinct{}{}\n", st.graphs.size(),
                   rs.shards.is_array() ? "" : fmt::format(" ({:.2f}/min this run)", graphs_per_min(rs)),
                   st.families_retired ? fmt::format("; {} families retired after repeated compile failures ({} cases not run)",
                                                     st.families_retired, st.cases_retired) : "");
  if (st.first_finding_s) {
    const Finding* first = &st.findings.front();
    for (auto& f : st.findings)
      if (f.first_seen_s < first->first_seen_s) first = &f;
    s += fmt::format("time to first finding: {:.1f} s ({}){}\n", *st.first_finding_s, first->signature,
                     rs.first_ready_s >= 0 ? fmt::format("; first worker ready after {:.1f} s", rs.first_ready_s) : "");
  } else {
    s += "time to first finding: none\n";
  }
  for (auto* f : in_report_order(st))
    s += fmt::format("  {:>5}x {} {} ({})  -> {}\n", f->count,
                     is_symptom(*f) ? "[under]" : f->known.empty() ? "[new]  " : "[known]", f->key(), outputs_cell(*f),
                     repro_command(dir, st, *f));
  s += fmt::format("report: {}\n", (dir / "report.md").string());
  return s;
}

}  // namespace flce
