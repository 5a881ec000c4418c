"""Turn an exception into the host's error record: a flat chain, outermost first.

Torch wraps the interesting failure several layers deep: __cause__/__context__, plus
wrapper attributes such as InductorError.inner_exception / BackendCompilerFailed.inner_exception.
Rather than hard-coding attribute names, every BaseException-valued instance attribute
is followed, so newer wrappers are picked up too. Identity-based `seen` prevents loops.
"""
import traceback

MAX_FRAMES = 64          # innermost frames kept per exception
MAX_MESSAGE = 20000      # Inductor messages embed whole IR dumps
MAX_CHAIN = 32


def qualified_name(exc):
    cls = type(exc)
    return f"{cls.__module__}.{cls.__qualname__}"  # builtins too: "builtins.TypeError"


def frames_of(exc):
    tb = exc.__traceback__
    if tb is None:
        return []
    out = [f"{f.filename}:{f.lineno}:{f.name}" for f in traceback.extract_tb(tb)]
    return out[-MAX_FRAMES:]


def _message(exc):
    try:
        text = str(exc)
    except Exception as inner:  # a broken __str__ must not break reporting
        text = f"<unprintable {qualified_name(exc)}: {inner!r}>"
    return text[:MAX_MESSAGE]


def _linked(exc):
    """(primary, others): the exception this one is "really about" and any side links.

    Primary preference: explicit __cause__, then a wrapper attribute (InductorError wraps
    with `raise ... from None`, leaving only inner_exception), then implicit __context__.
    """
    try:
        attrs = [v for v in vars(exc).values() if isinstance(v, BaseException)]
    except TypeError:  # no __dict__
        attrs = []
    ordered = [exc.__cause__, *attrs, exc.__context__]
    ordered = [e for i, e in enumerate(ordered) if e is not None and all(e is not o for o in ordered[:i])]
    return (ordered[0], ordered[1:]) if ordered else (None, [])


def chain(exc):
    """Outermost first; side links are listed before the primary continuation, so the last
    entry is the deepest primary cause (the root). Each exception appears once."""
    out, seen, stack = [], set(), [exc]
    while stack and len(out) < MAX_CHAIN:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        out.append({"type": qualified_name(e), "message": _message(e), "frames": frames_of(e)})
        primary, others = _linked(e)
        if primary is not None:
            stack.append(primary)  # popped last: after the side links' subtrees
        stack.extend(reversed(others))
    return out


def record(exc, phase):
    return {"chain": chain(exc), "phase": phase}
