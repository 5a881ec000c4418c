// GPU tests of the CUDA reference (kernels/): device inputs are bitwise the CPU's,
// dtype_out GEMMs meet DTYPE_OUT_CONTRACT.md's bound, op-level and FLCE references agree
// with fp64 host loops. Every test skips itself without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_host_flce64.hpp"
#include "kernels/compare.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device_inputs.hpp"
#include "kernels/device_query.hpp"
#include "kernels/dtype_out_gemm.hpp"
#include "kernels/host_transfer.hpp"
#include "kernels/reference_flce.hpp"
#include "kernels/reference_op.hpp"
#include "case/inputs.hpp"

namespace flce {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!has_cuda_device()) GTEST_SKIP() << "no CUDA device: the CUDA reference cannot run here"

double unit_roundoff(DType d) { return std::ldexp(1.0, -dtype_mantissa_bits(d)); }

// Raw storage bits of a device tensor, one uint32 per element (16-bit dtypes zero-extended).
std::vector<uint64_t> device_bits(const DeviceTensor& t) {
  const size_t es = dtype_size(t.dtype), n = static_cast<size_t>(t.numel());
  std::vector<unsigned char> raw(n * es);
  FLCE_CUDA_CHECK(cudaMemcpy(raw.data(), t.data(), raw.size(), cudaMemcpyDeviceToHost), "device_bits");
  std::vector<uint64_t> out(n);
  for (size_t i = 0; i < n; ++i) std::memcpy(&out[i], raw.data() + i * es, es);
  return out;
}

uint64_t host_bits(float v, DType d) {
  switch (d) {
    case DType::BF16: return f32_to_bf16_bits(v);
    case DType::F16: return f32_to_f16_bits(v);
    default: return f32_bits(v);
  }
}

void expect_bitwise(const char* what, const DeviceTensor& dev, const std::vector<float>& host) {
  ASSERT_EQ(dev.numel(), static_cast<int64_t>(host.size())) << what;
  auto bits = device_bits(dev);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < host.size(); ++i)
    if (bits[i] != host_bits(host[i], dev.dtype)) bad++, first = first < 0 ? int64_t(i) : first;
  EXPECT_EQ(bad, 0) << what << ": " << bad << " elements differ, first at " << first;
}

Case small_case(DType in, DType w, Regime regime, uint64_t seed) {
  Case c;
  c.BT = 37, c.H = 48, c.V = 70;
  c.input_dtype = in, c.weight_dtype = w;
  c.regime = regime;
  c.seed = seed;
  c.bias = true, c.ce_weight = true;
  c.ignore_fraction = 0.3;
  c.device = Device::CUDA;
  return c;
}

TEST(GpuInputs, BitwiseEqualToCpu) {
  SKIP_WITHOUT_GPU();
  std::vector<Case> cases;
  uint64_t seed = 11;
  for (DType d : {DType::F32, DType::F16, DType::BF16})
    for (Regime r : {Regime::NORMAL, Regime::LARGE_LOGITS, Regime::CONFIDENT, Regime::SPECIAL_VALUES, Regime::ONE_CLASS,
                     Regime::WEIGHT_SPREAD})
      cases.push_back(small_case(d, d, r, seed++));
  cases.push_back(small_case(DType::F32, DType::BF16, Regime::CONFIDENT, 99));
  cases.push_back(small_case(DType::BF16, DType::BF16, Regime::CONFIDENT, 100));
  cases.back().reduction = Reduction::NONE, cases.back().token_grad = TokenGrad::LOG_SPREAD;  // issue #16
  Case op;
  op.kind = Kind::BADDBMM, op.batch = 3, op.BT = 19, op.H = 21, op.V = 23;
  op.input_dtype = op.weight_dtype = DType::BF16, op.accum_dtype = DType::F32, op.seed = 5;
  cases.push_back(op);
  op.kind = Kind::ADDMM, op.batch = 1, op.input_dtype = op.weight_dtype = DType::F16, op.accum_dtype.reset();
  cases.push_back(op);
  for (auto& c : cases) {
    SCOPED_TRACE(to_json(c, -1));
    Inputs h = make_inputs(c);
    DeviceInputs d = make_device_inputs(c, nullptr);
    FLCE_CUDA_CHECK(cudaDeviceSynchronize(), "inputs");
    expect_bitwise("x", d.x, h.x);
    if (c.is_op()) {
      expect_bitwise("op_a", d.op_a, h.op_a);
      if (c.has_accumulator()) expect_bitwise("op_c", d.op_c, h.op_c);
      continue;
    }
    expect_bitwise("w", d.w, h.w);
    expect_bitwise("bias", d.bias, h.bias);
    expect_bitwise("ce_weight", d.ce_weight, h.ce_weight);
    expect_bitwise("token_grad", d.token_grad, h.token_grad);
    auto t = device_bits(d.target);
    for (size_t i = 0; i < h.target.size(); ++i)
      EXPECT_EQ(static_cast<int64_t>(t[i]), h.target[i]) << "target " << i;
  }
}

