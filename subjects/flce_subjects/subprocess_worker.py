"""A subject oracle in its own process, for another Python/torch than the one flce embeds.

    PYTHONPATH=<flce>/subjects <venv>/bin/python -m flce_subjects.subprocess_worker

`flce gate` and `flce matrix` (oracles/subject_worker.cpp) start one per environment and
keep it for many runs (importing torch costs seconds). Protocol: one JSON request per line
on stdin, one JSON reply per line on the stdout this process started with; everything else
anyone prints goes to stderr, so a chatty subject cannot corrupt the channel.

Requests ({"op": ...}):
  run       case, inputs {name: {file, dtype, shape, storage}}, subject, mode, backend,
            subject_path, out_dir -> runner.run()'s dict, outputs as {name: {file, dtype, shape}}
  describe  subject, subject_path -> {flce, op, version} or {error}
  environment / builtin_subjects / reset

Inputs are raw little-endian files written by flce's make_inputs (fp32 holding values exact
in the storage dtype, or int64), so the tensors equal the embedded host's bit for bit.
Outputs are written as float64 (exact widening of every dtype a subject returns) -- what the
host's own judge reads anyway.
"""
import json
import os
import sys

_STORAGE = {"f32": "float32", "i64": "int64"}


def _tensor(spec, device):
    import torch

    from . import dtypes

    with open(spec["file"], "rb") as f:
        raw = bytearray(f.read())
    t = torch.frombuffer(raw, dtype=getattr(torch, _STORAGE[spec["storage"]])) if raw else None
    shape = spec["shape"]
    if t is None:
        t = torch.empty(shape, dtype=getattr(torch, _STORAGE[spec["storage"]]))
    t = t.reshape(shape)
    dtype = torch.int64 if spec["dtype"] == "int64" else dtypes.of(spec["dtype"])
    return t.to(device=device, dtype=dtype)


def _dtype_name(dt):
    import torch

    names = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64"}
    return names.get(dt, "int64")


def _run(req):
    import torch

    from . import runner

    case = req["case"]
    device = "cpu"
    if case.get("device") == "cuda" and torch.cuda.is_available():
        device = "cuda"
    tensors = {name: _tensor(spec, device) for name, spec in req["inputs"].items()}
    res = runner.run(case, tensors, req["subject"], req["mode"], req.get("backend"), req.get("subject_path"))
    outputs = {}
    for i, (name, t) in enumerate((res.get("outputs") or {}).items()):
        if not isinstance(t, torch.Tensor):
            continue
        path = os.path.join(req["out_dir"], f"{req.get('id', 0)}-{i}.f64")
        t.detach().to("cpu", torch.float64).contiguous().numpy().tofile(path)
        outputs[name] = {"file": path, "dtype": _dtype_name(t.dtype), "shape": list(t.shape)}
    res["outputs"] = outputs
    return res


def _describe(req):
    from . import registry, runner

    name = req["subject"]
    if name.endswith(runner.WORKAROUND_SUFFIX):
        name = name[: -len(runner.WORKAROUND_SUFFIX)]
    try:
        s = registry.load(name, req.get("subject_path"))
    except Exception as e:  # noqa: BLE001 -- reported to the caller as a bad subject
        return {"error": f"{type(e).__name__}: {e}"}
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
    if op == "describe":
        return _describe(req)
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


def main():
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

            reply = {"status": "error", "worker_error": f"{type(e).__name__}: {e}",
                     "error": {"phase": "host", "chain": [{"type": "flce.WorkerError", "message": traceback.format_exc(),
                                                           "frames": []}]}}
        channel.write(json.dumps(reply, default=str) + "\n")


if __name__ == "__main__":
    main()
