"""Unit tests of flce_subjects.params, in process: how a case's options bind to a subject's own
signature (Liger's releases, torch's linear_cross_entropy names, plug-ins of every shape), and
what runner.run() does with a parameter a subject lacks (unsupported-by-subject).

The rest of the subjects package is tested in test_subjects.py; the helpers both use are in support.py.
"""
import inspect
import os
import sys
import unittest

import support
import torch
from support import FP32, plugin_tree

from flce_subjects import casegen, host_api, liger, params, registry, runner

OLD_API = os.path.join(support.REPO, "tests", "data", "subjects")  # old_flce_api.py: Liger 0.6.2's signature
OLD = "old_flce_api:liger_fused_linear_cross_entropy"


# liger_fused_linear_cross_entropy's signatures as Liger-Kernel released them (the mirror's tags).
def liger_0_5_0(input, weight, target, bias=None, ignore_index: int = -100, lse_square_scale: float = 0.0,
                label_smoothing: float = 0.0, reduction: str = "mean", softcap=None):
    pass


def liger_0_6_2(input, weight, target, bias=None, ce_weight=None, ignore_index: int = -100,
                lse_square_scale: float = 0.0, label_smoothing: float = 0.0, reduction: str = "mean", softcap=None,
                return_z_loss: bool = False, accum_dtype=None):
    pass


def liger_0_8_0(input, weight, target, bias=None, ce_weight=None, ignore_index: int = -100,
                lse_square_scale: float = 0.0, label_smoothing: float = 0.0, reduction: str = "mean", softcap=None,
                return_z_loss: bool = False, accum_dtype=None, use_token_scaling: bool = False,
                return_token_accuracy: bool = False, return_predicted_tokens: bool = False):
    pass


class Liger04Function(torch.autograd.Function):
    """Liger < 0.5.0: liger_fused_linear_cross_entropy = this Function's apply (positional only)."""

    @staticmethod
    def forward(ctx, _input, weight, target, bias=None, ignore_index=-100, lse_square_scale=0.0,
                label_smoothing=0.0, reduction="mean", softcap=None):
        return (_input @ weight.t()).sum()

    @staticmethod
    def backward(ctx, g):
        return (None,) * 9


def options(**overrides):
    """A case's options as the runner hands them to a plan (bias/ce_weight: True = a tensor)."""
    return dict(params.NEUTRAL, **overrides)


