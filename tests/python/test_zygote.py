"""The subject-host zygote: `python -m flce_subjects.zygote SOCKET SUBJECT`, as a campaign starts it.

A host forked there must answer like a spawned one, in its own process group, its exit reported
with its signal; the zygote refuses what a fork could not give exactly (process/zygote.hpp is
the C++ side; the campaign tests run every host through it).
"""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types
import unittest

import support

REPLY_TIMEOUT_S = 120
HOST_ARGS = ["-m", "flce_subjects.subprocess_worker"]


def _env():
    return dict(os.environ, PYTHONPATH=support.SUBJECTS, PYTHONUNBUFFERED="1")


class Zygote:
    def __init__(self, subject="model"):
        self.dir = tempfile.mkdtemp(prefix="flce-zygote-test-")
        self.socket = os.path.join(self.dir, "socket")
        self.log = open(os.path.join(self.dir, "zygote.log"), "w")  # noqa: SIM115 -- closed in close()
        self.env = _env()
        self.proc = subprocess.Popen([sys.executable, "-m", "flce_subjects.zygote", self.socket, subject],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env=self.env)
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_TIMEOUT_S)
        assert ready, "the zygote did not report its preload"
        self.ready = json.loads(self.proc.stdout.readline())

    def ask(self, env=None, exe=None, args=None):
        """A host's request as process/zygote.cpp sends it: the connection, and the host's pipes."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        conn.connect(self.socket)
        host_in, to_host = os.pipe()
        from_host, host_out = os.pipe()
        log = os.open(os.path.join(self.dir, "host.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        req = {"exe": exe or sys.executable, "args": args or HOST_ARGS, "env": env or self.env, "cwd": self.dir,
               "rlimit_data": 0}
        socket.send_fds(conn, [json.dumps(req).encode()], [host_in, host_out, log])
        for fd in (host_in, host_out, log):
            os.close(fd)
        ready, _, _ = select.select([conn], [], [], REPLY_TIMEOUT_S)
        assert ready, "no answer from the zygote"
        return Host(conn, json.loads(conn.recv(4096)), to_host, from_host)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.log.close()


class Host:
    def __init__(self, conn, answer, to_host, from_host):
        self.conn, self.answer = conn, answer
        self.to_host = os.fdopen(to_host, "w", buffering=1)
        self.from_host = os.fdopen(from_host)
        self.pid = answer.get("pid")

    def ask(self, request):
        self.to_host.write(json.dumps(request) + "\n")
        ready, _, _ = select.select([self.from_host], [], [], REPLY_TIMEOUT_S)
        assert ready, "no reply from the host"
        return json.loads(self.from_host.readline())

    def exit_status(self):
        ready, _, _ = select.select([self.conn], [], [], 30)
        assert ready, "the zygote did not report the host's exit"
        return json.loads(self.conn.recv(4096))["exit"]


class ZygoteTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.zygote = Zygote()

    @classmethod
    def tearDownClass(cls):
        cls.zygote.close()

    def test_preload_leaves_nothing_to_refuse(self):
        self.assertEqual(self.zygote.ready["zygote"], "ready")
        self.assertIsNone(self.zygote.ready["refusing"])

    def test_a_forked_host_answers_in_its_own_group_and_exits_cleanly(self):
        host = self.zygote.ask(env=dict(self.zygote.env, FLCE_STACKS_FILE="/tmp/x.stacks"))  # a lazy variable
        self.assertIn("pid", host.answer, host.answer)
        self.assertEqual(os.getpgid(host.pid), host.pid)
        self.assertNotEqual(host.pid, self.zygote.proc.pid)
        self.assertEqual(host.ask({"op": "describe", "subject": "model"})["flce"], True)
        self.assertEqual(host.ask({"op": "environment"})["torch"].split("+")[0][:1], "2")
        host.to_host.close()  # EOF: the host's loop ends
        status = host.exit_status()
        self.assertTrue(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status)

    def test_a_host_killed_by_a_signal_is_reported_with_it(self):
        host = self.zygote.ask()
        self.assertEqual(host.ask({"op": "describe", "subject": "model"})["flce"], True)
        os.kill(host.pid, signal.SIGSEGV)
        status = host.exit_status()
        self.assertTrue(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV, status)

    def test_a_host_whose_owner_leaves_is_killed(self):
        host = self.zygote.ask()
        pid = host.pid
        host.conn.close()  # its flce worker died
        deadline = time.time() + 20
        while time.time() < deadline and os.path.exists(f"/proc/{pid}"):
            time.sleep(0.05)
        self.assertFalse(os.path.exists(f"/proc/{pid}"), "the host outlived its owner")

    def test_refuses_an_environment_that_an_import_reads(self):
        host = self.zygote.ask(env=dict(self.zygote.env, OMP_NUM_THREADS="7"))
        self.assertNotIn("pid", host.answer)
        self.assertIn("OMP_NUM_THREADS", host.answer["refused"])

    def test_refuses_another_interpreter_or_program(self):
        other = self.zygote.ask(exe="/usr/bin/python3-other")
        self.assertIn("interpreter", other.answer["refused"])
        prog = self.zygote.ask(args=["-m", "flce_subjects.zygote"])
        self.assertIn("program", prog.answer["refused"])


class RefusingZygoteTest(unittest.TestCase):
    def test_a_subject_that_does_not_load_is_refused_not_forked(self):
        z = Zygote(subject="no_such_module_for_flce:flce")
        try:
            self.assertIn("does not load", z.ready["refusing"] or "")
            host = z.ask()
            self.assertIn("does not load", host.answer["refused"])
        finally:
            z.close()


class Driver:
    """libcuda as the CUDA probe asks it: cuDeviceGetCount's answer, and whether it was asked."""

    def __init__(self, answer):
        self.answer, self.asked = answer, 0

    def cuDeviceGetCount(self, count):  # noqa: N802 -- the driver's name
        self.asked += 1
        return self.answer


