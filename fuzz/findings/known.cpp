#include "fuzz/findings/known.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "judge/expectations.hpp"
#include "judge/signature.hpp"
#include "report/write.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

// " | "-joined alternatives of an expectation's outcome (judge/expectations.hpp).
std::vector<std::string> alternatives(const std::string& outcome) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t bar = outcome.find(" | ", at);
    out.push_back(outcome.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
    if (bar == std::string::npos) return out;
    at = bar + 3;
  }
}

// A typed signature names one bug wherever it shows; a bucket or a catch-all does not.
bool is_typed_signature(const std::optional<FailureClass>& f) {
  if (!f || f->numeric) return false;
  static const SignatureTable table = SignatureTable::load_default();
  for (auto& e : table.entries())
    if (e.id == f->kind) return !e.generic;
  return false;
}

void load_expectations_file(const fs::path& p, const std::string& subject, KnownList& k) {
  std::vector<LoadedPin> pins;
  try {
    pins = load_expectations(p.string(), false);
  } catch (const std::exception& e) {
    throw KnownInputError(fmt::format("--known {}: {}", p.string(), e.what()));
  }
  for (auto& lp : pins) {
    if (lp.pin.subject != subject) continue;
    const std::vector<std::string> feats = features(lp.calls.last());
    for (auto& e : lp.pin.expect)
      for (auto& alt : alternatives(e.outcome)) {
        if (alt == "pass" || alt.rfind("unsupported", 0) == 0) continue;  // nothing to know
        KnownEntry ke;
        ke.source = fmt::format("{}: {} ({}{}{})", p.filename().string(), lp.pin.case_file,
                                e.torch.empty() ? "any torch" : "torch " + e.torch,
                                e.device == "any" ? "" : ", " + e.device,
                                e.subject_version.empty() ? "" : ", " + e.subject_version);
        ke.outcome = alt;
        ke.failure = failure_class(alt);
        ke.typed_signature = is_typed_signature(ke.failure);
        ke.features = feats;
        ke.pin_cause = e.cause;
        for (auto& c : e.cause)  // a cause the pinned case cannot show is a typo, not a pin
          if (std::find(feats.begin(), feats.end(), c) == feats.end())
            throw KnownInputError(fmt::format("--known {}: {}: cause feature '{}' is not a feature of the pinned case "
                                              "(its features: {})",
                                              p.string(), lp.pin.case_file, c, fmt::join(feats, ", ")));
        ke.from_expectation = true;
        ke.torch = e.torch;
        ke.device = e.device;
        ke.subject_version = e.subject_version;
        k.entries.push_back(ke);
      }
  }
  k.sources.push_back(p.string());
}

void load_report(const fs::path& p, const nlohmann::json& j, KnownList& k) {
  for (auto& f : j.value("findings", nlohmann::json::array())) {
    if (!f.is_object() || !f.contains("signature")) continue;
    KnownEntry ke;
    // A findings store's open findings (nights/night.cpp writes them in a report's shape) are
    // filed "store DB: <id>", so tonight's sighting is recorded under that stored finding.
    ke.source = j.contains("store") && j["store"].is_string()
                    ? fmt::format("store {}: {}", j["store"].get<std::string>(), f.value("id", "?"))
                    : fmt::format("campaign {}: {}", p.parent_path().string(), f.value("id", "?"));
    ke.outcome = f.value("signature", "");
    if (f.value("cause_status", "") == "ablated") {
      ke.cause = f.value("cause", "");
      ke.cause_failure = f.value("failure", "");
      for (auto& x : f.value("essential", nlohmann::json::array()))
        if (x.is_string()) ke.cause_essential.push_back(x.get<std::string>());
    }
    k.entries.push_back(ke);
  }
  k.sources.push_back(p.string());
}