// ---- dtype_out GEMM ----

struct HostMat {
  std::vector<float> v;  // exact values of `dtype`
  DType dtype;
};

HostMat random_mat(size_t n, DType d, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  HostMat m{std::vector<float>(n), d};
  for (auto& x : m.v) x = round_to(d, nd(rng));
  return m;
}

DeviceBuffer upload(const HostMat& m) {
  const size_t es = dtype_size(m.dtype);
  std::vector<unsigned char> raw(m.v.size() * es);
  for (size_t i = 0; i < m.v.size(); ++i) {
    uint64_t b = host_bits(m.v[i], m.dtype);
    std::memcpy(raw.data() + i * es, &b, es);
  }
  DeviceBuffer d(raw.size(), nullptr, "upload");
  FLCE_CUDA_CHECK(cudaMemcpy(d.get(), raw.data(), raw.size(), cudaMemcpyHostToDevice), "upload");
  return d;
}

// |D - exact| <= (K+2) 2^-24 sum|a||b| + 2^-23 |beta C|, plus half an ulp of a 16-bit output.
void check_gemm(const GemmDesc& g, bool staged) {
  SCOPED_TRACE("M=" + std::to_string(g.M) + " N=" + std::to_string(g.N) + " K=" + std::to_string(g.K) +
               " ab=" + std::string(dtype_name(g.ab_type)) + " cd=" + std::string(dtype_name(g.cd_type)) +
               " ta=" + std::to_string(g.trans_a) + " tb=" + std::to_string(g.trans_b) +
               " beta=" + std::to_string(g.beta) + " batch=" + std::to_string(g.batch));
  std::mt19937 rng(1234);
  const int64_t a_rows = g.trans_a ? g.K : g.M, b_rows = g.trans_b ? g.N : g.K;
  HostMat A = random_mat(g.batch * g.stride_a + a_rows * g.lda, g.ab_type, rng);
  HostMat B = random_mat(g.batch * g.stride_b + b_rows * g.ldb, g.ab_type, rng);
  HostMat C = random_mat(g.batch * g.stride_d + g.M * g.ldd, g.cd_type, rng);
  DeviceBuffer dA = upload(A), dB = upload(B), dD = upload(C), ws(kGemmWorkspaceBytes, nullptr);
  DeviceBuffer stage(staged ? g.batch * g.M * g.N * sizeof(float) : 0, nullptr);
  GemmDesc gg = g;
  gg.ldc = g.ldd, gg.stride_c = g.stride_d;  // C == D: in-place accumulation
  gemm_any_out(default_lt_handle(), gg, dA.get(), dB.get(), dD.get(), dD.get(), stage.as<float>(), nullptr,
               ws.get(), ws.bytes(), "test");
  FLCE_CUDA_CHECK(cudaDeviceSynchronize(), "gemm test");
  DeviceTensor out;
  out.dtype = g.cd_type;
  out.shape = {static_cast<int64_t>(C.v.size())};
  out.buf = std::move(dD);
  Tensor64 h = tensor_to_host(out);
  const double u_out = g.cd_type == DType::F32 ? 0.0 : unit_roundoff(g.cd_type);
  int64_t bad = 0;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t m = 0; m < g.M; ++m)
      for (int64_t n = 0; n < g.N; ++n) {
        double exact = 0, mag = 0;
        for (int64_t k = 0; k < g.K; ++k) {
          double a = A.v[b * g.stride_a + (g.trans_a ? k * g.lda + m : m * g.lda + k)];
          double bb = B.v[b * g.stride_b + (g.trans_b ? n * g.ldb + k : k * g.ldb + n)];
          exact += a * bb;
          mag += std::fabs(a * bb);
        }
        const size_t di = b * g.stride_d + m * g.ldd + n;
        double c = g.beta * C.v[di];
        exact = g.alpha * exact + c;
        double tol = (g.K + 2) * std::ldexp(1.0, -24) * mag * std::fabs(g.alpha) + std::ldexp(1.0, -23) * std::fabs(c);
        tol = tol * (1 + u_out) + u_out * std::fabs(exact) + 1e-30 + (u_out > 0 ? std::ldexp(1.0, -24) : 0.0);
        if (!(std::fabs(h.data[di] - exact) <= tol) && bad++ < 5)
          ADD_FAILURE() << "D[" << b << "," << m << "," << n << "] = " << h.data[di] << ", exact " << exact
                        << ", tol " << tol;
      }
  EXPECT_EQ(bad, 0);
}

