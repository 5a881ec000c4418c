"""Make torch.compile handle the out_dtype matmul overloads (Liger issue #1327, pytorch#163880).

    import flce_workaround
    flce_workaround.enable()            # once, before compiling; or: with flce_workaround.enabled():
    flce_workaround.disable()           # restores everything it replaced

For mm/bmm/addmm/baddbmm x .dtype/.dtype_out it installs decompositions written from the ops'
semantics (decomps.py) into every place compile looks them up: torch._decomp's table and the
Meta kernels that torch built from the broken packet decompositions (addmm/baddbmm), Inductor's
decomposition tables (all eight), and CPU eager kernels. AOTAutogradCache is off while enabled
(its key predates decomposition). README.md has the why, the measurements and the limits.
"""
import contextlib
import inspect

import torch

from . import decomps

_state = None  # a _State while enabled


def _tables():
    """Every dict that maps an OpOverload to a decomposition and matters for compile."""
    import torch._decomp
    import torch._inductor.decomposition as inductor_decomp

    core = torch._decomp.decomposition_table
    inductor = [inductor_decomp.decompositions]
    merged = getattr(inductor_decomp, "fast_random_decomps", None)
    cached = merged() if merged is not None else None  # functools.cache'd merged copy
    if cached is not None and cached is not inductor_decomp.decompositions:
        inductor.append(cached)
    return core, inductor


def is_enabled():
    return _state is not None


def enable(cpu_kernels=True):
    """Install the fix (idempotent, all or nothing). cpu_kernels: also add CPU eager kernels."""
    global _state
    if _state is not None:
        return
    state = _State(lib=torch.library.Library("aten", "IMPL"))  # destroying it restores kernels
    try:
        _install(state, cpu_kernels)
    except BaseException:
        _uninstall(state)  # a half-applied fix would silently change later results
        raise
    _state = state
    _clear_fake_cache()


def disable():
    """Undo enable() (idempotent)."""
    global _state
    if _state is None:
        return
    state, _state = _state, None
    _uninstall(state)
    _clear_fake_cache()


class _State:
    def __init__(self, lib):
        self.lib = lib
        self.saved = []  # (dict, key, previous value or _MISSING)
        self.registry_tags = []  # torch.library._impls entries to put back after lib._destroy()
        self.cache_was = None

    def put(self, table, key, value):
        self.saved.append((table, key, table.get(key, _MISSING)))
        table[key] = value


def _install(state, cpu_kernels):
    core, inductor = _tables()
    for op, fn in decomps.core_entries().items():
        state.put(core, op, fn)
        state.put(op.py_kernels, torch._C.DispatchKey.Meta, fn)
        op._dispatch_cache.clear()  # the Python dispatcher caches the kernel it resolved
        _register(state, op, fn, "Meta")
    for table in inductor:
        for op, fn in decomps.inductor_entries().items():
            state.put(table, op, fn)
    if cpu_kernels:
        for op, fn in decomps.eager_kernels().items():
            _register(state, op, fn, "CPU")
    state.cache_was = _set_autograd_cache(False)


def _uninstall(state):
    for table, key, old in reversed(state.saved):
        if old is _MISSING:
            table.pop(key, None)
        else:
            table[key] = old
    for op in decomps.core_entries():
        op._dispatch_cache.clear()
    state.lib._destroy()
    registry = getattr(torch.library, "_impls", None)
    if registry is not None:
        registry.update(state.registry_tags)
    _set_autograd_cache(state.cache_was)


def _register(state, op, fn, dispatch_key):
    """lib.impl that may replace a kernel another Python library registered (activate_meta's).

    torch >= 2.12 takes allow_override=True; older releases refuse any second Python
    registration for the same (op, key), so their bookkeeping entry is lifted for the call.
    """
    name = _qualified(op)
    if "allow_override" in inspect.signature(state.lib.impl).parameters:
        state.lib.impl(name, fn, dispatch_key, allow_override=True)
        return
    registry = getattr(torch.library, "_impls", set())
    tag = f"aten/{name}/{dispatch_key}"
    if tag in registry:
        registry.discard(tag)
        state.registry_tags.append(tag)
    state.lib.impl(name, fn, dispatch_key)


@contextlib.contextmanager
def enabled(cpu_kernels=True):
    """Context manager form; restores the previous state (enabled or not) on exit."""
    was = is_enabled()
    enable(cpu_kernels)
    try:
        yield
    finally:
        if not was:
            disable()


def _set_autograd_cache(value):
    """Set torch._functorch.config.enable_autograd_cache (if this torch has it); returns the old value."""
    from torch._functorch import config as functorch_config

    if value is None or not hasattr(functorch_config, "enable_autograd_cache"):
        return None
    old = functorch_config.enable_autograd_cache
    functorch_config.enable_autograd_cache = value
    return old


def _qualified(op):
    """'addmm.dtype_out' for aten.addmm.dtype_out (the name Library.impl wants)."""
    return f"{op._schema.name.split('::')[1]}.{op._overloadname}"


def _clear_fake_cache():
    from torch._subclasses.fake_tensor import FakeTensorMode

    clear = getattr(FakeTensorMode, "cache_clear", None)
    if clear is not None:
        clear()


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()
