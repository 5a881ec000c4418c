#include "nights/store_export.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "case/sequence.hpp"
#include "fuzz/findings/cause.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

// ">=2.13,<2.14" for "2.13.0+cpu": the release series the finding was last seen on.
std::string torch_series(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return "";
  return fmt::format(">={}.{},<{}.{}", major, minor, major, minor + 1);
}

std::string history(const StoredFinding& f) {
  std::string s = fmt::format("first night {}, last night {}, {} cases", f.first_night, f.last_night, f.hits);
  if (!f.identities.empty()) s += ", seen on " + f.identities.front();
  if (f.identities.size() > 1) s += fmt::format(" .. {} ({} identities)", f.identities.back(), f.identities.size());
  return s;
}

std::string triage(const StoredFinding& f) {
  switch (f.state) {
    case TriageState::TRIAGED: return fmt::format("triaged: {} ({})", f.link, f.owner);
    case TriageState::WONTFIX: return fmt::format("wontfix: {}", f.why);
    case TriageState::FIXED: return fmt::format("fixed since night {} ({})", f.fixed_night, f.fixed_identity);
    case TriageState::NEW: return "new";
  }
  return "";
}

}  // namespace

std::string store_list_text(const Store& store) {
  const auto all = store.findings();
  std::string s = fmt::format("store {} · subject {} · {} findings · {} nights\n", store.path(), store.subject(), all.size(),
                              store.nights().size());
  for (auto& f : all)
    s += fmt::format("{}  {}\n    {} | {} | {}\n", f.id, triage(f), f.key, f.outcome, history(f));
  return s;
}

nlohmann::ordered_json store_list_json(const Store& store) {
  nlohmann::ordered_json out{{"store", store.path()}, {"subject", store.subject()}, {"nights", store.nights()}};
  auto fj = nlohmann::ordered_json::array();
  for (auto& f : store.findings()) {
    nlohmann::ordered_json x{{"id", f.id}, {"key", f.key}, {"outcome", f.outcome}, {"state", name(f.state)},
                             {"first_night", f.first_night}, {"last_night", f.last_night}, {"identities", f.identities},
                             {"hits", f.hits}, {"link", f.link}, {"owner", f.owner}, {"why", f.why},
                             {"fixed_night", f.fixed_night}, {"fixed_identity", f.fixed_identity}, {"note", f.note},
                             {"case_file", f.case_file}};
    fj.push_back(x);
  }
  out["findings"] = fj;
  return out;
}

int export_pins(const Store& store, const std::string& file) {
  const fs::path out = fs::absolute(file), cases = out.parent_path() / "cases";
  std::error_code ec;
  fs::create_directories(cases, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create it: {}", cases.string(), ec.message()));
  std::string text = "[\n";
  int n = 0;
  for (auto& f : store.findings()) {
    if (f.case_json.is_null() || f.case_json.is_discarded()) continue;
    // Canonical case JSON: the pin is read back through the one case parser.
    const Sequence seq = any_case_from_json(f.case_json.dump());
    const std::string name_ = fmt::format("store-{}.json", f.id);
    write_atomic(cases / name_, to_json(seq) + "\n");
    nlohmann::ordered_json e;
    if (const std::string t = torch_series(f.torch); !t.empty()) e["torch"] = t;
    e["device"] = f.device.empty() ? "any" : f.device;
    if (f.open()) {
      e["outcome"] = f.outcome;
      // The cause, where the pinned case carries every feature of it (known.cpp refuses any other).
      const std::vector<std::string> feats = features(seq.last());
      if (!f.essential.empty() && std::all_of(f.essential.begin(), f.essential.end(), [&](const std::string& x) {
            return std::find(feats.begin(), feats.end(), x) != feats.end();
          }))
        e["cause"] = f.essential;
    } else {
      e["outcome"] = "pass";
    }
    nlohmann::ordered_json pin{{"case", "cases/" + name_}, {"subject", store.subject()},
                               {"note", fmt::format("flce store {}: {}; {}", f.id, triage(f), history(f))},
                               {"expect", nlohmann::ordered_json::array({e})}};
    text += (n++ ? ",\n  " : "  ") + pin.dump();
  }
  text += "\n]\n";
  write_atomic(out, text);
  return n;
}

}  // namespace flce