class Params(unittest.TestCase):
    def test_the_parameters_are_the_runners_options(self):
        c = casegen.case()
        self.assertEqual(set(params.PARAMS), set(runner.flce_options(c)) | {"bias", "ce_weight"})
        self.assertEqual(params.used(runner._case_options(c)), [])
        rich = casegen.case(bias=True, return_token_accuracy=True, accum_dtype="fp32", reduction="none")
        self.assertEqual(params.used(runner._case_options(rich)),
                         ["bias", "reduction", "accum_dtype", "return_token_accuracy"])
        self.assertTrue(params.is_neutral("lse_square_scale", 0))
        self.assertFalse(params.is_neutral("return_z_loss", 0.0) and params.is_neutral("ignore_index", True))
        self.assertFalse(params.is_neutral("bias", torch.zeros(2)))

    def test_liger_signatures_release_by_release(self):
        later = ["use_token_scaling", "return_token_accuracy", "return_predicted_tokens"]
        self.assertEqual(params.plan_for(liger_0_8_0).params(), list(params.PARAMS))
        self.assertEqual(params.capabilities(liger_0_6_2)["lacks"], later)
        self.assertEqual(params.capabilities(liger_0_5_0)["lacks"],
                         ["ce_weight", "return_z_loss", "accum_dtype"] + later)
        plan = params.plan_for(liger_0_6_2)
        self.assertEqual(plan.missing(options(return_token_accuracy=True, return_z_loss=True)),
                         ["return_token_accuracy"])
        self.assertEqual(plan.missing(options(return_token_accuracy=False, use_token_scaling=False)), [])
        self.assertEqual(plan.missing(options(return_predicted_tokens=True, use_token_scaling=True)),
                         ["use_token_scaling", "return_predicted_tokens"])

    def test_bind_passes_only_what_the_case_uses(self):
        plan = params.plan_for(liger_0_8_0)
        self.assertEqual(plan.bind(options()), ([], {}))
        dt = torch.float32
        self.assertEqual(plan.bind(options(label_smoothing=0.1, accum_dtype=dt, return_token_accuracy=True)),
                         ([], {"label_smoothing": 0.1, "accum_dtype": dt, "return_token_accuracy": True}))
        # Every call the old API gets binds: no keyword it lacks is ever passed.
        old = params.plan_for(liger_0_6_2)
        args, kwargs = old.bind(options(return_z_loss=True, softcap=3.0, bias="B"))
        self.assertEqual((args, kwargs), ([], {"bias": "B", "softcap": 3.0, "return_z_loss": True}))
        bound = inspect.signature(liger_0_6_2).bind("x", "w", "t", *args, **kwargs)  # no TypeError
        self.assertEqual(bound.arguments["softcap"], 3.0)

    def test_a_default_other_than_the_neutral_value_is_overridden(self):
        def flce(x, w, target, *, reduction="sum", ignore_index=0, return_z_loss=True, softcap=None):
            pass

        self.assertEqual(params.plan_for(flce).bind(options()),
                         ([], {"ignore_index": -100, "reduction": "mean", "return_z_loss": False}))

    def test_names_of_torch_linear_cross_entropy_map_onto_the_parameters(self):
        def linear_cross_entropy(input, linear_weight, target, linear_bias=None, weight=None, reduction="mean",
                                 ignore_index=-100, label_smoothing=0.0, options=None):
            pass

        plan = params.plan_for(linear_cross_entropy)
        self.assertEqual(plan.params(), ["bias", "ce_weight", "ignore_index", "label_smoothing", "reduction"])
        self.assertEqual(plan.bind(options(bias="B", ce_weight="C", label_smoothing=0.5)),
                         ([], {"linear_bias": "B", "weight": "C", "label_smoothing": 0.5}))
        self.assertEqual(plan.missing(options(softcap=30.0)), ["softcap"])

    def test_var_keyword_takes_everything_and_gets_only_what_is_used(self):
        def flce(x, w, target, *, bias=None, **rest):
            pass

        plan = params.plan_for(flce)
        self.assertEqual(plan.params(), list(params.PARAMS))
        self.assertEqual(plan.bind(options(return_predicted_tokens=True)), ([], {"return_predicted_tokens": True}))

    def test_positional_only_and_an_autograd_functions_apply(self):
        plan = params.plan_for(Liger04Function.apply)  # Liger < 0.5.0: positional, forward's names
        self.assertEqual(plan.where.split(".")[-1], "apply")
        self.assertEqual(plan.params(), ["bias", "ignore_index", "lse_square_scale", "label_smoothing", "reduction",
                                         "softcap"])
        self.assertEqual(plan.missing(options(ce_weight="C", return_z_loss=True)), ["ce_weight", "return_z_loss"])
        self.assertEqual(plan.bind(options()), ([], {}))
        self.assertEqual(plan.bind(options(label_smoothing=0.1)), ([None, -100, 0.0, 0.1], {}))
        x, w = torch.ones(2, 3), torch.ones(4, 3)
        args, kwargs = plan.bind(options(bias="ignored here", softcap=2.0))
        self.assertEqual(len(args), 6)
        self.assertEqual(float(Liger04Function.apply(x, w, torch.zeros(2, dtype=torch.long), *[None] + args[1:])), 24.0)

        def flce(x, w, target, bias=None, ignore_index=-100, /, *, reduction="mean"):
            pass

        self.assertEqual(params.plan_for(flce).bind(options(ignore_index=3, reduction="sum")),
                         ([None, 3], {"reduction": "sum"}))

    def test_a_callable_flce_cannot_call(self):
        def two(x, w):
            pass

        def eps(x, w, target, *, eps):
            pass

        for fn, text in ((two, "takes 2 positional parameter"), (eps, "required parameter 'eps'")):
            with self.assertRaises(params.SignatureMismatch) as cm:
                params.plan_for(fn)
            self.assertIn(text, str(cm.exception))
            self.assertIsInstance(cm.exception, TypeError)

        def star(*args, **kwargs):
            pass

        self.assertEqual(params.plan_for(star).params(), list(params.PARAMS))
        unknown = params.plan_for(max)  # no signature to read: every parameter assumed
        self.assertFalse(unknown.known)
        self.assertEqual(unknown.bind(options(softcap=1.0)), ([], {"softcap": 1.0}))

    def test_a_callable_that_is_no_flce_function(self):
        import os.path

        def three_star(x, *rest):
            pass

        def named_three(x, w, target):  # a minimal subject: runs the neutral cases
            pass

        for fn in (os.path.join, print, three_star):
            with self.assertRaises(params.SignatureMismatch) as cm:
                params.plan_for(fn)
            self.assertIn("is not an FLCE function", str(cm.exception))
        self.assertIn("posixpath.join(a, *p)", str(self._mismatch(os.path.join)))
        self.assertEqual(params.plan_for(named_three).params(), [])

        def star_label(x, *rest, label_smoothing=0.0):  # takes one of flce's parameters: an FLCE function
            pass

        self.assertEqual(params.plan_for(star_label).params(), ["label_smoothing"])

    def _mismatch(self, fn):
        try:
            params.plan_for(fn)
        except params.SignatureMismatch as e:
            return e
        return None


