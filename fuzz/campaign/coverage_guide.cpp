#include "fuzz/campaign/coverage_guide.hpp"

#include <algorithm>

namespace flce {

uint64_t candidate_seed(uint64_t seed, uint32_t j) {
  if (j == 0) return seed;
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * j;  // splitmix64 of (seed, j)
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {
int64_t uncovered(const Case& c, const CoverageTable& cov) {
  int64_t n = 0;
  for (auto& cell : coverage_cells(c)) n += cov.cases(cell) == 0;
  return n;
}
// A candidate's score: the cells it covers first; one carrying an explained cell ranks below every
// candidate that carries none.
int64_t score(const Case& c, const CoverageTable& cov, const std::set<std::string>& explained) {
  int64_t hits = 0;
  if (!explained.empty())
    for (auto& cell : coverage_cells(c)) hits += explained.count(cell);
  return hits ? -hits : uncovered(c, cov);
}
}  // namespace

GuidedPick guided_sample(uint64_t seed, uint64_t index, const SampleSpace& sp, const CoverageTable& cov,
                         int candidates, std::map<uint64_t, uint32_t>& family_picks,
                         const std::set<std::string>& explained_cells) {
  const bool families = sp.family_size > 1;
  const uint64_t family = families ? index / sp.family_size : index;
  if (families) {
    if (auto it = family_picks.find(family); it != family_picks.end())
      return {sample_case(candidate_seed(seed, it->second), index, sp), it->second};
    if (family < 6 && !sp.dtype) candidates = 1;  // the plain configurations speak for most users
  }
  static const std::set<std::string> none;
  const std::set<std::string>& explained = family % kExplainedShare == 0 ? none : explained_cells;
  GuidedPick best{sample_case(seed, index, sp), 0};
  int64_t best_n = score(best.c, cov, explained);
  for (uint32_t j = 1; j < static_cast<uint32_t>(std::max(candidates, 1)) && best_n < 1000; ++j) {
    Case c = sample_case(candidate_seed(seed, j), index, sp);
    const int64_t n = score(c, cov, explained);
    if (n > best_n) best = {std::move(c), j}, best_n = n;
  }
  if (families) family_picks[family] = best.candidate;
  return best;
}

std::vector<Case> neighbours(const Case& c, const std::set<std::string>& without) {
  std::vector<Case> out;
  auto keep = [&](Case n) {
    drop_parameters(n, without);
    n = within_fp16_range(std::move(n));  // as sampled cases: no spreads on fp16
    if (n == c || !validation_errors(n).empty()) return;
    if (std::find(out.begin(), out.end(), n) != out.end()) return;
    out.push_back(std::move(n));
  };
  auto with = [&](auto&& change) {
    Case n = c;
    change(n);
    keep(std::move(n));
  };
  for (DType d : {DType::BF16, DType::F16, DType::F32})
    with([&](Case& n) {
      n.input_dtype = n.weight_dtype = d;
      if (d != DType::F32) n.autocast = Autocast::NONE;  // autocast runs on fp32 parameters
    });
  with([](Case& n) { n.accum_dtype = n.accum_dtype ? std::nullopt : std::optional<DType>(DType::F32); });
  if (c.is_op()) {
    with([](Case& n) { n.out_variant = !n.out_variant; });
    return out;
  }
  for (Reduction r : {Reduction::MEAN, Reduction::SUM, Reduction::NONE}) with([&](Case& n) { n.reduction = r; });
  with([](Case& n) { n.requires_grad.bias = n.bias = !n.bias; });
  with([](Case& n) { n.ce_weight = !n.ce_weight; });
  with([](Case& n) { n.return_z_loss = !n.return_z_loss; });
  with([](Case& n) { n.return_token_accuracy = !n.return_token_accuracy; });
  with([](Case& n) { n.return_predicted_tokens = !n.return_predicted_tokens; });
  with([](Case& n) { n.use_token_scaling = !n.use_token_scaling; });
  for (std::optional<double> s : {std::optional<double>(), std::optional<double>(30.0), std::optional<double>(3.0)})
    with([&](Case& n) { n.softcap = s; });
  with([](Case& n) { n.label_smoothing = n.label_smoothing != 0 ? 0.0 : 0.1; });
  with([](Case& n) { n.lse_square_scale = n.lse_square_scale != 0 ? 0.0 : 1e-4; });
  for (double f : {0.0, 0.5, 1.0}) with([&](Case& n) { n.ignore_fraction = f; });
  with([](Case& n) { n.requires_grad.input = !n.requires_grad.input; });
  with([](Case& n) { n.requires_grad.weight = !n.requires_grad.weight; });
  if (c.bias) with([](Case& n) { n.requires_grad.bias = !n.requires_grad.bias; });
  if (c.input_dtype == DType::F32 && c.weight_dtype == DType::F32)
    for (Autocast a : {Autocast::NONE, Autocast::F16, Autocast::BF16}) with([&](Case& n) { n.autocast = a; });
  for (Regime r : {Regime::NORMAL, Regime::LARGE_LOGITS, Regime::CONFIDENT, Regime::SPECIAL_VALUES, Regime::ONE_CLASS,
                   Regime::WEIGHT_SPREAD})
    with([&](Case& n) { n.regime = r; });
  if (c.reduction == Reduction::NONE)
    for (TokenGrad g : {TokenGrad::ONES, TokenGrad::RANDOM, TokenGrad::LOG_SPREAD}) with([&](Case& n) { n.token_grad = g; });
  for (std::optional<bool> d : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)})
    with([&](Case& n) { n.compile.dynamic = d; });
  with([](Case& n) { n.compile.fullgraph = !n.compile.fullgraph; });
  return out;
}

}  // namespace flce
