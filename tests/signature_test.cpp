// Known signatures are found anywhere in the chain; unknown ones bucket stably.
#include <gtest/gtest.h>

#include "judge/signature.hpp"

using namespace flce;

static ErrorChain torch211_tier1_chain() {
  // Shape of what torch 2.11 raises: the known text only deep in the chain.
  return {
      {"torch._dynamo.exc.TorchRuntimeError", "RuntimeError when making fake tensor call\n\nfrom user code: ...",
       {"/venv/lib/python3.12/site-packages/torch/_dynamo/utils.py:3200:run_node"}},
      {"TypeError", "unsupported operand type(s) for *: 'torch.dtype' and 'FakeTensor'",
       {"/venv/lib/python3.12/site-packages/torch/_decomp/decompositions.py:1400:addmm",
        "/venv/lib/python3.12/site-packages/torch/_prims_common/wrappers.py:300:_fn"}},
  };
}

TEST(Signature, Tier1FoundDeepInChain) {
  auto t = SignatureTable::load_default();
  Signature s = t.classify(torch211_tier1_chain(), "2.11.0+cu130");
  EXPECT_TRUE(s.known);
  EXPECT_EQ(s.id, "tier1-decomposition");
  ASSERT_TRUE(s.expected_here.has_value());
  EXPECT_TRUE(*s.expected_here);
  EXPECT_FALSE(*t.classify(torch211_tier1_chain(), "2.13.0").expected_here);
  EXPECT_EQ(s.innermost_torch_frame, "torch/_prims_common/wrappers.py:_fn");
}

TEST(Signature, Tier2Lowering) {
  auto t = SignatureTable::load_default();
  ErrorChain c{{"torch._inductor.exc.InductorError", "LoweringException: TypeError: tuned_addmm() takes 3 positional arguments but 4 were given\n  target: aten.addmm.dtype_out", {}}};
  EXPECT_EQ(t.classify(c, "2.13.0").id, "tier2-lowering");
}

TEST(Signature, TritonWrapperDecompositionAssertIsPytorch181735) {
  auto t = SignatureTable::load_default();
  // A bare `assert` (empty message) inside Inductor's post-grad pass: found by its frame.
  ErrorChain c{{"torch._inductor.exc.InductorError", "AssertionError: \n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace",
                {"/venv/lib/python3.12/site-packages/torch/_inductor/compile_fx.py:812:_compile_fx_inner"}},
               {"builtins.AssertionError", "",
                {"/venv/lib/python3.12/site-packages/torch/_inductor/fx_passes/post_grad.py:1290:"
                 "decompose_triton_kernel_wrapper_functional",
                 "/venv/lib/python3.12/site-packages/torch/_inductor/pattern_matcher.py:301:replace_by_example"}}};
  Signature s = t.classify(c, "2.11.0+cu130");
  EXPECT_EQ(s.id, "inductor-triton-wrapper-decomp-assert");
  ASSERT_EQ(s.upstream.size(), 1u);
  EXPECT_EQ(s.upstream[0], "https://github.com/pytorch/pytorch/issues/181735");
  // Another bare assertion elsewhere is not it.
  c[1].frames = {"/venv/lib/python3.12/site-packages/torch/_inductor/scheduler.py:100:fuse"};
  EXPECT_NE(t.classify(c, "2.11.0+cu130").id, "inductor-triton-wrapper-decomp-assert");
}

