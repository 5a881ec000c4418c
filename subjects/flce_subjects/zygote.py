"""A campaign's subject-host zygote: imports torch and the subject once, then forks each host.

    <venv>/bin/python -m flce_subjects.zygote SOCKET SUBJECT [SUBJECT_PATH]

Why: every campaign worker, analysis and walk starts a subject host, and on the H200 each
spent 6-8.5 s importing torch and Liger (13-18 s with ten campaigns on the box) before its
first case -- most of the time to the seed's tier 1, and most of an analysis. A host forked
from here starts with the imports done and nothing else: no case ran, no CUDA context exists
(the first host call makes its own), so it is as fresh as a spawned one.

Protocol (process/zygote.hpp is the other side), SOCK_SEQPACKET on SOCKET, one connection per host:
  request   {"exe", "args", "env", "cwd", "rlimit_data"} with three descriptors (SCM_RIGHTS):
            the host's stdin, stdout and stderr
  replies   {"pid": N} or {"refused": why}; later {"exit": waitstatus} when the host ends
A closed connection kills the host's process group (its flce worker died). The zygote refuses
whatever a fork could not give exactly as exec would: another interpreter, another program,
an environment that differs in a variable read at import (only _LAZY_ENV may differ), a CUDA
context or Python threads after the preload. The caller then spawns the host as before.
One JSON line on stdout once the preload ended: {"zygote": "ready", "preload_ms", "phases_ms", "refusing"}.
"""
import ctypes
import json
import os
import resource
import selectors
import signal
import socket
import sys
import time

# Read when first used (a CUDA call, a compile, a cache lookup), never at import: hosts of one
# campaign differ there (their GPU, their stacks file) and still match a fork exactly.
_LAZY_ENV = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "FLCE_STACKS_FILE",
        "TRITON_CACHE_DIR",
        "TRITON_CACHE_MANAGER",
        "FLCE_TRITON_BOX_CACHE",
        "TORCHINDUCTOR_CACHE_DIR",
    }
)
_HOST_ARGS = ["-m", "flce_subjects.subprocess_worker"]


_warming = None  # the bytecode warm-up (warm_bytecode.py) this zygote started, if any


def _preload(subject, subject_path, phases):
    """What a host's first calls (describe, capabilities) import; None, or why forks are refused.
    `phases` gets the ms of each step (where a campaign's time to its first case goes)."""
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"  # is_available() at import: NVML, no cuInit
    t = time.perf_counter()

    def lap(name):
        nonlocal t
        now = time.perf_counter()
        phases[name] = round((now - t) * 1e3)
        t = now

    try:
        import torch

        lap("torch")  # timed apart from the subject's own import
        from . import warm_bytecode

        global _warming
        _warming = warm_bytecode.maybe_start(torch.__version__)  # on another core, while the subject imports
        if _warming is not None:
            lap("warm_bytecode")  # the phase's presence says this zygote started one
        from . import host_api, subprocess_worker

        info = subprocess_worker._describe({"subject": subject, "subject_path": subject_path})
        lap("subject")
        if "error" in info:
            return f"the subject does not load here: {info['error']}"
        host_api.capabilities(subject, subject_path)
        import threading

        if torch.cuda.is_initialized():
            return "the preload initialized CUDA: a forked host could not use it"
        if threading.active_count() > 1:
            return f"{threading.active_count()} Python threads after the preload: a fork copies their locks"
    except Exception as e:  # noqa: BLE001 -- a zygote that cannot preload only refuses
        return f"preload failed: {type(e).__name__}: {e}"
    finally:
        os.environ.pop("PYTORCH_NVML_BASED_CUDA_CHECK", None)
    why = _probe_cuda()
    lap("cuda_probe")
    return why


CUDA_ERROR_NOT_INITIALIZED = 3


def _probe_cuda(driver=None):
    """Where the preload mapped the CUDA driver, forked hosts can use CUDA only if the driver was
    never initialized here. The driver says so itself, at once: cuDeviceGetCount answers
    NOT_INITIALIZED before cuInit and initializes nothing. Only when it answers otherwise does a
    forked child try CUDA (the answer decides: a driver initialized before a fork is unusable
    after it). Asking first keeps the child's context creation, 0.45 s on the H200
    (docs/benchmarks-history.md, ninth round), off every campaign's path to its first case.
    Not mapped: never initialized."""
    if driver is None:
        path = _mapped_driver()
        if path is None:
            return None
        try:
            driver = ctypes.CDLL(path)  # already mapped: this loads nothing
        except OSError:
            return _probe_cuda_in_child()
    count = ctypes.c_int(0)
    try:
        if driver.cuDeviceGetCount(ctypes.byref(count)) == CUDA_ERROR_NOT_INITIALIZED:
            return None
    except AttributeError:  # a driver without the symbol: let the child decide
        pass
    return _probe_cuda_in_child()


def _mapped_driver():
    with open("/proc/self/maps") as f:
        for line in f:
            if "libcuda.so" in line:
                return line.split(None, 5)[-1].strip()
    return None