TEST(GpuDtypeOutGemm, WithinFp32AccumulationBound) {
  SKIP_WITHOUT_GPU();
  struct Combo {
    DType ab, cd;
  };
  for (Combo co : {Combo{DType::BF16, DType::F32}, Combo{DType::F16, DType::F32}, Combo{DType::BF16, DType::BF16},
                   Combo{DType::F16, DType::F16}, Combo{DType::F32, DType::F32}})
    for (int variant = 0; variant < 4; ++variant) {
      GemmDesc g;
      g.M = 33, g.N = 17, g.K = 70;
      g.trans_a = variant & 1, g.trans_b = variant & 2;
      g.lda = (g.trans_a ? g.M : g.K) + 3;  // padded rows: non-trivial leading dimensions
      g.ldb = (g.trans_b ? g.K : g.N) + 5;
      g.ldd = g.N + 1;
      g.ab_type = co.ab, g.cd_type = co.cd;
      g.beta = variant == 3 ? 1.0f : 0.0f;
      g.alpha = variant == 2 ? 0.5f : 1.0f;
      if (variant == 1) {  // strided batch
        g.batch = 3;
        g.stride_a = (g.trans_a ? g.K : g.M) * g.lda + 7;
        g.stride_b = (g.trans_b ? g.N : g.K) * g.ldb + 2;
        g.stride_d = g.M * g.ldd + 4;
      }
      check_gemm(g, false);
    }
  GemmDesc g;  // staged path: fp32 operands into a bf16 accumulator
  g.M = 20, g.N = 24, g.K = 90, g.lda = 90, g.ldb = 24, g.ldd = 24;
  g.ab_type = DType::F32, g.cd_type = DType::BF16, g.beta = 1.0f;
  check_gemm(g, true);
}

// ---- op-level reference ----

