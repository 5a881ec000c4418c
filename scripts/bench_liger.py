"""Liger's eager FLCE and a naive materialized-logits torch version, timed in the same
GPU run as `flce bench` (scripts/gpu_run.sh). Median of CUDA-event timings after warm-up,
peak extra memory over the inputs (outputs and gradients included, as `flce bench`
counts the reference's), and the GEMM floor 6*BT*H*V / (bf16 GEMM rate
measured here). Prints one table."""
import statistics
import sys

import torch
import torch.nn.functional as F

SHAPES = [(4096, 4096, 32000), (4096, 4096, 128256), (8192, 4096, 32000), (8192, 4096, 128256)]
WARMUP, REPS = 3, 10


def timed(fn):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def peak_extra(fn, *leaves):
    # The last timed step's gradients are still alive here; drop them first, or the
    # baseline would include the very grad_input/grad_weight this step allocates again.
    for t in leaves:
        t.grad = None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**30


def gemm_rate():
    # bf16 GEMM rate on random data, the shape class of FLCE's GEMMs (rotating inputs).
    m, n, k = 8192, 16384, 4096
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    sets = [(torch.randn(m, k, **bf16), torch.randn(k, n, **bf16)) for _ in range(3)]
    i = [0]

    def run():
        a, b = sets[i[0] % 3]
        i[0] += 1
        torch.mm(a, b)

    ms = timed(run)
    return 2 * m * n * k / (ms * 1e-3)


def bench_shape(bt, h, v, rate, liger):
    """One table row per implementation for one shape; the tensors die with the call."""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = (torch.randn(bt, h, device="cuda", generator=g) * 0.5).to(torch.bfloat16).requires_grad_()
    w = (torch.randn(v, h, device="cuda", generator=g) / h**0.5).to(torch.bfloat16).requires_grad_()
    t = torch.randint(0, v, (bt,), device="cuda", generator=g)
    floor_ms = 6 * bt * h * v / rate * 1e3

    def step(fn):
        def run():
            x.grad = w.grad = None
            fn().backward()
        return run

    impls = []
    if liger is not None:
        impls.append(("liger accum fp32", step(lambda: liger(x, w, t, accum_dtype=torch.float32))))
        impls.append(("liger default", step(lambda: liger(x, w, t))))
    impls.append(("naive materialized", step(lambda: F.cross_entropy((x @ w.t()).float(), t))))
    for name, run in impls:
        try:
            ms = timed(run)
            mem = peak_extra(run, x, w)
            print(f"{bt:>5} {h:>5} {v:>7} {name:<22} {ms:>10.2f} {floor_ms:>9.2f} {ms / floor_ms:>8.2f} {mem:>15.2f}")
        except torch.OutOfMemoryError:
            print(f"{bt:>5} {h:>5} {v:>7} {name:<22} {'OOM':>10}")
            torch.cuda.empty_cache()


def main():
    if not torch.cuda.is_available():
        print("bench_liger: no CUDA device")
        return 2
    try:
        from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy as liger
    except Exception as e:  # noqa: BLE001 - report and still time the naive version
        print(f"bench_liger: liger-kernel not importable: {e}")
        liger = None
    rate = gemm_rate()
    print(f"torch {torch.__version__}  GPU {torch.cuda.get_device_name()}  bf16 GEMM rate {rate / 1e12:.0f} TFLOP/s")
    print(f"{'BT':>5} {'H':>5} {'V':>7} {'impl':<22} {'median ms':>10} {'floor ms':>9} {'x floor':>8} "
          f"{'peak extra GiB':>15}")
    for bt, h, v in SHAPES:
        bench_shape(bt, h, v, rate, liger)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
