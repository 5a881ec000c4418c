// flce minimize's search, against a fake subject whose outcome is a known function of the
// case (the real subjects are exercised by tests/repro.cmake's minimize_seed).
#include <gtest/gtest.h>

#include <vector>

#include "fuzz/findings/minimize.hpp"

namespace flce {
namespace {

Case noisy() {
  Case c;
  c.BT = 64, c.H = 48, c.V = 96;
  c.accum_dtype = DType::F32;
  c.bias = c.requires_grad.bias = true;
  c.ce_weight = true;
  c.label_smoothing = 0.1;
  c.softcap = 30.0;
  c.reduction = Reduction::NONE;
  c.extra_BT = {8, 16};
  return c;
}

// Fails like the seed while accum is fp32 and H >= 21; fails *differently* without the
// ce_weight (so that simplification must be refused); passes otherwise.
std::string fake_outcome(const Case& c) {
  if (!c.accum_dtype || c.H < 21) return "pass";
  return c.ce_weight ? "tier2-lowering@compiled:inductor" : "bucket-000000000001@compiled:inductor";
}

TEST(Minimize, KeepsTheExactOutcomeAndShrinksToTheBoundary) {
  int runs = 0;
  MinimizeOptions opt;
  opt.outcome = [&](const Case& c) {
    ++runs;
    return fake_outcome(c);
  };
  std::vector<std::string> log;
  opt.log = [&](const std::string& l) { log.push_back(l); };
  MinimizeResult r = minimize(noisy(), opt);
  EXPECT_EQ(r.outcome, "tier2-lowering@compiled:inductor");
  EXPECT_EQ(fake_outcome(r.minimized), r.outcome);
  EXPECT_TRUE(r.fixed_point);
  EXPECT_EQ(r.minimized.H, 21);  // halving 48 -> 24, then bisecting (12, 24]
  EXPECT_EQ(r.minimized.BT, 1);
  EXPECT_EQ(r.minimized.V, 1);
  EXPECT_TRUE(r.minimized.ce_weight);  // dropping it changes the failure: refused
  EXPECT_FALSE(r.minimized.bias);
  EXPECT_EQ(r.minimized.reduction, Reduction::MEAN);
  EXPECT_FALSE(r.minimized.softcap);
  EXPECT_TRUE(r.minimized.extra_BT.empty());
  EXPECT_EQ(r.minimized.accum_dtype, DType::F32);
  EXPECT_EQ(r.runs, runs);
  EXPECT_EQ(static_cast<int>(log.size()), r.accepted);
  EXPECT_LT(r.runs, 40);
  EXPECT_LT(case_size(r.minimized).elements, case_size(r.original).elements);
  EXPECT_LT(case_size(r.minimized).non_default, case_size(r.original).non_default);
}

// The subject's contract travels with the case: judged under another promise, the minimized
// case would be another finding (a torch-semantics case shrunk to Liger's, e.g.).
TEST(Minimize, NeverChangesTheContractsFields) {
  Case c = noisy();
  c.semantics = Semantics::TORCH;
  c.grad_weight_split = true;
  c.softmax_dtype = "logits";
  c.grad_filter_eps = 0.25;
  MinimizeOptions opt;
  opt.outcome = fake_outcome;
  MinimizeResult r = minimize(c, opt);
  EXPECT_EQ(r.outcome, "tier2-lowering@compiled:inductor");
  EXPECT_EQ(r.minimized.BT, 1);  // it did shrink
  EXPECT_EQ(r.minimized.semantics, Semantics::TORCH);
  EXPECT_TRUE(r.minimized.grad_weight_split);
  EXPECT_EQ(r.minimized.softmax_dtype, "logits");
  EXPECT_EQ(r.minimized.grad_filter_eps, 0.25);
}

TEST(Minimize, StopsAtTheBudgetWithoutStartingARunPastIt) {
  // A fake clock: each run takes exactly 20 ms, so the rule is checked, not the machine's load.
  double t = 0;
  std::vector<double> starts;
  MinimizeOptions opt;
  opt.budget_s = 0.05;
  opt.now = [&] { return t; };
  opt.outcome = [&](const Case& c) {
    starts.push_back(t);
    t += 0.02;
    return fake_outcome(c);
  };
  MinimizeResult r = minimize(noisy(), opt);
  EXPECT_FALSE(r.fixed_point);
  // run 1 at 0 ms, run 2 at 20 ms (ends at 40); a third would end at 60 ms > 50: not started
  ASSERT_EQ(r.runs, 2);
  EXPECT_NEAR(starts.back(), 0.02, 1e-12);
  EXPECT_NEAR(r.seconds, 0.04, 1e-12);
  for (double s : starts) EXPECT_LE(s + 0.02, opt.budget_s + 1e-12);  // every run that started finished in time
  EXPECT_EQ(fake_outcome(r.minimized), r.outcome);
}

TEST(Minimize, RefusesAPassingCase) {
  MinimizeOptions opt;
  opt.outcome = [](const Case&) { return std::string("pass"); };
  EXPECT_THROW(minimize(noisy(), opt), CaseError);
}

}  // namespace
}  // namespace flce
