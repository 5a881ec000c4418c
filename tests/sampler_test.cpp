// The campaign's case stream: plain replayable samples, and families that share a graph.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "case/contract.hpp"
#include "case/sampler.hpp"

using namespace flce;

TEST(Sampler, CaseKOfSeedSIsAlwaysTheSameCase) {
  SampleSpace sp;
  for (uint64_t k = 0; k < 50; ++k) EXPECT_EQ(to_json(sample_case(5, k, sp)), to_json(sample_case(5, k, sp)));
  sp.family_size = 16;
  for (uint64_t k = 0; k < 50; ++k) EXPECT_EQ(to_json(sample_case(5, k, sp)), to_json(sample_case(5, k, sp)));
}

TEST(Sampler, EverySampledCaseIsValid) {
  for (uint64_t fam : {1u, 16u}) {
    SampleSpace sp;
    sp.family_size = fam;
    for (uint64_t k = 0; k < 2000; ++k) EXPECT_NO_THROW(validate(sample_case(3, k, sp))) << "family " << fam << " k " << k;
    sp.op_kinds = true;
    for (uint64_t k = 0; k < 500; ++k) EXPECT_NO_THROW(validate(sample_case(3, k, sp))) << "op kinds k " << k;
  }
}

TEST(Sampler, AFamilySharesOneGraphKeyAndAFewShapes) {
  SampleSpace sp;
  sp.family_size = 32;
  int distinct_families = 0;
  std::set<std::string> keys;
  for (uint64_t fam = 0; fam < 20; ++fam) {
    std::set<std::string> in_family;
    std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
    std::set<uint64_t> seeds;
    for (uint64_t m = 0; m < sp.family_size; ++m) {
      Case c = sample_case(9, fam * sp.family_size + m, sp);
      in_family.insert(graph_key(c));
      shapes.insert({c.BT, c.H, c.V});
      seeds.insert(c.seed);
    }
    EXPECT_EQ(in_family.size(), 1u) << "family " << fam;
    // One compile per family: one shape, but where dynamic=True compiles once for any shape.
    const Case c0 = sample_case(9, fam * sp.family_size, sp);
    EXPECT_LE(shapes.size(), c0.compile.dynamic == true ? static_cast<size_t>(kShapePool) : 1u) << "family " << fam;
    EXPECT_EQ(!c0.extra_BT.empty(), is_sequence_family(fam)) << "family " << fam;
    EXPECT_GT(seeds.size(), sp.family_size / 2) << "members must feed different values";
    distinct_families += keys.insert(*in_family.begin()).second;
  }
  EXPECT_GE(distinct_families, 15) << "families must differ in configuration";
}

TEST(Sampler, GraphKeyIgnoresWhatIsFedButNotWhatIsCompiled) {
  Case a = example_case(), b = a;
  b.seed += 1;
  b.BT = 3;
  b.ignore_fraction = 1.0;
  b.grad_output = -2.0;
  EXPECT_EQ(graph_key(a), graph_key(b));
  for (auto change : {+[](Case& c) { c.bias = !c.bias; c.requires_grad.bias = false; },
                      +[](Case& c) { c.compile.fullgraph = !c.compile.fullgraph; },
                      +[](Case& c) { c.accum_dtype.reset(); },
                      +[](Case& c) { c.reduction = Reduction::SUM; }}) {
    Case d = a;
    change(d);
    EXPECT_NE(graph_key(a), graph_key(d)) << to_json(d);
  }
}

TEST(Sampler, PlainConfigurationsComeFirst) {
  SampleSpace sp;
  sp.family_size = 8;
  std::set<std::pair<DType, bool>> seen;
  for (uint64_t fam = 0; fam < 6; ++fam) {
    Case c = sample_case(1, fam * sp.family_size, sp);
    Case plain = example_case();
    plain.input_dtype = plain.weight_dtype = c.input_dtype;
    plain.accum_dtype = c.accum_dtype;
    plain.seed = c.seed;
    plain.BT = c.BT; plain.H = c.H; plain.V = c.V;
    plain.ignore_fraction = c.ignore_fraction; plain.regime = c.regime;
    plain.grad_output = c.grad_output; plain.token_grad = c.token_grad;
    EXPECT_EQ(graph_key(c), graph_key(plain)) << "family " << fam << " is not a plain configuration";
    seen.insert({c.input_dtype, c.accum_dtype.has_value()});
  }
  EXPECT_EQ(seen.size(), 6u) << "each dtype with accum_dtype none and fp32";
}

