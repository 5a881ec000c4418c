"""Silence torch's logging, Python warnings and sys.stderr for the duration of a call.

Dynamo/Inductor log full tracebacks on failure; the host wants them only as the
structured error chain, not interleaved on its stderr. Everything is restored on exit.
"""
import contextlib
import io
import logging
import sys
import warnings


@contextlib.contextmanager
def quiet():
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
