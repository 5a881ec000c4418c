#include "fuzz/campaign/campaign_merge.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/campaign/campaign_report.hpp"
#include "fuzz/campaign/campaign_state.hpp"
#include "case/case.hpp"
#include "fuzz/findings/known.hpp"
#include "fuzz/findings/minimize.hpp"
#include "fuzz/findings/root_cause.hpp"
#include "judge/signature.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMergeSchema = "flce-campaign-merge/1";

struct Shard {
  std::string label;  // the directory as given (normalized): what reports name
  fs::path dir;
  CampaignState st;
  int lock_fd = -1;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw CampaignInputError(fmt::format("{}: cannot read", p.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string label_of(const std::string& arg) {
  std::string s = fs::path(arg).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Shard load_shard(const std::string& arg) {
  Shard s;
  s.label = label_of(arg);
  s.dir = arg;
  if (!fs::is_directory(s.dir)) throw CampaignInputError(fmt::format("{}: not a directory", arg));
  const fs::path sp = s.dir / "state.json";
  if (!fs::exists(sp)) throw CampaignInputError(fmt::format("{}: not a campaign directory (no state.json)", arg));
  try {
    s.st = parse_campaign_state(read_file(sp));
  } catch (const CampaignInputError&) {
    throw;
  } catch (const std::exception& e) {
    throw CampaignInputError(fmt::format("{}: not a campaign state ({})", sp.string(), e.what()));
  }
  // A running campaign holds its lock exclusively; reading it mid-run would merge a moment
  // of it. Shared: two merges may read the same shard.
  s.lock_fd = ::open((s.dir / "lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (s.lock_fd >= 0 && ::flock(s.lock_fd, LOCK_SH | LOCK_NB) != 0)
    throw CampaignInputError(fmt::format("{}: a campaign is still running there (lock held)", arg));
  for (auto& f : s.st.findings)
    if (!fs::exists(s.dir / "findings" / f.id / "case.json"))
      throw CampaignInputError(fmt::format("{}: finding {} has no findings/{}/case.json", arg, f.signature, f.id));
  return s;
}

// The union of two done-sets of one seed's sample stream.
void merge_cursor(SeedCursor& into, const SeedCursor& c) {
  SeedCursor u;
  u.next = std::max(into.next, c.next);
  for (uint64_t i : into.done_above) u.mark(i);
  for (uint64_t i : c.done_above) u.mark(i);
  into = u;
}

// Lane totals add up over shards (workers too: the machines' workers together).
void merge_lane(LaneTotals& into, const LaneTotals& t) {
  into.workers += t.workers;
  into.cases += t.cases;
  into.compiled_runs += t.compiled_runs;
  into.memo_hits += t.memo_hits;
  into.traces_saved += t.traces_saved;
  for (auto& [k, v] : t.ms) into.ms[k] += v;
  into.shrink_s += t.shrink_s;
}

// The committed part of a shard's journal (a resume cuts the rest away, so do we).
std::string committed_journal(const Shard& s) {
  const fs::path p = s.dir / "cases.jsonl";
  if (!fs::exists(p)) return "";
  std::string j = read_file(p);
  if (j.size() < s.st.journal_bytes)
    throw CampaignInputError(fmt::format("{}: cases.jsonl is shorter ({} bytes) than state.json says ({})", s.label,
                                         j.size(), s.st.journal_bytes));
  j.resize(s.st.journal_bytes);
  return j;
}

struct ShardSighting {  // one shard's view of a finding (its key: the cause, or the outcome line)
  const Shard* shard;
  const Finding* f;
  size_t order;  // shard position: the tie-break everywhere, so the result does not depend on timing
  CaseSize size;
};

// Earlier UTC first sighting first (ISO 8601 strings sort as times).
bool earlier(const ShardSighting& a, const ShardSighting& b) {
  return std::tie(a.f->first_seen, a.f->first_seen_s, a.order) < std::tie(b.f->first_seen, b.f->first_seen_s, b.order);
}

bool smaller(const ShardSighting& a, const ShardSighting& b) {
  return std::tie(a.size.elements, a.size.non_default, a.order) < std::tie(b.size.elements, b.size.non_default, b.order);
}

Finding merge_finding(const std::vector<ShardSighting>& seen, const ShardSighting*& repro) {
  const ShardSighting& first = *std::min_element(seen.begin(), seen.end(), earlier);
  repro = &*std::min_element(seen.begin(), seen.end(), smaller);
  Finding m = *first.f;
  m.id = finding_id(m.key());
  m.count = 0;
  m.outputs.clear();
  for (auto& s : seen) {
    m.count += s.f->count;
    m.last_seen = std::max(m.last_seen, s.f->last_seen);
    m.cuda_poisoned |= s.f->cuda_poisoned;
    for (auto& [o, n] : s.f->outputs) m.outputs[o] += n;
    if (m.known.empty()) m.known = s.f->known;  // known in any shard's list: known
  }
  // A merged shard already names the shard below it: keep the deepest name.
  if (m.first_shard.empty()) m.first_shard = first.shard->label;
  m.case_from = repro->f->case_from.empty() ? repro->shard->label + ": " + repro->f->first_case : repro->f->case_from;
  // The shrink result travels with the files copied from the chosen sighting.
  m.shrink = repro->f->shrink, m.shrink_runs = repro->f->shrink_runs;
  m.elements = repro->f->elements, m.min_elements = repro->f->min_elements;
  m.repro_alone = repro->f->repro_alone;
  return m;
}

// --out may be absent, empty, or a previous merge of the same subject; anything else
// (a campaign, a shard, unrelated files) is refused rather than replaced.
void check_out(const fs::path& out, const std::vector<Shard>& shards) {
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out)) throw CampaignInputError(fmt::format("--out {}: exists and is not a directory", out.string()));
  for (auto& s : shards)
    if (fs::equivalent(out, s.dir)) throw CampaignInputError(fmt::format("--out {}: is one of the shards", out.string()));
  if (fs::is_empty(out)) return;
  if (!fs::exists(out / "merge.json"))
    throw CampaignInputError(fmt::format("--out {}: exists and is not the output of campaign-merge (no merge.json); "
                                         "refusing to replace it", out.string()));
  auto st = nlohmann::json::parse(read_file(out / "state.json"), nullptr, false);
  const std::string subject = st.is_object() ? st.value("subject", "") : "";
  if (subject != shards.front().st.subject)
    throw CampaignInputError(fmt::format("--out {}: holds a merge of subject '{}', not '{}'", out.string(), subject,
                                         shards.front().st.subject));
}

// Puts the finished directory `tmp` in place of `out` in one step where the filesystem
// can (RENAME_EXCHANGE), else with a short window in which `out` is absent, never torn.
void swap_into_place(const fs::path& tmp, const fs::path& out) {
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::exists(out)) {
    fs::rename(tmp, out);
  } else if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp);  // now the previous merge
  } else {
    const fs::path old = parent / fmt::format(".{}.old.{}", out.filename().string(), ::getpid());
    fs::rename(out, old);
    fs::rename(tmp, out);
    fs::remove_all(old);
  }
  sync_dir(parent);
}

void copy_durable(const fs::path& from, const fs::path& to) { write_atomic(to, read_file(from)); }

}  // namespace

