// The nights' verbs: `flce triage` (a stored finding's state), `flce store list|export|record`
// (the findings store, nights/store.hpp) and `flce identity` (a subject tree's content identity,
// and the index of a repository's trees that names its commit; oracles/subject_identity.hpp).
// `flce campaign --store` is in cmd_campaign.cpp.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "nights/night.hpp"
#include "nights/store_export.hpp"
#include "oracles/git_object.hpp"
#include "oracles/subject_tree.hpp"
#include "report/write.hpp"

namespace flce::cli {

namespace fs = std::filesystem;

std::string builtin_identity(const std::string& subject) {
  return fmt::format("builtin {} (flce {})", subject, FLCE_VERSION);
}

namespace {

// Runs `body`, mapping the store's and the identity's bad input to exit 2 with "flce VERB: ...".
template <typename F>
void guarded(const char* verb, F body) {
  try {
    body();
  } catch (const StoreInputError& e) {
    std::fprintf(stderr, "flce %s: %s\n", verb, e.what());
    exit_code() = kBadInput;
  } catch (const SubjectTreeError& e) {
    std::fprintf(stderr, "flce %s: %s\n", verb, e.what());
    exit_code() = kBadInput;
  } catch (const GitObjectError& e) {
    std::fprintf(stderr, "flce %s: %s\n", verb, e.what());
    exit_code() = kBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flce %s: internal error: %s\n", verb, e.what());
    exit_code() = kInternal;
  }
}

// The identity a finished campaign directory ran on: its subject path (report.json) and the
// commit of its --subject-git (state.json), as `flce campaign --store` computes it.
SubjectIdentity identity_of_dir(const fs::path& dir) {
  const nlohmann::json rep = nlohmann::json::parse(read_text(dir / "report.json"), nullptr, false);
  const nlohmann::json st = nlohmann::json::parse(read_text(dir / "state.json"), nullptr, false);
  if (!rep.is_object()) throw StoreInputError(fmt::format("{}: no campaign report.json (run the campaign first)", dir.string()));
  std::string path = rep.value("subject_path", "");
  std::string commit;
  if (st.is_object() && st.contains("subject_git") && st["subject_git"].is_object())
    commit = st["subject_git"].value("commit", "");
  std::error_code ec;
  if (!path.empty() && !fs::is_directory(path, ec))
    throw StoreInputError(fmt::format("{}: its subject path {} is gone; its identity cannot be computed", dir.string(), path));
  return identify_subject(path, commit, builtin_identity(rep.value("subject", "")));
}

}  // namespace

void add_nights_commands(CLI::App& app) {
  {
    auto* t = app.add_subcommand("triage", "Set a stored finding's triage state (new, triaged, wontfix, fixed)");
    static std::string db, finding, state, link, owner, why, night;
    t->add_option("store", db, "The findings store (flce campaign --store DB)")->required();
    t->add_option("finding", finding, "A finding's id in the store, or a unique prefix of one (flce store list)")->required();
    t->add_option("--state", state, "new | triaged (needs --link, --owner) | wontfix (needs --why) | fixed")->required();
    t->add_option("--link", link, "triaged: the upstream issue or pull request");
    t->add_option("--owner", owner, "triaged: who has it");
    t->add_option("--why", why, "wontfix: why not");
    t->add_option("--night", night, "fixed: the night it was fixed on (default: the last night recorded)");
    t->callback([] {
      guarded("triage", [] {
        const TriageState s = triage_state_named(state);  // names --state before the file is opened
        Store store = Store::open(db, "", false);
        store.triage(finding, s, link, owner, why, night);
        const StoredFinding f = store.get(finding);
        std::printf("%s: %s\n", f.id.c_str(), name(f.state).c_str());
      });
    });
  }
  {
    auto* s = app.add_subcommand("store", "The findings store across nights: list, export its pins, record a campaign");
    s->require_subcommand(1);
    static std::string db, out, dir, night;
    static bool as_json = false;
    auto* l = s->add_subcommand("list", "Every stored finding: its state, cause, outcome and history");
    l->add_option("store", db, "The findings store")->required();
    l->add_flag("--json", as_json, "JSON: nights and findings");
    l->callback([] {
      guarded("store list", [] {
        Store store = Store::open(db, "", false);
        if (as_json) std::printf("%s\n", store_list_json(store).dump(2).c_str());
        else std::printf("%s", store_list_text(store).c_str());
      });
    });
    auto* e = s->add_subcommand("export", "Write the pins the store implies, as an expectations file (corpus/expectations.json's format)");
    e->add_option("store", db, "The findings store")->required();
    e->add_option("-o,--out", out, "The expectations file to write; its cases go to cases/ beside it")->required();
    e->callback([] {
      guarded("store export", [] {
        Store store = Store::open(db, "", false);
        const int n = export_pins(store, out);
        std::printf("%d pins written to %s\n", n, out.c_str());
      });
    });
    auto* r = s->add_subcommand("record", "Record a finished campaign directory (a merge's too) as a night of the store");
    r->add_option("store", db, "The findings store (created when missing)")->required();
    r->add_option("dir", dir, "The campaign directory (its report.json)")->required();
    r->add_option("--night", night, "The night's label (default: today's UTC date)");
    r->callback([] {
      guarded("store record", [] {
        const nlohmann::json rep = nlohmann::json::parse(read_text(fs::path(dir) / "report.json"), nullptr, false);
        if (!rep.is_object()) throw StoreInputError(fmt::format("{}: no campaign report.json (run the campaign first)", dir));
        Store store = Store::open(db, rep.value("subject", ""), true);
        const SubjectIdentity id = identity_of_dir(dir);
        const std::string label = night.empty() ? default_night_label() : night;
        const RecordOutcome rec = record_campaign_dir(store, dir, label, id);
        int n_new = 0;
        for (auto& [fid, what] : rec.findings) n_new += what != "seen";
        std::printf("night %s (%s): %zu findings recorded, %d new or regressed, in %s\n", label.c_str(), id.text().c_str(),
                    rec.findings.size(), n_new, db.c_str());
      });
    });
  }
  {
    auto* i = app.add_subcommand("identity", "A subject tree's content identity (git tree id of its files), and the "
                                             "commits an identity index names for it; --index REPO writes that index");
    static std::string dir, repo, refs = "HEAD", path = "src", out;
    i->add_option("dir", dir, "A subject tree's import root (what --subject-path names: Liger's src/)");
    i->add_option("--index", repo, "Build an identity index from this git repository (a clone or mirror)");
    i->add_option("--refs", refs, "--index: the refs whose history is walked, comma-separated (HEAD; --all for every ref)")
        ->capture_default_str();
    i->add_option("--path", path, "--index: the directory of each commit that a tree is taken of")->capture_default_str();
    i->add_option("-o,--out", out, "--index: the index file (default: <FLCE_IDENTITY_INDEX or ~/.cache/flce/identity>/<repo>.json)");
    i->callback([] {
      guarded("identity", [] {
        if (!repo.empty()) {
          std::vector<std::string> rs;
          for (size_t at = 0; at <= refs.size();) {
            size_t c = refs.find(',', at);
            if (c == std::string::npos) c = refs.size();
            if (c > at) rs.push_back(refs.substr(at, c - at));
            at = c + 1;
          }
          if (rs.empty()) throw SubjectTreeError("--refs: must name at least one ref");
          IdentityIndex ix = build_identity_index(repo, rs, path);
          std::string file = out;
          if (file.empty()) {
            const std::string loc = identity_index_location();
            if (loc.empty()) throw SubjectTreeError("-o: no default index location (set HOME or FLCE_IDENTITY_INDEX)");
            const std::string base = fs::path(ix.repo).filename().string();
            file = (fs::path(loc) / fmt::format("{}-{}.json", base.empty() ? "repo" : base, sha1_hex(ix.repo + ":" + path).substr(0, 8))).string();
          }
          write_identity_index(ix, file);
          size_t commits = 0;
          for (auto& [t, cs] : ix.trees) commits += cs.size();
          std::printf("identity index %s: %zu commits, %zu distinct trees of %s\n", file.c_str(), commits, ix.trees.size(),
                      path.c_str());
          if (dir.empty()) return;
        }
        if (dir.empty()) throw SubjectTreeError("DIR or --index: give a tree to identify or a repository to index");
        const SubjectIdentity id = identify_subject(dir, "", "");
        std::printf("%s: %s\n", id.path.c_str(), id.text().c_str());
        std::printf("tree %s\n", id.tree.c_str());
        if (!id.commit.empty()) std::printf("git %s\n", id.commit.c_str());
      });
    });
  }
}

}  // namespace flce::cli