TEST(GpuReferenceOp, MatchesHostFp64) {
  SKIP_WITHOUT_GPU();
  struct OpCase {
    Kind kind;
    DType dt;
    bool accum32;
    int64_t batch;
  };
  for (OpCase oc : {OpCase{Kind::MM, DType::BF16, false, 1}, OpCase{Kind::ADDMM, DType::BF16, true, 1},
                    OpCase{Kind::BMM, DType::F16, false, 3}, OpCase{Kind::BADDBMM, DType::BF16, true, 2},
                    OpCase{Kind::ADDMM, DType::F32, false, 1}}) {
    Case c;
    c.kind = oc.kind, c.batch = oc.batch;
    c.BT = 45, c.H = 26, c.V = 31;
    c.input_dtype = c.weight_dtype = oc.dt;
    if (oc.accum32) c.accum_dtype = DType::F32;
    c.seed = 77;
    SCOPED_TRACE(to_json(c, -1));
    Inputs h = make_inputs(c);
    DeviceInputs d = make_device_inputs(c, nullptr);
    ReferenceResult r = reference_op_cuda(c, d, nullptr);
    Tensor64 out = tensor_to_host(r.tensors.at("out"));
    EXPECT_EQ(out.dtype, c.op_out_dtype());
    const DType od = c.op_out_dtype();
    const double u_out = od == DType::F32 ? 0.0 : unit_roundoff(od);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t m = 0; m < c.V; ++m)
        for (int64_t n = 0; n < c.H; ++n) {
          double exact = 0, mag = 0;
          for (int64_t k = 0; k < c.BT; ++k) {
            double p = double(h.op_a[(b * c.V + m) * c.BT + k]) * h.x[(b * c.BT + k) * c.H + n];
            exact += p, mag += std::fabs(p);
          }
          double acc = c.has_accumulator() ? h.op_c[(b * c.V + m) * c.H + n] : 0.0;
          exact += acc;
          double tol = (c.BT + 2) * std::ldexp(1.0, -24) * mag + std::ldexp(1.0, -23) * std::fabs(acc);
          tol = tol * (1 + u_out) + u_out * std::fabs(exact) + 1e-30;
          double got = out.data[(b * c.V + m) * c.H + n];
          ASSERT_LE(std::fabs(got - exact), tol) << "out[" << b << "," << m << "," << n << "]";
        }
  }
}

// ---- FLCE reference vs fp64 host loop ----

double rel_fro(const std::vector<double>& got, const std::vector<double>& want) {
  double e = 0, r = 0;
  for (size_t i = 0; i < want.size(); ++i) e += (got[i] - want[i]) * (got[i] - want[i]), r += want[i] * want[i];
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}

struct FlceCase {
  const char* name;
  Case c;
  int64_t chunk_rows;
  int64_t cache_elems;
  int64_t group_rows = 0;  // > chunk_rows: gradient groups of several logits chunks
};

