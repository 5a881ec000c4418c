// The differential loop end to end through the subject host, a child Python process (CPU
// here; the CUDA variants skip with a reason and run on the GPU box via scripts/gpu_run.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "case/sampler.hpp"
#include "judge/differential.hpp"
#include "oracles/subject_worker.hpp"

using namespace flce;

namespace {

RunReport run(const Case& c, const std::string& subject, bool compiled = true) {
  RunOptions o;
  o.subject = subject;
  o.compiled = compiled;
  return run_case(c, o);
}

const OracleOutcome& oracle(const RunReport& r, const std::string& name) {
  for (auto& o : r.oracles)
    if (o.oracle == name) return o;
  throw std::runtime_error("no oracle " + name);
}

// The seed's op: addmm(C, A, B, out_dtype=fp32, out=C) with bf16 operands.
Case seed_addmm() {
  Case c;
  c.kind = Kind::ADDMM;
  c.BT = 8; c.H = 16; c.V = 32;
  c.input_dtype = c.weight_dtype = DType::BF16;
  c.accum_dtype = DType::F32;
  c.out_variant = true;
  c.requires_grad = {false, false, false};
  return c;
}

Case small(DType d) {
  Case c = example_case();
  c.input_dtype = c.weight_dtype = d;
  return c;
}

}  // namespace

TEST(SubjectHost, VirtualEnvironmentAndTorch) {
  Environment e = default_subject_worker().environment();
  EXPECT_FALSE(e.torch.empty());
  EXPECT_FALSE(e.python.empty());
}

// The inputs the subject sees are flce's bit for bit, in their storage dtype, and what it
// returns comes back exactly: the child echoes its tensors through shared memory.
void expect_echo_is_bitwise(const Case& c) {
  Inputs in = make_inputs(c);
  SubjectResult r = default_subject_worker().echo(c, in);
  ASSERT_EQ(r.status, SubjectStatus::OK) << r.reason;
  auto same = [&](const char* name, const std::vector<float>& want, DType dt) {
    ASSERT_TRUE(r.outputs.count(name)) << name;
    const Tensor64& got = r.outputs.at(name);
    EXPECT_EQ(got.dtype, dt) << name;
    ASSERT_EQ(got.data.size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      const double w = want[i];
      ASSERT_EQ(std::memcmp(&got.data[i], &w, sizeof w), 0) << name << "[" << i << "] " << got.data[i] << " vs " << w;
    }
  };
  same("x", in.x, c.input_dtype);
  same("w", in.w, c.weight_dtype);
  same("token_grad", in.token_grad, DType::F32);
  ASSERT_TRUE(r.outputs.count("target"));
  for (size_t i = 0; i < in.target.size(); ++i) EXPECT_EQ(r.outputs.at("target").data[i], static_cast<double>(in.target[i]));
  EXPECT_GT(r.transfer_ms, 0.0);
}

TEST(SubjectHost, InputsAndOutputsCrossBitwiseOnCpu) {
  for (DType d : {DType::BF16, DType::F16, DType::F32}) {
    Case c = example_case();
    c.input_dtype = c.weight_dtype = d;
    c.bias = true;
    expect_echo_is_bitwise(c);
  }
}

TEST(SubjectHost, InputsAndOutputsCrossBitwiseOnCuda) {
  if (!default_subject_worker().cuda_available()) GTEST_SKIP() << "no CUDA device here: runs on the GPU box (scripts/gpu_run.sh)";
  Case c = example_case();
  c.device = Device::CUDA;
  expect_echo_is_bitwise(c);
}

// Shared memory grows with the case and is reused: a large case after a small one, then a
// small one again, all exact.
TEST(SubjectHost, SharedMemoryGrowsAndIsReused) {
  Case c = example_case();
  c.input_dtype = c.weight_dtype = DType::F32;
  expect_echo_is_bitwise(c);
  c.BT = 512; c.H = 256; c.V = 1024;
  expect_echo_is_bitwise(c);
  c.BT = 3; c.H = 5; c.V = 7;
  expect_echo_is_bitwise(c);
}

