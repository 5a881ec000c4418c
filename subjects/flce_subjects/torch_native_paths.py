"""The other paths of torch.nn.functional.linear_cross_entropy, one subject each, all under
torch-native's contract (torch's semantics; its docstring's reference `cross_entropy(linear(...))`
is the promise every path makes). `flce conformance` over them tells where two paths of one
implementation disagree, which is a finding (issue #39):

  torch-native-reference  options=None for every case: linear + cross_entropy, the reference
                          path the chunked one must match
  torch-native-accurate   the chunked path, acc_policy="accurate" (acc_dtype everywhere; CPU's
                          auto pick for fp16/bf16)

With an explicit policy and accum_dtype none (acc_dtype=None), torch resolves acc_dtype to the
input dtype (LinearCrossEntropyOptions.acc_dtype: fp32 only "under acc_policy='auto'"), so those
cases run the whole chunked path in fp16/bf16; accum_dtype fp32 selects the mixed path.
  torch-native-balanced   acc_policy="balanced" (acc_dtype only where gradients need it, an
                          acc_dtype scratch for the cross-chunk weight gradient)
  torch-native-chunk1     batch_chunk_size=1, no chunking heuristic: one row per chunk, so every
                          gradient sums BT chunks (the most the chunked path ever accumulates)

Not a subject: acc_policy="compact". It differs from "balanced" only on CUDA (on CPU, mixed
precision falls back to balanced: LinearCrossEntropyOptions' docstring), where it accumulates
grad_weight across chunks with addmm_ into the parameter dtype; the GPU box's torch 2.11 has no
F.linear_cross_entropy, so that path cannot run anywhere flce runs today.
"""
from types import SimpleNamespace

from . import torch_native as tn


def _path(name, what, softmax_dtype=None, **kw):
    reference = kw.get("reference", False)
    contract = dict(tn.CONTRACT, source=tn.CONTRACT["source"] + "; " + what)
    if softmax_dtype:  # MATH.md item 13: where this policy keeps its logits buffer
        contract["softmax_dtype"] = softmax_dtype
    if reference:  # cross_entropy's backward forms G = softmax - onehot before linear's
        contract.update(grad_weight_form="fused", source=tn.CONTRACT["source"].split("; chunked")[0] + "; " + what)
    return SimpleNamespace(
        flce=tn.calling(**kw), supports=lambda case: tn.supports(case, reference=reference),
        CONTRACT=contract,
        version=lambda: f"{tn.version()}, {what}", __name__=name)


reference = _path("torch-native-reference", "options=None (the reference path)", reference=True)
# The chunked path's logits buffer (_ChunkContext): acc_dtype, except that fp16 under a
# memory-like policy (balanced) keeps it in fp16 even with acc_dtype fp32. Under "auto" on CPU
# acc_dtype resolves to fp32 (torch-native, torch-native-chunk1): the default fp32 holds.
accurate = _path("torch-native-accurate", "acc_policy='accurate'", softmax_dtype="acc", acc_policy="accurate")
balanced = _path("torch-native-balanced", "acc_policy='balanced'", softmax_dtype="logits", acc_policy="balanced")
chunk1 = _path("torch-native-chunk1", "batch_chunk_size=1", batch_chunk_size=1)
