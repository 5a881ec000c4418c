# Two calls of one torch.compile'd Liger FLCE with two shapes: the second call recompiles
# with dynamic shapes (automatic dynamic) and Inductor asserts (pytorch#181735's signature).
# Needs a CUDA GPU, torch and liger-kernel (a tree on PYTHONPATH or the wheel). Exit 0 when
# the assertion shows (REPRODUCED), 1 when both calls pass, 2 when it cannot run here.
import sys
import traceback

import torch

if not torch.cuda.is_available():
    print("SKIP: needs CUDA")
    sys.exit(2)
from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy

print("torch", torch.__version__, "| liger", sys.modules["liger_kernel"].__file__)
dtype = torch.float32 if "fp32" in sys.argv else torch.bfloat16
backend = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("backend=")), "inductor")
H, V = 16, 32
torch.manual_seed(0)
w = torch.randn(V, H, device="cuda", dtype=dtype, requires_grad=True)
f = torch.compile(liger_fused_linear_cross_entropy, backend=backend)
for BT in (8, 13):
    x = torch.randn(BT, H, device="cuda", dtype=dtype, requires_grad=True)
    y = torch.randint(0, V, (BT,), device="cuda")
    try:
        out = f(x, w, y)
        loss = out[0] if isinstance(out, tuple) else getattr(out, "loss", out)
        loss.backward()
        print(f"call BT={BT}: ok, loss {loss.item():.6f}")
    except Exception as e:  # the whole chain: the assertion sits under Dynamo's wrapper
        print(f"call BT={BT}: FAILED {type(e).__name__}")
        link = e
        while link is not None:
            print(f"  {type(link).__module__}.{type(link).__name__}: {str(link)[:600]}")
            tb = traceback.extract_tb(link.__traceback__)
            for fr in [fr for fr in tb if "torch" in fr.filename][-3:]:
                print(f"    at {fr.filename.split('site-packages/')[-1]}:{fr.lineno} {fr.name}: {fr.line}")
            link = link.__cause__ or link.__context__
        print("REPRODUCED" if BT == 13 else "FAILED ON THE FIRST CALL")
        sys.exit(0 if BT == 13 else 1)
print("NOT REPRODUCED")
sys.exit(1)