// What the transport costs next to a case's own run (printed for BENCHMARKS.md): the median
// of 20 echoes of a campaign-sized case, and one large case.
TEST(SubjectHost, TransferCostIsPrinted) {
  auto measure = [](const Case& c, int reps, double* total_ms, double* transfer_ms) {
    Inputs in = make_inputs(c);
    std::vector<double> total, transfer;
    for (int i = 0; i < reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      SubjectResult r = default_subject_worker().echo(c, in);
      total.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      ASSERT_EQ(r.status, SubjectStatus::OK);
      transfer.push_back(r.transfer_ms);
      EXPECT_LT(r.transfer_ms, total.back() + 1e-9);
    }
    std::sort(total.begin(), total.end());
    std::sort(transfer.begin(), transfer.end());
    *total_ms = total[total.size() / 2];
    *transfer_ms = transfer[transfer.size() / 2];
  };
  Case small = example_case();  // the seed's shape, as campaigns sample them
  double t = 0, x = 0;
  measure(small, 1, &t, &x);  // the first call imports numpy and maps the files
  measure(small, 20, &t, &x);
  std::printf("transport: BT %lld H %lld V %lld, median of 20: echo round trip %.3f ms, of which transfer %.3f ms\n",
              static_cast<long long>(small.BT), static_cast<long long>(small.H), static_cast<long long>(small.V), t, x);
  Case large = example_case();
  large.BT = 1024; large.H = 512; large.V = 2048;
  measure(large, 3, &t, &x);
  const double mb = (large.BT * large.H + large.V * large.H) * 4.0 / 1e6;
  std::printf("transport: %.1f MB of inputs (BT %lld H %lld V %lld), median of 3: echo round trip %.2f ms, transfer %.2f ms\n",
              mb, static_cast<long long>(large.BT), static_cast<long long>(large.H), static_cast<long long>(large.V), t, x);
}

TEST(Differential, ModelPassesEagerOnExample) {
  RunReport r = run(small(DType::BF16), "model", false);
  const auto& e = oracle(r, "eager");
  ASSERT_EQ(e.status, SubjectStatus::OK) << report_table(r);
  EXPECT_TRUE(e.verdict->pass()) << report_table(r);
  EXPECT_GT(e.verdict->worst_ratio(), 0.0);
}

TEST(Differential, ModelCompiledOnCpuPassesWithAotEagerFp32) {
  Case c = small(DType::F32);
  c.accum_dtype.reset();
  c.compile.backend = Backend::AOT_EAGER;
  RunReport r = run(c, "model");
  EXPECT_EQ(r.outcome, "pass") << report_table(r);
}

TEST(Differential, RawAddmmDtypeOutCompiledReproducesKnownSignatureAndStage) {
  RunReport r = run(seed_addmm(), "aten-dtype-out");
  const auto& comp = oracle(r, "compiled");
  ASSERT_EQ(comp.status, SubjectStatus::ERROR) << report_table(r);
  ASSERT_TRUE(comp.signature);
  EXPECT_TRUE(comp.signature->known) << comp.signature->title;
  const std::string tv = default_subject_worker().torch_version();
  if (version_in_range(tv, ">=2.13")) {
    EXPECT_EQ(comp.signature->id, "tier2-lowering") << report_table(r);
  } else {
    EXPECT_EQ(comp.signature->id, "tier1-decomposition") << report_table(r);
  }
  EXPECT_FALSE(r.first_failing_stage.empty());
}

TEST(Differential, LadderMemoReusesTheLadderPerGraphOrForAKnownSignature) {
  Case c = seed_addmm();
  LadderMemo memo;
  RunOptions o;
  o.subject = "aten-dtype-out";
  o.ladder_memo = &memo;
  RunReport first = run_case(c, o);
  ASSERT_FALSE(first.first_failing_stage.empty()) << report_table(first);
  EXPECT_FALSE(first.ladder_memoized);
  EXPECT_FALSE(first.ladder_signature.empty());
  EXPECT_GE(first.timing.compiled_runs, 2) << "the compiled run and at least one rung";
  c.seed = 99;  // other values, same graph: the ladder is reused
  RunReport again = run_case(c, o);
  EXPECT_TRUE(again.ladder_memoized) << report_table(again);
  EXPECT_EQ(again.outcome, first.outcome);
  EXPECT_EQ(again.ladder.size(), first.ladder.size());
  EXPECT_EQ(again.timing.compiled_runs, 1) << "a reused ladder traces nothing but the compiled run";
  EXPECT_EQ(memo.hits, 1);
  c.V = 24;  // another shape of the graph (a family's pool): reused too (LadderMemo::key)
  RunReport shape = run_case(c, o);
  EXPECT_TRUE(shape.ladder_memoized) << report_table(shape);
  EXPECT_EQ(memo.hits, 2);
  // Another graph configuration: an unknown signature's key names the graph (walked again), a
  // known one (this torch's tier-2 entry in signatures.json) breaks at one stage whatever the
  // graph, so its ladder is reused campaign-wide.
  c.compile.fullgraph = !c.compile.fullgraph;
  ASSERT_NE(graph_key(c), graph_key(seed_addmm()));
  EXPECT_NE(LadderMemo::key(c, first.ladder_signature), LadderMemo::key(seed_addmm(), first.ladder_signature));
  RunReport other = run_case(c, o);
  bool known = false;
  for (const OracleOutcome& o : other.oracles)
    if (o.oracle.rfind("compiled", 0) == 0) known = o.signature && o.signature->shares_ladder();
  EXPECT_EQ(other.ladder_memoized, known) << report_table(other);
  EXPECT_EQ(memo.hits, known ? 3 : 2);
  EXPECT_EQ(other.first_failing_stage, first.first_failing_stage);
}

