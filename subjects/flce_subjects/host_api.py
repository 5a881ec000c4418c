"""What the subject host (subprocess_worker.py) asks besides runs: a thin, stable
surface over the registry and runner, so the protocol does not depend on their internals."""
import platform

from . import registry, runner


def reset():
    runner.reset()


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