void load_one(const fs::path& path, const std::string& subject, KnownList& k) {
  std::error_code ec;
  fs::path p = path;
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "report.json")) p = p / "report.json";
    else if (fs::exists(p / "expectations.json")) p = p / "expectations.json";
    else
      throw KnownInputError(fmt::format("--known {}: a directory holding neither report.json (a campaign) nor "
                                        "expectations.json (a corpus)", path.string()));
  }
  const std::string text = read_text(p);
  if (text.empty() && !fs::exists(p, ec)) throw KnownInputError(fmt::format("--known {}: cannot read it", path.string()));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_array()) return load_expectations_file(p, subject, k);
  if (j.is_object() && j.contains("findings") && j["findings"].is_array()) return load_report(p, j, k);
  throw KnownInputError(fmt::format("--known {}: not an expectations file (a JSON array) nor a campaign report.json "
                                    "(an object with \"findings\")", path.string()));
}

}  // namespace

KnownList load_known(const std::vector<std::string>& paths, const std::string& subject) {
  KnownList k;
  for (auto& p : paths) load_one(p, subject, k);
  return k;
}

namespace {
// Every feature of `needed` is among `features`.
bool carries_all(const std::vector<std::string>& features, const std::vector<std::string>& needed) {
  return std::all_of(needed.begin(), needed.end(),
                     [&](const std::string& x) { return std::find(features.begin(), features.end(), x) != features.end(); });
}
}  // namespace

const KnownEntry* match_known(const KnownList& known, const Finding& f, const std::string& torch, bool cuda,
                              const std::string& subject_version) {
  const bool ablated = f.cause_status == CauseStatus::ABLATED;
  for (auto& e : known.entries) {
    if (e.from_expectation) {
      Expectation here{e.torch, e.device, e.subject_version, e.outcome, {}};
      if (!expectation_here({here}, torch, cuda, subject_version)) continue;
      bool match = false;
      if (!ablated) {
        match = e.outcome == f.signature;
      } else if (!e.failure || e.failure->key != f.failure) {
        match = false;
      } else if (!e.pin_cause.empty()) {
        // The pin names its bug's cause: the finding is that bug, or a narrower view of it
        // ([dtype=fp16,softcap] under [softcap]), when its cause carries every feature of the
        // pin's. A broader one ([reduction=none] under a softcap pin whose case has
        // reduction=none) is another bug: on Liger main it was filed Known before pins had causes.
        match = carries_all(f.essential, e.pin_cause);
      } else if (e.typed_signature) {
        // pytorch#181735's assertion from a second shape, from label smoothing, from no feature at
        // all: one torch bug, whatever the cause.
        match = true;
      } else {
        // A cause with no essential feature (it fails at every default) is one instance of a pin
        // only when the pin has no feature either: else every bug of the class would be "known".
        match = (!f.essential.empty() || e.features.empty()) && carries_all(e.features, f.essential);
      }
      if (match) return &e;
    } else if (ablated && !e.cause.empty()) {
      // The earlier finding's cause, or a narrower view of it ([dtype=fp16,softcap] where the
      // earlier campaign ablated [softcap]), as a pin with a cause takes it; a cause with no
      // feature stands only for itself.
      const bool narrower =
          !e.cause_essential.empty() && e.cause_failure == f.failure && carries_all(f.essential, e.cause_essential);
      if (e.cause == f.cause || narrower) return &e;
    } else if (e.outcome == f.signature) {
      return &e;
    }
  }
  return nullptr;
}

std::optional<std::pair<std::string, std::string>> known_stage(const KnownList& known, const std::string& signature,
                                                               const std::string& torch, bool cuda,
                                                               const std::string& subject_version) {
  const std::string head = signature + "@compiled:";
  for (auto& e : known.entries) {
    if (e.outcome.rfind(head, 0) != 0 || e.outcome.size() == head.size()) continue;
    if (e.from_expectation) {
      Expectation here{e.torch, e.device, e.subject_version, e.outcome, {}};
      if (!expectation_here({here}, torch, cuda, subject_version)) continue;
    }
    return std::make_pair(e.outcome.substr(head.size()), e.source);
  }
  return std::nullopt;
}

}  // namespace flce
