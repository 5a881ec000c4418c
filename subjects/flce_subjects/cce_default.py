"""`cce-default`: cut-cross-entropy with its library default, filter_eps="high" (the
`linear_cross_entropy` signature's default), which skips gradient blocks whose every entry has
|softmax - onehot| < finfo(e.dtype).eps / 32 (cut_cross_entropy/utils.py `_handle_eps`,
cce_backward.py `_block_is_filtered`). An approximation on purpose: the contract declares it,
and flce judges it against the allowance derived in judge/MATH.md ("Declared approximations"),
reported apart from passes and findings. Only the CUDA kernels filter ("Only valid for the CCE
implementation"): the CPU path (impl="torch_compile") is judged exact.
"""
import torch

from . import cce

EPS = {name: torch.finfo(dt).eps / 32 for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16),
                                                         ("fp32", torch.float32))}

CONTRACT = dict(cce.CONTRACT,
                source="cut_cross_entropy.linear_cross_entropy docstring: 'computes F.cross_entropy((e @ c.T).float(), "
                       "targets)'; its default filter_eps='high'",
                approximation={"name": "grad_filter", "eps": EPS, "devices": ["cuda"],
                               "source": "filter_eps='high' = finfo(dtype).eps / 32 (cut_cross_entropy/utils.py); "
                                         "blocks with every |softmax - onehot| below it skip the backward"})

flce = cce.calling("high")
supports = cce.supports


def version():
    return cce.version() + ", filter_eps='high' (its default)"
