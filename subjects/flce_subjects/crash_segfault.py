"""`segfault`: crashes the interpreter (reads address 0). For the host's isolation tests."""
import ctypes

from .model import supports_flce_only


def version():
    return "segfault-1"


def supports(case):
    return supports_flce_only(case)


def flce(x, w, target, **_options):
    ctypes.string_at(0)  # SIGSEGV
    raise AssertionError("unreachable")