// Two Liger failures of the H200 that were buckets (docs/benchmarks-history.md, third round): Triton's
// loop-carried dtype assertion before Liger #1362, raised in the worker itself or inside Inductor's
// compile pool (whose SubprocException carries the remote traceback in its message), and the
// torch.equal fast path of Liger's backward under fullgraph=True.
TEST(Signature, LigersSoftcapCompileFailureAndItsDataDependentBranchAreTyped) {
  auto t = SignatureTable::load_default();
  const std::string triton = "Loop-carried variable m has initial type fp32 but is re-assigned to fp64";
  ErrorChain alone{{"torch._inductor.exc.InductorError", "AssertionError: " + triton, {}},
                   {"builtins.AssertionError", triton, {}}};
  EXPECT_EQ(t.classify(alone, "2.11.0+cu130").id, "triton-loop-carried-dtype");
  ErrorChain pooled{{"torch._inductor.compile_worker.subproc_pool.SubprocException",
                     "An exception occurred in a subprocess:\n\nTraceback (most recent call last):\n  File ...\n"
                     "AssertionError: " + triton + "\n", {}}};
  EXPECT_EQ(t.classify(pooled, "2.11.0+cu130").id, "triton-loop-carried-dtype");
  ErrorChain other{{"torch._inductor.compile_worker.subproc_pool.SubprocException",
                    "An exception occurred in a subprocess:\n\nRuntimeError: out of resource: shared memory", {}}};
  EXPECT_NE(t.classify(other, "2.11.0+cu130").id, "triton-loop-carried-dtype");
  ErrorChain equal{{"torch._dynamo.exc.Unsupported", "Data-dependent branching", {}},
                   {"torch._subclasses.fake_tensor.DataDependentOutputException", "aten.equal.default",
                    {"/venv/lib/python3.12/site-packages/torch/_subclasses/fake_impls.py:120:data_dep"}}};
  EXPECT_EQ(t.classify(equal, "2.11.0+cu130").id, "data-dependent-equal");
}

// Liger main under fullgraph=True on the H200 (docs/benchmarks-history.md, ninth round): four buckets, typed.
TEST(Signature, LigersFullgraphFailuresAreTypedWithTheirSide) {
  auto t = SignatureTable::load_default();
  auto id_of = [&](const std::string& type, const std::string& msg) {
    return t.classify({{"torch._dynamo.exc.Unsupported", "Dynamo failed", {}}, {type, msg, {}}}, "2.11.0+cu130").id;
  };
  EXPECT_EQ(id_of("torch._dynamo.exc.UnknownPropertiesDuringBackwardTrace",
                  "Unknown property stride during speculating backward, dynamo will insert contiguous call ahead"),
            "dynamo-backward-unknown-property");
  EXPECT_EQ(id_of("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",
                  "Could not guard on data-dependent expression u2 > 0 (unhinted: u2 > 0).  (Size-like symbols: u2)"),
            "guard-on-data-dependent");
  EXPECT_EQ(id_of("torch.fx.experimental.symbolic_shapes.PendingUnbackedSymbolNotFound",
                  "Pending unbacked symbols {zuf6, zuf7} not in returned outputs (FakeTensor(...))"),
            "pending-unbacked-symbol");
  EXPECT_EQ(id_of("builtins.AttributeError", "'SymNodeVariable' object has no attribute 'value'"),
            "dynamo-symnode-no-value");
  EXPECT_NE(id_of("builtins.AttributeError", "'TensorVariable' object has no attribute 'value'"), "dynamo-symnode-no-value");
  // torch 2.13's F.linear_cross_entropy warns under compile: the skipped builtin is named in the
  // explanation, below the generic first line; another skipped function is not this signature.
  const std::string skipped = "Attempted to call function marked as skipped\n  Explanation: Dynamo does not know how to "
                              "trace the Python builtin `_warnings.warn`.\n  Hint: ...";
  EXPECT_EQ(id_of("torch._dynamo.exc.Unsupported", skipped), "dynamo-warnings-warn");
  EXPECT_NE(id_of("torch._dynamo.exc.Unsupported", "Attempted to call function marked as skipped\n  Explanation: "
                  "Dynamo does not know how to trace the Python builtin `time.sleep`."), "dynamo-warnings-warn");
  // A data-dependent guard can come from any branch of any subject: generic, walked per graph.
  Signature g = t.classify({{"torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode",
                             "Could not guard on data-dependent expression Eq(u0, 1)", {}}}, "2.11.0+cu130");
  EXPECT_TRUE(g.generic);
}

// A walked signature's later sightings name its first failing stage, not the case's backend.
TEST(Signature, TheSameFailureAtAnotherStage) {
  EXPECT_TRUE(same_failure("data-dependent-equal@compiled:inductor", "data-dependent-equal@compiled:eager"));
  EXPECT_FALSE(same_failure("data-dependent-equal@compiled:inductor", "tier1-decomposition@compiled:inductor"));
  EXPECT_FALSE(same_failure("judge:loss:out-of-bounds@compiled", "judge:loss:nonfinite@compiled"));
  EXPECT_FALSE(same_failure("crash:SIGABRT@compiled:inductor", "crash:SIGSEGV@compiled:inductor"));
  EXPECT_FALSE(same_failure("data-dependent-equal@compiled:eager", "pass"));
  EXPECT_TRUE(same_failure("pass", "pass"));
}