// A campaign of a subject that lacks parameters (an older Liger tree) never draws them; every
// other field of case k stays what a subject with all of them gets.
TEST(Sampler, ParametersTheSubjectLacksAreNeverDrawn) {
  const std::set<std::string> lacks = {"use_token_scaling", "return_token_accuracy", "return_predicted_tokens",
                                       "accum_dtype"};
  for (uint64_t fam : {1u, 16u}) {
    SampleSpace all, without;
    all.family_size = without.family_size = fam;
    without.without = lacks;
    int used_before = 0;
    for (uint64_t k = 0; k < 1000; ++k) {
      Case full = sample_case(4, k, all), c = sample_case(4, k, without);
      for (auto& p : parameters_used(c)) EXPECT_EQ(lacks.count(p), 0u) << "family " << fam << " k " << k << ": " << p;
      for (auto& p : parameters_used(full)) used_before += lacks.count(p) > 0;
      EXPECT_NO_THROW(validate(c));
      drop_parameters(full, lacks);
      EXPECT_EQ(to_json(full, -1), to_json(c, -1)) << "family " << fam << " k " << k;
    }
    EXPECT_GT(used_before, 100) << "the unrestricted stream uses them";
  }
}

TEST(Sampler, ParametersUsedNamesEachNonNeutralParameter) {
  Case c;
  EXPECT_TRUE(parameters_used(c).empty());
  c.bias = c.requires_grad.bias = true;
  c.return_token_accuracy = true;
  c.reduction = Reduction::NONE;
  c.softcap = 30.0;
  EXPECT_EQ(parameters_used(c), (std::vector<std::string>{"bias", "reduction", "softcap", "return_token_accuracy"}));
  drop_parameters(c, {"bias", "reduction", "softcap", "return_token_accuracy", "no-such-parameter"});
  EXPECT_TRUE(parameters_used(c).empty());
  EXPECT_FALSE(c.requires_grad.bias);
  EXPECT_EQ(flce_parameters().size(), 12u);
  Case op;
  op.kind = Kind::MM;
  op.accum_dtype = DType::F32;
  EXPECT_TRUE(parameters_used(op).empty());
}

// A pin made under one subject's contract, run by another (the gate's corpus): what differs is
// named, field by field; the case under the contract differs in nothing.
TEST(Contract, APinOfAnotherContractNamesWhatDiffers) {
  SampleSpace torch_like;
  apply_contract(nlohmann::json{{"semantics", "torch"}, {"grad_weight_form", "split"}}, torch_like);
  Case c;  // Liger's semantics, fused grad_weight: a pin of a Liger-shaped subject
  EXPECT_EQ(contract_mismatch(c, torch_like),
            "semantics liger (its contract: torch), grad_weight_form fused (its contract: split)");
  EXPECT_EQ(contract_mismatch(under_contract(c, torch_like), torch_like), "");

  SampleSpace undeclared;  // no contract: judged under Liger's semantics
  apply_contract(nlohmann::json(), undeclared);
  EXPECT_EQ(contract_mismatch(c, undeclared), "");
  Case t = under_contract(c, torch_like);
  EXPECT_EQ(contract_mismatch(t, undeclared),
            "semantics torch (its contract: liger), grad_weight_form split (its contract: fused)");

  SampleSpace fp32_only;
  apply_contract(nlohmann::json{{"semantics", "liger"}, {"dtypes", {"fp32"}}}, fp32_only);
  c.input_dtype = c.weight_dtype = DType::BF16;
  EXPECT_EQ(contract_mismatch(c, fp32_only), "input dtype bf16 (its contract: fp32 only)");

  Case op;
  op.kind = Kind::ADDMM;  // op kinds carry no contract
  EXPECT_EQ(contract_mismatch(op, torch_like), "");
}

// A declared gradient filter travels into the case: a case without it is another contract.
TEST(Contract, ADeclaredFilterIsPartOfTheContract) {
  SampleSpace cce_like;
  apply_contract(nlohmann::json{{"semantics", "liger"},
                                {"approximation", {{"name", "grad_filter"}, {"eps", {{"bf16", 0.0078125}}}}}},
                 cce_like);
  Case c;
  c.input_dtype = c.weight_dtype = DType::BF16;
  EXPECT_EQ(contract_mismatch(c, cce_like), "grad_filter_eps 0 (its contract: 0.0078125)");
  c.grad_filter_eps = 0.0078125;
  EXPECT_EQ(contract_mismatch(c, cce_like), "");
}
