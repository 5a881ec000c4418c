"""What the subject host (subprocess_worker.py) asks besides runs: a thin, stable
surface over the registry and runner, so the protocol does not depend on their internals."""
import platform

from . import params, registry, runner


def reset():
    runner.reset()


def capabilities(subject, subject_path=None):
    """Which FLCE parameters the subject's callable takes (params.capabilities), read from its
    signature; {"flce": False} for an op-only subject, {"error": ...} when it cannot be loaded."""
    name = subject[: -len(runner.WORKAROUND_SUFFIX)] if subject.endswith(runner.WORKAROUND_SUFFIX) else subject
    try:
        s = registry.load(name, subject_path)
        if s.flce is None:
            return {"flce": False, "params": [], "lacks": []}
        caps = params.capabilities(s.callee())
        if s.contract is not None and "params" in s.contract:  # what it promises, not only what it accepts
            caps["lacks"] = [p for p in params.PARAMS if p in caps["lacks"] or p not in s.contract["params"]]
            caps["params"] = [p for p in caps["params"] if p not in caps["lacks"]]
        return {"flce": True, **caps, "contract": s.contract}
    except Exception as e:  # noqa: BLE001 -- an answer, not a crash: the caller decides what it means
        return {"error": f"{type(e).__name__}: {e}"}


def builtin_subjects():
    return sorted(registry.BUILTIN)


def environment():
    import torch

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "cuda": torch.version.cuda or "",
        "gpu": "",
        "capability": "",
        "triton": "",
        "liger": "",
    }
    try:
        import triton

        env["triton"] = triton.__version__
    except Exception:  # triton is optional on CPU
        pass
    try:
        from importlib.metadata import version

        env["liger"] = version("liger-kernel")
    except Exception:
        pass
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
        major, minor = torch.cuda.get_device_capability()
        env["capability"] = f"{major}.{minor}"
    return env
