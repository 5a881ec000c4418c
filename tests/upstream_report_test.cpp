// flce report's writing on synthetic finding folders (the real campaign finding is
// tests/report.cmake's): the guilty column of the judge's three-way verdict when report.json
// has one, a CUDA fault's kernel in the title and its own section, a matrix row matched by case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "case/case.hpp"
#include "fuzz/findings/upstream_report.hpp"
#include "report/markdown.hpp"

namespace flce {
namespace {

namespace fs = std::filesystem;

struct Dir {
  fs::path p = fs::temp_directory_path() / ("flce-upstream-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Dir() { fs::create_directories(p); }
  ~Dir() { fs::remove_all(p); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(p / name) << text; }
};

std::string render(const FindingFiles& f) {
  return render_markdown(upstream_report(f, SignatureTable::load_default(), "flce 9.9 (git abc)"));
}

TEST(UpstreamReport, GuiltyColumnAndWorstElement) {
  Dir d;
  Case c = example_case();
  c.reduction = Reduction::NONE;
  c.return_z_loss = true;
  d.write("case.json", to_json(c));
  d.write("report.json", R"({"subject": "liger", "subject_version": "liger-kernel 0.8.5",
    "environment": {"torch": "2.11.0+cu130", "triton": "3.6.0", "python": "3.12.3", "gpu": "NVIDIA H200", "capability": "9.0"},
    "outcome": "judge:grad_input:out-of-bounds@compiled", "first_failing_stage": "inductor",
    "oracles": [{"oracle": "compiled", "backend": "inductor", "status": "ok", "outputs": [
      {"output": "grad_input", "finding": "out-of-bounds", "dtype": "bf16", "max_abs_err": 0.5, "err_over_bound": 12.5,
       "bound_at_worst": 0.04, "worst_index": 17, "got_at_worst": 1.25, "fp64_at_worst": 0.75, "n_out_of_bounds": 3,
       "guilty": "compiled", "detail": "3 of 128 elements out of bounds"},
      {"output": "loss", "finding": "ok"}]}],
    "ladder": [{"backend": "aot_eager", "pass": true, "what": "ok"}, {"backend": "inductor", "pass": false, "what": "grad_input"}],
    "golden": {"grad_input": {"shape": [8, 16]}}})");
  const FindingFiles f = load_finding(d.p);
  EXPECT_EQ(upstream_title(f, SignatureTable::load_default()),
            "FLCE: compiled grad_input out of bounds vs fp64 with reduction='none', z-loss, bf16, fp32 accumulation [liger]");
  const std::string md = render(f);
  EXPECT_NE(md.find("| oracle | output | dtype | finding | worst element | observed | fp64 | abs error | bound | "
                    "error / bound | elements out | guilty |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `compiled[inductor]` | `grad_input` | bf16 | out-of-bounds | `[1, 1]` | 1.25 | 0.75 | 0.5 | "
                    "0.04 | 12.5x | 3 | compiled |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `inductor` | `grad_input` |"), std::string::npos);
  EXPECT_NE(md.find("First failing stage: `inductor`"), std::string::npos);
  EXPECT_NE(md.find("| GPU | `NVIDIA H200 (sm 9.0)` |"), std::string::npos);
  EXPECT_NE(md.find("Reported by flce 9.9 (git abc)."), std::string::npos);
}

TEST(UpstreamReport, CudaFaultNamesTheKernelAndMatrixRowsMatchByCase) {
  Dir d;
  d.write("case.json", to_json(example_case()));
  d.write("report.json", R"({"subject": "liger", "outcome": "bucket-0123456789ab@eager:-", "oracles": [
    {"oracle": "eager", "status": "error", "signature": {"id": "bucket-0123456789ab", "known": false,
     "matched": "torch.AcceleratorError: CUDA error: an illegal memory access was encountered", "phase": "forward"}}]})");
  d.write("finding.json", R"({"id": "bucket-0123456789ab-x", "signature": "bucket-0123456789ab@eager:-", "count": 4,
    "cuda_poisoned": true, "shrink": "smallest", "shrink_runs": 3, "elements": 100, "min_elements": 100})");
  d.write("cuda_fault.json", R"({"status": "named", "kernel": "liger_cross_entropy_kernel", "kernel_source": "compute-sanitizer",
    "launch": "liger_kernel/ops/fused_linear_cross_entropy.py:132:fused_linear_cross_entropy_forward",
    "launch_code": "liger_cross_entropy_kernel[(n_rows,)](", "error": "an illegal memory access was encountered",
    "access": "Invalid __global__ read of size 2 bytes"})");
  Case other = example_case();
  other.BT = 3;
  d.write("other.json", to_json(other));  // another case: its row is not this finding's
  d.write("matrix.json", R"({"rows": [{"case": "other.json", "subject": "liger", "cells": [{"torch": "2.8.0", "outcome": "pass"}]},
    {"case": ")" + (d.p / "case.json").string() + R"(", "subject": "liger", "cells": [{"torch": "2.11.0", "outcome": "bucket-0123456789ab@eager:-"},
     {"torch": "2.13.0", "outcome": "pass"}]}]})");
  const FindingFiles f = load_finding(d.p);
  const std::string title = upstream_title(f, SignatureTable::load_default());
  EXPECT_EQ(title.rfind("FLCE: CUDA fault (an illegal memory access was encountered) in kernel liger_cross_entropy_kernel", 0), 0u)
      << title;
  const std::string md = render(f);
  EXPECT_NE(md.find("## CUDA fault"), std::string::npos);
  EXPECT_NE(md.find("| launched at | `liger_kernel/ops/fused_linear_cross_entropy.py:132:fused_linear_cross_entropy_forward` |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("reproduces on torch 2.11.0."), std::string::npos) << md;  // the row of case.json, not other.json's
  EXPECT_EQ(md.find("`2.8.0`"), std::string::npos);
  EXPECT_NE(md.find("| finding id | `bucket-0123456789ab-x` |"), std::string::npos);
  EXPECT_NE(md.find("Size: "), std::string::npos);
}

// A shrunk finding quotes the minimized case's own run (what repro.py shows), not the values of
// the case as found; without minimized_report.json it says the values are the unminimized ones.
TEST(UpstreamReport, MinimizedRunValuesWhenTheShrinkerKeptThem) {
  Dir d;
  Case c = example_case();
  d.write("case.json", to_json(c));
  Case m = c;
  m.BT = 1;
  d.write("minimized.json", to_json(m));
  auto report = [](double got, double fp64) {
    return "{\"subject\": \"model-bug-smoothing\", \"outcome\": \"judge:grad_input:out-of-bounds@eager\", "
           "\"oracles\": [{\"oracle\": \"eager\", \"status\": \"ok\", \"outputs\": [{\"output\": \"grad_input\", "
           "\"finding\": \"out-of-bounds\", \"dtype\": \"fp32\", \"max_abs_err\": 1, \"err_over_bound\": 9, "
           "\"bound_at_worst\": 0.1, \"worst_index\": 0, \"got_at_worst\": " + std::to_string(got) +
           ", \"fp64_at_worst\": " + std::to_string(fp64) + ", \"n_out_of_bounds\": 1}]}]}";
  };
  d.write("report.json", report(111.5, 110.5));
  std::string md = render(load_finding(d.p));
  EXPECT_NE(md.find("the unminimized case"), std::string::npos) << md;
  EXPECT_NE(md.find("| 111.5 | 110.5 |"), std::string::npos) << md;
  d.write("minimized_report.json", report(2.5, 1.5));
  md = render(load_finding(d.p));
  EXPECT_NE(md.find("from the run of the minimized case"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2.5 | 1.5 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("111.5"), std::string::npos) << md;
}

TEST(UpstreamReport, NotAFinding) {
  Dir d;
  EXPECT_THROW(load_finding(d.p), FindingInputError);
  d.write("x.json", "{\"BT\": 0}");
  EXPECT_THROW(load_finding(d.p), FindingInputError);
  EXPECT_THROW(load_finding(d.p / "x.json"), FindingInputError);
}

}  // namespace
}  // namespace flce