RECORDING = """
import torch

calls = []


def flce(x, w, target, bias=None, /, *, ce_weight=None, label_smoothing=0.0, reduction="sum", **rest):
    calls.append(dict(rest, bias=bias, ce_weight=ce_weight, label_smoothing=label_smoothing, reduction=reduction))
    logits = x @ w.t() + (bias if bias is not None else 0)
    return torch.nn.functional.cross_entropy(logits.float(), target, weight=ce_weight, reduction=reduction,
                                             label_smoothing=label_smoothing)
"""


class RunnerSignatures(unittest.TestCase):
    def run_case(self, case, subject, mode="eager", subject_path=None, backend=None):
        return runner.run(case, casegen.tensors(case), subject, mode, backend, subject_path)

    def test_a_parameter_the_subject_lacks_is_unsupported_by_subject(self):
        r = self.run_case(casegen.case(return_token_accuracy=True, return_predicted_tokens=True, **FP32), OLD,
                          subject_path=OLD_API)
        self.assertEqual(r["status"], "unsupported", r.get("error"))
        self.assertEqual(r["unsupported_params"], ["return_token_accuracy", "return_predicted_tokens"])
        self.assertIn("old_flce_api.liger_fused_linear_cross_entropy has no parameter return_token_accuracy",
                      r["reason"])
        self.assertEqual(r["subject_version"], "0.6.2-shaped")
        # Compiled says the same, before any compile.
        r = self.run_case(casegen.case(use_token_scaling=True, **FP32), OLD, "compiled", OLD_API, "aot_eager")
        self.assertEqual((r["status"], r["unsupported_params"]), ("unsupported", ["use_token_scaling"]))

    def test_what_the_old_api_takes_runs_with_its_own_return_shapes(self):
        for mode in ("eager", "compiled"):
            c = casegen.case(return_z_loss=True, lse_square_scale=1e-4, bias=True, **FP32)
            r = self.run_case(c, OLD, mode, OLD_API, "aot_eager")
            self.assertEqual(r["status"], "ok", r.get("error"))
            # a tuple
            self.assertEqual(set(r["outputs"]), {"loss", "z_loss", "grad_input", "grad_weight", "grad_bias"})
            m = self.run_case(c, "model", mode, backend="aot_eager")
            for name in r["outputs"]:
                torch.testing.assert_close(r["outputs"][name], m["outputs"][name], msg=name)
        r = self.run_case(casegen.case(**FP32), OLD, subject_path=OLD_API)
        self.assertEqual(set(r["outputs"]), {"loss", "grad_input", "grad_weight"})  # a bare loss

    def test_the_subject_gets_only_what_the_case_uses_under_its_names(self):
        root = plugin_tree("recording", {"plugrecording.py": RECORDING})
        r = self.run_case(casegen.case(**FP32), "plugrecording:flce", subject_path=root)
        self.assertEqual(r["status"], "ok", r.get("error"))
        mod = sys.modules["plugrecording"]
        # bias (positional only) and ce_weight keep their defaults; reduction's default is not
        # the neutral "mean", so it is passed.
        self.assertEqual(mod.calls.pop(),
                         {"bias": None, "ce_weight": None, "label_smoothing": 0.0, "reduction": "mean"})
        c = casegen.case(bias=True, ce_weight=True, label_smoothing=0.1, return_token_accuracy=True, **FP32)
        t = casegen.tensors(c)
        r = runner.run(c, t, "plugrecording:flce", "eager", None, root)
        self.assertEqual(r["status"], "ok", r.get("error"))
        call = mod.calls.pop()
        self.assertEqual(call["bias"].shape, t["bias"].shape)
        self.assertIs(call["ce_weight"], t["ce_weight"])
        self.assertEqual((call["label_smoothing"], call["return_token_accuracy"]), (0.1, True))
        self.assertNotIn("softcap", call)
        self.assertIn("grad_bias", r["outputs"])
        # Compiled: the two tensor slots filled per call, the rest fixed at make time.
        r = runner.run(c, t, "plugrecording:flce", "compiled", "aot_eager", root)
        self.assertEqual(r["status"], "ok", r.get("error"))

    def test_a_callable_that_cannot_be_called_fails_in_setup(self):
        root = plugin_tree("twoargs", {"plugtwoargs.py": "def flce(x, w):\n    return x.sum()\n"})
        r = self.run_case(casegen.case(**FP32), "plugtwoargs:flce", subject_path=root)
        self.assertEqual((r["status"], r["error"]["phase"]), ("error", "setup"))
        self.assertEqual(r["error"]["chain"][-1]["type"], "flce_subjects.params.SignatureMismatch")

    def test_liger_forwards_what_the_runner_binds_from_the_real_function(self):
        s = registry.load("liger")
        self.assertIs(s.callee, liger.callee)
        seen = []

        def old_liger(input, weight, target, bias=None, ce_weight=None, label_smoothing=0.0):
            seen.append(dict(bias=bias, ce_weight=ce_weight, label_smoothing=label_smoothing))
            return input.sum(), None

        saved, liger._bound = liger._bound, old_liger
        try:
            plan = params.plan_for(old_liger)
            args, kwargs = plan.bind(options(label_smoothing=0.1))
            out = s.flce(torch.ones(2, 2), torch.ones(3, 2), torch.zeros(2, dtype=torch.long), *args, **kwargs)
        finally:
            liger._bound = saved
        self.assertEqual(seen, [{"bias": None, "ce_weight": None, "label_smoothing": 0.1}])
        self.assertEqual(runner._as_tuple(out)[0].item(), 4.0)  # (loss, z_loss) as Liger 0.5-0.6.2 return it

    def test_capabilities(self):
        model = host_api.capabilities("model+workaround")
        self.assertEqual((model["flce"], model["params"], model["lacks"]), (True, list(params.PARAMS), []))
        old = host_api.capabilities(OLD, OLD_API)
        self.assertEqual(old["lacks"], ["use_token_scaling", "return_token_accuracy", "return_predicted_tokens"])
        self.assertEqual(old["callable"], "old_flce_api.liger_fused_linear_cross_entropy")
        self.assertTrue(old["signature_known"])
        self.assertEqual(host_api.capabilities("aten-dtype-out"), {"flce": False, "params": [], "lacks": []})
        self.assertTrue(host_api.capabilities("no_such_module_xyz:f")["error"].startswith("ModuleNotFoundError"))
        broken = plugin_tree("sigbroken", {"plugsigbroken.py": "def flce(x):\n    pass\n"})
        self.assertIn("SignatureMismatch", host_api.capabilities("plugsigbroken:flce", broken)["error"])


if __name__ == "__main__":
    unittest.main()