MergeResult merge_campaigns(const MergeOptions& o) {
  if (o.shards.empty()) throw CampaignInputError("no shard directories given");
  if (o.out.empty()) throw CampaignInputError("--out is required");
  std::vector<Shard> shards;
  for (auto& a : o.shards) shards.push_back(load_shard(a));
  // In the order given: the first shard is the one the others must match.
  for (size_t i = 0; i < shards.size(); ++i) {
    const Shard& s = shards[i];
    for (size_t k = 0; k < i; ++k)
      if (fs::equivalent(s.dir, shards[k].dir))
        throw CampaignInputError(fmt::format("{}: given twice (also as {})", o.shards[i], o.shards[k]));
    const Shard& ref = shards.front();
    if (s.st.subject != ref.st.subject || s.st.subject_path != ref.st.subject_path)
      throw CampaignInputError(fmt::format("{}: a shard of subject '{}' (path '{}'), unlike {}: subject '{}' (path '{}')",
                                           s.label, s.st.subject, s.st.subject_path, ref.label, ref.st.subject,
                                           ref.st.subject_path));
  }
  // Sorted by name: the result does not depend on the order of the arguments.
  std::sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) { return a.label < b.label; });
  const fs::path out = fs::path(o.out).lexically_normal();
  check_out(out, shards);
  KnownList known;
  try {
    known = load_known(o.known, shards.front().st.subject);
  } catch (const KnownInputError& e) {
    throw CampaignInputError(e.what());
  }

  CampaignState m;
  m.subject = shards.front().st.subject;
  m.subject_path = shards.front().st.subject_path;
  m.family_size = shards.front().st.family_size;
  m.eager_group = shards.front().st.eager_group;
  m.subject_git = shards.front().st.subject_git;
  std::map<uint64_t, std::string> seed_owner;
  std::string journal;
  auto shard_list = nlohmann::ordered_json::array();
  std::map<std::string, std::vector<ShardSighting>> by_signature;
  for (size_t i = 0; i < shards.size(); ++i) {
    const Shard& s = shards[i];
    const CampaignState& st = s.st;
    m.cases_done += st.cases_done;
    m.runs += st.runs;
    m.worker_restarts += st.worker_restarts;
    m.elapsed_s += st.elapsed_s;  // machine time, summed like a resumed campaign's runs
    if (st.first_finding_s && (!m.first_finding_s || *st.first_finding_s < *m.first_finding_s))
      m.first_finding_s = st.first_finding_s;
    for (auto& [k, n] : st.outcomes) m.outcomes[k] += n;
    for (auto& [k, a] : st.approximated) {
      m.approximated[k].cases += a.cases;
      m.approximated[k].worst_over_exact = std::max(m.approximated[k].worst_over_exact, a.worst_over_exact);
    }
    m.corpus_done.insert(st.corpus_done.begin(), st.corpus_done.end());
    m.graphs.insert(st.graphs.begin(), st.graphs.end());
    m.coverage.merge(st.coverage);
    m.explained.merge(st.explained);
    m.families_retired += st.families_retired;
    m.cases_retired += st.cases_retired;
    auto seeds = nlohmann::ordered_json::array();
    for (auto& [seed, cur] : st.seeds) {
      seeds.push_back(seed);
      auto [it, fresh] = seed_owner.emplace(seed, s.label);
      if (!fresh)  // legal, but the two shards ran the same cases
        std::fprintf(stderr, "flce campaign-merge: warning: seed %llu ran in %s and %s: their cases overlap\n",
                     static_cast<unsigned long long>(seed), it->second.c_str(), s.label.c_str());
      merge_cursor(m.seeds[seed], cur);
    }
    for (auto& [seed, cur] : st.eager_seeds) merge_cursor(m.eager_seeds[seed], cur);
    for (auto& [name, t] : st.lanes) merge_lane(m.lanes[name], t);
    for (auto& [key, l] : st.ladders) {  // each shard walked its own: walks add up
      SharedLadder& into = m.ladders[key];
      if (into.ladder.empty()) into = SharedLadder{l.ladder, l.first_failing_stage, 0, 0};
      into.walks += l.walks;
      into.hits += l.hits;
    }
    if (m.environment.is_null() || m.environment.empty()) m.environment = st.environment;
    if (m.capabilities.is_null()) m.capabilities = st.capabilities;  // one subject: one signature
    m.subject_ran = m.subject_ran || st.subject_ran;
    journal += committed_journal(s);
    for (auto& f : st.findings) {
      // A shrunk finding competes with its minimized case (campaign_shrink.hpp).
      const fs::path fd = s.dir / "findings" / f.id;
      const fs::path cp = fs::exists(fd / "minimized.json") ? fd / "minimized.json" : fd / "case.json";
      CaseSize size;
      try {
        size = case_size(from_json_file(cp.string()));
      } catch (const std::exception& e) {
        throw CampaignInputError(fmt::format("{}: not a valid case ({})", cp.string(), e.what()));
      }
      by_signature[f.key()].push_back({&s, &f, i, size});
    }
    shard_list.push_back({{"dir", s.label},
                          {"seeds", seeds},
                          {"cases_done", st.cases_done},
                          {"findings", st.findings.size()},
                          {"runs", st.runs},
                          {"elapsed_s", st.elapsed_s},
                          {"torch", st.environment.is_object() ? st.environment.value("torch", "") : ""}});
  }

  // Build the whole result aside; `out` changes only once it is complete.
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  fs::create_directories(parent);
  const fs::path tmp = parent / fmt::format(".{}.merge-tmp.{}", out.filename().string(), ::getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp / "findings");
  std::vector<std::pair<Finding, const ShardSighting*>> merged;
  for (auto& [sig, seen] : by_signature) {
    const ShardSighting* repro = nullptr;
    Finding f = merge_finding(seen, repro);
    if (f.known.empty() && !known.entries.empty()) {  // as the campaign's FindingBook files it
      const auto rep = nlohmann::json::parse(read_file(repro->shard->dir / "findings" / repro->f->id / "report.json"),
                                             nullptr, false);
      const std::string sv = rep.is_object() ? rep.value("subject_version", "") : "";
      const std::string torch = m.environment.is_object() ? m.environment.value("torch", "") : "";
      if (const KnownEntry* e = match_known(known, f, torch, shards.front().st.device == "cuda", sv)) f.known = e->source;
    }
    merged.emplace_back(f, repro);
  }
  // In order of first sight, as a single campaign lists them.
  std::sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.first_seen, a.first.first_seen_s, a.first.key()) <
           std::tie(b.first.first_seen, b.first.first_seen_s, b.first.key());
  });
  for (auto& [f, repro] : merged) {
    const fs::path from = repro->shard->dir / "findings" / repro->f->id;
    const fs::path to = tmp / "findings" / f.id;
    fs::create_directories(to);
    for (const char* name : {"case.json", "report.json", "baseline_report.json", "worker.log", "minimized.json",
                             "minimized_report.json", "repro.py", "repro.check.json"})
      if (fs::exists(from / name)) copy_durable(from / name, to / name);
    m.findings.push_back(f);
  }
  // One root cause, one finding over all shards: a symptom one shard saw groups under another's root.
  group_root_causes(m.findings, tmp);
  for (auto& f : m.findings) write_finding_json_to(tmp / "findings" / f.id, f);
  m.journal_bytes = journal.size();
  write_atomic(tmp / "cases.jsonl", journal);
  write_atomic(tmp / "state.json", m.to_json().dump(1) + "\n");
  write_atomic(tmp / "merge.json",
               nlohmann::ordered_json{{"schema", kMergeSchema}, {"shards", shard_list}}.dump(2) + "\n");
  RunStats rs;
  rs.shards = shard_list;
  rs.known = known.sources;
  rs.cases_this_run = m.cases_done;
  // Shards run side by side: the merged throughput is over the longest shard's time.
  for (auto& s : shards) rs.wall_s = std::max(rs.wall_s, s.st.elapsed_s);
  write_reports(tmp, m, rs, out);  // the repro commands name the final directory
  sync_dir(tmp / "findings");
  sync_dir(tmp);
  swap_into_place(tmp, out);
  for (auto& s : shards)
    if (s.lock_fd >= 0) ::close(s.lock_fd);
  if (!o.quiet) std::printf("%s", summary_text(out, m, rs).c_str());
  const auto n_new = std::count_if(m.findings.begin(), m.findings.end(), [](const Finding& f) { return f.is_new(); });
  return {static_cast<int64_t>(m.findings.size()), m.cases_done, static_cast<int64_t>(n_new)};
}

}  // namespace flce
