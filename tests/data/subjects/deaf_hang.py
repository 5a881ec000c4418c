"""A test subject that hangs where Python cannot answer flce's stack signal: it sets SIGUSR1 to
ignored (as a library resetting signal handlers would) and waits for a child process that does
not end (as a subject host waits for a hung compiler subprocess). stacks.txt then has no Python
stacks, and the kernel's view must show why: SIGUSR1 ignored, the wait, and the child.

    flce campaign --subject deaf_hang:flce --subject-path tests/data/subjects ...
"""
import signal
import subprocess

__version__ = "deaf-hang-1"


def flce(input, weight, target, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0,
         label_smoothing=0.0, reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None):
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    subprocess.run(["sleep", "25"], check=False)  # outlives the test's 3 s case timeout, then ends alone
    raise RuntimeError("deaf_hang: the case timeout should have ended this call")
