"""Which subject code paths ran (eager mode only).

Two sources feed one list per run():
  * OpPathMode, a TorchFunctionMode that notes torch.mm/bmm/addmm/baddbmm calls
    made with out_dtype= and/or out= (the overload names aten would pick);
  * note(tag), which subjects call for their own branch names.
Under torch.compile the Python branches only run while tracing (and not at all on a
cached graph), so nothing is recorded there and the mode is not installed.
"""
import threading

import torch
from torch.overrides import TorchFunctionMode

_WATCHED = {torch.mm: "mm", torch.bmm: "bmm", torch.addmm: "addmm", torch.baddbmm: "baddbmm"}
_lock = threading.Lock()
_current = None  # the list being filled by the active run(), or None


def note(tag):
    """Record a subject-defined path tag (no-op outside run() and while compiling)."""
    if _current is None or torch.compiler.is_compiling():
        return
    with _lock:
        if tag not in _current:
            _current.append(tag)


def overload_tag(name, kwargs):
    has_dtype = kwargs.get("out_dtype") is not None
    has_out = kwargs.get("out") is not None
    if has_dtype and has_out:
        return name + ".dtype_out"
    if has_dtype:
        return name + ".dtype"
    if has_out:
        return name + ".out"
    return None


class OpPathMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _WATCHED.get(func)
        if name is not None:
            tag = overload_tag(name, kwargs)
            if tag is not None:
                note(tag)
        return func(*args, **kwargs)


class recording:
    """Context manager: collect tags into `self.tags`; installs OpPathMode when eager."""

    def __init__(self, eager):
        self.tags = []
        self._mode = OpPathMode() if eager else None

    def __enter__(self):
        global _current
        _current = self.tags
        if self._mode is not None:
            self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        global _current
        if self._mode is not None:
            self._mode.__exit__(*exc)
        _current = None
        return False