std::vector<FlceCase> flce_cases() {
  std::vector<FlceCase> v;
  auto base = [](int64_t BT, int64_t H, int64_t V, DType d, uint64_t seed) {
    Case c;
    c.BT = BT, c.H = H, c.V = V;
    c.input_dtype = c.weight_dtype = d;
    c.seed = seed;
    c.device = Device::CUDA;
    return c;
  };
  Case c = base(37, 64, 100, DType::BF16, 1);  // scalar path (V % 4 != 0)
  v.push_back({"plain_bf16_mean", c, 16, -1});
  c = base(40, 64, 256, DType::BF16, 2);  // vector path, partial smem cache, everything on
  c.bias = c.ce_weight = true, c.requires_grad.bias = true;
  c.label_smoothing = 0.1, c.lse_square_scale = 1e-3, c.softcap = 20.0, c.ignore_fraction = 0.25;
  c.accum_dtype = DType::F32;
  c.return_z_loss = c.return_token_accuracy = c.return_predicted_tokens = true;
  v.push_back({"all_flags_bf16_accum32", c, 16, 64});
  c = base(33, 32, 128, DType::F32, 3);
  c.reduction = Reduction::SUM, c.label_smoothing = 0.05, c.softcap = 15.0, c.use_token_scaling = true;
  c.grad_output = 0.5, c.return_z_loss = true, c.lse_square_scale = 1e-4;
  v.push_back({"fp32_sum_smooth_softcap_scaling", c, 8, -1});
  c = base(29, 48, 96, DType::F16, 4);
  c.reduction = Reduction::NONE, c.ce_weight = true, c.lse_square_scale = 1e-4, c.ignore_fraction = 0.2;
  c.return_z_loss = c.return_token_accuracy = c.return_predicted_tokens = true;
  v.push_back({"fp16_none_token_grad", c, 10, -1});
  c = base(50, 64, 256, DType::BF16, 11);  // split plan: 3 chunks of 8 rows per gradient group
  c.bias = true, c.requires_grad.bias = true, c.accum_dtype = DType::F32, c.ignore_fraction = 0.1;
  v.push_back({"grouped_bf16_bias_accum32", c, 8, -1, 24});
  c = base(31, 32, 99, DType::F16, 12);  // split plan on the scalar path, per-token gradient, 16-bit accumulator
  c.reduction = Reduction::NONE, c.label_smoothing = 0.1, c.bias = true, c.requires_grad.bias = true;
  v.push_back({"grouped_fp16_none_scalar", c, 5, -1, 12});
  c = base(16, 32, 64, DType::BF16, 5);
  c.ignore_fraction = 1.0, c.return_token_accuracy = true;
  v.push_back({"all_ignored", c, 0, -1});
  c.semantics = Semantics::TORCH;
  v.push_back({"all_ignored_torch", c, 0, -1});
  c = base(24, 64, 200, DType::BF16, 6);
  c.regime = Regime::CONFIDENT, c.return_predicted_tokens = true;
  v.push_back({"confident", c, 0, -1});
  c = base(21, 32, 60, DType::F32, 7);  // mixed: fp32 x, bf16 W -> fp32 operands, staged bf16 grad_weight
  c.weight_dtype = DType::BF16, c.reduction = Reduction::SUM;
  v.push_back({"mixed_fp32_x_bf16_w", c, 8, -1});
  c = base(20, 32, 64, DType::F32, 8);  // autocast bf16 over fp32 tensors
  c.autocast = Autocast::BF16, c.bias = true, c.requires_grad.bias = true;
  v.push_back({"autocast_bf16", c, 8, -1});
  c = base(20, 32, 64, DType::BF16, 9);
  c.requires_grad.input = false, c.label_smoothing = 0.2;
  v.push_back({"weight_grad_only", c, 0, -1});
  c = base(25, 64, 100, DType::BF16, 10);
  c.regime = Regime::LARGE_LOGITS, c.softcap = 30.0;
  v.push_back({"large_logits_softcap", c, 0, -1});
  return v;
}

class GpuReferenceFlce : public ::testing::TestWithParam<FlceCase> {};

