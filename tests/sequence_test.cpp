// Order-dependent findings: ddmin over earlier calls, the sequence-case schema, and the
// history shrinker with a scripted outcome (no interpreter).
#include <gtest/gtest.h>

#include <set>

#include "case/sequence.hpp"
#include "fuzz/findings/call_history.hpp"
#include "fuzz/findings/ddmin.hpp"
#include "fuzz/findings/history_shrink.hpp"

using namespace flce;

namespace {

Case call(uint64_t seed, int64_t bt) {
  Case c;
  c.compile.backend = Backend::AOT_EAGER;
  c.BT = bt;
  c.seed = seed;
  return c;
}

}  // namespace

TEST(Ddmin, KeepsOnlyTheNeededItemsInOrder) {
  std::vector<int> items{0, 1, 2, 3, 4, 5, 6, 7};
  int tests = 0;
  auto fails = [&](const std::vector<int>& v) {
    ++tests;
    const std::set<int> s(v.begin(), v.end());
    return s.count(2) && s.count(5);
  };
  DdminStats st;
  EXPECT_EQ(ddmin<int>(items, fails, {}, &st), (std::vector<int>{2, 5}));
  EXPECT_EQ(st.tests, tests);
  EXPECT_FALSE(st.budget_hit);
}

TEST(Ddmin, NothingNeededGivesEmpty) {
  EXPECT_TRUE(ddmin<int>({1, 2, 3}, [](const std::vector<int>&) { return true; }).empty());
}

TEST(Ddmin, BudgetStopsWithAFailingSubsequence) {
  int left = 3;
  DdminStats st;
  auto got = ddmin<int>({0, 1, 2, 3, 4, 5, 6, 7}, [](const std::vector<int>& v) {
    return std::find(v.begin(), v.end(), 6) != v.end(); }, [&] { return left-- <= 0; }, &st);
  EXPECT_TRUE(st.budget_hit);
  EXPECT_NE(std::find(got.begin(), got.end(), 6), got.end());  // still fails
}

TEST(SequenceCase, RoundTripsAndValidates) {
  Sequence s{{call(1, 4), call(2, 6)}};
  const std::string text = to_json(s);
  EXPECT_TRUE(is_sequence_json(text));
  EXPECT_EQ(sequence_from_json(text), s);
  EXPECT_EQ(any_case_from_json(to_json(call(1, 4))).calls.size(), 1u);  // a plain case: one call

  Sequence other = s;
  other.calls[1].input_dtype = other.calls[1].weight_dtype = DType::F32;
  try {
    sequence_from_json(to_json(other));
    FAIL() << "two compiled functions accepted";
  } catch (const CaseError& e) {
    EXPECT_EQ(e.field, "sequence[1].input_dtype");
  }
  other.scope = SequenceScope::PROCESS;  // one process may run both
  EXPECT_EQ(sequence_from_json(to_json(other)), other);

  Sequence bad = s;
  bad.calls[0].BT = 0;
  try {
    sequence_from_json(to_json(bad));
    FAIL() << "invalid call accepted";
  } catch (const CaseError& e) {
    EXPECT_EQ(e.field, "sequence[0].BT");
  }
  EXPECT_THROW(sequence_from_json(R"({"schema": "flce-sequence/1", "sequence": []})"), CaseError);
  EXPECT_THROW(sequence_from_json(R"({"schema": "other", "sequence": [{}]})"), CaseError);
}

TEST(CallHistory, KeepsCallsPerCompiledFunctionBounded) {
  CallHistory h;
  Case f32 = call(9, 3);
  f32.input_dtype = f32.weight_dtype = DType::F32;
  h.record("k-other", f32);
  for (uint64_t k = 0; k < kHistoryPerFunction + 3; ++k) h.record("k" + std::to_string(k), call(k, 2 + static_cast<int64_t>(k)));
  const auto j = h.before(call(100, 5), false);
  ASSERT_EQ(j["compiled"].size(), kHistoryPerFunction);  // the other graph's call is not there
  EXPECT_EQ(j["compiled"][0]["key"], "k3");              // oldest kept first
  EXPECT_FALSE(j.contains("process"));
  EXPECT_EQ(history_calls(j, SequenceScope::COMPILED).size(), kHistoryPerFunction);
  EXPECT_EQ(h.before(call(100, 5), true)["process"].size(), kHistoryPerProcess);
}

// History of 6 earlier calls where only one matters (seed 4: it compiles the function at
// another shape): ddmin leaves it alone, minimize() shrinks the last call.
TEST(HistoryShrink, OneRelevantEarlierCallOfSix) {
  std::vector<Case> earlier;
  for (uint64_t s = 1; s <= 6; ++s) earlier.push_back(call(s, 2 + static_cast<int64_t>(s)));
  const Case last = call(99, 16);
  int runs = 0;
  HistoryShrinkOptions o;
  o.budget_s = 60;
  o.outcome = [&](const Sequence& s) {
    ++runs;
    bool primed = false;
    for (size_t k = 0; k + 1 < s.calls.size(); ++k) primed |= s.calls[k].seed == 4 && s.calls[k].BT != s.last().BT;
    return primed ? std::string("bucket-planted@compiled:aot_eager") : std::string("pass");
  };
  HistoryShrinkResult r = shrink_history(earlier, last, SequenceScope::COMPILED, "bucket-planted@compiled:aot_eager", o);
  ASSERT_TRUE(r.reproduced);
  ASSERT_EQ(r.minimized.calls.size(), 2u);
  EXPECT_EQ(r.minimized.calls[0].seed, 4u);
  EXPECT_EQ(r.minimized.last().seed, 99u);
  EXPECT_LT(r.minimized.last().BT, last.BT);  // the last call was shrunk too, the prefix fixed
  EXPECT_EQ(compiled_key(r.minimized.calls[0]), compiled_key(r.minimized.last()));
  EXPECT_NO_THROW(sequence_from_json(to_json(r.minimized)));
  EXPECT_TRUE(r.fixed_point);
  EXPECT_EQ(r.runs, runs);

  // A history that does not show it: not reproduced, nothing minimized.
  HistoryShrinkResult none = shrink_history({call(1, 3)}, last, SequenceScope::COMPILED, "bucket-planted@compiled:aot_eager", o);
  EXPECT_FALSE(none.reproduced);
  EXPECT_EQ(none.replayed, "pass");
}
