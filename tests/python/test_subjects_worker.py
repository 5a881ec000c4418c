"""The subject host's protocol: `python -m flce_subjects.subprocess_worker`, as flce starts it.

One JSON request per line on stdin, one JSON reply per line on stdout; tensors travel in
shared-memory files (in_shm: the inputs as flce's make_inputs writes them, fp32 or int64;
out_shm: the outputs, widened to float64). These tests are flce's side of that exchange.
"""
import json
import os
import select
import subprocess
import sys
import unittest

import numpy as np
import support
import torch

from flce_subjects import casegen, registry

REPLY_TIMEOUT_S = 120


class Worker:
    def __init__(self, name):
        self.dir = support.scratch_dir(f"worker-{name}")
        self.stderr_path = os.path.join(self.dir, "stderr.txt")
        self.stderr = open(self.stderr_path, "w")
        env = dict(os.environ, PYTHONPATH=support.SUBJECTS)
        self.proc = subprocess.Popen([sys.executable, "-m", "flce_subjects.subprocess_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env, cwd=self.dir)

    def send(self, line):
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def reply(self):
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_TIMEOUT_S)
        if not ready:
            raise AssertionError(f"no reply in {REPLY_TIMEOUT_S} s; stderr:\n{self.log()}")
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"the worker closed its channel (exit {self.proc.poll()}); stderr:\n{self.log()}")
        return json.loads(line)

    def ask(self, request):
        self.send(json.dumps(request) + "\n")
        return self.reply()

    def log(self):
        self.stderr.flush()
        with open(self.stderr_path) as f:
            return f.read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.stderr.close()
        return self.proc.returncode


def write_inputs(path, tensors):
    """flce's in_shm layout: each tensor's staging values (fp32, or int64) at a 64-byte aligned
    offset; returns the request's {name: {offset, bytes, dtype, shape, storage}}."""
    specs, blob = {}, b""
    for name, (values, dtype, shape) in tensors.items():
        storage = np.int64 if dtype == "int64" else np.float32
        data = np.asarray(values, dtype=storage).astype(np.dtype(storage).newbyteorder("<")).tobytes()
        blob += b"\0" * (-len(blob) % 64)
        specs[name] = {"offset": len(blob), "bytes": len(data), "dtype": dtype, "shape": list(shape),
                       "storage": "i64" if dtype == "int64" else "f32"}
        blob += data
    with open(path, "wb") as f:
        f.write(blob)
    return specs


def read_output(path, spec):
    count = int(np.prod(spec["shape"])) if spec["shape"] else 1
    with open(path, "rb") as f:
        f.seek(spec["offset"])
        data = f.read(8 * count)
    return np.frombuffer(data, dtype="<f8").reshape(spec["shape"])


