"""Unit tests of the subjects package (subjects/flce_subjects), in process.

runner.run() is what the subject host (subprocess_worker.py, test_subjects_worker.py) calls
for every run; these tests call it directly, with flce_subjects.casegen's tiny cases and
plug-in subjects written into a scratch folder. The parameter binding (flce_subjects.params)
has its own file, test_subjects_params.py.
"""
import json
import os
import re
import subprocess
import sys
import textwrap
import unittest

import support
import torch
from support import FP32, plugin_tree

from flce_subjects import (
    casegen,
    compiled,
    dtypes,
    errors,
    host_api,
    identity,
    liger,
    paths,
    registry,
    runner,
    signatures,
)

NAIVE = """
import torch

__version__ = "{version}"


def flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, reduction="mean", **_):
    {body}
    logits = x @ w.t() + (bias if bias is not None else 0)
    return torch.nn.functional.cross_entropy(logits.float(), target, weight=ce_weight, ignore_index=ignore_index,
                                             reduction=reduction)
"""


def plugin(name, version="1", body="pass", module=None):
    """subject_path with one module `module` (default: plug<name>) whose flce() is a naive FLCE."""
    return plugin_tree(name, {f"{module or 'plug' + name}.py": NAIVE.format(version=version, body=body)})


class LigerVersion(unittest.TestCase):
    """liger.version(): what a user would call the copy that loaded (an exported tree's commit, an
    installed release, or a source tree with its own version), never an installed wheel's number
    for a tree; the corpus's subject_version expectations match on it (corpus/README.md)."""

    def tree(self, name, files):
        """A fake Liger tree under the scratch folder: {relative path: text}; returns its root."""
        return plugin_tree(os.path.join("liger-trees", name), {"src/liger_kernel/__init__.py": "", **files})

    def site(self, name, version):
        """A fake site-packages holding liger_kernel and the liger_kernel-<version>.dist-info that owns it."""
        return plugin_tree(os.path.join("liger-sites", name), {
            "liger_kernel/__init__.py": "",
            f"liger_kernel-{version}.dist-info/METADATA":
                f"Metadata-Version: 2.1\nName: liger-kernel\nVersion: {version}\n",
        })

    def test_an_exported_tree_names_its_commit(self):
        hexsha = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"
        where = f"/home/u/.cache/flce/trees/{hexsha}/src/liger_kernel/__init__.py"
        self.assertEqual(liger.source_of(where, search=[]),
                         f"liger-kernel git ead96b618e5c, a tree flce exported ({where})")
        # FLCE_TREE_CACHE may move the cache: the commit-named folder is what counts.
        self.assertTrue(liger.source_of(f"/scratch/c/{hexsha}/src/liger_kernel/__init__.py", search=[])
                        .startswith("liger-kernel git ead96b618e5c, "))

    def test_an_installed_release_names_its_version(self):
        site = self.site("release", "0.8.5")
        where = os.path.join(site, "liger_kernel", "__init__.py")
        self.assertEqual(liger.source_of(where, search=[site]), f"liger-kernel 0.8.5, installed release ({where})")

    def test_a_source_tree_reads_its_own_version_not_the_installed_wheels(self):
        site = self.site("wheel-beside-a-tree", "0.8.5")  # installed, but not the copy that loaded
        root = self.tree("with-pyproject", {"pyproject.toml": '[project]\nname = "liger_kernel"\nversion = "0.8.6"\n'})
        where = os.path.join(root, "src", "liger_kernel", "__init__.py")
        v = liger.source_of(where, search=[site], index="")
        tree = identity.tree_id(os.path.join(root, "src"))[:12]
        self.assertEqual(v, f"liger-kernel source tree at {root}, pyproject.toml version 0.8.6, tree {tree} ({where})")
        self.assertNotIn("0.8.5", v)
        # No pyproject.toml (or no version in it): said so, and no release number at all.
        bare = self.tree("bare", {})
        where = os.path.join(bare, "src", "liger_kernel", "__init__.py")
        tree = identity.tree_id(os.path.join(bare, "src"))[:12]
        self.assertEqual(liger.source_of(where, search=[site], index=""),
                         f"liger-kernel source tree at {bare}, version unknown, tree {tree} ({where})")
        dynamic = self.tree("dynamic", {"pyproject.toml": '[project]\nname = "x"\ndynamic = ["version"]\n'})
        where = os.path.join(dynamic, "src", "liger_kernel", "__init__.py")
        self.assertIn(", version unknown, tree ", liger.source_of(where))
        # A package folder without src/ above it: the tree is the folder holding the package.
        flat = plugin_tree(os.path.join("liger-trees", "flat"), {"liger_kernel/__init__.py": ""})
        self.assertIn(f"source tree at {flat}, version unknown",
                      liger.source_of(os.path.join(flat, "liger_kernel", "__init__.py"), search=[site]))

    def test_a_plain_export_names_its_commit(self):
        # Issue #40: Liger main exported without .git or dist-info read "version unknown", so none
        # of the pins naming its commit matched. Its src/ tree id, computed from the files, is the
        # commit's `HEAD:src`, and an identity index (flce identity --index) names the commit.
        repo = self.tree("repo", {"src/liger_kernel/ops/fused.py": "X = 1\n", "src/liger_kernel/run.sh": "#!/bin/sh\n",
                                  "pyproject.toml": '[project]\nversion = "0.8.6"\n', "tests/t.py": ""})
        os.chmod(os.path.join(repo, "src", "liger_kernel", "run.sh"), 0o755)
        git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
            subprocess.run(git + args, check=True, capture_output=True)
        def rev(name):
            return subprocess.run(git + ["rev-parse", name], check=True, capture_output=True, text=True).stdout.strip()

        head, want = rev("HEAD"), rev("HEAD:src")
        export = os.path.join(os.path.dirname(repo), "export")
        os.makedirs(export, exist_ok=True)
        archive = subprocess.run(git + ["archive", "HEAD"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", export], input=archive, check=True)
        # Build junk no commit holds: bytecode, an editable install's egg-info.
        os.makedirs(os.path.join(export, "src", "liger_kernel", "__pycache__"), exist_ok=True)
        open(os.path.join(export, "src", "liger_kernel", "__pycache__", "x.cpython-311.pyc"), "wb").close()
        os.makedirs(os.path.join(export, "src", "liger_kernel.egg-info"), exist_ok=True)
        open(os.path.join(export, "src", "liger_kernel.egg-info", "PKG-INFO"), "w").close()
        self.assertEqual(identity.tree_id(os.path.join(export, "src")), want)
        where = os.path.join(export, "src", "liger_kernel", "__init__.py")
        index = os.path.join(os.path.dirname(repo), "index.json")
        with open(index, "w") as f:
            json.dump({"format": "flce-identity-index/1", "path": "src", "trees": {want: [head]}}, f)
        v = liger.source_of(where, search=[], index=index)
        self.assertEqual(v, f"liger-kernel git {head[:12]}, source tree at {export}, tree {want[:12]} ({where})")
        self.assertIn(f"liger-kernel git {head[:12]}", v)  # what a pin of that commit names
        # Without an index naming it: the tree, and no commit.
        self.assertNotIn("liger-kernel git", liger.source_of(where, search=[], index=""))
        # One byte changed: another tree, no longer that commit.
        with open(os.path.join(export, "src", "liger_kernel", "ops", "fused.py"), "a") as f:
            f.write("# local edit\n")
        identity.identify.cache_clear()
        self.assertNotEqual(identity.tree_id(os.path.join(export, "src")), want)
        self.assertNotIn("liger-kernel git", liger.source_of(where, search=[], index=index))

    def test_the_strings_expectations_pin_still_match(self):
        # Every liger subject_version corpus/expectations.json pins is contained in what the copy it
        # names reports ("liger-kernel git ead96b618e5c", "liger-kernel 0.8.5").
        with open(os.path.join(support.REPO, "corpus", "expectations.json")) as f:
            pinned = {e["subject_version"] for entry in json.load(f) if entry["subject"] == "liger"
                      for e in entry["expect"] if "subject_version" in e}
        self.assertTrue(pinned)
        for pin in pinned:
            commit = re.fullmatch(r"liger-kernel git ([0-9a-f]{12})", pin)
            if commit:
                got = liger.source_of(f"/c/trees/{commit.group(1)}{'0' * 28}/src/liger_kernel/__init__.py", search=[])
            else:
                release = re.fullmatch(r"liger-kernel (\S+)", pin)
                self.assertTrue(release, pin)
                site = self.site("pinned-" + release.group(1), release.group(1))
                got = liger.source_of(os.path.join(site, "liger_kernel", "__init__.py"), search=[site])
            self.assertIn(pin, got)

    def test_version_names_the_copy_that_imports(self):
        v = liger.version()  # this venv's liger-kernel wheel, or whatever is (not) there
        self.assertTrue(v.startswith("liger-kernel "), v)
        self.assertNotRegex(v, r"^liger-kernel \S+ \(")  # always says which kind of copy


class Dtypes(unittest.TestCase):
    def test_names(self):
        self.assertEqual([dtypes.of(n) for n in ("fp32", "fp16", "bf16", "fp64")],
                         [torch.float32, torch.float16, torch.bfloat16, torch.float64])
        self.assertIsNone(dtypes.of("none"))
        self.assertIsNone(dtypes.of(None))
        with self.assertRaises(KeyError):
            dtypes.of("int8")

    def test_accumulator_and_op_out_dtype(self):
        self.assertIsNone(dtypes.accum({}))
        self.assertEqual(dtypes.accum({"accum_dtype": "fp32"}), torch.float32)
        self.assertEqual(dtypes.op_out_dtype({"accum_dtype": "fp32", "input_dtype": "bf16"}), torch.float32)
        self.assertEqual(dtypes.op_out_dtype({"accum_dtype": "none", "input_dtype": "fp16"}), torch.float16)


class Casegen(unittest.TestCase):
    @unittest.skipUnless(os.environ.get("FLCE"), "FLCE (the flce binary) not set; ctest sets it")
    def test_defaults_are_flces_canonical_case(self):
        empty = os.path.join(support.scratch_dir("casegen"), "empty.json")
        with open(empty, "w") as f:
            f.write("{}")
        text = subprocess.run([os.environ["FLCE"], "case", "canonical", empty], check=True, capture_output=True,
                              text=True).stdout
        canonical = json.loads(text)
        self.assertEqual(canonical, casegen.DEFAULT_CASE)
        self.assertEqual(list(canonical), list(casegen.DEFAULT_CASE))  # the same fields in the same order

    def test_overrides_merge_nested_dicts_and_copy(self):
        c = casegen.case(compile={"backend": "eager"}, BT=3)
        self.assertEqual(c["compile"], dict(casegen.DEFAULT_CASE["compile"], backend="eager"))
        self.assertEqual(casegen.DEFAULT_CASE["compile"]["backend"], "inductor")  # not mutated
        self.assertEqual(c["BT"], 3)
        self.assertTrue(casegen.case(bias=True)["requires_grad"]["bias"])
        self.assertFalse(casegen.case(bias=True, requires_grad={"input": True})["requires_grad"]["bias"])

    def test_flce_tensors(self):
        c = casegen.case(BT=5, H=4, V=7, bias=True, ce_weight=True, extra_BT=[2], weight_dtype="fp16",
                         ignore_fraction=1.0, ignore_index=-3, token_grad="ones")
        t = casegen.tensors(c)
        shapes = {k: (tuple(v.shape), v.dtype) for k, v in t.items()}
        self.assertEqual(shapes, {
            "x": ((5, 4), torch.bfloat16), "target": ((5,), torch.int64), "token_grad": ((5,), torch.float32),
            "x@2": ((2, 4), torch.bfloat16), "target@2": ((2,), torch.int64), "token_grad@2": ((2,), torch.float32),
            "w": ((7, 4), torch.float16), "bias": ((7,), torch.float16), "ce_weight": ((7,), torch.float32)})
        self.assertEqual(set(t["target"].tolist()), {-3})
        self.assertEqual(t["token_grad"].tolist(), [1.0] * 5)

    def test_op_tensors_and_seeds(self):
        t = casegen.tensors(casegen.case(kind="baddbmm", batch=2, BT=3, H=4, V=5, accum_dtype="fp32"))
        self.assertEqual({k: (tuple(v.shape), v.dtype) for k, v in t.items()},
                         {"a": ((2, 5, 3), torch.bfloat16), "b": ((2, 3, 4), torch.bfloat16),
                          "c": ((2, 5, 4), torch.float32)})
        self.assertEqual(set(casegen.tensors(casegen.case(kind="mm"))), {"a", "b"})
        same, other = casegen.tensors(casegen.case(seed=4)), casegen.tensors(casegen.case(seed=5))
        self.assertTrue(torch.equal(same["x"], casegen.tensors(casegen.case(seed=4))["x"]))
        self.assertFalse(torch.equal(same["x"], other["x"]))


def link(type_, message, frames=()):
    return {"type": type_, "message": message, "frames": list(frames)}


class Signatures(unittest.TestCase):
    def test_the_default_table_is_flces(self):
        table = signatures.load()
        self.assertEqual(table, support.signature_table())
        ids = [e["id"] for e in table]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertTrue(all(e["patterns"] for e in table))

    def test_first_entry_in_file_order_wins_over_any_link(self):
        table = signatures.load()
        tier2 = link("builtins.TypeError", "tuned_addmm() takes 3 positional arguments but 4 were given")
        amp = link("builtins.RuntimeError", "mat1 and mat2 must have the same dtype")
        self.assertEqual(signatures.classify([amp, tier2], table), "tier2-lowering")
        self.assertEqual(signatures.classify([amp], table), "amp-mat-dtype-mismatch")
        self.assertIsNone(signatures.classify([link("builtins.ValueError", "something else")], table))

    def test_frame_patterns_must_match_too(self):
        table = signatures.load()
        msg = "unsupported operand type(s) for *: 'torch.dtype' and 'Tensor'"
        frame = "/v/torch/_decomp/decompositions.py:12:{}"
        self.assertEqual(signatures.classify([link("builtins.TypeError", msg, [frame.format("addmm")])], table),
                         "tier1-decomposition")
        self.assertEqual(signatures.classify([link("builtins.TypeError", msg, [frame.format("baddbmm")])], table),
                         "tier1-baddbmm-decomposition")
        self.assertIsNone(signatures.classify([link("builtins.TypeError", msg)], table))

    def test_ranges_and_expected_here(self):
        self.assertTrue(signatures.in_range("2.13.0+cu130", ">=2.13"))
        self.assertFalse(signatures.in_range("2.12.1", ">=2.13"))
        self.assertTrue(signatures.in_range("2.12.1", ">=2.8,<2.13"))
        self.assertTrue(signatures.in_range("2.9.0", ""))
        table = signatures.load()
        ids = ["tier1-decomposition", "tier2-lowering"]
        self.assertEqual(signatures.expected_here(ids, table, "2.11.0"), ["tier1-decomposition"])
        self.assertEqual(signatures.expected_here(ids, table, "2.13.0"), ["tier2-lowering"])
        self.assertEqual(signatures.expected_here(ids, table, "2.7.0"), [])


class Errors(unittest.TestCase):
    @staticmethod
    def raised(fn, *args):
        try:
            fn(*args)
        except BaseException as e:  # noqa: BLE001 -- the exception is the test subject
            return e
        raise AssertionError("did not raise")

    def test_side_links_come_before_the_primary_cause(self):
        class Outer(Exception):
            pass

        def fail():
            try:
                raise KeyError("root")
            except KeyError as k:
                e = Outer("outer")
                e.first_side, e.second_side = ValueError("side 1"), TypeError("side 2")
                raise e from k

        chain = errors.chain(self.raised(fail))
        got = [(x["type"].rsplit(".", 1)[-1], x["message"]) for x in chain]
        want = [("Outer", "outer"), ("ValueError", "side 1"), ("TypeError", "side 2"), ("KeyError", "'root'")]
        self.assertEqual(got, want)  # side links in attribute order, then the primary cause: the root is last
        self.assertEqual(chain[-1]["type"], "builtins.KeyError")

    def test_frames_keep_the_innermost_64(self):
        def recurse(n):
            if n == 0:
                raise RuntimeError("deep")
            recurse(n - 1)

        frames = errors.frames_of(self.raised(recurse, 100))
        self.assertEqual(len(frames), errors.MAX_FRAMES)
        self.assertRegex(frames[-1], r"test_subjects\.py:[0-9]+:recurse$")
        self.assertEqual(errors.frames_of(ValueError("never raised")), [])

    def test_messages_are_truncated_and_broken_str_survives(self):
        class Bad(Exception):
            def __str__(self):
                raise RuntimeError("no str")

        self.assertEqual(len(errors.chain(ValueError("x" * 50000))[0]["message"]), errors.MAX_MESSAGE)
        self.assertIn("<unprintable", errors.chain(Bad())[0]["message"])
        rec = errors.record(TypeError("t"), "backward")
        self.assertEqual(rec, {"chain": [{"type": "builtins.TypeError", "message": "t", "frames": []}],
                               "phase": "backward"})


class Registry(unittest.TestCase):
    def test_builtins(self):
        s = registry.load("model")
        self.assertIs(registry.load("model"), s)  # cached
        self.assertTrue(callable(s.flce))
        self.assertIsNone(s.op)
        self.assertEqual(s.version(), "flce-model-1")
        self.assertIsNone(s.supports(casegen.case()))
        self.assertIsNotNone(s.supports(casegen.case(kind="mm")))
        op = registry.load("aten-dtype-out")
        self.assertIsNone(op.flce)
        self.assertTrue(callable(op.op))
        self.assertEqual(host_api.builtin_subjects(), sorted(registry.BUILTIN))

    def test_plugin_forms(self):
        root = plugin_tree("forms", {"plugforms.py": """
            __version__ = "3.1"


            def loss(x, w, target, **options):
                return (x @ w.t()).sum()


            class Obj:
                op = staticmethod(lambda kind, a, b, c, out_dtype, out_variant: a @ b)

                @staticmethod
                def version():
                    return "obj-7"


            nothing = 42
            """})
        bare = registry.load("plugforms:loss", root)
        self.assertEqual((bare.flce.__name__, bare.op, bare.version()), ("loss", None, "3.1"))
        obj = registry.load("plugforms:Obj", root)
        self.assertEqual((obj.flce, obj.version(), obj.supports({})), (None, "obj-7", None))
        with self.assertRaises(TypeError):
            registry.load("plugforms:nothing", root)
        with self.assertRaises(ModuleNotFoundError):
            registry.load("no_such_plugin_module_xyz")

    def test_subject_path_selects_the_tree(self):
        one, two = plugin("tree-one", "1", module="plugtree"), plugin("tree-two", "2", module="plugtree")
        self.assertEqual(registry.load("plugtree", one).version(), "1")
        self.assertEqual(registry.load("plugtree", two).version(), "2")
        self.assertNotIn(os.path.abspath(one), sys.path)  # the other tree left sys.path
        self.assertEqual(registry.load("plugtree", one).version(), "1")
        self.assertTrue(sys.modules["plugtree"].__file__.startswith(os.path.abspath(one)))


class PlantedBugs(unittest.TestCase):
    """Each planted bug differs from `model` in its trigger configuration only."""

    def differs(self, subject, case):
        t = casegen.tensors(case)
        good, bad = (runner.run(case, t, s, "eager", None, None) for s in ("model", subject))
        self.assertEqual(good["status"], "ok", good.get("error"))
        if bad["status"] != "ok":
            return bad["error"]["chain"][-1]["message"] if "error" in bad else bad["status"]
        for name, v in good["outputs"].items():
            if not torch.equal(v, bad["outputs"][name]):
                return name
        return None

    def test_token_grad_rows(self):
        s = "model-bug-token-grad-rows"
        self.assertEqual(self.differs(s, casegen.case(reduction="none", **FP32)), "grad_input")
        self.assertIsNone(self.differs(s, casegen.case(reduction="none", token_grad="ones", **FP32)))
        self.assertIsNone(self.differs(s, casegen.case(reduction="sum", **FP32)))

    def test_autocast_no_bias(self):
        s = "model-bug-autocast-no-bias"
        self.assertIn("to have the same dtype", self.differs(s, casegen.case(autocast="bf16", **FP32)))
        self.assertIsNone(self.differs(s, casegen.case(autocast="bf16", bias=True, **FP32)))
        self.assertIsNone(self.differs(s, casegen.case(**FP32)))

    def test_input_no_grad(self):
        s = "model-bug-input-no-grad"
        self.assertIn("NoneType", self.differs(s, casegen.case(requires_grad={"input": False}, **FP32)))
        self.assertIsNone(self.differs(s, casegen.case(**FP32)))


class Runner(unittest.TestCase):
    def run_case(self, case, subject, mode="eager", subject_path=None, tensors=None, backend=None):
        return runner.run(case, tensors if tensors is not None else casegen.tensors(case), subject, mode, backend,
                          subject_path)

    def test_outputs_and_gradients(self):
        c = casegen.case(bias=True, grad_output=2.0, **FP32)
        t = casegen.tensors(c)
        r = self.run_case(c, "model", tensors=t)
        self.assertEqual(r["status"], "ok", r.get("error"))
        self.assertEqual(set(r["outputs"]), {"loss", "grad_input", "grad_weight", "grad_bias"})
        self.assertEqual(r["subject_version"], "flce-model-1")
        self.assertGreater(r["wall_ms"], 0)
        self.assertEqual(set(r["timings_ms"]), {"forward", "backward"})
        x, w, b = (t[n].double().requires_grad_() for n in ("x", "w", "bias"))
        loss = torch.nn.functional.cross_entropy(x @ w.t() + b, t["target"])
        (2.0 * loss).backward()  # grad_output scales the upstream gradient
        torch.testing.assert_close(r["outputs"]["loss"].double(), loss.detach(), rtol=1e-5, atol=1e-6)
        for name, want in (("grad_input", x.grad), ("grad_weight", w.grad), ("grad_bias", b.grad)):
            torch.testing.assert_close(r["outputs"][name].double(), want, rtol=1e-4, atol=1e-6, msg=name)
        self.assertFalse(t["x"].requires_grad)  # the caller's tensors are not made leaves

    def test_reduction_none_takes_token_grad_upstream(self):
        c = casegen.case(reduction="none", requires_grad={"weight": False}, **FP32)
        t = casegen.tensors(c)
        r = self.run_case(c, "model", tensors=t)
        self.assertEqual(set(r["outputs"]), {"loss", "grad_input"})
        x = t["x"].double().requires_grad_()
        per_token = torch.nn.functional.cross_entropy(x @ t["w"].double().t(), t["target"], reduction="none")
        per_token.backward(t["token_grad"].double())
        torch.testing.assert_close(r["outputs"]["grad_input"].double(), x.grad, rtol=1e-4, atol=1e-6)

    def test_error_chain_and_phase(self):
        root = plugin("chains", body="raise RuntimeError('outer failure') from ValueError('root cause 42')")
        r = self.run_case(casegen.case(**FP32), "plugchains", subject_path=root)
        self.assertEqual(r["status"], "error")
        self.assertEqual(r["error"]["phase"], "forward")
        chain = r["error"]["chain"]
        self.assertEqual([(x["type"], x["message"]) for x in chain],
                         [("builtins.RuntimeError", "outer failure"), ("builtins.ValueError", "root cause 42")])
        frames = chain[0]["frames"]
        self.assertTrue(any(f.endswith(":flce") and "plugchains.py" in f for f in frames), frames)
        self.assertEqual(r["subject_version"], "1")

    def test_backward_and_setup_phases(self):
        root = plugin_tree("backward", {"plugback.py": """
            import torch


            class Boom(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x.clone()

                @staticmethod
                def backward(ctx, grad):
                    raise RuntimeError("backward boom")


            def flce(x, w, target, **options):
                return (Boom.apply(x) @ w.t()).sum()
            """})
        r = self.run_case(casegen.case(**FP32), "plugback", subject_path=root)
        self.assertEqual((r["status"], r["error"]["phase"]), ("error", "backward"))
        self.assertIn("backward boom", r["error"]["chain"][-1]["message"])
        r = self.run_case(casegen.case(**FP32), "no_such_subject_module_xyz")
        self.assertEqual((r["status"], r["error"]["phase"]), ("error", "setup"))
        self.assertEqual(r["error"]["chain"][-1]["type"], "builtins.ModuleNotFoundError")
        r = self.run_case(casegen.case(**FP32), "model", mode="sideways")
        self.assertEqual(r["status"], "error")
        self.assertIn("mode must be", r["error"]["chain"][0]["message"])

    def test_system_exit_is_a_result_and_keyboard_interrupt_is_not(self):
        exits = plugin("exits", body="raise SystemExit(3)")
        r = self.run_case(casegen.case(**FP32), "plugexits", subject_path=exits)
        self.assertEqual(r["status"], "error")
        self.assertEqual(r["error"]["chain"][0]["type"], "builtins.SystemExit")
        interrupted = plugin("interrupted", body="raise KeyboardInterrupt")
        with self.assertRaises(KeyboardInterrupt):
            self.run_case(casegen.case(**FP32), "pluginterrupted", subject_path=interrupted)

    def test_unsupported(self):
        r = self.run_case(casegen.case(kind="mm"), "model")
        self.assertEqual(r["status"], "unsupported")
        self.assertIn("op", r["reason"])
        r = self.run_case(casegen.case(), "aten-dtype-out", tensors={})
        self.assertEqual((r["status"], r["reason"]), ("unsupported", "subject aten-dtype-out has no flce()"))
        if not torch.cuda.is_available():
            r = self.run_case(casegen.case(device="cuda"), "model", tensors={})
            self.assertEqual(r["status"], "unsupported")
            self.assertEqual(r["reason"], "case needs CUDA; this process has no CUDA device")

    def test_paths_are_recorded_even_when_the_op_fails(self):
        c = casegen.case(kind="addmm", accum_dtype="fp32")
        r = self.run_case(c, "aten-dtype-out")
        self.assertEqual(r["paths"], ["addmm.dtype_out"])
        self.assertEqual(signatures.classify(r["error"]["chain"], signatures.load()), "op-not-implemented-on-device")
        r = self.run_case(casegen.case(kind="mm", out_variant=False, input_dtype="fp32"), "aten-dtype-out")
        self.assertEqual(r["paths"], ["mm.dtype"])

    def test_workaround_suffix_enables_flce_workaround_for_the_call_only(self):
        c = casegen.case(kind="addmm", accum_dtype="fp32")
        t = casegen.tensors(c)
        fixed = self.run_case(c, "aten-dtype-out+workaround", tensors=t)
        self.assertEqual(fixed["status"], "ok", fixed.get("error"))
        want = t["c"] + t["a"].float() @ t["b"].float()
        torch.testing.assert_close(fixed["outputs"]["out"], want)
        self.assertEqual(self.run_case(c, "aten-dtype-out", tensors=t)["status"], "error")  # disabled again

    def test_compiled_runs_extra_shapes_first_and_caches(self):
        root = plugin("extras", body="if x.shape[0] == 3:\n        raise ValueError('extra shape 3')")
        c = casegen.case(extra_BT=[3], compile={"backend": "eager"}, **FP32)
        runner.reset()
        self.assertEqual(self.run_case(c, "plugextras", subject_path=root)["status"], "ok")  # eager skips extras
        r = self.run_case(c, "plugextras", mode="compiled", subject_path=root)
        self.assertEqual(r["status"], "error")
        self.assertIn("extra shape 3", r["error"]["chain"][-1]["message"])
        ok = casegen.case(compile={"backend": "eager"}, extra_BT=[2], **FP32)
        r = self.run_case(ok, "model", mode="compiled")
        self.assertEqual(r["status"], "ok", r.get("error"))
        self.assertEqual(r["paths"], [])  # nothing is recorded under compile
        self.assertIn("extra", r["timings_ms"])
        self.assertGreaterEqual(compiled.size(), 2)
        runner.reset()
        self.assertEqual(compiled.size(), 0)

    def test_output_is_restored_after_a_chatty_subject(self):
        root = plugin("chatty", body="import sys; sys.stderr.write('noise\\n'); import warnings; warnings.warn('w')")
        before = sys.stderr
        r = self.run_case(casegen.case(**FP32), "plugchatty", subject_path=root)
        self.assertEqual(r["status"], "ok", r.get("error"))
        self.assertIs(sys.stderr, before)


class Quiet(unittest.TestCase):
    # As torch 2.11 behaves (before pytorch#181186): logging.disable() also holds back the trace
    # log's first event, so its lazy handler never removes itself and every structured event
    # formats its payload. In a fresh process: the handler is installed once per import.
    SCRIPT = textwrap.dedent("""
        import logging, sys
        import torch
        import torch._logging._internal as li
        from torch._logging import trace_structured
        from flce_subjects.quiet import quiet
        li.trace_log.__dict__.pop("isEnabledFor", None)  # torch < 2.12: the global disable applies
        made = []
        with quiet():
            trace_structured("artifact", metadata_fn=lambda: made.append(1) or {"name": "n", "encoding": "string"})
        with quiet():
            trace_structured("artifact", metadata_fn=lambda: made.append(2) or {"name": "n", "encoding": "string"})
        print(len(li.trace_log.handlers), len(made))
    """)

    def handlers_and_payloads(self, keep):
        env = {k: v for k, v in os.environ.items() if k not in ("TORCH_TRACE", "TORCH_COMPILE_DEBUG", "TORCH_DTRACE")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        env["FLCE_KEEP_TRACE_HANDLER"] = "1" if keep else "0"
        out = subprocess.run([sys.executable, "-c", self.SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        return [int(v) for v in out.stdout.split()]

    def test_the_trace_handler_goes_before_logging_is_disabled(self):
        self.assertEqual(self.handlers_and_payloads(keep=False), [0, 0])  # no handler: no payload made

    def test_without_it_every_event_formats_its_payload(self):
        self.assertEqual(self.handlers_and_payloads(keep=True), [1, 2])  # what the H200 paid per guard


class Paths(unittest.TestCase):
    def test_overload_tags(self):
        x = object()
        self.assertEqual(paths.overload_tag("mm", {"out_dtype": x, "out": x}), "mm.dtype_out")
        self.assertEqual(paths.overload_tag("bmm", {"out_dtype": x}), "bmm.dtype")
        self.assertEqual(paths.overload_tag("addmm", {"out": x}), "addmm.out")
        self.assertIsNone(paths.overload_tag("mm", {"out": None}))

    def test_note_only_inside_a_recording(self):
        paths.note("outside")
        with paths.recording(eager=True) as rec:
            paths.note("inside")
            paths.note("inside")
            torch.mm(torch.ones(2, 2), torch.ones(2, 2), out=torch.empty(2, 2))
        paths.note("after")
        self.assertEqual(rec.tags, ["inside", "mm.out"])


class HostApi(unittest.TestCase):
    def test_environment(self):
        env = host_api.environment()
        self.assertEqual(set(env), {"python", "torch", "platform", "cuda", "gpu", "capability", "triton", "liger"})
        self.assertEqual(env["torch"], torch.__version__)
        self.assertEqual(env["python"], ".".join(map(str, sys.version_info[:3])))


# A campaign's Triton compile, in its own process (Triton reads its cache settings from the
# environment): compiles a small kernel for sm_90 (no GPU needed: Triton carries ptxas) and
# prints the files its cache manager left in the campaign's directory. NO_COMPILE makes any
# compile, i.e. any cache miss, raise.
TRITON_CAMPAIGN = """
import os, sys
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend
from triton.compiler import ASTSource

@triton.jit
def add(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

if os.environ.get("NO_COMPILE"):
    def refuse(*a, **k):
        raise RuntimeError("compiled: a cache miss")
    CUDABackend.add_stages = refuse
src = ASTSource(fn=add, signature={"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "B": "constexpr"},
                constexprs={"B": 128})
k = triton.compile(src, target=GPUTarget("cuda", 90, 32))
print(len(k.asm["cubin"]), sorted(os.listdir(os.path.join(os.environ["TRITON_CACHE_DIR"], os.listdir(
    os.environ["TRITON_CACHE_DIR"])[0]))))
"""


class TritonBoxCache(unittest.TestCase):
    """subjects/flce_subjects/triton_box_cache.py: a kernel one campaign compiled is a hit for the next."""

    def campaign(self, name, box, no_compile=False):
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
        env.update(TRITON_CACHE_DIR=support.scratch_dir(os.path.join("triton", name)),
                   PYTHONPATH=support.SUBJECTS, NO_COMPILE="1" if no_compile else "")
        if box is not None:
            env.update(TRITON_CACHE_MANAGER="flce_subjects.triton_box_cache:BoxCacheManager",
                       FLCE_TRITON_BOX_CACHE=box)
        script = os.path.join(support.scratch_dir("triton"), "campaign.py")  # @triton.jit reads its source
        with open(script, "w") as f:
            f.write(TRITON_CAMPAIGN)
        return subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                              timeout=240)

    def test_a_second_campaign_compiles_nothing(self):
        box = os.path.join(support.scratch_dir("triton"), "box")
        first = self.campaign("first", box)
        self.assertEqual(first.returncode, 0, first.stderr[-2000:])
        self.assertIn("add.cubin", first.stdout)
        second = self.campaign("second", box, no_compile=True)
        self.assertEqual(second.returncode, 0, second.stderr[-2000:])
        self.assertEqual(second.stdout, first.stdout)  # the same cubin, every file in its own directory
        # The control: without the box layer the same campaign misses and compiles.
        alone = self.campaign("alone", None, no_compile=True)
        self.assertNotEqual(alone.returncode, 0)
        self.assertIn("compiled: a cache miss", alone.stderr)

    def test_an_unusable_box_costs_only_its_hits(self):
        box = os.path.join(support.scratch_dir("triton"), "box-is-a-file")
        with open(box, "w") as f:
            f.write("not a directory")
        r = self.campaign("unusable", box)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertIn("add.cubin", r.stdout)


if __name__ == "__main__":
    unittest.main()
