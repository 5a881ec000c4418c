"""Subject names -> Subject objects (built-ins, and user plug-ins from any import path).

Names:
  * a built-in name below ("model", "liger", ...);
  * "package.module:attr": attr is a callable with the flce signature, or an object/module
    exposing flce/op/version/supports;
  * "package.module": a module exposing flce and/or op (plus optional version/supports).

subject_path (e.g. a Liger checkout's src/) is put first on sys.path, and any already
imported copy of the wrapped top-level package that came from elsewhere is dropped from
sys.modules, so the next import really loads the other tree. Limitation: Python cannot
unload a package. Objects created by the previous tree survive (torch.library ops it
registered, Triton kernels, autograd.Function classes held by compiled graphs), and a
package that registers torch.library ops under fixed names fails to import a second time.
One process therefore tests one tree of such a package; the host's per-subject worker
processes are the unit of isolation.
"""
import importlib
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional

from . import contract

BUILTIN = {
    "model": "flce_subjects.model",
    "model-bug-smoothing": "flce_subjects.bug_smoothing",
    "model-bug-bf16-accum": "flce_subjects.bug_bf16_accum",
    "model-bug-drop-chunk": "flce_subjects.bug_drop_chunk",
    "model-bug-second-shape": "flce_subjects.bug_second_shape",
    "model-bug-trace-error": "flce_subjects.bug_trace_error",
    "model-bug-token-grad-rows": "flce_subjects.bug_token_grad_rows",
    "model-bug-autocast-no-bias": "flce_subjects.bug_autocast_no_bias",
    "model-bug-input-no-grad": "flce_subjects.bug_input_no_grad",
    "model-bug-two-causes": "flce_subjects.bug_two_causes",
    "model-dtype-out": "flce_subjects.model_dtype_out",
    "liger": "flce_subjects.liger",
    "torch-native": "flce_subjects.torch_native",
    "torch-native-reference": "flce_subjects.torch_native_paths:reference",
    "torch-native-accurate": "flce_subjects.torch_native_paths:accurate",
    "torch-native-balanced": "flce_subjects.torch_native_paths:balanced",
    "torch-native-chunk1": "flce_subjects.torch_native_paths:chunk1",
    "cce": "flce_subjects.cce",
    "cce-default": "flce_subjects.cce_default",
    "unsloth": "flce_subjects.unsloth",
    "model-approx-filter": "flce_subjects.approx_filter",
    "model-bug-filter-overreach": "flce_subjects.bug_filter_overreach",
    "aten-dtype-out": "flce_subjects.aten_dtype_out",
    "segfault": "flce_subjects.crash_segfault",
    "hang": "flce_subjects.crash_hang",
    "cuda-oob": "flce_subjects.crash_cuda_oob",
}


@dataclass
class Subject:
    name: str
    flce: Optional[Callable]
    op: Optional[Callable]
    version: Callable[[], str]
    supports: Callable[[dict], Optional[str]]
    # The function whose signature says which FLCE parameters the subject takes (params.py):
    # flce itself, or what an adapter's flce forwards its arguments to (liger.py's callee()).
    callee: Optional[Callable[[], Callable]] = None
    # What it promises (contract.py): semantics, parameters, dtypes; None when undeclared.
    contract: Optional[dict] = None

    def __post_init__(self):
        if self.callee is None:
            self.callee = lambda: self.flce


_subjects = {}  # (name, subject_path) -> Subject
_origin = {}  # top-level package -> the subject_path it was imported from (None: default)


def _top_package(module_name):
    return module_name.split(".")[0]


def _purge(top):
    for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
        del sys.modules[key]
    for key in [k for k in _subjects if _wraps(k[0]) == top]:
        del _subjects[key]  # they hold functions of the dropped tree


def _wraps(name):
    """Top-level package whose source tree subject_path selects."""
    if name in BUILTIN:
        mod = importlib.import_module(BUILTIN[name].partition(":")[0])
        return getattr(mod, "WRAPS", None)
    return _top_package(name.split(":")[0])


def _select_tree(top, subject_path):
    """Make the next `import top` come from subject_path (or from the default sys.path)."""
    path = os.path.abspath(subject_path) if subject_path else None
    previous = _origin.get(top, None)
    if path is not None:
        if path in sys.path:
            sys.path.remove(path)
        sys.path.insert(0, path)
    if top in sys.modules and previous != path:
        _purge(top)
    if previous is not None and previous != path and previous in sys.path:
        sys.path.remove(previous)
    _origin[top] = path
    importlib.invalidate_caches()


def _default_version(mod):
    def version():
        v = getattr(mod, "__version__", None)
        return str(v) if v is not None else getattr(mod, "__name__", "plugin")

    return version


def _from_object(name, obj, module):
    flce = getattr(obj, "flce", None)
    op = getattr(obj, "op", None)
    if flce is None and op is None and callable(obj):
        flce = obj  # a bare callable with the flce signature
    if flce is None and op is None:
        raise TypeError(f"subject {name!r}: {obj!r} has neither flce nor op")
    version = getattr(obj, "version", None) or getattr(module, "version", None) or _default_version(module)
    supports = getattr(obj, "supports", None) or (lambda case: None)
    callee = getattr(obj, "callee", None) if flce is not obj else None
    declared = contract.of(obj if obj is not module else None, module)
    return Subject(name, flce, op, version, supports, callee, declared)


def load(name, subject_path=None):
    """Resolve a subject name (import errors propagate: the runner reports them)."""
    key = (name, os.path.abspath(subject_path) if subject_path else None)
    top = _wraps(name)
    if top is not None and (subject_path is not None or _origin.get(top) is not None):
        _select_tree(top, subject_path)
    if key in _subjects:
        return _subjects[key]
    if name in BUILTIN:  # "module" or "module:object" (one module, several paths of one library)
        module_name, _, attr = BUILTIN[name].partition(":")
        mod = importlib.import_module(module_name)
        subject = _from_object(name, getattr(mod, attr) if attr else mod, mod)
    else:
        module_name, _, attr = name.partition(":")
        mod = importlib.import_module(module_name)
        subject = _from_object(name, getattr(mod, attr) if attr else mod, mod)
    _subjects[key] = subject
    return subject