def _probe_cuda_in_child():
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            import torch

            torch.cuda.init()
            torch.empty(1, device="cuda")
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return f"CUDA was initialized before the fork; a forked child could not use it (wait status {status})"
    return None


def _mismatch(req, base_env):
    if os.path.abspath(req.get("exe", "")) != os.path.abspath(sys.executable):
        return f"interpreter {req.get('exe')!r}, this zygote runs {sys.executable!r}"
    if req.get("args") != _HOST_ARGS:
        return f"program {req.get('args')!r}, this zygote forks {_HOST_ARGS!r}"
    env = req.get("env", {})
    differ = sorted(k for k in set(env) | set(base_env) if env.get(k) != base_env.get(k) and k not in _LAZY_ENV)
    if differ:
        return "environment differs in " + ", ".join(differ[:8])
    return None


def _become_host(req, fds, keep_out):
    """In the forked child: the host's own process group, descriptors, environment and limits."""
    os.setpgid(0, 0)
    signal.set_wakeup_fd(-1)
    for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
        signal.signal(s, signal.SIG_DFL)
    for fd in keep_out:
        os.close(fd)
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    os.environ.clear()
    os.environ.update(req["env"])
    os.chdir(req.get("cwd") or "/")
    if req.get("rlimit_data"):
        resource.setrlimit(resource.RLIMIT_DATA, (req["rlimit_data"], req["rlimit_data"]))
    # The streams over descriptors 0-2 as a started interpreter would have them (unbuffered: the
    # hosts run with PYTHONUNBUFFERED=1, and the log must keep a crash's last lines).
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 -- the host's channel, for its lifetime
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    from . import subprocess_worker

    subprocess_worker.main()


class _Zygote:
    def __init__(self, sock_path, base_env, channel):
        self.refusing, self.base_env, self.channel = None, base_env, channel
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(sock_path)
        self.listener.listen(128)
        self.sel = selectors.DefaultSelector()
        self.hosts = {}  # pid -> its connection
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the selector

    def serve(self):
        self.sel.register(self.listener, selectors.EVENT_READ, "accept")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "child")
        self.sel.register(sys.stdin, selectors.EVENT_READ, "parent")
        while True:
            for key, _ in self.sel.select():
                if key.data == "accept":
                    conn, _ = self.listener.accept()
                    self.sel.register(conn, selectors.EVENT_READ, "request")
                elif key.data == "child":
                    os.read(self.wake_r, 4096)
                    self.reap()
                elif key.data == "parent":
                    if not os.read(0, 4096):  # the campaign closed our stdin, or died
                        return
                else:
                    self.handle(key.fileobj)

    def handle(self, conn):
        try:
            msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        except OSError:
            msg, fds = b"", []
        pid = next((p for p, c in self.hosts.items() if c is conn), None)
        if pid is not None or not msg:  # the host's owner went away: so does the host
            for fd in fds:
                os.close(fd)
            self.drop(conn)
            if pid is not None:
                _kill_group(pid)
            return
        try:
            req = json.loads(msg)
            why = self.refusing or (len(fds) != 3 and "three descriptors expected") or _mismatch(req, self.base_env)
        except ValueError as e:
            why = f"unreadable request: {e}"
        if why:
            for fd in fds:
                os.close(fd)
            _send(conn, {"refused": why})
            self.drop(conn)
            return
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                # Every connection stays the zygote's: a copy here would hide its owner's death.
                inherited = [k.fd for k in self.sel.get_map().values()] + [self.wake_w, self.channel.fileno()]
                self.sel.close()
                _become_host(req, fds, inherited)
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:  # noqa: BLE001 -- the host's own failure: its log has it
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        try:
            os.setpgid(pid, pid)  # as the child does: the group exists before anyone signals it
        except OSError:
            pass
        for fd in fds:
            os.close(fd)
        self.hosts[pid] = conn
        _send(conn, {"pid": pid})

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.hosts.pop(pid, None)
            if conn is not None:
                _send(conn, {"exit": status})
                self.drop(conn)

    def drop(self, conn):
        for pid, c in list(self.hosts.items()):
            if c is conn:
                del self.hosts[pid]
        try:
            self.sel.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()

    def close(self):
        for pid in list(self.hosts):
            _kill_group(pid)


def _send(conn, obj):
    try:
        conn.send(json.dumps(obj).encode())
    except OSError:
        pass


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def main():
    from .subprocess_worker import _die_with_parent

    _die_with_parent()
    sock_path, subject = sys.argv[1], sys.argv[2]
    subject_path = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    base_env = dict(os.environ)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the subject prints at import goes to the log, not the channel
    t0 = time.perf_counter()
    zygote = None
    try:
        # Bound first: hosts asked for during the preload wait in the backlog, not in a spawn.
        zygote = _Zygote(sock_path, base_env, channel)
        phases = {}
        zygote.refusing = _preload(subject, subject_path, phases)
        ready = {"zygote": "ready", "preload_ms": round((time.perf_counter() - t0) * 1e3), "phases_ms": phases,
                 "refusing": zygote.refusing}
        channel.write(json.dumps(ready) + "\n")
        zygote.serve()
    finally:
        if zygote is not None:
            zygote.close()


if __name__ == "__main__":
    main()
