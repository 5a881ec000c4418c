#include "fuzz/findings/finding.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/format.h>

#include "judge/signature.hpp"

namespace flce {

namespace {

template <class E, size_t N>
std::optional<E> named(std::string_view s, const std::string_view (&names)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

constexpr std::string_view kCauseStatus[] = {"none", "pending", "ablated", "not-run"};
constexpr std::string_view kChange[] = {"none", "regressed", "fixed", "changed"};

}  // namespace

std::string_view name(CauseStatus s) { return kCauseStatus[static_cast<size_t>(s)]; }
std::optional<CauseStatus> cause_status_named(std::string_view s) { return named<CauseStatus>(s, kCauseStatus); }
std::string_view name(Change c) { return kChange[static_cast<size_t>(c)]; }

nlohmann::ordered_json Finding::to_json() const {
  nlohmann::ordered_json x{{"id", id}, {"signature", signature}, {"count", count}, {"first_case", first_case},
                           {"first_seen", first_seen}, {"first_seen_s", first_seen_s}, {"last_seen", last_seen},
                           {"detail", detail}, {"cuda_poisoned", cuda_poisoned}, {"shrink", shrink},
                           {"shrink_runs", shrink_runs}, {"elements", elements}, {"min_elements", min_elements}};
  if (!repro_alone.empty()) x["repro_alone"] = repro_alone;
  if (!first_shard.empty()) x["first_shard"] = first_shard;  // a single campaign's state stays as it was
  if (!case_from.empty()) x["case_from"] = case_from;
  if (!lane.empty()) x["lane"] = lane;
  x["cause_status"] = name(cause_status);
  if (!failure.empty()) x["failure"] = failure;
  if (!cause.empty()) x["cause"] = cause;
  if (!tested.empty() || cause_status == CauseStatus::ABLATED) {
    x["essential"] = essential;
    x["tested"] = tested;
  }
  if (!cause_note.empty()) x["cause_note"] = cause_note;
  x["ablation_runs"] = ablation_runs;
  if (!outputs.empty()) x["outputs"] = outputs;
  if (worst_ratio > 0) x["worst_ratio"] = worst_ratio;
  if (confirm.ran())
    x["confirm"] = {{"seeds", confirm.seeds}, {"exceed", confirm.exceed}, {"first_ratio", confirm.first_ratio},
                    {"max_ratio", confirm.max_ratio}};
  if (!known.empty()) x["known"] = known;
  if (!root.empty()) x["root"] = root, x["root_why"] = root_why;
  if (change != Change::NONE) {
    x["change"] = name(change);
    x["baseline_outcome"] = baseline_outcome;
  }
  return x;
}

Finding Finding::from_json(const nlohmann::json& f) {
  auto integer = [&](const char* k, int64_t fallback) -> int64_t {
    if (!f.contains(k)) return fallback;
    const auto& v = f.at(k);
    if (!v.is_number_integer()) throw nlohmann::json::type_error::create(302, std::string(k) + ": must be an integer", &v);
    return v.get<int64_t>();
  };
  Finding x;
  x.id = f.at("id").get<std::string>();
  x.signature = f.at("signature").get<std::string>();
  x.count = integer("count", 0);
  x.first_case = f.at("first_case").get<std::string>();
  x.first_seen = f.at("first_seen").get<std::string>();
  x.first_seen_s = f.at("first_seen_s").get<double>();
  x.last_seen = f.at("last_seen").get<std::string>();
  x.detail = f.value("detail", "");
  x.cuda_poisoned = f.value("cuda_poisoned", false);
  x.shrink = f.value("shrink", "");
  x.shrink_runs = static_cast<int>(std::clamp<int64_t>(integer("shrink_runs", 0), 0, 1 << 30));
  x.elements = integer("elements", 0);
  x.min_elements = integer("min_elements", 0);
  x.repro_alone = f.value("repro_alone", "");
  x.first_shard = f.value("first_shard", "");
  x.case_from = f.value("case_from", "");
  x.lane = f.value("lane", "");
  x.cause_status = cause_status_named(f.value("cause_status", "none")).value_or(CauseStatus::NONE);
  x.failure = f.value("failure", "");
  x.cause = f.value("cause", "");
  if (x.cause_status == CauseStatus::ABLATED && x.cause.empty()) x.cause_status = CauseStatus::NOT_RUN;
  if (f.contains("essential")) x.essential = f.at("essential").get<std::vector<std::string>>();
  if (f.contains("tested")) x.tested = f.at("tested").get<std::vector<std::string>>();
  x.cause_note = f.value("cause_note", "");
  x.ablation_runs = static_cast<int>(std::clamp<int64_t>(integer("ablation_runs", 0), 0, 1 << 30));
  if (f.contains("outputs"))
    for (auto& [k, v] : f.at("outputs").items())
      if (v.is_number_integer()) x.outputs[k] = v.get<int64_t>();
  if (f.contains("worst_ratio") && f.at("worst_ratio").is_number()) x.worst_ratio = f.at("worst_ratio").get<double>();
  if (f.contains("confirm") && f.at("confirm").is_object()) {
    const auto& c = f.at("confirm");
    x.confirm.seeds = static_cast<int>(std::clamp<int64_t>(c.value("seeds", int64_t{0}), 0, 1 << 20));
    x.confirm.exceed = static_cast<int>(std::clamp<int64_t>(c.value("exceed", int64_t{0}), 0, 1 << 20));
    x.confirm.first_ratio = c.value("first_ratio", 0.0);
    x.confirm.max_ratio = c.value("max_ratio", 0.0);
  }
  x.known = f.value("known", "");
  x.root = f.value("root", "");
  x.root_why = f.value("root_why", "");
  for (size_t i = 0; i < std::size(kChange); ++i)
    if (kChange[i] == f.value("change", "none")) x.change = static_cast<Change>(i);
  x.baseline_outcome = f.value("baseline_outcome", "");
  return x;
}

std::string Finding::work_lane() const {
  if (!failure.empty()) {
    const std::string oracle = failure.substr(failure.rfind('@') + 1);
    return oracle == "compiled" ? "compiled" : "eager";
  }
  return lane.empty() ? "compiled" : lane;
}

bool is_finding(const std::string& outcome) {
  // "same:<outcome>": a differential case whose two sides agree (finding_book.hpp) is no news.
  return outcome != "pass" && !is_unsupported_outcome(outcome) && outcome.rfind("same:", 0) != 0;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace flce