// The eager lane's options: no compiled run, so no compile time and no compiled runs counted.
TEST(Differential, TimingSplitsTheCase) {
  Case c = seed_addmm();
  RunOptions o;
  o.subject = "aten-dtype-out";
  o.compiled = false;
  RunReport r = run_case(c, o);
  EXPECT_EQ(r.timing.compiled_runs, 0);
  EXPECT_EQ(r.timing.compile_ms, 0);
  EXPECT_GT(r.timing.eager_ms, 0);
  EXPECT_GT(r.timing.golden_ms + r.timing.inputs_ms + r.timing.judge_ms, 0);
  EXPECT_LE(r.timing.transfer_ms, r.timing.eager_ms);
}

TEST(Differential, UnsupportedSubjectIsTypedNotAPass) {
  RunReport r = run(small(DType::BF16), "liger", false);
  if (default_subject_worker().cuda_available()) GTEST_SKIP() << "CUDA present: liger is supported here";
  EXPECT_TRUE(r.unsupported()) << report_table(r);
  EXPECT_EQ(r.outcome, "unsupported");
  EXPECT_FALSE(oracle(r, "eager").reason.empty());
}

TEST(Differential, PythonExceptionDoesNotTakeTheHostDown) {
  RunReport r = run(small(DType::F32), "no_such_module_xyz:fn", false);
  const auto& e = oracle(r, "eager");
  EXPECT_EQ(e.status, SubjectStatus::ERROR);
  ASSERT_TRUE(e.signature);
  EXPECT_NE(e.signature->title.find("ModuleNotFoundError"), std::string::npos) << e.signature->title;
  // and the host still works afterwards
  EXPECT_EQ(run(small(DType::F32), "model", false).outcome, "pass");
}

struct Planted {
  const char* subject;
  const char* output;  // the output the verdict must name
  int64_t BT, H, V;
};

class PlantedBug : public ::testing::TestWithParam<Planted> {};

TEST_P(PlantedBug, CaughtAndNamed) {
  auto p = GetParam();
  Case c = example_case();
  c.BT = p.BT; c.H = p.H; c.V = p.V;
  c.input_dtype = c.weight_dtype = DType::BF16;
  c.accum_dtype = DType::F32;
  c.label_smoothing = 0.1;
  RunReport r = run(c, p.subject, false);
  const auto& e = oracle(r, "eager");
  ASSERT_EQ(e.status, SubjectStatus::OK) << report_table(r);
  ASSERT_FALSE(e.verdict->pass()) << report_table(r);
  bool named = false;
  for (auto& v : e.verdict->outputs)
    if (v.output == p.output && v.finding != Flaw::OK) named = true;
  EXPECT_TRUE(named) << report_table(r);
}

INSTANTIATE_TEST_SUITE_P(Subjects, PlantedBug,
                         ::testing::Values(Planted{"model-bug-smoothing", "loss", 24, 16, 40},
                                           // a low-precision accumulator shows once there are many chunks
                                           // (V/H = 256: Liger's heuristic gives chunks of 2 rows)
                                           Planted{"model-bug-bf16-accum", "grad_weight", 512, 4, 1024},
                                           Planted{"model-bug-drop-chunk", "grad_weight", 24, 16, 40}),
                         [](const auto& info) {
                           std::string n = info.param.subject;
                           for (auto& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

class NoFalseFailures : public ::testing::TestWithParam<DType> {};

TEST_P(NoFalseFailures, ModelEagerPassesOnRandomCases) {
  SampleSpace sp;
  sp.dtype = GetParam();
  int judged = 0;
  for (int k = 0; k < 100; ++k) {
    Case c = sample_case(77, static_cast<uint64_t>(k), sp);
    RunReport r = run(c, "model", false);
    const auto& e = oracle(r, "eager");
    if (e.status == SubjectStatus::UNSUPPORTED) continue;
    ASSERT_EQ(e.status, SubjectStatus::OK) << to_json(c, -1) << "\n" << report_table(r);
    EXPECT_TRUE(e.verdict->pass()) << to_json(c, -1) << "\n" << report_table(r);
    ++judged;
  }
  EXPECT_GE(judged, 100);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NoFalseFailures, ::testing::Values(DType::BF16, DType::F16, DType::F32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
