"""`hang`: never returns (sleeps forever). For the host's timeout/isolation tests."""
import time

from .model import supports_flce_only


def version():
    return "hang-1"


def supports(case):
    return supports_flce_only(case)


def flce(x, w, target, **_options):
    while True:
        time.sleep(3600)
