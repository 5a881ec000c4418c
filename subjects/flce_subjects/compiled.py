"""torch.compile wrappers, cached per graph-relevant configuration.

A campaign runs thousands of cases through few distinct configurations, so compiled
functions are reused. Dynamo keeps its cache (and its recompile counter) on the *code
object* of the compiled function; every cache entry therefore gets its own copy of the
code object, so configurations neither share guards nor use up each other's recompile
budget. reset() drops everything, including Dynamo's global state.
"""
import types

import torch

_cache = {}


def _fresh_code(fn):
    """Same function, distinct code object (equal, but a separate Dynamo cache)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def compile_options(compile_cfg, backend):
    kwargs = {
        "backend": backend,
        "fullgraph": bool(compile_cfg.get("fullgraph", False)),
        "dynamic": compile_cfg.get("dynamic"),
    }
    mode = compile_cfg.get("mode", "default")
    if backend == "inductor" and mode not in (None, "default"):
        kwargs["mode"] = mode  # other backends reject/ignore modes
    return kwargs


def get(key, make_fn, compile_kwargs):
    """The compiled function for `key`, building it from make_fn() on first use."""
    fn = _cache.get(key)
    if fn is None:
        fn = torch.compile(_fresh_code(make_fn()), **compile_kwargs)
        _cache[key] = fn
    return fn


def dynamo_config(capture_scalar_outputs):
    """Config for every compiled call: the case's capture flag, and no silent eager fallback
    when a recompile limit is hit (that would report eager results as compiled ones).
    Keys this torch does not know are skipped (older releases lack some)."""
    cfg = torch._dynamo.config
    wanted = {
        "capture_scalar_outputs": bool(capture_scalar_outputs),
        "fail_on_recompile_limit_hit": True,
        # Room for a worker's stream of configurations: the wrapper's code object is per entry,
        # but a graph break inside the subject (torch-native's own `warnings.warn`) resumes in the
        # subject's code objects, shared by every configuration of the process: with a limit of
        # 64, a 10-minute torch-native campaign (seed 977) hit it, the harness's reuse of one
        # process and not the subject (judge/signatures.json harness-recompile-limit). A real
        # storm still fails: the limit is hit, never a silent eager fallback.
        "recompile_limit": max(getattr(cfg, "recompile_limit", 0), 1 << 16),
        "accumulated_recompile_limit": max(getattr(cfg, "accumulated_recompile_limit", 0), 1 << 16),
    }
    return cfg.patch(**{k: v for k, v in wanted.items() if hasattr(cfg, k)})


def reset():
    torch._dynamo.reset()
    _cache.clear()


def size():
    return len(_cache)
