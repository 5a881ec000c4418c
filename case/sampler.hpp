// Seeded random cases for campaigns and calibration (RapidCheck's generators in
// properties/ are for properties with shrinking; this one is a plain, replayable
// stream: case k of seed s is always the same case).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "case/case.hpp"

namespace flce {

struct SampleSpace {
  int64_t max_BT = 32, max_H = 32, max_V = 64;
  std::optional<DType> dtype;  // fix input/weight dtype (calibration per dtype)
  bool special_values = false;
  bool op_kinds = false;
  bool compile_options = true;  // vary backend/dynamic/fullgraph
  Device device = Device::CPU;
  // Families (campaigns): index k belongs to family k / family_size. A family fixes every
  // field that shapes the compiled graph (dtypes, flags, compile options) and varies only
  // what it feeds: seed, values regime, ignored targets, upstream gradient; its shape is the
  // configuration's (a dynamic=True family draws from a pool of kShapePool shapes). A worker that
  // runs a whole family compiles its graph once, not once per case.
  // 1 = every case its own configuration (the plain stream gates and tests replay).
  // With families, families 0..5 are the plain configurations: defaults, each dtype,
  // accum_dtype none and fp32 (what most users run; a campaign should speak for them first).
  uint64_t family_size = 1;
  // The eager lane's groups (campaign lanes.hpp): families whose members also vary BT and H, V
  // and every flag fixed, so Triton kernels specialized on them (Liger's BLOCK_SIZE from V, its
  // constexpr flags) are compiled once per group, not once per case; no sequence families.
  bool eager_groups = false;
  // Subject parameters (flce_parameters()) the subject lacks: never drawn, the case keeps the
  // parameter's neutral value (a campaign learns them from its workers at start, so its time
  // goes to cases the subject can run). Everything else is drawn as without them.
  std::set<std::string> without;
  // The subject's contract (subjects/flce_subjects/contract.py): every case carries the semantics
  // it promises (never Liger's by default) and only the input dtypes it supports. Unset / empty:
  // the case's own draw.
  std::optional<Semantics> semantics;
  std::set<DType> dtypes;
  // Its declared gradient filter (contract `approximation`), per input dtype: the case's
  // grad_filter_eps, so the judge allows what the filter may drop and says so. Empty: exact.
  std::map<DType, double> grad_filter_eps;
  std::set<Device> grad_filter_devices;  // where the subject filters (empty: every device)
  bool grad_weight_split = false;        // contract grad_weight_form "split" (MATH.md item 12)
  std::string softmax_dtype = "fp32";    // contract softmax_dtype (MATH.md item 13)
};

// A case under a contract: its semantics set, its dtype moved into the supported ones (a pure
// function of the case, so replays agree). Sample_case applies it; so do corpus cases.
Case under_contract(Case c, const SampleSpace& space);

// The optional FLCE parameters of Liger's functional API, as the subjects name them
// (subjects/flce_subjects/params.py PARAMS, same order): bias, ce_weight, ignore_index, ...
const std::vector<std::string>& flce_parameters();
// The ones a case uses, i.e. sets to something other than their neutral value (bias: a bias
// tensor; accum_dtype: not none; return_token_accuracy: true; ...). Empty for op kinds.
std::vector<std::string> parameters_used(const Case& c);
// The case with each named parameter set to its neutral value (unknown names are ignored).
void drop_parameters(Case& c, const std::set<std::string>& params);

inline constexpr int kShapePool = 3;  // shapes of a dynamic=True family (one compile serves them all)
// One family in kSequenceShare (past the plain ones) is a sequence family: its cases feed the
// compiled function a second BT first (extra_BT), where second-shape failures are found on
// purpose; every other family keeps one shape and compiles once.
inline constexpr uint64_t kSequenceShare = 8;
bool is_sequence_family(uint64_t family);

Case sample_case(uint64_t seed, uint64_t index, const SampleSpace& space);

// The case with upstream-gradient and class-weight spreads turned off where it is fp16: its
// range (65504) overflows a correct implementation there (sample_case applies it; so do the
// neighbours of findings).
Case within_fp16_range(Case c);

// The graph-relevant part of a case: its canonical JSON with the fields a family varies
// (seed, shape, regime, ignored fraction, upstream gradient) set to fixed values. Two cases
// with one graph key differ only in what they feed the same compiled function.
std::string graph_key(const Case& c);

}  // namespace flce
