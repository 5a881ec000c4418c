"""Subject contracts (subjects/flce_subjects/contract.py, issue #39): what each built-in declares,
the errors a bad declaration gets, and what the subject host's capabilities answer carries."""
import os
import textwrap
import unittest

import support
import torch

from flce_subjects import casegen, contract, host_api, registry, runner


class ContractCheck(unittest.TestCase):
    def test_a_valid_contract_comes_back_normalized(self):
        c = contract.check({"semantics": "torch", "params": ("bias", "reduction"), "dtypes": ["bf16"]})
        self.assertEqual(c, {"semantics": "torch", "params": ["bias", "reduction"], "dtypes": ["bf16"]})

    def test_each_broken_rule_names_its_field(self):
        bad = [
            ([], "contract: must be a dict"),
            ({}, "contract.semantics"),
            ({"semantics": "liger-ish"}, "contract.semantics"),
            ({"semantics": "torch", "params": ["bias", "temperature"]}, "contract.params"),
            ({"semantics": "torch", "dtypes": ["fp8"]}, "contract.dtypes"),
            ({"semantics": "torch", "dtypes": []}, "contract.dtypes"),
            ({"semantics": "torch", "source": 3}, "contract.source"),
            ({"semantics": "torch", "tolerance": 1e-3}, "contract.tolerance: unknown field"),
            ({"semantics": "torch", "approximation": {"name": "rounding"}}, "contract.approximation.name"),
            ({"semantics": "torch", "approximation": {"name": "grad_filter"}}, "contract.approximation.eps"),
            ({"semantics": "torch", "approximation": {"name": "grad_filter", "eps": {"fp8": 0.1}}},
             "contract.approximation.eps"),
            ({"semantics": "torch", "approximation": {"name": "grad_filter", "eps": {"bf16": 2.0}}},
             "contract.approximation.eps.bf16"),
            ({"semantics": "torch", "approximation": {"name": "grad_filter", "eps": {"bf16": 0.1}, "tol": 1}},
             "contract.approximation.tol: unknown field"),
            ({"semantics": "torch", "grad_weight_form": "chunked"}, "contract.grad_weight_form"),
        ]
        for declared, field in bad:
            with self.subTest(declared=declared):
                with self.assertRaises(contract.ContractError) as cm:
                    contract.check(declared)
                self.assertIn(field, str(cm.exception))


