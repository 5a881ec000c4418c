// The deferred ladder walks (fuzz/campaign/walk_queue.hpp): a signature's first walk goes before
// the rest and before waiting analyses, so each unknown signature learns its first failing stage.
#include <gtest/gtest.h>

#include "fuzz/campaign/walk_queue.hpp"

namespace flce {
namespace {

std::string next_key(WalkQueue& q, bool analyses_waiting) {
  auto w = q.next(analyses_waiting);
  return w ? w->key : "";
}

TEST(WalkQueue, ASignaturesFirstWalkGoesFirstEvenWhileAnalysesWait) {
  WalkQueue q;
  EXPECT_TRUE(q.push({"g1|bucket-a", "{}"}));
  EXPECT_TRUE(q.push({"g2|bucket-a", "{}"}));
  EXPECT_TRUE(q.push({"g3|bucket-b", "{}"}));
  EXPECT_FALSE(q.push({"g1|bucket-a", "{}"}));  // queued already
  EXPECT_EQ(q.queued(), 3);
  EXPECT_EQ(next_key(q, true), "g1|bucket-a");
  EXPECT_EQ(next_key(q, true), "g3|bucket-b");  // skips bucket-a's second graph
  EXPECT_EQ(next_key(q, true), "");             // only a second walk left: analyses first
  EXPECT_EQ(next_key(q, false), "g2|bucket-a");  // idle analysis workers take it
  EXPECT_TRUE(q.empty());
}

TEST(WalkQueue, ALostWalkLeavesItsSignatureUnwalked) {
  WalkQueue q;
  q.push({"g1|bucket-a", "{}"});
  q.push({"g2|bucket-a", "{}"});
  EXPECT_EQ(next_key(q, true), "g1|bucket-a");
  EXPECT_EQ(next_key(q, true), "");
  q.done("g1|bucket-a", WalkQueue::End::LOST);  // the walking worker died
  EXPECT_EQ(next_key(q, true), "g2|bucket-a");  // a first walk again
  q.done("g2|bucket-a", WalkQueue::End::STAGE);
  EXPECT_TRUE(q.push({"g1|bucket-a", "{}"}));  // done: the key may be queued again
  EXPECT_EQ(next_key(q, true), "");             // bucket-a has its stage: analyses first
  EXPECT_EQ(WalkQueue::signature_of("ab12|tier1-decomposition"), "tier1-decomposition");
}

TEST(WalkQueue, AWalkWhoseCasePassedAloneGivesUpTheSignaturesTurn) {
  WalkQueue q;
  q.push({"g1|judge:loss:out-of-bounds", "{}"});
  q.push({"g2|judge:loss:out-of-bounds", "{}"});
  EXPECT_EQ(next_key(q, true), "g1|judge:loss:out-of-bounds");
  q.done("g1|judge:loss:out-of-bounds", WalkQueue::End::PASSED_ALONE);  // order-dependent
  EXPECT_EQ(next_key(q, true), "");  // the next graph's walk waits for the analyses
  EXPECT_EQ(next_key(q, false), "g2|judge:loss:out-of-bounds");
}

TEST(WalkQueue, AKnownSignaturesWalkWaitsForTheAnalyses) {
  WalkQueue q;
  q.push({"*|inductor-triton-wrapper-decomp-assert", "{}"});
  q.push({"g1|judge:loss:out-of-bounds", "{}"});
  EXPECT_EQ(next_key(q, true), "g1|judge:loss:out-of-bounds");  // an unknown one names its stage first
  EXPECT_EQ(next_key(q, true), "");                               // the known bug waits for the causes
  EXPECT_EQ(next_key(q, false), "*|inductor-triton-wrapper-decomp-assert");
  EXPECT_TRUE(WalkQueue::known("*|tier1-decomposition"));
  EXPECT_FALSE(WalkQueue::known("ab12|tier1-decomposition"));
}

}  // namespace
}  // namespace flce
