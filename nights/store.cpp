#include "nights/store.hpp"

#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <fmt/format.h>

#include "fuzz/findings/finding.hpp"

namespace flce {

namespace {

constexpr const char* kFormat = "flce-store/1";
// The whole schema; IF NOT EXISTS, so two shards creating one store at once both succeed.
constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nights(seq INTEGER PRIMARY KEY AUTOINCREMENT, night TEXT NOT NULL, identity_key TEXT NOT NULL,
  identity TEXT NOT NULL, dir TEXT NOT NULL, torch TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS findings(id TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, outcome TEXT NOT NULL,
  failure TEXT NOT NULL, cause_status TEXT NOT NULL, lane TEXT NOT NULL, essential TEXT NOT NULL,
  case_json TEXT NOT NULL, case_file TEXT NOT NULL, device TEXT NOT NULL, torch TEXT NOT NULL,
  first_night TEXT NOT NULL, last_night TEXT NOT NULL, state TEXT NOT NULL, link TEXT NOT NULL DEFAULT '',
  owner TEXT NOT NULL DEFAULT '', why TEXT NOT NULL DEFAULT '', fixed_night TEXT NOT NULL DEFAULT '',
  fixed_identity TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS sightings(finding TEXT NOT NULL, night TEXT NOT NULL, identity TEXT NOT NULL,
  dir TEXT NOT NULL, hits INTEGER NOT NULL, PRIMARY KEY(finding, night, identity, dir));
CREATE TABLE IF NOT EXISTS aliases(key TEXT PRIMARY KEY, finding TEXT NOT NULL, outcome TEXT NOT NULL,
  failure TEXT NOT NULL, cause_status TEXT NOT NULL, essential TEXT NOT NULL, why TEXT NOT NULL);
)SQL";

// A prepared statement; every step's return code is checked.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      throw StoreError(fmt::format("prepare: {} ({})", sqlite3_errmsg(db), sql));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, const std::string& v) {
    check(sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    check(sqlite3_bind_int64(s_, i, v));
    return *this;
  }
  // true: a row is ready; false: done.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(fmt::format("{}", sqlite3_errmsg(db_)));
  }
  void run() {
    while (step()) {
    }
  }
  std::string text(int col) const {
    const unsigned char* t = sqlite3_column_text(s_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int64_t integer(int col) const { return sqlite3_column_int64(s_, col); }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw StoreError(fmt::format("bind: {}", sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string m = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw StoreError(m);
  }
}

// BEGIN IMMEDIATE ... COMMIT; rolled back when a step throws (a killed process: SQLite's journal).
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) { exec(db, "BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    exec(db_, "COMMIT");
    done_ = true;
  }

 private:
  sqlite3* db_;
  bool done_ = false;
};

const char* kColumns =
    "id, key, outcome, failure, cause_status, lane, essential, case_json, case_file, device, torch, first_night, "
    "last_night, state, link, owner, why, fixed_night, fixed_identity, note";

StoredFinding row_of(const Stmt& s) {
  StoredFinding f;
  f.id = s.text(0), f.key = s.text(1), f.outcome = s.text(2), f.failure = s.text(3), f.cause_status = s.text(4);
  f.lane = s.text(5);
  for (auto& e : nlohmann::json::parse(s.text(6), nullptr, false))
    if (e.is_string()) f.essential.push_back(e.get<std::string>());
  f.case_json = nlohmann::json::parse(s.text(7), nullptr, false);
  f.case_file = s.text(8), f.device = s.text(9), f.torch = s.text(10);
  f.first_night = s.text(11), f.last_night = s.text(12);
  f.state = triage_state_named(s.text(13));
  f.link = s.text(14), f.owner = s.text(15), f.why = s.text(16);
  f.fixed_night = s.text(17), f.fixed_identity = s.text(18), f.note = s.text(19);
  return f;
}

// Two findings one pin explains are one bug by the pin's own claim: the second night's ablation may
// keep another feature set (another key), and must not file the pinned bug twice.
// The pin's claim is a failure class ("out-of-bounds@compiled"), not the output a night's first
// case showed it in: one night's representative is out in the loss, the next night's in grad_input
// (the H100 nights of 2026-12-08 filed liger-compiled-loss-ignored-targets twice that way).
constexpr const char* kPinAlias = "known:";
std::string pin_key(const SeenFinding& s) {
  if (s.known.empty() || !s.store_id.empty()) return "";
  return kPinAlias + (s.failure.empty() ? s.outcome : s.failure) + " | " + s.known;
}
// Stores written before then keyed the pin by the outcome line, output included.
std::string legacy_pin_key(const SeenFinding& s) {
  return s.known.empty() || !s.store_id.empty() ? "" : kPinAlias + s.outcome + " | " + s.known;
}
void add_alias(sqlite3* db, const std::string& key, const std::string& finding, const SeenFinding& s,
               const std::string& why) {
  Stmt a(db, "INSERT OR IGNORE INTO aliases(key, finding, outcome, failure, cause_status, essential, why) "
             "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  a.bind(1, key).bind(2, finding).bind(3, s.outcome).bind(4, s.failure).bind(5, s.cause_status)
      .bind(6, nlohmann::json(s.essential).dump()).bind(7, why).run();
}

void fill_aliases(sqlite3* db, StoredFinding& f) {
  Stmt s(db, "SELECT key, outcome, failure, cause_status, essential, why FROM aliases WHERE finding = ?1 ORDER BY rowid");
  s.bind(1, f.id);
  f.aliases.clear();
  while (s.step()) {
    if (s.text(0).rfind(kPinAlias, 0) == 0) continue;  // a pin's key, not a symptom
    StoredFinding::Alias a{s.text(0), s.text(1), s.text(2), s.text(3), s.text(5), {}};
    for (auto& e : nlohmann::json::parse(s.text(4), nullptr, false))
      if (e.is_string()) a.essential.push_back(e.get<std::string>());
    f.aliases.push_back(std::move(a));
  }
}

void fill_sightings(sqlite3* db, StoredFinding& f) {
  fill_aliases(db, f);
  Stmt s(db, "SELECT identity, SUM(hits) FROM sightings WHERE finding = ?1 GROUP BY identity ORDER BY MIN(rowid)");
  s.bind(1, f.id);
  f.hits = 0;
  f.identities.clear();
  while (s.step()) {
    f.identities.push_back(s.text(0));
    f.hits += s.integer(1);
  }
}

std::optional<StoredFinding> by(sqlite3* db, const char* where, const std::string& v) {
  Stmt s(db, fmt::format("SELECT {} FROM findings WHERE {}", kColumns, where).c_str());
  s.bind(1, v);
  if (!s.step()) return std::nullopt;
  StoredFinding f = row_of(s);
  fill_sightings(db, f);
  return f;
}

void sighting(sqlite3* db, const std::string& id, const NightRecord& n, const std::string& dir, int64_t hits) {
  Stmt s(db, "INSERT INTO sightings(finding, night, identity, dir, hits) VALUES(?1, ?2, ?3, ?4, ?5) "
             "ON CONFLICT(finding, night, identity, dir) DO UPDATE SET hits = excluded.hits");
  s.bind(1, id).bind(2, n.night).bind(3, n.identity_text).bind(4, dir).bind(5, hits).run();
}

}  // namespace

struct Store::Db {
  sqlite3* h = nullptr;
  ~Db() {
    if (h) sqlite3_close(h);
  }
};

std::string name(TriageState s) {
  switch (s) {
    case TriageState::NEW: return "new";
    case TriageState::TRIAGED: return "triaged";
    case TriageState::WONTFIX: return "wontfix";
    case TriageState::FIXED: return "fixed";
  }
  return "?";
}

TriageState triage_state_named(const std::string& s) {
  if (s == "new") return TriageState::NEW;
  if (s == "triaged") return TriageState::TRIAGED;
  if (s == "wontfix") return TriageState::WONTFIX;
  if (s == "fixed") return TriageState::FIXED;
  throw StoreInputError(fmt::format("--state '{}': must be one of new, triaged, wontfix, fixed", s));
}

Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

Store Store::open(const std::string& path, const std::string& subject, bool create) {
  Store st;
  st.path_ = path;
  st.db_ = std::make_unique<Db>();
  std::error_code ec;
  if (!create && !std::filesystem::exists(path, ec))
    throw StoreInputError(fmt::format("store {}: no such file (a campaign with --store creates one)", path));
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &st.db_->h, flags, nullptr) != SQLITE_OK)
    throw StoreInputError(fmt::format("store {}: cannot open it: {}", path,
                                      st.db_->h ? sqlite3_errmsg(st.db_->h) : "out of memory"));
  sqlite3* db = st.db_->h;
  // A second writer (another shard) waits for the lock instead of failing.
  sqlite3_busy_timeout(db, 120000);
  try {
    Transaction t(db);
    Stmt probe(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
    probe.step();
    const bool has_meta = probe.integer(0) > 0;
    Stmt any(db, "SELECT count(*) FROM sqlite_master");
    any.step();
    if (!has_meta && any.integer(0) > 0)
      throw StoreInputError(fmt::format("store {}: an SQLite file but not a flce store (no meta table)", path));
    if (!has_meta) {
      if (subject.empty())
        throw StoreInputError(fmt::format("store {}: empty; a campaign with --store and --subject creates one", path));
      exec(db, kSchema);
      Stmt m(db, "INSERT OR IGNORE INTO meta(key, value) VALUES ('format', ?1), ('subject', ?2), ('created', ?3)");
      m.bind(1, kFormat).bind(2, subject).bind(3, utc_now()).run();
    }
    Stmt f(db, "SELECT value FROM meta WHERE key = 'format'");
    const std::string format = f.step() ? f.text(0) : "";
    if (format != kFormat)
      throw StoreInputError(fmt::format("store {}: format '{}', not {} (another tool's or a newer flce's file)", path,
                                        format, kFormat));
    Stmt s(db, "SELECT value FROM meta WHERE key = 'subject'");
    st.subject_ = s.step() ? s.text(0) : "";
    t.commit();
  } catch (const StoreError& e) {
    // SQLITE_NOTADB and its kin: bad input, not flce's failure.
    throw StoreInputError(fmt::format("store {}: not a flce store ({})", path, e.what()));
  }
  if (!subject.empty() && subject != st.subject_)
    throw StoreInputError(fmt::format("store {}: a store of subject '{}', not of --subject '{}' (one store per subject)",
                                      path, st.subject_, subject));
  return st;
}

std::vector<StoredFinding> Store::findings() const {
  std::vector<StoredFinding> out;
  Stmt s(db_->h, fmt::format("SELECT {} FROM findings ORDER BY first_night, id", kColumns).c_str());
  while (s.step()) out.push_back(row_of(s));
  for (auto& f : out) fill_sightings(db_->h, f);
  return out;
}

StoredFinding Store::get(const std::string& id) const {
  if (auto f = by(db_->h, "id = ?1", id)) return *f;
  std::vector<std::string> hits;
  Stmt s(db_->h, "SELECT id FROM findings WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id");
  s.bind(1, id);
  while (s.step()) hits.push_back(s.text(0));
  if (hits.size() == 1) return *by(db_->h, "id = ?1", hits[0]);
  if (hits.empty())
    throw StoreInputError(fmt::format("FINDING '{}': no finding of store {} has that id or prefix (`flce store list {}`)",
                                      id, path_, path_));
  throw StoreInputError(fmt::format("FINDING '{}': a prefix of {} findings ({}, ...): give more of the id", id, hits.size(),
                                    hits[0]));
}

void Store::triage(const std::string& id, TriageState state, const std::string& link, const std::string& owner,
                   const std::string& why, const std::string& night_in) {
  if (state == TriageState::TRIAGED && (link.empty() || owner.empty()))
    throw StoreInputError(fmt::format("--state triaged needs --link (the upstream issue) and --owner (who has it){}",
                                      link.empty() ? "; --link is missing" : "; --owner is missing"));
  if (state == TriageState::WONTFIX && why.empty()) throw StoreInputError("--state wontfix needs --why (a reason)");
  if (state != TriageState::FIXED && !night_in.empty()) throw StoreInputError("--night: only with --state fixed");
  sqlite3* db = db_->h;
  Transaction t(db);
  const StoredFinding f = get(id);
  std::string night = night_in;
  if (state == TriageState::FIXED && night.empty()) {
    Stmt n(db, "SELECT night FROM nights ORDER BY seq DESC LIMIT 1");
    night = n.step() ? n.text(0) : "";
  }
  Stmt u(db, "UPDATE findings SET state = ?2, link = ?3, owner = ?4, why = ?5, fixed_night = ?6, fixed_identity = ?7, "
             "note = ?8 WHERE id = ?1");
  u.bind(1, f.id).bind(2, name(state));
  u.bind(3, state == TriageState::TRIAGED ? link : f.link).bind(4, state == TriageState::TRIAGED ? owner : f.owner);
  u.bind(5, state == TriageState::WONTFIX ? why : "");
  u.bind(6, state == TriageState::FIXED ? night : "").bind(7, state == TriageState::FIXED ? "set by flce triage" : "");
  u.bind(8, fmt::format("{} by flce triage at {}", name(state), utc_now())).run();
  t.commit();
}

RecordOutcome Store::record(const NightRecord& n) {
  sqlite3* db = db_->h;
  RecordOutcome out;
  Transaction t(db);
  Stmt ni(db, "INSERT INTO nights(night, identity_key, identity, dir, torch, at) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  ni.bind(1, n.night).bind(2, n.identity_key).bind(3, n.identity_text).bind(4, n.dir).bind(5, n.torch).bind(6, utc_now()).run();
  for (auto& p : n.progression) {
    auto f = by(db, "id = ?1", p.id);
    if (!f) continue;  // removed since (never by flce)
    if (p.verdict == "fixed") {
      if (f->state == TriageState::FIXED) continue;
      Stmt u(db, "UPDATE findings SET state = 'fixed', fixed_night = ?2, fixed_identity = ?3, note = ?4 WHERE id = ?1");
      u.bind(1, p.id).bind(2, n.night).bind(3, n.identity_text)
          .bind(4, fmt::format("passed on night {} ({})", n.night, n.identity_text)).run();
    } else if (p.verdict == "passes-alone") {  // order-dependent: open, not seen, not fixed
      Stmt u(db, "UPDATE findings SET note = ?2 WHERE id = ?1");
      u.bind(1, p.id).bind(2, fmt::format("passes alone on night {} (order-dependent: not called fixed)", n.night)).run();
    } else {
      Stmt u(db, "UPDATE findings SET last_night = ?2, torch = ?3, note = ?4 WHERE id = ?1");
      u.bind(1, p.id).bind(2, n.night).bind(3, n.torch)
          .bind(4, p.verdict == "changed" ? "changed: now " + p.outcome : "still fails on night " + n.night).run();
      sighting(db, p.id, n, n.dir + "#progression", 1);
    }
  }
  // Findings that stand for themselves first: a symptom is filed under its root's stored id.
  std::vector<const SeenFinding*> order;
  for (auto& s : n.seen)
    if (s.root.empty()) order.push_back(&s);
  for (auto& s : n.seen)
    if (!s.root.empty()) order.push_back(&s);
  std::map<std::string, std::string> stored_as;  // campaign id -> store id, tonight
  for (const SeenFinding* sp : order) {
    const SeenFinding& s = *sp;
    std::optional<StoredFinding> f;
    if (!s.store_id.empty()) f = by(db, "id = ?1", s.store_id);
    if (!f) f = by(db, "key = ?1", s.key);
    if (!f) {
      Stmt a(db, "SELECT finding FROM aliases WHERE key = ?1");
      a.bind(1, s.key);
      if (a.step()) f = by(db, "id = ?1", a.text(0));
    }
    const std::string pin = pin_key(s);
    if (!f && !pin.empty()) {
      for (const std::string& k : {pin, legacy_pin_key(s)}) {
        Stmt a(db, "SELECT finding FROM aliases WHERE key = ?1");
        a.bind(1, k);
        if (a.step()) f = by(db, "id = ?1", a.text(0));
        if (f) break;
      }
      if (f) add_alias(db, s.key, f->id, s, "explained by the same pin: " + s.known);
    }
    if (f && !pin.empty()) add_alias(db, pin, f->id, s, s.known);
    if (!f && !s.root.empty())
      if (auto r = stored_as.find(s.root); r != stored_as.end()) {
        f = by(db, "id = ?1", r->second);
        if (f) {
          add_alias(db, s.key, f->id, s, s.root_why);
          sighting(db, f->id, n, n.dir + "#" + s.id, s.hits);
          out.findings.emplace_back(f->id, "symptom");
          continue;
        }
      }
    if (f) {
      std::string what = "seen";
      if (f->state == TriageState::FIXED) {
        what = "regressed";
        Stmt u(db, "UPDATE findings SET state = 'new', fixed_night = '', fixed_identity = '', note = ?2 WHERE id = ?1");
        u.bind(1, f->id).bind(2, fmt::format("regressed on night {} ({}); fixed since night {} ({})", n.night,
                                             n.identity_text, f->fixed_night, f->fixed_identity)).run();
      }
      Stmt u(db, "UPDATE findings SET last_night = ?2, torch = ?3, device = ?4 WHERE id = ?1");
      u.bind(1, f->id).bind(2, n.night).bind(3, n.torch).bind(4, s.device).run();
      // A case shrunk tonight replaces a first case kept when the finding was never shrunk.
      if (f->case_file != "minimized.json" && s.case_file == "minimized.json") {
        Stmt c(db, "UPDATE findings SET case_json = ?2, case_file = ?3 WHERE id = ?1");
        c.bind(1, f->id).bind(2, s.case_json.dump()).bind(3, s.case_file).run();
      }
      // A symptom seen again keeps its own sighting row beside its root's.
      sighting(db, f->id, n, s.root.empty() ? n.dir : n.dir + "#" + s.id, s.hits);
      stored_as[s.id] = f->id;
      out.findings.emplace_back(f->id, what);
      continue;
    }
    // A new finding: its campaign id, unless another key holds that id already.
    std::string id = s.id;
    for (int k = 2; by(db, "id = ?1", id); ++k) id = fmt::format("{}-{}", s.id, k);
    Stmt in(db, fmt::format("INSERT INTO findings({}) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, "
                            "'new', '', '', '', '', '', ?13)",
                            "id, key, outcome, failure, cause_status, lane, essential, case_json, case_file, device, "
                            "torch, first_night, last_night, state, link, owner, why, fixed_night, fixed_identity, note")
                    .c_str());
    in.bind(1, id).bind(2, s.key).bind(3, s.outcome).bind(4, s.failure).bind(5, s.cause_status).bind(6, s.lane);
    in.bind(7, nlohmann::json(s.essential).dump()).bind(8, s.case_json.dump()).bind(9, s.case_file).bind(10, s.device);
    in.bind(11, n.torch).bind(12, n.night)
        .bind(13, fmt::format("first seen on night {} ({}){}", n.night, n.identity_text, s.known.empty() ? "" : "; known: " + s.known));
    in.run();
    if (!pin.empty()) add_alias(db, pin, id, s, s.known);
    sighting(db, id, n, n.dir, s.hits);
    stored_as[s.id] = id;
    out.findings.emplace_back(id, s.known.empty() ? "new" : "known");
  }
  t.commit();
  return out;
}

nlohmann::json Store::nights() const {
  nlohmann::json out = nlohmann::json::array();
  Stmt s(db_->h, "SELECT night, identity, dir, torch, at FROM nights ORDER BY seq");
  while (s.step())
    out.push_back({{"night", s.text(0)}, {"identity", s.text(1)}, {"dir", s.text(2)}, {"torch", s.text(3)}, {"at", s.text(4)}});
  return out;
}

}  // namespace flce
