"""Test-only plug-in subject: writes the tensors flce hands it, then returns a plain loss.

Each eager call writes $FLCE_TEST_DUMP_DIR/<sha1 of the text>.txt in the format of the
emitted script's --dump-tensors (storage-dtype bits), so the compiled oracles' calls only
rewrite the same file. Compile never traces it (torch.compiler.disable): only the inputs
matter here, and that keeps the compiled oracles and the ladder cheap.
"""
import hashlib
import os

import torch

BITS = {torch.bfloat16: ("bf16", torch.int16), torch.float16: ("fp16", torch.int16),
        torch.float32: ("fp32", torch.int32), torch.int64: ("int64", torch.int64)}


def _dump(**tensors):
    lines = []
    for name in sorted(k for k, v in tensors.items() if v is not None):
        t = tensors[name].detach().cpu().contiguous()
        dtype, view = BITS[t.dtype]
        raw = t.view(view).numpy().reshape(-1)
        raw = raw.astype(raw.dtype.newbyteorder("<"), copy=False).tobytes().hex()
        lines.append(f"{name} {dtype} {','.join(str(s) for s in t.shape)} {raw}\n")
    text = "".join(lines)
    out = os.environ["FLCE_TEST_DUMP_DIR"]
    with open(os.path.join(out, hashlib.sha1(text.encode()).hexdigest() + ".txt"), "w") as f:
        f.write(text)


@torch.compiler.disable
def flce(x, w, target, *, bias=None, ce_weight=None, **options):
    _dump(x=x, w=w, target=target, bias=bias, ce_weight=ce_weight)
    logits = x.float() @ w.float().t()
    loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=options.get("ignore_index", -100),
                                             reduction=options.get("reduction", "mean"))
    return loss, None, None, None


@torch.compiler.disable
def op(kind, a, b, c, out_dtype, out_variant):
    _dump(a=a, b=b, c=c)
    return torch.matmul(a.float(), b.float()).to(out_dtype)