// The catch-all for fake-tensor propagation is known but generic: two graphs that raise it may be
// two bugs, so a campaign walks its ladder per graph, as for an unknown one.
TEST(Signature, TheFakeTensorCatchAllIsGeneric) {
  auto t = SignatureTable::load_default();
  ErrorChain c{{"torch._dynamo.exc.TorchRuntimeError", "RuntimeError when making fake tensor call\n\nfrom user code: ...", {}},
               {"ValueError", "some planted message no entry knows", {}}};
  Signature s = t.classify(c, "2.11.0+cu130");
  EXPECT_EQ(s.id, "fake-tensor-call");
  EXPECT_TRUE(s.known);
  EXPECT_TRUE(s.generic);
  EXPECT_FALSE(t.classify(torch211_tier1_chain(), "2.11.0+cu130").generic);
}

TEST(Signature, TableHasRequiredEntriesWithLinks) {
  auto t = SignatureTable::load_default();
  for (const char* id : {"tier1-decomposition", "tier2-lowering", "amp-mat-dtype-mismatch", "op-not-implemented-on-device"}) {
    auto it = std::find_if(t.entries().begin(), t.entries().end(), [&](auto& e) { return e.id == id; });
    ASSERT_NE(it, t.entries().end()) << id;
    EXPECT_FALSE(it->upstream.empty()) << id;
  }
}

TEST(Signature, UnknownErrorsBucketByNormalizedMessage) {
  auto t = SignatureTable::load_default();
  ErrorChain a{{"ValueError", "size mismatch at 0x7f00dead: [8, 16] vs [8, 32] in /tmp/a/b.py", {"/x/torch/_refs/__init__.py:10:foo"}}};
  ErrorChain b{{"ValueError", "size mismatch at 0x7f00beef: [4, 16] vs [2, 2] in /home/c.py", {"/y/torch/_refs/__init__.py:99:foo"}}};
  ErrorChain other{{"ValueError", "size mismatch: [8] vs [8]", {"/x/torch/_refs/__init__.py:10:foo"}}};
  ErrorChain moved{{"ValueError", "size mismatch at 0x1: [8] vs [8] in /z/c.py", {"/x/torch/_dynamo/eval_frame.py:10:bar"}}};
  Signature sa = t.classify(a, "2.13.0"), sb = t.classify(b, "2.13.0");
  EXPECT_FALSE(sa.known);
  EXPECT_EQ(sa.id.rfind("bucket-", 0), 0u);
  EXPECT_EQ(sa.id, sb.id) << sa.title << " vs " << sb.title;
  EXPECT_NE(sa.id, t.classify(other, "2.13.0").id) << "different message";
  // One bug seen through another harness: another innermost torch frame, the same bucket.
  Signature sm = t.classify(moved, "2.13.0");
  EXPECT_EQ(sa.id, sm.id);
  EXPECT_EQ(sm.innermost_torch_frame, "torch/_dynamo/eval_frame.py:bar");
}

TEST(Signature, VersionRanges) {
  EXPECT_TRUE(version_in_range("2.11.0+cu130", ">=2.8,<2.13"));
  EXPECT_FALSE(version_in_range("2.13.0", ">=2.8,<2.13"));
  EXPECT_TRUE(version_in_range("2.13.0", ">=2.13"));
  EXPECT_TRUE(version_in_range("2.8.0", ">=2.8"));
  EXPECT_FALSE(version_in_range("2.7.1", ">=2.8"));
}

TEST(Signature, BadTableNamesTheEntry) {
  std::string path = ::testing::TempDir() + "/bad_sigs.json";
  FILE* f = fopen(path.c_str(), "w");
  fputs(R"([{"id": "ok", "patterns": ["a"]}, {"id": "broken", "patterns": ["("]}])", f);
  fclose(f);
  try {
    SignatureTable::load(path);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("entry 1"), std::string::npos) << e.what();
  }
}
