// The nights' pure C++ (no interpreter is started): git's object ids from files, the findings
// store's records, triage and refusals, and progression's verdicts (docs/nights.md).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nights/progression.hpp"
#include "nights/store.hpp"
#include "oracles/git_object.hpp"

namespace flce {
namespace {

namespace fs = std::filesystem;

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "flce-nights-XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
};

TEST(GitObject, IdsAreGits) {
  // `git hash-object` and git's empty tree.
  EXPECT_EQ(git_blob_id("hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(git_blob_id(""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  Scratch s;
  EXPECT_EQ(git_tree_id(s.dir.string()), "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
}

TEST(GitObject, TreeSkipsJunkAndKeepsModes) {
  Scratch a, b;
  for (Scratch* s : {&a, &b}) {
    s->write("pkg/__init__.py", "");
    s->write("pkg/ops.py", "X = 1\n");
    s->write("pkg-x.py", "");  // sorts before "pkg/" in git's order ('-' < '/')
  }
  b.write("pkg/__pycache__/ops.cpython-311.pyc", "junk");
  b.write("pkg.egg-info/PKG-INFO", "junk");
  fs::create_directories(b.dir / "empty");  // git keeps no empty directory
  EXPECT_EQ(git_tree_id(a.dir.string()), git_tree_id(b.dir.string()));
  ::chmod((b.dir / "pkg/ops.py").c_str(), 0755);  // the executable bit is part of the tree
  EXPECT_NE(git_tree_id(a.dir.string()), git_tree_id(b.dir.string()));
  EXPECT_THROW(git_tree_id((a.dir / "nope").string()), GitObjectError);
}

SeenFinding seen(const std::string& id, const std::string& key) {
  SeenFinding s;
  s.id = id, s.key = key, s.outcome = "judge:grad_weight:out-of-bounds@eager", s.failure = "out-of-bounds@eager";
  s.cause_status = "ablated", s.lane = "eager", s.essential = {"softcap"}, s.hits = 2;
  s.case_json = nlohmann::json{{"BT", 4}}, s.case_file = "case.json", s.device = "cpu";
  return s;
}

NightRecord night(const std::string& label, const std::string& identity) {
  NightRecord n;
  n.night = label, n.identity_key = "tree " + identity, n.identity_text = "tree " + identity, n.dir = "/d/" + label;
  n.torch = "2.13.0";
  return n;
}

TEST(Store, RecordsNightsFixesAndRegressions) {
  Scratch s;
  const std::string db = (s.dir / "s.db").string();
  Store st = Store::open(db, "model", true);
  NightRecord n1 = night("n1", "aaa");
  n1.seen.push_back(seen("f-1", "out-of-bounds@eager[softcap]"));
  EXPECT_EQ(st.record(n1).findings.at(0).second, "new");
  NightRecord n2 = night("n2", "bbb");
  n2.progression.push_back({"f-1", "fixed", "pass"});
  st.record(n2);
  StoredFinding f = st.get("f-");  // a unique prefix
  EXPECT_EQ(f.state, TriageState::FIXED);
  EXPECT_EQ(f.fixed_night, "n2");
  EXPECT_EQ(f.fixed_identity, "tree bbb");
  EXPECT_EQ(f.last_night, "n1");
  NightRecord n3 = night("n3", "aaa");
  n3.seen.push_back(seen("f-1", "out-of-bounds@eager[softcap]"));
  EXPECT_EQ(st.record(n3).findings.at(0).second, "regressed");
  f = st.get("f-1");
  EXPECT_EQ(f.state, TriageState::NEW);
  EXPECT_EQ(f.first_night, "n1");
  EXPECT_EQ(f.last_night, "n3");
  EXPECT_EQ(f.hits, 4);
  EXPECT_EQ(f.identities, std::vector<std::string>{"tree aaa"});
  EXPECT_NE(f.note.find("regressed on night n3"), std::string::npos) << f.note;
  EXPECT_EQ(st.nights().size(), 3u);
}

TEST(Store, TriageNeedsWhatEachStateNeeds) {
  Scratch s;
  const std::string db = (s.dir / "s.db").string();
  Store st = Store::open(db, "model", true);
  NightRecord n1 = night("n1", "aaa");
  n1.seen.push_back(seen("f-1", "k1"));
  n1.seen.push_back(seen("f-2", "k2"));
  st.record(n1);
  EXPECT_THROW(st.triage("f-", TriageState::WONTFIX, "", "", "why", ""), StoreInputError);  // two match
  EXPECT_THROW(st.triage("g", TriageState::WONTFIX, "", "", "why", ""), StoreInputError);
  EXPECT_THROW(st.triage("f-1", TriageState::TRIAGED, "https://x", "", "", ""), StoreInputError);
  EXPECT_THROW(st.triage("f-1", TriageState::WONTFIX, "", "", "", ""), StoreInputError);
  EXPECT_THROW(triage_state_named("later"), StoreInputError);
  EXPECT_EQ(st.get("f-1").state, TriageState::NEW);  // nothing refused was written
  st.triage("f-1", TriageState::TRIAGED, "https://x", "ana", "", "");
  st.triage("f-2", TriageState::FIXED, "", "", "", "");
  EXPECT_EQ(st.get("f-1").owner, "ana");
  EXPECT_EQ(st.get("f-2").fixed_night, "n1");  // the last night recorded
}

TEST(Store, OneSubjectPerStore) {
  Scratch s;
  const std::string db = (s.dir / "s.db").string();
  { Store st = Store::open(db, "model", true); }
  try {
    Store::open(db, "liger", true);
    FAIL() << "another subject's store opened";
  } catch (const StoreInputError& e) {
    EXPECT_NE(std::string(e.what()).find("'model', not of --subject 'liger'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Store::open(db, "", false).subject(), "model");
  s.write("text.db", "not sqlite at all, and long enough to be read as a header by SQLite\n");
  EXPECT_THROW(Store::open((s.dir / "text.db").string(), "model", true), StoreInputError);
  EXPECT_THROW(Store::open((s.dir / "none.db").string(), "", false), StoreInputError);
}

TEST(Progression, Verdicts) {
  const std::string oob = "judge:grad_weight:out-of-bounds@eager";
  EXPECT_EQ(progression_verdict(oob, "pass"), "fixed");
  EXPECT_EQ(progression_verdict(oob, "unsupported"), "fixed");
  EXPECT_EQ(progression_verdict(oob, oob), "still-open");
  EXPECT_EQ(progression_verdict(oob, "judge:grad_input:out-of-bounds@eager"), "still-open");  // same class
  EXPECT_EQ(progression_verdict(oob, "crash:SIGSEGV@eager"), "changed");
  EXPECT_EQ(progression_verdict("tier2-lowering@compiled:inductor", "tier2-lowering@compiled:aot_eager"), "still-open");
}

TEST(Progression, AnOrderDependentFindingIsNotFixedByAPassAlone) {
  StoredFinding f;
  f.cause_status = "not-run";  // its analysis: "the case alone in a fresh worker gives pass"
  f.case_json = nlohmann::json{{"BT", 4}};
  EXPECT_EQ(settle_pass("fixed", f), "passes-alone");
  EXPECT_EQ(settle_pass("still-open", f), "still-open");
  f.case_json = nlohmann::json{{"schema", 1}, {"sequence", nlohmann::json::array({{{"BT", 4}}})}};
  EXPECT_EQ(settle_pass("fixed", f), "fixed");  // its sequence re-ran: a pass is a fix
  f.cause_status = "ablated";
  f.case_json = nlohmann::json{{"BT", 4}};
  EXPECT_EQ(settle_pass("fixed", f), "fixed");
}

TEST(Store, APassAloneKeepsAnOrderDependentFindingOpen) {
  Scratch s;
  Store st = Store::open((s.dir / "s.db").string(), "model", true);
  NightRecord n1 = night("n1", "aaa");
  SeenFinding od = seen("f-od", "judge:loss:out-of-bounds@compiled");
  od.cause_status = "not-run";
  n1.seen.push_back(od);
  st.record(n1);
  NightRecord n2 = night("n2", "aaa");
  n2.progression.push_back({"f-od", "passes-alone", "pass"});
  n2.seen.push_back(od);  // seen again while exploring: still the same open finding
  EXPECT_EQ(st.record(n2).findings.at(0).second, "seen");
  const StoredFinding f = st.get("f-od");
  EXPECT_EQ(f.state, TriageState::NEW);
  EXPECT_TRUE(f.fixed_night.empty());
  EXPECT_EQ(f.last_night, "n2");
}

TEST(Store, ASymptomIsASightingOfItsRootAndKnownUnderItLater) {
  Scratch s;
  Store st = Store::open((s.dir / "s.db").string(), "model", true);
  NightRecord n1 = night("n1", "aaa");
  SeenFinding sym = seen("c-2", "out-of-bounds@compiled[ce_weight,ignore_fraction=all,reduction=none]");
  sym.root = "c-1", sym.root_why = "a symptom of nonfinite@compiled[ce_weight,ignore_fraction=all]";
  sym.hits = 12;
  n1.seen.push_back(sym);  // listed before its root: the store files roots first all the same
  SeenFinding root = seen("c-1", "nonfinite@compiled[ce_weight,ignore_fraction=all]");
  root.hits = 8;
  n1.seen.push_back(root);
  const RecordOutcome r1 = st.record(n1);
  ASSERT_EQ(r1.findings.size(), 2u);
  EXPECT_EQ(r1.findings[0], std::make_pair(std::string("c-1"), std::string("new")));
  EXPECT_EQ(r1.findings[1], std::make_pair(std::string("c-1"), std::string("symptom")));
  ASSERT_EQ(st.findings().size(), 1u) << "one root cause, one stored finding";
  StoredFinding f = st.get("c-1");
  EXPECT_EQ(f.hits, 20);
  ASSERT_EQ(f.aliases.size(), 1u);
  EXPECT_EQ(f.aliases[0].key, sym.key);
  EXPECT_EQ(f.aliases[0].why, sym.root_why);
  // Night 2: only the symptom shows, and tonight's campaign did not group it (its root did not
  // show): the store still files it under the root, not as new.
  NightRecord n2 = night("n2", "aaa");
  SeenFinding again = sym;
  again.id = "d-7", again.root.clear(), again.root_why.clear();
  n2.seen.push_back(again);
  const RecordOutcome r2 = st.record(n2);
  ASSERT_EQ(r2.findings.size(), 1u);
  EXPECT_EQ(r2.findings[0], std::make_pair(std::string("c-1"), std::string("seen")));
  EXPECT_EQ(st.findings().size(), 1u);
  EXPECT_EQ(st.get("c-1").last_night, "n2");
}

TEST(Store, FindingsOnePinExplainsAreOneStoredFinding) {
  Scratch s;
  Store st = Store::open((s.dir / "s.db").string(), "model", true);
  const std::string pin = "expectations.json: cases/a.json (torch >=2.13,<2.14)";
  NightRecord n1 = night("n1", "aaa");
  SeenFinding a = seen("c-1", "out-of-bounds@compiled[ignore_fraction=some]");
  a.outcome = "judge:loss:out-of-bounds@compiled", a.failure = "out-of-bounds@compiled", a.known = pin;
  n1.seen.push_back(a);
  st.record(n1);
  // Night 2's ablation keeps one more feature: another key, the same pin.
  NightRecord n2 = night("n2", "aaa");
  SeenFinding b = seen("d-1", "out-of-bounds@compiled[dtype=fp32,ignore_fraction=some]");
  b.outcome = a.outcome, b.failure = a.failure, b.known = pin;
  n2.seen.push_back(b);
  // Another output out of bounds under the same pin: the same class, the same finding (on the GPU
  // one night's representative was out in the loss, the next night's in grad_input).
  SeenFinding c2 = seen("d-3", "out-of-bounds@compiled[ce_weight,ignore_fraction=some]");
  c2.outcome = "judge:grad_input:out-of-bounds@compiled", c2.failure = a.failure, c2.known = pin;
  n2.seen.push_back(c2);
  // Another outcome under the same pin is not merged: a pin explains one class.
  SeenFinding other = seen("d-2", "nonfinite@compiled[ignore_fraction=some]");
  other.outcome = "judge:loss:nonfinite@compiled", other.failure = "nonfinite@compiled", other.known = pin;
  n2.seen.push_back(other);
  const RecordOutcome r2 = st.record(n2);
  ASSERT_EQ(r2.findings.size(), 3u);
  EXPECT_EQ(r2.findings[0], std::make_pair(std::string("c-1"), std::string("seen")));
  EXPECT_EQ(r2.findings[1], std::make_pair(std::string("c-1"), std::string("seen")));
  EXPECT_EQ(r2.findings[2], std::make_pair(std::string("d-2"), std::string("known")));
  EXPECT_EQ(st.findings().size(), 2u);
  const StoredFinding f = st.get("c-1");
  EXPECT_EQ(f.last_night, "n2");
  ASSERT_EQ(f.aliases.size(), 2u) << "the pin's own keys are not listed as symptoms";
  EXPECT_EQ(f.aliases[0].key, b.key);
  EXPECT_EQ(f.aliases[1].key, c2.key);
  // A finding the store's known list matched (store_id) takes no pin key.
  NightRecord n3 = night("n3", "aaa");
  SeenFinding c = seen("e-1", "out-of-bounds@compiled[ignore_fraction=some,softcap]");
  c.known = pin, c.store_id = "d-2";
  n3.seen.push_back(c);
  EXPECT_EQ(st.record(n3).findings[0], std::make_pair(std::string("d-2"), std::string("seen")));
}

}  // namespace
}  // namespace flce