class Protocol(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.w = Worker("protocol")
        cls.in_shm = os.path.join(cls.w.dir, "in.shm")
        cls.out_shm = os.path.join(cls.w.dir, "out.shm")
        open(cls.out_shm, "wb").close()  # flce creates both files; the worker grows out_shm

    @classmethod
    def tearDownClass(cls):
        cls.w.close()

    def test_environment_and_builtin_subjects(self):
        env = self.w.ask({"op": "environment"})
        self.assertEqual(env["torch"], torch.__version__)
        self.assertEqual(env["python"], ".".join(map(str, sys.version_info[:3])))
        self.assertLessEqual({"platform", "cuda", "gpu", "capability", "triton", "liger"}, set(env))
        self.assertEqual(self.w.ask({"op": "builtin_subjects"}), {"subjects": sorted(registry.BUILTIN)})
        self.assertEqual(self.w.ask({"op": "reset"}), {"ok": True})

    def test_describe(self):
        self.assertEqual(self.w.ask({"op": "describe", "subject": "model"}),
                         {"flce": True, "op": False, "version": "flce-model-1"})
        self.assertEqual(self.w.ask({"op": "describe", "subject": "model+workaround"}),
                         {"flce": True, "op": False, "version": "flce-model-1"})
        dtype_out = self.w.ask({"op": "describe", "subject": "aten-dtype-out"})
        self.assertEqual((dtype_out["flce"], dtype_out["op"]), (False, True))
        self.assertEqual(dtype_out["version"], f"aten {torch.__version__}")
        missing = self.w.ask({"op": "describe", "subject": "no_such_module_xyz:thing"})
        self.assertEqual(list(missing), ["error"])
        self.assertTrue(missing["error"].startswith("ModuleNotFoundError: "), missing)
        # A callable flce cannot call is a bad subject for describe too (gate, bisect): os.path.join(a, *p).
        join = self.w.ask({"op": "describe", "subject": "os.path:join"})
        self.assertEqual(list(join), ["error"])
        want = "SignatureMismatch: posixpath.join(a, *p) is not an FLCE function"
        self.assertTrue(join["error"].startswith(want), join)
        # Liger's own import failing here (no CUDA/Triton on a CPU box) is the run's to report, not describe's.
        liger = self.w.ask({"op": "describe", "subject": "liger"})
        self.assertEqual((liger.get("flce"), "error" in liger), (True, False), liger)

    def test_capabilities(self):
        """What a campaign worker asks at start: the FLCE parameters the subject's callable takes."""
        model = self.w.ask({"op": "capabilities", "subject": "model"})
        self.assertEqual((model["flce"], model["lacks"]), (True, []))
        self.assertIn("return_token_accuracy", model["params"])
        old = self.w.ask({"op": "capabilities", "subject": "old_flce_api:liger_fused_linear_cross_entropy",
                          "subject_path": os.path.join(support.REPO, "tests", "data", "subjects")})
        self.assertEqual(old["lacks"], ["use_token_scaling", "return_token_accuracy", "return_predicted_tokens"])
        self.assertEqual(self.w.ask({"op": "capabilities", "subject": "aten-dtype-out"}),
                         {"flce": False, "params": [], "lacks": []})
        self.assertEqual(list(self.w.ask({"op": "capabilities", "subject": "no_such_module_xyz:f"})), ["error"])

    def test_describe_a_plugin_with_a_broken_version(self):
        root = support.scratch_dir("worker-plugin")
        with open(os.path.join(root, "plugbrokenversion.py"), "w") as f:
            f.write("def op(*args):\n    return None\n\n\ndef version():\n    raise OSError('no version here')\n")
        self.assertEqual(self.w.ask({"op": "describe", "subject": "plugbrokenversion", "subject_path": root}),
                         {"flce": False, "op": True, "version": "unknown (OSError: no version here)"})

    def test_unknown_op_bad_json_and_blank_lines(self):
        self.assertEqual(self.w.ask({"op": "frobnicate"}), {"error": "unknown op 'frobnicate'"})
        self.assertEqual(self.w.ask({}), {"error": "unknown op None"})
        self.w.send("{not json\n")
        bad = self.w.reply()
        self.assertEqual(bad["status"], "error")
        self.assertTrue(bad["worker_error"].startswith("JSONDecodeError"), bad)
        self.assertEqual(bad["error"]["chain"][0]["type"], "flce.WorkerError")
        self.w.send("\n   \n")  # no reply for blank lines: the next reply is the next request's
        self.assertEqual(self.w.ask({"op": "frobnicate2"}), {"error": "unknown op 'frobnicate2'"})

    def echo(self, tensors, device="cpu"):
        inputs = write_inputs(self.in_shm, tensors)
        reply = self.w.ask({"op": "echo", "case": {"device": device}, "inputs": inputs, "in_shm": self.in_shm,
                            "out_shm": self.out_shm})
        return reply, inputs

    def test_echo_converts_to_the_storage_dtype_and_widens_to_float64(self):
        x = np.array([[1.00390625, 1.01171875, -0.0], [3.0, np.inf, 1e-40]], dtype=np.float32)
        target = np.array([7, -100, 2**40], dtype=np.int64)
        reply, inputs = self.echo({"x": (x, "bf16", x.shape), "target": (target, "int64", target.shape),
                                   "h": (x, "fp16", x.shape), "empty": (np.zeros(0), "fp32", (0, 4)),
                                   "f": (x, "fp32", x.shape)})
        self.assertEqual(reply["status"], "ok", reply)
        out = reply["outputs"]
        self.assertEqual({k: (v["dtype"], v["shape"]) for k, v in out.items()},
                         {"x": ("bf16", [2, 3]), "target": ("int64", [3]), "h": ("fp16", [2, 3]),
                          "empty": ("fp32", [0, 4]), "f": ("fp32", [2, 3])})
        self.assertTrue(all(v["offset"] % 64 == 0 for v in out.values()), out)
        for name, dtype in (("x", torch.bfloat16), ("h", torch.float16), ("f", torch.float32)):
            want = torch.from_numpy(x.copy()).to(dtype).to(torch.float64).numpy()
            np.testing.assert_array_equal(read_output(self.out_shm, out[name]), want, name)
        np.testing.assert_array_equal(read_output(self.out_shm, out["x"])[0], [1.0, 1.015625, -0.0])
        self.assertEqual(read_output(self.out_shm, out["target"]).tolist(), [7.0, -100.0, 2.0**40])
        self.assertEqual(read_output(self.out_shm, out["empty"]).shape, (0, 4))

    def test_echo_sees_rewritten_and_grown_inputs(self):
        small = np.arange(6, dtype=np.float32)
        first, _ = self.echo({"v": (small, "fp32", (6,))})
        self.assertEqual(read_output(self.out_shm, first["outputs"]["v"]).tolist(), small.tolist())
        # same file, same size, new values: the worker reuses its mapping and still sees them
        second, _ = self.echo({"v": (small + 100, "fp32", (6,))})
        self.assertEqual(read_output(self.out_shm, second["outputs"]["v"]).tolist(), (small + 100).tolist())
        big = np.linspace(-1, 1, 5000, dtype=np.float32)
        grown, _ = self.echo({"v": (big, "fp32", (50, 100))})
        np.testing.assert_array_equal(read_output(self.out_shm, grown["outputs"]["v"]).reshape(-1), big)
        self.assertGreaterEqual(os.path.getsize(self.out_shm), 5000 * 8)

    @unittest.skipIf(torch.cuda.is_available(), "needs a host without a CUDA device")
    def test_echo_of_a_cuda_case_without_cuda(self):
        reply, _ = self.echo({"v": (np.zeros(2), "fp32", (2,))}, device="cuda")
        self.assertEqual(reply["status"], "unsupported")

    def run_request(self, case, subject, tensors, **extra):
        inputs = write_inputs(self.in_shm, tensors)
        request = {"op": "run", "case": case, "inputs": inputs, "in_shm": self.in_shm, "out_shm": self.out_shm,
                   "subject": subject, "mode": "eager", "backend": None, "subject_path": None}
        request.update(extra)
        return self.w.ask(request)

    def test_run_returns_the_subjects_outputs_through_out_shm(self):
        c = casegen.case(input_dtype="fp32", weight_dtype="fp32", BT=6, H=8, V=10)
        t = {k: v.numpy() for k, v in casegen.tensors(c).items()}
        staged = {k: (v, "int64" if k == "target" else "fp32", v.shape) for k, v in t.items()}
        reply = self.run_request(c, "model", staged)
        self.assertEqual(reply["status"], "ok", reply)
        self.assertEqual(reply["subject_version"], "flce-model-1")
        self.assertGreaterEqual(reply["transfer_ms"], 0)
        out = reply["outputs"]
        self.assertEqual({k: (v["dtype"], v["shape"]) for k, v in out.items()},
                         {"loss": ("fp32", []), "grad_input": ("fp32", [6, 8]), "grad_weight": ("fp32", [10, 8])})
        x, w = (torch.from_numpy(t[n]).double().requires_grad_() for n in ("x", "w"))
        loss = torch.nn.functional.cross_entropy(x @ w.t(), torch.from_numpy(t["target"]))
        loss.backward()
        np.testing.assert_allclose(read_output(self.out_shm, out["loss"]), loss.item(), rtol=1e-5)
        np.testing.assert_allclose(read_output(self.out_shm, out["grad_input"]), x.grad.numpy(), rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(read_output(self.out_shm, out["grad_weight"]), w.grad.numpy(), rtol=1e-4,
                                   atol=1e-7)

    def test_run_reports_a_failing_subject_and_keeps_the_channel_clean(self):
        root = support.scratch_dir("worker-chatty")
        with open(os.path.join(root, "plugchattyfail.py"), "w") as f:
            f.write("import os\n\n\ndef flce(x, w, target, **options):\n"
                    "    print('printed noise')\n    os.write(1, b'fd-1 noise\\n')\n"
                    "    raise RuntimeError('chatty failure') from KeyError('the root')\n")
        c = casegen.case(input_dtype="fp32", weight_dtype="fp32")
        staged = {k: (v.numpy(), "int64" if k == "target" else "fp32", tuple(v.shape))
                  for k, v in casegen.tensors(c).items()}
        reply = self.run_request(c, "plugchattyfail", staged, subject_path=root)
        self.assertEqual(reply["status"], "error")
        self.assertEqual(reply["error"]["phase"], "forward")
        self.assertEqual([x["type"] for x in reply["error"]["chain"]], ["builtins.RuntimeError", "builtins.KeyError"])
        self.assertEqual(reply["outputs"], {})
        log = self.w.log()  # what a subject prints, or writes to fd 1, goes to stderr
        self.assertIn("printed noise", log)
        self.assertIn("fd-1 noise", log)
        self.assertEqual(self.w.ask({"op": "frobnicate3"}), {"error": "unknown op 'frobnicate3'"})  # still in step


class Lifetime(unittest.TestCase):
    def test_the_worker_ends_when_its_stdin_closes(self):
        w = Worker("lifetime")
        self.assertEqual(w.ask({"op": "frobnicate"}), {"error": "unknown op 'frobnicate'"})
        self.assertEqual(w.close(), 0)


if __name__ == "__main__":
    unittest.main()
