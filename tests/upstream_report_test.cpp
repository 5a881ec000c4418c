// flce report's writing on synthetic finding folders (the real campaign finding is
// tests/report.cmake's): the guilty column of the judge's three-way verdict when report.json
// has one, a CUDA fault's kernel in the title and its own section, a matrix row matched by case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "case/case.hpp"
#include "fuzz/campaign/campaign_state.hpp"
#include "fuzz/findings/finding.hpp"
#include "repro/upstream_report.hpp"
#include "report/markdown.hpp"
#include "report/write.hpp"

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

// The subject's source as a user names it: the commit of an exported tree (with REPO@REF when the
// run recorded --subject-git), never the installed wheel's number for a tree; an installed
// release as the subject says it.
TEST(UpstreamReport, SubjectSourceNamesTheTreesCommitNotTheWheel) {
  Dir d;
  d.write("case.json", to_json(example_case()));
  const std::string hex = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c";
  auto report = [&](const std::string& version, const std::string& extra) {
    d.write("report.json", R"({"subject": "liger", "subject_version": ")" + version + R"(",
      "environment": {"torch": "2.11.0+cu130", "liger": "0.8.5"}, "outcome": "judge:grad_weight:out-of-bounds@eager")" +
                               extra + "}");
    return render(load_finding(d.p));
  };
  // A report.json of liger.py before it named trees: the wheel's number with a tree's file.
  const std::string file = "/root/.cache/flce/trees/" + hex + "/src/liger_kernel/__init__.py";
  std::string md = report("liger-kernel 0.8.5 (" + file + ")", "");
  EXPECT_NE(md.find("Subject `liger`: liger-kernel git `ead96b618e5c`, a tree exported by `--subject-git` (`" + file + "`); "
                    "outcome `judge:grad_weight:out-of-bounds@eager`."),
            std::string::npos) << md;
  EXPECT_EQ(md.find("liger-kernel 0.8.5"), std::string::npos) << md;
  EXPECT_NE(md.find("| Liger-Kernel installed | `0.8.5` (another copy: the subject ran from the tree below) |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| subject commit | `" + hex + "` |"), std::string::npos) << md;
  // With the run's record of --subject-git: the ref and the repository it came from.
  md = report("liger-kernel git ead96b618e5c, a tree flce exported (" + file + ")",
              R"(, "subject_git": {"repo": "/src/Liger-Kernel", "ref": "main", "commit": ")" + hex + R"(", "subject": "fix"})");
  EXPECT_NE(md.find("| subject | `liger`: liger-kernel git `ead96b618e5c` (main), a tree exported from "
                    "`/src/Liger-Kernel@main` |"),
            std::string::npos) << md;
  // A ref that is the commit itself is not repeated.
  md = report("x", R"(, "subject_git": {"repo": "/r", "ref": "ead96b6", "commit": ")" + hex + R"("})");
  EXPECT_NE(md.find("`liger`: x git `ead96b618e5c`, a tree exported from `/r@ead96b6`"), std::string::npos) << md;
  // An installed release: the subject's words; the environment's Liger is that copy.
  md = report("liger-kernel 0.8.5, installed release (/venv/site-packages/liger_kernel/__init__.py)", "");
  EXPECT_NE(md.find("Subject `liger`: `liger-kernel 0.8.5, installed release (/venv/site-packages/liger_kernel/__init__.py)`"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| Liger-Kernel | `0.8.5` |"), std::string::npos) << md;
  EXPECT_EQ(md.find("subject commit"), std::string::npos) << md;
  // A checkout given with --subject-path: its own version; the wheel is another copy.
  md = report("liger-kernel source tree at /src/Liger-Kernel, pyproject.toml version 0.8.6 (/src/Liger-Kernel/src/"
              "liger_kernel/__init__.py)", "");
  EXPECT_NE(md.find("| Liger-Kernel installed | `0.8.5` (another copy"), std::string::npos) << md;
}

// What `flce bisect --out DIR` found, in the report: the first bad commit and its title, the
// range, the steps, and the good end's caveat (here derived: the GPU box's bisect.json of
// liger-softcap-fp32-none-tiny predates flce bisect's own note).
TEST(UpstreamReport, BisectSectionWithTheGoodEndsCaveat) {
  Dir d;
  d.write("case.json", to_json(example_case()));
  d.write("report.json", R"({"subject": "liger", "outcome": "judge:grad_weight:out-of-bounds@eager"})");
  const fs::path proof = fs::path(FLCE_SOURCE_DIR) / "tests" / "data" / "report" / "bisect-liger-softcap-v0.8.1.json";
  fs::create_directories(d.p / "bisect");
  fs::copy_file(proof, d.p / "bisect" / "bisect.json");
  std::string md = render(load_finding(d.p));
  EXPECT_NE(md.find("## Bisect\n\nFrom `flce bisect` (`" + (d.p / "bisect" / "bisect.json").string() + "`): first bad commit "
                    "`9ac26bb82226` Fix wrong grad_weight/grad_bias for fused linear cross entropy with reduction='none' "
                    "(#1298).\n\nRange: --good `v0.8.1` (`a5234dfc1d29`) .. --bad `main` (`ead96b618e5c`) in "
                    "`/work/main/.carry/liger-repo.git`, 44 commits on the ancestry path, 7 runs, 0 skipped, 84 s. "
                    "Bad outcome: `judge:grad_weight:out-of-bounds@eager` (the outcome at --bad).\n\n**Note:** the good "
                    "end v0.8.1 (a5234dfc1d29) does not pass: judge:grad_weight:missing@eager; the commit before it in "
                    "the order, e44a5fe86d3e, still shows it: the commit found is where that failure turned into the bad "
                    "one.\n\n| # | role | commit | subject | outcome | verdict |\n"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| 5 | step | `e44a5fe86d3e` | perf(ce): single-shot dx_y gradient correction (#1268) | "
                    "`judge:grad_weight:missing@eager` | good |"),
            std::string::npos) << md;
  EXPECT_EQ(md.find("The bisect looked for"), std::string::npos);  // the same outcome as the finding's
  EXPECT_LT(md.find("## Bisect"), md.find("## Known upstream"));

  // bisect.json's own note, when it has one, is quoted as it is; another outcome is said.
  nlohmann::json j = nlohmann::json::parse(read_text(proof));
  j["note"] = "the good end v0.8.1 (a5234dfc1d29) does not pass: as bisect said";
  fs::create_directories(d.p / "elsewhere");
  std::ofstream(d.p / "elsewhere" / "bisect.json") << j.dump();
  d.write("report.json", R"({"subject": "liger", "outcome": "judge:loss:out-of-bounds@eager"})");
  md = render(load_finding(d.p, {}, d.p / "elsewhere"));
  EXPECT_NE(md.find("(`" + (d.p / "elsewhere" / "bisect.json").string() + "`)"), std::string::npos) << md;
  EXPECT_NE(md.find("**Note:** the good end v0.8.1 (a5234dfc1d29) does not pass: as bisect said."), std::string::npos) << md;
  EXPECT_NE(md.find("The bisect looked for `judge:grad_weight:out-of-bounds@eager`; this finding's outcome is "
                    "`judge:loss:out-of-bounds@eager`."),
            std::string::npos) << md;
  // A note-less result whose good end passes says nothing of it.
  j.erase("note");
  j["steps"][1]["outcome"] = "pass";
  std::ofstream(d.p / "elsewhere" / "bisect.json") << j.dump();
  EXPECT_EQ(render(load_finding(d.p, {}, d.p / "elsewhere")).find("**Note:**"), std::string::npos);
}

TEST(UpstreamReport, BadBisectDirNamesTheFlag) {
  Dir d;
  d.write("case.json", to_json(example_case()));
  d.write("report.json", R"({"subject": "model", "outcome": "pass"})");
  auto message = [&](const fs::path& given) {
    try {
      load_finding(d.p, {}, given);
    } catch (const FindingInputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(d.p / "nope"), "--bisect " + (d.p / "nope").string() + ": no such directory");
  EXPECT_EQ(message(d.p / "case.json"),
            "--bisect " + (d.p / "case.json").string() + ": not a directory (give the DIR of `flce bisect --out DIR`)");
  fs::create_directories(d.p / "empty");
  EXPECT_EQ(message(d.p / "empty"),
            "--bisect " + (d.p / "empty").string() + ": no bisect.json in it (what `flce bisect --out DIR` writes)");
  d.write("empty/bisect.json", "{\"status\": \"found\"");
  EXPECT_NE(message(d.p / "empty").find("bisect.json is not a flce bisect result"), std::string::npos);
  // Not given: a broken one next to the finding is no bisect, not an error.
  fs::create_directories(d.p / "bisect");
  d.write("bisect/bisect.json", "not json");
  EXPECT_TRUE(load_finding(d.p).bisect.is_null());
}

// A campaign run with --subject-git keeps the tree's origin in state.json (round trip), and the
// report of one of its findings names the ref and repository from there.
TEST(UpstreamReport, CampaignStateCarriesTheSubjectGitRecord) {
  Dir d;
  const std::string hex = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c";
  CampaignState st;
  st.subject = "liger";
  st.subject_path = "/c/trees/" + hex + "/src";
  st.subject_git = {{"repo", "/src/Liger-Kernel"}, {"ref", "main"}, {"commit", hex}, {"subject", "fix"}};
  const CampaignState back = CampaignState::from_json(nlohmann::json::parse(st.to_json().dump()));
  EXPECT_EQ(back.subject_git, st.subject_git);
  EXPECT_TRUE(CampaignState::from_json(nlohmann::json::parse(CampaignState{}.to_json().dump())).subject_git.is_null());
  d.write("state.json", back.to_json().dump());
  const fs::path f = d.p / "findings" / "judge-x";
  fs::create_directories(f);
  std::ofstream(f / "case.json") << to_json(example_case());
  std::ofstream(f / "finding.json") << R"({"id": "judge-x", "signature": "judge:grad_weight:out-of-bounds@eager"})";
  std::ofstream(f / "report.json") << R"J({"subject": "liger", "subject_version": "liger-kernel git ead96b618e5c, a tree flce exported (x)",
    "outcome": "judge:grad_weight:out-of-bounds@eager"})J";
  const std::string md = render(load_finding(f));
  EXPECT_NE(md.find("Subject `liger`: liger-kernel git `ead96b618e5c` (main), a tree exported from `/src/Liger-Kernel@main`;"),
            std::string::npos) << md;
}

}  // namespace
}  // namespace flce
