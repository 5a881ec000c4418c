"""flce's subject host: a subject oracle in its own process.

    PYTHONPATH=<flce>/subjects <venv>/bin/python -m flce_subjects.subprocess_worker

Every flce command that runs a subject starts one of these (oracles/subject_worker.cpp) and
keeps it for many runs (importing torch costs seconds); `flce gate` starts one per tree and
`flce matrix` one per torch. Protocol: one JSON request per line on stdin, one JSON reply
per line on the stdout this process started with; everything else anyone prints goes to
stderr, so a chatty subject cannot corrupt the channel.

Requests ({"op": ...}):
  run       case, inputs {name: {offset, bytes, dtype, shape, storage}}, in_shm, out_shm,
            subject, mode, backend, subject_path -> runner.run()'s dict, outputs as
            {name: {offset, dtype, shape}} in out_shm, transfer_ms
  echo      case, inputs, in_shm, out_shm -> the inputs as the subject would see them, as outputs
  describe  subject, subject_path -> {flce, op, version} or {error} (also when its callable cannot
            take FLCE's call: params.SignatureMismatch)
  capabilities  subject, subject_path -> {flce, params, lacks, callable, signature_known} or
            {error}: the FLCE parameters the subject's callable takes, from its signature
  environment / builtin_subjects / reset

Inputs lie in the shared-memory file in_shm as flce's make_inputs wrote them (fp32 holding
values exact in the storage dtype, or int64), so the tensors are flce's bit for bit.
Outputs are written into out_shm as float64 (exact widening of every dtype a subject
returns) -- what flce's judge reads anyway.
"""
import json
import mmap
import os
import sys
import time

_STORAGE = {"f32": "float32", "i64": "int64"}


class _Shared:
    """One shared-memory file, mapped again only when the other side grew it."""

    def __init__(self):
        self.path, self.map, self.size = None, None, 0

    def read(self, path):
        size = os.path.getsize(path)
        if path != self.path or size != self.size:
            self.close()
            if size:
                with open(path, "rb") as f:
                    # ACCESS_COPY: writable for torch.frombuffer, private: flce's bytes are never touched.
                    self.map = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
            self.path, self.size = path, size
        return self.map

    def write(self, path, size):
        if path != self.path or size > self.size:
            self.close()
            with open(path, "r+b") as f:
                if os.fstat(f.fileno()).st_size < size:
                    os.ftruncate(f.fileno(), size)
                total = os.fstat(f.fileno()).st_size
                self.map = mmap.mmap(f.fileno(), total, access=mmap.ACCESS_WRITE) if total else None
            self.path, self.size = path, total
        return self.map

    def close(self):
        if self.map is not None:
            self.map.close()
        self.path, self.map, self.size = None, None, 0


_IN, _OUT = _Shared(), _Shared()


def _tensor(buf, spec, device):
    import torch

    from . import dtypes

    storage = getattr(torch, _STORAGE[spec["storage"]])
    shape = spec["shape"]
    dtype = torch.int64 if spec["dtype"] == "int64" else dtypes.of(spec["dtype"])
    if not spec["bytes"]:
        return torch.empty(shape, dtype=dtype, device=device)
    count = spec["bytes"] // torch.empty((), dtype=storage).element_size()
    view = torch.frombuffer(buf, dtype=storage, count=count, offset=spec["offset"]).reshape(shape)
    # copy=True: the subject owns its tensors; the mapping is reused by the next request.
    return view.to(device=device, dtype=dtype, copy=True)


def _dtype_name(dt):
    import torch

    names = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64"}
    return names.get(dt, "int64")


def _device(case):
    import torch

    if case.get("device") == "cuda":
        return "cuda" if torch.cuda.is_available() else None
    return "cpu"


def _inputs(req, device):
    buf = _IN.read(req["in_shm"])
    return {name: _tensor(buf, spec, device) for name, spec in req["inputs"].items()}


def _write_outputs(req, outputs):
    import numpy as np
    import torch

    arrays = {}
    for name, t in (outputs or {}).items():
        if isinstance(t, torch.Tensor):
            arrays[name] = (t.detach().to("cpu", torch.float64).contiguous().numpy(), t)
    offsets, total = {}, 0
    for name, (a, _) in arrays.items():
        offsets[name] = total
        total += (a.nbytes + 63) // 64 * 64
    if not arrays:
        return {}
    buf = _OUT.write(req["out_shm"], total)
    written = {}
    for name, (a, t) in arrays.items():
        if a.size:
            np.frombuffer(buf, dtype=np.float64, count=a.size, offset=offsets[name])[:] = a.reshape(-1)
        written[name] = {"offset": offsets[name], "dtype": _dtype_name(t.dtype), "shape": list(t.shape)}
    return written