TEST_P(GpuReferenceFlce, MatchesHostFp64) {
  SKIP_WITHOUT_GPU();
  const FlceCase& fc = GetParam();
  const Case& c = fc.c;
  validate(c);
  SCOPED_TRACE(to_json(c, -1));
  Inputs h = make_inputs(c);
  test::HostFlce want = test::host_flce64(c, h);
  DeviceInputs d = make_device_inputs(c, nullptr);
  ReferenceOptions opt;
  opt.chunk_rows = fc.chunk_rows;
  opt.group_rows = fc.group_rows;
  opt.ce_cache_elems = fc.cache_elems;
  ReferenceResult r = reference_flce_cuda(c, d, nullptr, opt);
  if (fc.group_rows > fc.chunk_rows && fc.chunk_rows > 0) ASSERT_FALSE(r.plan.in_place());
  Outputs got = to_host(r);

  // Loss: fp32 logits (error ~ H 2^-24 |x||w|) and double row math; loss is O(1).
  double zmax = 1;
  for (double z : want.logits) zmax = std::max(zmax, std::fabs(z));
  const double loss_tol = 1e-5 * zmax;
  const bool none = c.reduction == Reduction::NONE;
  const Tensor64& loss = got.at("loss");
  if (none) {
    ASSERT_EQ(loss.shape, std::vector<int64_t>{c.BT});
    for (int64_t i = 0; i < c.BT; ++i) EXPECT_NEAR(loss.data[i], want.loss_rows[i], loss_tol) << "loss[" << i << "]";
  } else if (std::isnan(want.loss)) {
    EXPECT_TRUE(std::isnan(loss.data.at(0)));
  } else {
    EXPECT_NEAR(loss.data.at(0), want.loss, loss_tol * (1 + std::fabs(want.loss)));
  }
  if (c.regime == Regime::CONFIDENT && !none) {  // tiny loss must keep its relative accuracy
    EXPECT_NEAR(loss.data.at(0), want.loss, 1e-3 * std::fabs(want.loss) + 1e-12);
  }
  if (c.return_z_loss) {
    const Tensor64& z = got.at("z_loss");
    EXPECT_EQ(z.dtype, c.input_dtype);
    const double u = unit_roundoff(c.input_dtype);
    if (none)
      for (int64_t i = 0; i < c.BT; ++i) EXPECT_NEAR(z.data[i], want.z_rows[i], u * std::fabs(want.z_rows[i]) + 1e-6);
    else
      EXPECT_NEAR(z.data.at(0), want.z, u * std::fabs(want.z) + 1e-6);
  }
  // Predictions may differ from fp64 only at near-ties.
  std::vector<int64_t> pred_dev;
  if (c.return_predicted_tokens) {
    const Tensor64& p = got.at("predicted_tokens");
    for (int64_t i = 0; i < c.BT; ++i) {
      int64_t a = static_cast<int64_t>(p.data[i]), b = want.pred[i];
      if (a == b) continue;
      ASSERT_GE(a, 0) << "row " << i;
      ASSERT_GE(b, 0) << "row " << i;
      EXPECT_NEAR(want.logits[i * c.V + a], want.logits[i * c.V + b], 1e-4 * zmax) << "argmax row " << i;
    }
  }
  if (c.return_token_accuracy) {
    const Tensor64& a = got.at("token_accuracy");
    if (none) {
      int64_t diff = 0;
      for (int64_t i = 0; i < c.BT; ++i) diff += a.data[i] != want.acc_rows[i];
      EXPECT_LE(diff, 1);
    } else if (std::isnan(want.acc)) {
      EXPECT_TRUE(std::isnan(a.data.at(0)));
    } else {
      EXPECT_NEAR(a.data.at(0), want.acc, 1.5 / c.BT);
    }
  }
  // Gradients: G rounded once to the operand dtype, then GEMMs into the output dtype;
  // a low-precision accumulator also rounds once per gradient group.
  const DType op = gemm_operand_dtype(c);
  const double base_tol = 4 * unit_roundoff(op) + 1e-5;
  auto check_grad = [&](const char* name, const std::vector<double>& w, DType out_dt, double extra) {
    bool wanted = (std::string(name) == "grad_input" && c.requires_grad.input) ||
                  (std::string(name) == "grad_weight" && c.requires_grad.weight) ||
                  (std::string(name) == "grad_bias" && c.bias && c.requires_grad.bias);
    ASSERT_EQ(got.count(name) == 1, wanted) << name;
    if (!wanted) return;
    const Tensor64& t = got.at(name);
    EXPECT_EQ(t.dtype, out_dt) << name;
    const double tol = base_tol + 4 * unit_roundoff(out_dt) + extra;
    double e = rel_fro(t.data, w);
    bool all_zero = true;
    for (double x : w) all_zero = all_zero && x == 0;
    if (all_zero)
      EXPECT_EQ(e, 0.0) << name;
    else
      EXPECT_LE(e, tol) << name;
  };
  const double chunk_acc = c.accum_dtype ? 0.0 : r.plan.n_groups * unit_roundoff(c.weight_dtype);
  check_grad("grad_input", want.gi, c.input_dtype, 0.0);
  check_grad("grad_weight", want.gw, c.weight_dtype, chunk_acc);
  check_grad("grad_bias", want.gb, c.weight_dtype, chunk_acc);
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuReferenceFlce, ::testing::ValuesIn(flce_cases()),
                         [](const ::testing::TestParamInfo<FlceCase>& i) { return std::string(i.param.name); });

