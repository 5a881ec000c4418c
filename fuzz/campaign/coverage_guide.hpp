// Coverage-guided sampling (issue #16): the campaign parent draws a few candidates for a sampled
// case and runs the one that covers the most cells no case has covered yet; and after a new
// finding it runs the finding's neighbours (its case with one field changed) before sampling on.
//
// Determinism: candidate j of index k is sample_case(candidate_seed(seed, j), k, space), a pure
// function of (seed, k, j); which j is run depends on the coverage counts the parent holds when it
// dispatches k. With one worker that is the same every run (a campaign stays replayable; a
// resumed one continues from the counts in state.json). With several workers the counts at
// dispatch depend on which cases have come back, so the picks (not the candidates) can differ
// between runs. The pick is in the case's key ("sample:S#K~J" for j > 0; `flce case sample
// --candidate J`) and its case.json, so every finding replays regardless.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "case/sampler.hpp"
#include "fuzz/campaign/coverage.hpp"
#include "fuzz/campaign/explained.hpp"

namespace flce {

// The seed candidate j draws from; candidate 0 is the plain stream (candidate_seed(s, 0) == s).
uint64_t candidate_seed(uint64_t seed, uint32_t j);

struct GuidedPick {
  Case c;
  uint32_t candidate = 0;
};

// Sampled case `index`: of candidates 0..n-1, the one with the most cells `cov` has no case in
// (ties: the lowest j, so a fully covered table gives the plain stream). With families
// (space.family_size > 1) the pick is made once per family, at its first dispatched member, and
// kept in `family_picks` (state.json), so a family keeps one configuration; the plain
// configurations (families 0..5) are never guided.
// `explained` (explained.hpp): cells a candidate should avoid; one family in kExplainedShare is
// exempt, so an explained value keeps a small share and a fix of its failure still shows.
GuidedPick guided_sample(uint64_t seed, uint64_t index, const SampleSpace& space, const CoverageTable& cov,
                         int candidates, std::map<uint64_t, uint32_t>& family_picks,
                         const std::set<std::string>& explained = {});

// The case with one field changed, for each field to each of its other values (dtypes, accum,
// reduction, each flag, softcap, smoothing, z-loss scale, ignored fraction, requires_grad,
// autocast, regime, token_grad, dynamic, fullgraph); only valid cases that use none of
// `without` (the subject's missing parameters), each once.
std::vector<Case> neighbours(const Case& c, const std::set<std::string>& without);

}  // namespace flce