def _run(req):
    from . import runner

    case = req["case"]
    device = _device(case)
    if device is None:
        return {"status": "unsupported", "reason": "case asks for device cuda, but no CUDA device is available here"}
    t0 = time.perf_counter()
    tensors = _inputs(req, device)
    spent = time.perf_counter() - t0
    res = runner.run(case, tensors, req["subject"], req["mode"], req.get("backend"), req.get("subject_path"))
    t1 = time.perf_counter()
    res["outputs"] = _write_outputs(req, res.get("outputs"))
    res["transfer_ms"] = (spent + time.perf_counter() - t1) * 1e3
    return res


def _echo(req):
    device = _device(req["case"])
    if device is None:
        return {"status": "unsupported", "reason": "no CUDA device here"}
    return {"status": "ok", "outputs": _write_outputs(req, _inputs(req, device))}


def _describe(req):
    from . import params, registry, runner

    name = req["subject"]
    if name.endswith(runner.WORKAROUND_SUFFIX):
        name = name[: -len(runner.WORKAROUND_SUFFIX)]
    try:
        s = registry.load(name, req.get("subject_path"))
    except Exception as e:  # noqa: BLE001 -- reported to the caller as a bad subject
        return {"error": f"{type(e).__name__}: {e}"}
    if s.flce is not None:
        try:
            params.plan_for(s.callee())
        except params.SignatureMismatch as e:  # a callable flce cannot call is a bad subject too
            return {"error": f"{type(e).__name__}: {e}"}
        except Exception:  # noqa: BLE001, S110 -- e.g. Liger's kernels without CUDA: the run reports that
            pass
    try:
        version = str(s.version())
    except Exception as e:  # noqa: BLE001 -- a broken version() does not make the subject unusable
        version = f"unknown ({type(e).__name__}: {e})"
    return {"flce": s.flce is not None, "op": s.op is not None, "version": version}


def _handle(req):
    from . import host_api

    op = req.get("op")
    if op == "run":
        return _run(req)
    if op == "echo":
        return _echo(req)
    if op == "describe":
        return _describe(req)
    if op == "capabilities":
        return host_api.capabilities(req["subject"], req.get("subject_path"))
    if op == "environment":
        return host_api.environment()
    if op == "builtin_subjects":
        return {"subjects": host_api.builtin_subjects()}
    if op == "reset":
        host_api.reset()
        return {"ok": True}
    return {"error": f"unknown op {op!r}"}


def _die_with_parent():
    """Its own process group keeps it out of signals sent to flce's; so when flce is killed
    (a campaign kills a hung worker with SIGKILL), the kernel must end this process too."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # flce died before the line above
        sys.exit(0)


_STACKS = None  # kept open: faulthandler writes to its descriptor from the signal handler


def _dump_stacks_on_request():
    """SIGUSR1 appends every thread's Python stack to $FLCE_STACKS_FILE (stderr without it).

    flce sends it before killing a call or case that ran past its limit (process/stacks.hpp),
    so a hang leaves where it hung. faulthandler's handler runs in C: it answers even while
    the main thread is inside torch, as long as the process is not stopped.
    """
    global _STACKS
    import faulthandler
    import signal

    path = os.environ.get("FLCE_STACKS_FILE")
    _STACKS = open(path, "a") if path else sys.stderr  # noqa: SIM115 -- lives as long as the process
    faulthandler.register(signal.SIGUSR1, file=_STACKS, all_threads=True)


def main():
    _dump_stacks_on_request()
    _die_with_parent()
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # fd 1 is stderr from now on (C extensions included)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = _handle(json.loads(line))
        except Exception as e:  # noqa: BLE001 -- the runner never raises; this is the worker's own bug
            import traceback

            # The exception first: the first line is what signatures match and what tells a
            # CUDA context poisoned by an earlier case (the campaign then restarts the worker;
            # a traceback header there hid it, and 8,347 cases failed in the dead context).
            link = {"type": "flce.WorkerError", "message": f"{type(e).__name__}: {e}\n{traceback.format_exc()}",
                    "frames": []}
            reply = {"status": "error", "worker_error": f"{type(e).__name__}: {e}",
                     "error": {"phase": "host", "chain": [link]}}
        channel.write(json.dumps(reply, default=str) + "\n")


if __name__ == "__main__":
    main()
