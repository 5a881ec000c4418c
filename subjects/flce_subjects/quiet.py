"""Silence torch's logging, Python warnings and sys.stderr for the duration of a call.

Dynamo/Inductor log full tracebacks on failure; the host wants them only as the
structured error chain, not interleaved on its stderr. Everything is restored on exit.
"""
import contextlib
import io
import logging
import os
import sys
import warnings

_settled = False


def _settle_trace_log():
    """Let torch's structured-trace handler see one event before logging is disabled.

    torch installs a lazy handler on its trace log that removes itself at its first event when
    TORCH_TRACE is unset; until then every structured event formats its payload (guards, FX
    graphs) for nobody. Before torch 2.12 (pytorch#181186) logging.disable() also kept that
    first event from the handler, so under quiet() it never went: on the H200 (torch 2.11) a
    dynamic-shape Liger compile was still printing sympy guards in `_log_guard` when its 120 s
    case timeout killed it. With TORCH_TRACE set, the event is one artifact in the user's trace.
    FLCE_KEEP_TRACE_HANDLER=1 skips this (to show the old behaviour).
    """
    global _settled
    if _settled or "torch" not in sys.modules or os.environ.get("FLCE_KEEP_TRACE_HANDLER") == "1":
        return
    _settled = True
    try:
        from torch._logging import trace_structured

        trace_structured(
            "artifact",
            metadata_fn=lambda: {"name": "flce_subject_host", "encoding": "string"},
            payload_fn=lambda: "flce subject host",
            expect_trace_id=False,
        )
    except Exception:  # noqa: BLE001 -- another torch's logging: quiet() must still work
        pass


@contextlib.contextmanager
def quiet():
    _settle_trace_log()
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            yield sink
    finally:
        logging.disable(previous)
        sys.stderr.flush()