class BuiltinContracts(unittest.TestCase):
    def test_every_builtin_flce_subject_declares_one(self):
        semantics = {}
        for name in registry.BUILTIN:
            if name in ("aten-dtype-out", "segfault", "hang", "cuda-oob"):
                continue  # an op subject and crash fixtures: nothing to promise about FLCE
            with self.subTest(subject=name):
                s = registry.load(name)
                self.assertIsNotNone(s.contract, f"{name} declares no contract")
                semantics[name] = s.contract["semantics"]
        self.assertEqual(semantics["torch-native"], "torch")
        self.assertEqual(semantics["cce"], "torch-fp32")
        self.assertEqual(semantics["liger"], "liger")
        self.assertEqual(semantics["model"], "liger")
        # cut-cross-entropy's library default filters gradients: declared, with its eps per dtype
        # (cut_cross_entropy/utils.py _handle_eps: finfo(dtype).eps / 32).
        filt = registry.load("cce-default").contract["approximation"]
        self.assertEqual(filt["name"], "grad_filter")
        self.assertEqual(filt["eps"]["bf16"], torch.finfo(torch.bfloat16).eps / 32)
        self.assertEqual(filt["eps"]["fp16"], torch.finfo(torch.float16).eps / 32)
        self.assertNotIn("approximation", registry.load("cce").contract)
        # torch's chunked path subtracts the target rows from the bulk apart (MATH.md item 12);
        # its reference path forms softmax - onehot first, and wants a class weight in the logits dtype.
        self.assertEqual(registry.load("torch-native").contract["grad_weight_form"], "split")
        self.assertEqual(registry.load("torch-native-chunk1").contract["grad_weight_form"], "split")
        ref = registry.load("torch-native-reference")
        self.assertEqual(ref.contract["grad_weight_form"], "fused")
        case = {"kind": "flce", "input_dtype": "bf16", "weight_dtype": "bf16", "ce_weight": True,
                "label_smoothing": 0.0, "autocast": "none", "device": "cpu"}
        if hasattr(torch.nn, "LinearCrossEntropyOptions"):
            self.assertIn("reference path", ref.supports(case))
            self.assertIsNone(registry.load("torch-native").supports(case))

    def test_unsloth_promises_a_fp32_sum_over_its_divisor(self):
        # unsloth_zoo's docstring: sum(CE) / divisor, fp32; a zero divisor counts as 1, so an
        # all-ignored mean is 0 (flce's liger semantics); no reduction none, no class weights.
        s = registry.load("unsloth")
        self.assertEqual(s.contract["semantics"], "liger")
        self.assertNotIn("ce_weight", s.contract["params"])
        case = {"kind": "flce", "input_dtype": "bf16", "weight_dtype": "bf16", "reduction": "none",
                "autocast": "none", "device": "cpu"}
        self.assertIn("reduction none", s.supports(case))
        case["reduction"], case["ce_weight"] = "mean", True
        self.assertIn("class weights", s.supports(case))
        case["ce_weight"] = False
        if s.supports(case) is not None:
            self.skipTest(s.supports(case))
        g = torch.Generator().manual_seed(3)
        x = torch.randn(6, 8, generator=g, dtype=torch.float64)
        w = torch.randn(12, 8, generator=g, dtype=torch.float64)
        b = torch.randn(12, generator=g, dtype=torch.float64)
        t = torch.tensor([1, -100, 5, 11, -100, 0])
        want = torch.nn.functional.cross_entropy(x @ w.T + b, t, label_smoothing=0.1)
        xs, ws, bs = (v.float().requires_grad_() for v in (x, w, b))
        loss = s.flce(xs, ws, t, bias=bs, label_smoothing=0.1)[0]
        self.assertEqual(loss.dtype, torch.float32)
        self.assertAlmostEqual(loss.item(), want.item(), places=5)
        loss.backward()
        xw = x.clone().requires_grad_()
        torch.nn.functional.cross_entropy(xw @ w.T + b, t, label_smoothing=0.1).backward()
        self.assertLess((xs.grad.double() - xw.grad).abs().max().item(), 1e-5)
        ignored = torch.full((6,), -100)
        zero = s.flce(xs, ws, ignored, bias=bs)[0]
        self.assertEqual(zero.item(), 0.0)  # torch's cross_entropy gives NaN here

    def test_capabilities_carry_the_contract_and_drop_what_it_does_not_promise(self):
        caps = host_api.capabilities("cce")
        self.assertEqual(caps["contract"]["semantics"], "torch-fp32")
        self.assertEqual(sorted(caps["params"]), ["ignore_index", "reduction", "softcap"])
        self.assertIn("bias", caps["lacks"])
        caps = host_api.capabilities("torch-native")
        self.assertIn("accum_dtype", caps["params"])
        self.assertIn("softcap", caps["lacks"])  # not in torch's signature, nor in its contract

    def test_a_plugin_with_a_broken_contract_is_refused_naming_the_field(self):
        root = support.scratch_dir(os.path.join("plugins", "badcontract"))
        with open(os.path.join(root, "badcontract.py"), "w") as f:
            f.write(textwrap.dedent("""
                CONTRACT = {"semantics": "numpy"}
                def flce(x, w, target, *, reduction="mean"):
                    raise AssertionError("never called")
            """))
        caps = host_api.capabilities("badcontract:flce", root)
        self.assertIn("error", caps)
        self.assertIn("contract.semantics", caps["error"])

    def test_a_plugin_without_a_contract_has_none(self):
        root = support.scratch_dir(os.path.join("plugins", "nocontract"))
        with open(os.path.join(root, "nocontract.py"), "w") as f:
            f.write("def flce(x, w, target, *, reduction='mean'):\n    raise AssertionError('never called')\n")
        self.assertIsNone(host_api.capabilities("nocontract:flce", root)["contract"])


class CceOnCpu(unittest.TestCase):
    """cut-cross-entropy's torch_compile path, the one CI can run."""

    def test_cce_runs_its_torch_compile_path_and_all_ignored_mean_is_nan(self):
        c = casegen.case(BT=4, H=8, V=16, input_dtype="fp32", weight_dtype="fp32", semantics="torch-fp32",
                         ignore_fraction=1.0)
        r = runner.run(c, casegen.tensors(c), "cce", "eager")
        self.assertEqual(r["status"], "ok", r.get("error"))
        self.assertIn("torch_compile", r["paths"])
        self.assertTrue(torch.isnan(r["outputs"]["loss"]).item())

    def test_cce_refuses_what_its_contract_does_not_name(self):
        c = casegen.case(BT=4, H=8, V=16, bias=True)
        r = runner.run(c, casegen.tensors(c), "cce", "eager")
        self.assertEqual(r["status"], "unsupported")
        self.assertIn("bias", r["unsupported_params"])


if __name__ == "__main__":
    unittest.main()