class CudaProbeTest(unittest.TestCase):
    def setUp(self):
        from flce_subjects import zygote

        self.zygote = zygote
        self.children = []
        self.real_child = zygote._probe_cuda_in_child
        zygote._probe_cuda_in_child = lambda: self.children.append(1) or "child could not use CUDA"

    def tearDown(self):
        self.zygote._probe_cuda_in_child = self.real_child

    def test_a_driver_never_initialized_needs_no_forked_child(self):
        driver = Driver(self.zygote.CUDA_ERROR_NOT_INITIALIZED)
        self.assertIsNone(self.zygote._probe_cuda(driver))
        self.assertEqual((driver.asked, self.children), (1, []))

    def test_an_initialized_driver_is_tried_in_a_forked_child_and_refused_on_its_answer(self):
        driver = Driver(0)  # CUDA_SUCCESS: cuInit ran before the fork
        self.assertEqual(self.zygote._probe_cuda(driver), "child could not use CUDA")
        self.assertEqual(self.children, [1])

    def test_no_driver_mapped_is_no_driver_asked(self):
        # this interpreter has not touched CUDA (CPU CI has no driver at all)
        if self.zygote._mapped_driver() is not None:
            self.skipTest("libcuda is mapped in this test process")
        self.assertIsNone(self.zygote._probe_cuda())
        self.assertEqual(self.children, [])


class WarmBytecodeTest(unittest.TestCase):
    """The zygote's bytecode warm-up (flce_subjects/warm_bytecode.py): started once per prefix and
    torch, only where flce keeps the bytecode, and what it writes is the compile stack's."""

    def setUp(self):
        from flce_subjects import warm_bytecode

        self.wb = warm_bytecode
        self.prefix = tempfile.mkdtemp(prefix="flce-warm-test-")
        self.addCleanup(shutil.rmtree, self.prefix, True)
        self.started = []

    def popen(self, args, **_):
        self.started.append(args)
        return types.SimpleNamespace(pid=12345, args=args)

    def start(self, version="9.9"):
        return self.wb.maybe_start(version, prefix=self.prefix, popen=self.popen, dont_write=False)

    def test_starts_once_where_the_marker_and_a_fresh_lock_are_absent(self):
        self.assertIsNotNone(self.start())
        lock = self.wb.marker_path(self.prefix, "9.9") + ".lock"
        self.assertEqual(self.started, [[sys.executable, "-m", "flce_subjects.warm_bytecode", lock]])
        self.assertIsNone(self.start(), "a second zygote while the first warm-up runs")
        self.assertIsNotNone(self.start("10.0"), "another torch has its own marker")
        with open(self.wb.marker_path(self.prefix, "9.8"), "w"):
            pass
        self.assertIsNone(self.start("9.8"), "done before")
        self.assertEqual(len(self.started), 2)

    def test_takes_over_a_stale_lock(self):
        lock = self.wb.marker_path(self.prefix, "9.9") + ".lock"
        with open(lock, "w"):
            pass
        old = time.time() - self.wb.STALE_LOCK_S - 60
        os.utime(lock, (old, old))
        self.assertIsNotNone(self.start())

    def test_nothing_where_python_keeps_its_own_bytecode(self):
        self.assertIsNone(self.wb.maybe_start("9.9", prefix="", popen=self.popen, dont_write=False))
        self.assertIsNone(self.wb.maybe_start("9.9", prefix=self.prefix, popen=self.popen, dont_write=True))
        self.assertEqual(self.started, [])

    def test_writes_the_compile_stacks_bytecode_then_its_marker(self):
        env = dict(_env(), PYTHONPYCACHEPREFIX=self.prefix, PYTHONDONTWRITEBYTECODE="")
        version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip()
        lock = self.wb.marker_path(self.prefix, version) + ".lock"
        with open(lock, "w"):
            pass
        r = subprocess.run([sys.executable, "-m", "flce_subjects.warm_bytecode", lock], env=env,
                           capture_output=True, text=True, timeout=REPLY_TIMEOUT_S)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertFalse(os.path.exists(lock))
        self.assertTrue(os.path.exists(self.wb.marker_path(self.prefix, version)))
        written = {os.path.basename(root) + "/" + f
                   for root, _, files in os.walk(self.prefix) for f in files if f.endswith(".pyc")}
        self.assertGreater(len(written), 500, sorted(written)[:20])
        for module in ("_inductor/compile_fx", "_functorch/partitioners", "_dynamo/convert_frame"):
            self.assertTrue(any(w.startswith(module) for w in written), f"no bytecode for torch.{module}")


if __name__ == "__main__":
    unittest.main()