// Host-side planning: runs without a GPU.
TEST(ReferencePlan, SplitGivesLargerGradientGroupsForSixteenBitGradients) {
  const size_t budget = kDefaultChunkBudgetBytes;
  ChunkPlan bf = plan_chunks(8192, 128256, 2, budget);
  EXPECT_FALSE(bf.in_place());
  EXPECT_EQ(bf.group_rows % bf.rows, 0);
  EXPECT_EQ(bf.n_groups, 4);  // the bench shape: four passes over grad_weight
  ChunkPlan ip = plan_chunks(8192, 128256, 4, budget);  // fp32 gradients: in place
  EXPECT_TRUE(ip.in_place());
  EXPECT_GT(bf.group_rows, ip.rows);
  for (const ChunkPlan& p : {bf, ip}) {  // both stay within the budget
    const size_t grad = p.in_place() ? 0 : size_t(p.group_rows) * 128256 * 2;
    EXPECT_LE(size_t(p.rows) * 128256 * 4 + grad, budget);
  }
}

TEST(ReferencePlan, CoversEveryRowAndHonoursOverrides) {
  for (int64_t BT : {1, 7, 64, 1000, 4097})
    for (int64_t V : {3, 1000, 50257})
      for (size_t g : {2, 4})
        for (size_t budget : {size_t(1) << 16, size_t(1) << 22, size_t(1) << 28}) {
          ChunkPlan p = plan_chunks(BT, V, g, budget);
          ASSERT_GE(p.rows, 1);
          EXPECT_EQ(p.group_rows % p.rows == 0 || p.group_rows == BT, true);
          EXPECT_GE(p.n_groups * p.group_rows, BT);
          EXPECT_LT((p.n_groups - 1) * p.group_rows, BT);
          EXPECT_GE(p.n_chunks * p.rows, BT);
        }
  ChunkPlan o = plan_chunks(50, 256, 2, kDefaultChunkBudgetBytes, 8, 20);  // rounded up to whole chunks
  EXPECT_EQ(o.rows, 8);
  EXPECT_EQ(o.group_rows, 24);
  EXPECT_EQ(o.n_groups, 3);
  EXPECT_TRUE(plan_chunks(50, 256, 2, kDefaultChunkBudgetBytes, 8).in_place());
}

TEST(GpuCompare, CountsAndErrors) {
  SKIP_WITHOUT_GPU();
  Tensor64 ref{{6}, DType::F64, {1.0, 2.0078125, NAN, INFINITY, -1.0, 0.0}};
  HostMat test{{1.0f, 2.015625f, NAN, -INFINITY, NAN, 0.0f}, DType::BF16};
  DeviceBuffer dt = upload(test);
  DeviceTensor dr = upload_f64(ref);
  CompareStats s = compare_to_f64(dt.get(), DType::BF16, static_cast<const double*>(dr.data()), 6, DType::BF16,
                                  nullptr);
  EXPECT_EQ(s.nan_test, 2);
  EXPECT_EQ(s.nan_ref, 1);
  EXPECT_EQ(s.inf_test, 1);
  EXPECT_EQ(s.inf_ref, 1);
  EXPECT_EQ(s.nonfinite_mismatch, 2);  // -inf vs inf, NaN vs -1
  EXPECT_DOUBLE_EQ(s.max_abs_err, 0.0078125);
  EXPECT_EQ(s.max_abs_index, 1);
  EXPECT_DOUBLE_EQ(s.max_ulp, 0.5);  // bf16 ulp near 2 is 2^-6
}

}  // namespace
}  // namespace flce
