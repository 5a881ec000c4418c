"""Unit tests of repro/repro_template.py, the reproducer `flce repro --emit-python` writes.

The end-to-end parity of its inputs with flce's (every tensor, bit for bit, through the CLI)
is tests/data/repro/check_inputs.py (ctest repro_inputs_bitwise); here each piece is checked
on its own: Philox against the published known answers, the roundings against numpy/torch,
the value regimes by what they are for, and the classification, judge and plug-in rules
against flce_subjects, the other Python port of the same C++ rules.
"""
import contextlib
import io
import os
import re
import sys
import types
import unittest

import numpy as np
import support
import torch

from flce_subjects import casegen, errors, registry, runner, signatures

MASK = 0xFFFFFFFF


def philox_reference(counter, key):
    """Philox4x32-10 on Python ints, written from Salmon et al. (Random123's constants)."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK, p1 & MASK, ((p0 >> 32) ^ c3 ^ k1) & MASK, p0 & MASK
        k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
    return c0, c1, c2, c3


def f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def bits32(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def hex_f8(values):
    return np.asarray(values, dtype="<f8").tobytes().hex()


def load(case=None, **payload_options):
    return support.load_template(support.payload(case or casegen.case(), **payload_options))


class Philox(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load()

    def test_reference_matches_the_published_known_answers(self):
        kat = [
            ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
            ((MASK, MASK, MASK, MASK), (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
            ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
             (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
        ]
        for counter, key, want in kat:
            self.assertEqual(philox_reference(counter, key), want)

    def test_vectorized_port_equals_the_reference_with_flces_counter_layout(self):
        # counter (index lo, index hi, stream, "flce"), key = the 64-bit seed
        indices = [0, 1, 2, 1023, MASK, 1 << 32, (7 << 32) + 5, (1 << 63) + 12345]
        for seed in (0, 1327, (0xDEADBEEF << 32) | 0x12345678):
            for stream in (1, 5, 9):
                got = self.m.philox(np, seed, stream, np.array(indices, dtype=np.uint64))
                for k, index in enumerate(indices):
                    want = philox_reference((index & MASK, index >> 32, stream, 0x666C6365), (seed & MASK, seed >> 32))
                    self.assertEqual(tuple(int(w[k]) for w in got), want, (seed, stream, index))

    def test_streams_are_the_ones_flce_numbers(self):
        self.assertEqual(self.m.STREAM, {"x": 1, "w": 2, "bias": 3, "ce_weight": 4, "target": 5, "token_grad": 6,
                                         "special": 7, "op_a": 8, "op_c": 9, "confident": 10, "one_class": 11})


class Transforms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load()

    def words(self, *values):
        return tuple(np.array([v], dtype=np.uint64) for v in values)

    def test_gauss_is_the_centred_sum_of_four_22_bit_uniforms_exactly(self):
        rng = np.random.default_rng(1)
        r = tuple(rng.integers(0, 1 << 32, 1000, dtype=np.uint64) for _ in range(4))
        got = self.m.gauss(np, r)
        self.assertEqual(got.dtype, np.float32)
        want = [(sum(int(w[i]) >> 10 for w in r) - (1 << 23)) / 4194304.0 for i in range(1000)]
        self.assertEqual(got.astype(np.float64).tolist(), want)  # exact: no rounding anywhere
        self.assertEqual(float(self.m.gauss(np, self.words(0, 0, 0, 0))[0]), -2.0)
        self.assertEqual(float(self.m.gauss(np, self.words(MASK, MASK, MASK, MASK))[0]), 2.0 - 4.0 / 4194304.0)

    def test_unit_takes_the_top_24_bits(self):
        got = self.m.unit(np, np.array([0, 255, 256, MASK], dtype=np.uint64))
        self.assertEqual(got.tolist(), [0.0, 0.0, 1.0 / 16777216.0, 1.0 - 1.0 / 16777216.0])

    def test_bf16_rounding_is_torchs_for_every_non_nan(self):
        rng = np.random.default_rng(2)
        patterns = rng.integers(0, 1 << 32, 200000, dtype=np.uint64).astype(np.uint32)
        ties = np.array([0x3F808000, 0x3F818000, 0x3F80C000, 0x7F7F8000, 0x00008000, 0x00018000], dtype=np.uint32)
        values = np.concatenate([patterns, ties, bits32([np.inf, -np.inf, 0.0, -0.0])]).view(np.float32)
        values = values[~np.isnan(values)]
        got = self.m.round_bf16(np, values)
        want = torch.from_numpy(values.copy()).to(torch.bfloat16).to(torch.float32).numpy()
        np.testing.assert_array_equal(bits32(got), bits32(want))
        # ties to even, by hand: 1 + 2^-8 -> 1; 1 + 3*2^-8 -> 1 + 2^-6; max float's tie overflows to inf
        self.assertEqual(bits32(self.m.round_bf16(np, f32([0x3F808000, 0x3F818000, 0x7F7F8000]))).tolist(),
                         [0x3F800000, 0x3F820000, 0x7F800000])

    def test_bf16_rounding_keeps_nans_quiet_with_their_sign_and_top_payload(self):
        nans = np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0x7FFFFFFF, 0xFFA12345], dtype=np.uint32)
        got = bits32(self.m.round_bf16(np, nans.view(np.float32)))
        self.assertTrue(np.isnan(got.view(np.float32)).all())
        self.assertEqual(got.tolist(), [(((int(u) >> 16) | 0x40) << 16) for u in nans])

    def test_fp16_rounding_is_numpys_including_subnormals_and_overflow(self):
        rng = np.random.default_rng(3)
        n = 200000
        sign = rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
        exponent = rng.integers(96, 146, n, dtype=np.uint32) << np.uint32(23)  # 2^-31 .. 2^18: fp16's range and edges
        mantissa = rng.integers(0, 1 << 23, n, dtype=np.uint32)
        edges = bits32([2.0**-25, 3 * 2.0**-25, 2.0**-24, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 65504.0, 65519.99, 65520.0,
                        2.0**-14 - 2.0**-25, 6e-8, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30])
        values = np.concatenate([sign | exponent | mantissa, edges]).view(np.float32)
        got = self.m.round_fp16(np, values)
        with np.errstate(over="ignore"):  # overflow to inf is what is compared
            want = values.astype(np.float16).astype(np.float32)
        np.testing.assert_array_equal(bits32(got), bits32(want))
        subnormal = (np.abs(want) > 0) & (np.abs(want) < 2.0**-14)
        self.assertGreater(int(subnormal.sum()), 1000)  # fp16 subnormals really were compared
        self.assertEqual(self.m.round_fp16(np, f32([0x33000000, 0x33400000])).tolist(), [0.0, 2.0**-24])

    def test_fp16_rounding_makes_nans_the_canonical_quiet_nan_with_sign(self):
        got = self.m.round_fp16(np, f32([0x7F800001, 0xFFC00000, 0x7FFFFFFF]))
        halves = got.astype(np.float16).view(np.uint16).tolist()
        self.assertEqual(halves, [0x7E00, 0xFE00, 0x7E00])

    def test_round_to_dispatches_on_the_dtype_name(self):
        v = f32([0x3F808001])  # just above a bf16 tie, and not an fp16 value either
        self.assertEqual(bits32(self.m.round_to(np, "fp32", v)).tolist(), [0x3F808001])
        self.assertEqual(bits32(self.m.round_to(np, "bf16", v)).tolist(), [0x3F810000])
        self.assertEqual(bits32(self.m.round_to(np, "fp16", v)).tolist(), [0x3F808000])


class Generation(unittest.TestCase):
    """The value regimes and shapes of the template's port of flce's generator."""

    @classmethod
    def setUpClass(cls):
        cls.m = load()

    def gen(self, **overrides):
        return self.m.generate(np, casegen.case(**overrides))

    def test_weight_scale_follows_sqrt_h(self):
        for h, scale in ((16, 0.25), (17, 0.25), (64, 0.125), (4096, 2.0**-6)):
            g = self.m.Generator(np, casegen.case(H=h))
            self.assertEqual(float(g.w_scale), scale, h)

    def test_ignore_fraction_thresholds_the_second_target_word(self):
        everything = self.gen(BT=64, ignore_fraction=1.0, ignore_index=-7)["target"][0]
        self.assertEqual(set(everything.tolist()), {-7})
        nothing = self.gen(BT=64, ignore_fraction=0.0, V=5)["target"][0]
        self.assertTrue(((nothing >= 0) & (nothing < 5)).all())
        self.assertEqual(len(set(nothing.tolist())), 5)
        quarter = self.gen(BT=4096, ignore_fraction=0.25)["target"][0]
        self.assertAlmostEqual(float((quarter == -100).mean()), 0.25, delta=0.03)

    def test_large_logits_scales_the_inputs_by_32_exactly(self):
        fp32 = dict(input_dtype="fp32", weight_dtype="fp32", bias=True)
        normal, large = self.gen(**fp32), self.gen(regime="large_logits", **fp32)
        np.testing.assert_array_equal(large["x"][0], normal["x"][0] * np.float32(32))
        np.testing.assert_array_equal(large["bias"][0], normal["bias"][0] * np.float32(64))
        np.testing.assert_array_equal(large["w"][0], normal["w"][0])

    def test_confident_inputs_make_the_target_the_argmax(self):
        fp32 = dict(input_dtype="fp32", weight_dtype="fp32", BT=256, H=64, V=32, seed=5)
        # confident spans p_t from ~0.5 to 1 - 1e-6 (issue #16): the target is the argmax of most rows, not all
        for regime, at_least, at_most in (("confident", 0.85, 1.0), ("normal", 0.0, 0.2)):
            t = self.gen(regime=regime, **fp32)
            logits = t["x"][0].astype(np.float64) @ t["w"][0].astype(np.float64).T
            hits = float((logits.argmax(axis=1) == t["target"][0]).mean())
            self.assertGreaterEqual(hits, at_least, regime)
            self.assertLessEqual(hits, at_most, regime)

    def test_special_values_replace_one_in_64_inputs_by_nan_or_inf(self):
        fp32 = dict(input_dtype="fp32", weight_dtype="fp32", BT=128, H=64)
        special, normal = self.gen(regime="special_values", **fp32)["x"][0], self.gen(**fp32)["x"][0]
        replaced = ~np.isfinite(special)
        self.assertAlmostEqual(float(replaced.mean()), 1 / 64, delta=0.006)
        self.assertEqual({int(np.isnan(v)) * 2 + int(v > 0) for v in special[replaced]}, {0, 1, 2})  # -inf, inf, NaN
        np.testing.assert_array_equal(special[~replaced], normal[~replaced])

    def test_flce_tensors_names_dtypes_and_shapes(self):
        got = self.gen(BT=6, H=16, V=32, bias=True, ce_weight=True, extra_BT=[3], weight_dtype="fp16")
        want = {"x": ("bf16", (6, 16)), "target": ("int64", (6,)), "token_grad": ("fp32", (6,)),
                "x@3": ("bf16", (3, 16)), "target@3": ("int64", (3,)), "token_grad@3": ("fp32", (3,)),
                "w": ("fp16", (32, 16)), "bias": ("fp16", (32,)), "ce_weight": ("fp32", (32,))}
        self.assertEqual({k: (d, tuple(s)) for k, (_, d, s) in got.items()}, want)
        for name, (values, _, shape) in got.items():
            self.assertEqual(values.size, int(np.prod(shape)), name)
        for name in ("token_grad", "ce_weight"):  # 0.5 + unit: [0.5, 1.5)
            v = got[name][0]
            self.assertTrue(((v >= 0.5) & (v < 1.5)).all() and len(set(v.tolist())) > 1, name)
        np.testing.assert_array_equal(self.gen(BT=6, token_grad="ones")["token_grad"][0], np.ones(6, np.float32))
        spread = self.gen(BT=512, token_grad="log_spread")["token_grad"][0]  # 2^-14 .. 2^14
        self.assertTrue(spread.min() >= 2.0 ** -14 and spread.max() < 2.0 ** 14 and spread.max() / spread.min() > 1e7)
        one = self.gen(BT=64, regime="one_class", ignore_fraction=0.25)["target"][0]
        self.assertEqual(len(set(one[one >= 0].tolist())), 1)
        # x values are bf16 values, w values fp16 values: exact in their storage dtype
        np.testing.assert_array_equal(self.m.round_bf16(np, got["x"][0]), got["x"][0])
        np.testing.assert_array_equal(self.m.round_fp16(np, got["w"][0]), got["w"][0])

    def test_op_tensors_names_dtypes_and_shapes(self):
        for kind, batch in (("mm", 1), ("addmm", 1), ("bmm", 3), ("baddbmm", 2)):
            got = self.gen(kind=kind, batch=batch, BT=4, H=8, V=6, input_dtype="fp16", accum_dtype="fp32")
            lead = (batch,) if kind in ("bmm", "baddbmm") else ()
            want = {"a": ("fp16", lead + (6, 4)), "b": ("fp16", lead + (4, 8))}
            if kind in ("addmm", "baddbmm"):
                want["c"] = ("fp32", lead + (6, 8))  # the accumulator is in the op's out dtype
            self.assertEqual({k: (d, tuple(s)) for k, (_, d, s) in got.items()}, want, kind)
        no_accum = self.gen(kind="addmm", input_dtype="bf16", accum_dtype="none")
        self.assertEqual(no_accum["c"][1], "bf16")

    def test_another_seed_gives_other_values(self):
        a, b = self.gen(seed=1)["x"][0], self.gen(seed=2)["x"][0]
        self.assertFalse(np.array_equal(a, b))
        np.testing.assert_array_equal(a, self.gen(seed=1)["x"][0])

    def test_dump_line_writes_little_endian_element_bits(self):
        self.assertEqual(self.m.dump_line("x", "fp32", (2,), np.array([1.0, -2.0], dtype=">f4")),
                         "x fp32 2 0000803f000000c0\n")
        self.assertEqual(self.m.dump_line("t", "int64", [1, 1], np.array([1], dtype=np.int64)),
                         "t int64 1,1 0100000000000000\n")

    def test_make_tensors_stages_exact_values_in_the_storage_dtype(self):
        c = casegen.case(bias=True, weight_dtype="fp16", regime="special_values", BT=32, H=32)
        tensors, dtypes = self.m.make_tensors(torch, np, c)
        generated = self.m.generate(np, c)
        self.assertEqual(set(tensors), set(generated))
        for name, t in tensors.items():
            values, dtype, shape = generated[name]
            self.assertEqual((dtypes[name], tuple(t.shape)), (dtype, tuple(shape)), name)
            self.assertEqual(t.dtype, self.m.torch_dtype(torch, dtype), name)
            back = t.to(torch.float64).numpy().reshape(-1)
            np.testing.assert_array_equal(back, values.astype(np.float64).reshape(-1), name)


class Versions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load()

    def test_version_tuple_reads_leading_numbers(self):
        vt = self.m.version_tuple
        self.assertEqual(vt("2.13.0+cu130"), (2, 13, 0))
        self.assertEqual(vt("2.9"), (2, 9, 0))
        self.assertEqual(vt(" 2.14.0a0+git1234"), (2, 14, 0))
        self.assertEqual(vt("nightly"), (0, 0, 0))

    def test_ranges_agree_with_flce_subjects(self):
        specs = ["", ">=2.8", ">=2.8,<2.13", "<2.13", ">2.12", "<=2.12.1", "!=2.13.0", "==2.13", ">=2.13,<2.14"]
        versions = ["2.7.1", "2.8.0", "2.12.1", "2.12.2", "2.13.0+cu130", "2.13.1", "2.14.0a0", "3.0"]
        for spec in specs:
            for version in versions:
                self.assertEqual(self.m.in_range(version, spec), signatures.in_range(version, spec), (version, spec))
        self.assertTrue(self.m.in_range("2.13.0", "2.13"))  # no operator: equality
        self.assertFalse(self.m.in_range("2.13.1", "2.13"))

    def test_lower_bound_is_the_largest_lower_limit(self):
        self.assertEqual(self.m.lower_bound(">=2.8,<2.13"), (2, 8, 0))
        self.assertEqual(self.m.lower_bound(">2.9,>=2.10.1"), (2, 10, 1))
        self.assertIsNone(self.m.lower_bound("<2.13"))
        self.assertIsNone(self.m.lower_bound(""))

    def test_expected_outcome_takes_the_first_entry_for_this_torch_and_device(self):
        expect = [{"torch": ">=2.13", "device": "cuda", "outcome": "gpu"},
                  {"torch": ">=2.13", "device": "any", "outcome": "tier2"},
                  {"torch": ">=2.8,<2.13", "outcome": "tier1"}]
        m = load(expect=expect)

        def fake(version, cuda):
            return types.SimpleNamespace(__version__=version, cuda=types.SimpleNamespace(is_available=lambda: cuda))

        self.assertEqual(m.expected_outcome(fake("2.13.0", True)), "gpu")
        self.assertEqual(m.expected_outcome(fake("2.13.0", False)), "tier2")
        self.assertEqual(m.expected_outcome(fake("2.11.0", True)), "tier1")
        self.assertIsNone(m.expected_outcome(fake("2.7.0", False)))

    def test_reproduced_matches_the_outcome_or_one_of_its_alternatives(self):
        alts = "inductor-cpu-index-out-of-bounds@compiled:inductor | judge:grad_weight:nonfinite@compiled"
        self.assertTrue(self.m.reproduced("judge:grad_weight:nonfinite@compiled", alts))
        self.assertTrue(self.m.reproduced("inductor-cpu-index-out-of-bounds@compiled:inductor", alts))
        self.assertFalse(self.m.reproduced("judge:grad_weight:nonfinite", alts))
        self.assertFalse(self.m.reproduced("pass", alts))
        self.assertTrue(self.m.reproduced("pass", "pass"))
        self.assertTrue(self.m.reproduced("bucket-0123456789ab@eager:-", None))
        self.assertFalse(self.m.reproduced("unsupported", None))

    def test_a_compile_failure_reproduces_at_another_stage(self):
        # flce's rule (repro.hpp): a campaign may name the stage from its signature's walk on another
        # graph; the script's own ladder may break first at an earlier rung. Same failure.
        alts = "dynamo-symnode-no-value@compiled:inductor | judge:loss:out-of-bounds@compiled"
        self.assertTrue(self.m.reproduced("dynamo-symnode-no-value@compiled:eager", alts))
        self.assertEqual(self.m.restaged("dynamo-symnode-no-value@compiled:eager", alts),
                         "dynamo-symnode-no-value@compiled:inductor")
        self.assertIsNone(self.m.restaged("dynamo-symnode-no-value@compiled:inductor", alts))  # exact: no note
        self.assertFalse(self.m.reproduced("data-dependent-equal@compiled:eager", alts))  # another failure
        self.assertFalse(self.m.reproduced("dynamo-symnode-no-value-2@compiled:eager", alts))  # a longer name
        self.assertFalse(self.m.reproduced("judge:loss:out-of-bounds@eager", alts))  # numeric: the oracle counts

    def test_needs_dtype_out(self):
        self.assertTrue(self.m.needs_dtype_out(casegen.case(), "judge:x@eager | tier2-lowering@compiled:inductor"))
        flce = casegen.case()
        self.assertTrue(self.m.needs_dtype_out(flce, "tier2-lowering@compiled:inductor"))
        self.assertFalse(self.m.needs_dtype_out(flce, "judge:loss:out-of-bounds@eager"))
        self.assertFalse(self.m.needs_dtype_out(flce, None))
        self.assertTrue(self.m.needs_dtype_out(casegen.case(kind="mm"), None))


def link(type_, message, frames=()):
    return {"type": type_, "message": message, "frames": list(frames)}


class Classification(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load()
        cls.table = support.signature_table()

    def both(self, links):
        """The template's id, after checking flce_subjects' mirror names the same known one."""
        got, _ = self.m.classify(links)
        mirror = signatures.classify(links, self.table)
        self.assertEqual(got if not got.startswith("bucket-") else None, mirror, links)
        return got

    def test_known_signatures_by_message_and_frame(self):
        dtype_mul = "unsupported operand type(s) for *: 'torch.dtype' and 'FakeTensor'"
        decomp = ".../site-packages/torch/_decomp/decompositions.py:{}:{}"
        outer = link("torch._dynamo.exc.BackendCompilerFailed", "backend='inductor' raised")
        cases = [
            ([outer, link("builtins.TypeError", dtype_mul, [decomp.format(1404, "addmm")])], "tier1-decomposition"),
            ([outer, link("builtins.TypeError", dtype_mul, [decomp.format(88, "baddbmm")])],
             "tier1-baddbmm-decomposition"),
            ([outer, link("builtins.TypeError", "tuned_addmm() takes 3 positional arguments but 4 were given")],
             "tier2-lowering"),
            ([link("builtins.RuntimeError", "Expected out tensor to have dtype torch.float32 but got torch.bfloat16 "
                   "instead")], "out-tensor-dtype-mismatch"),
        ]
        for links, want in cases:
            self.assertEqual(self.both(links), want)
        # the frame pattern is required: the same message from elsewhere is not tier 1
        elsewhere = [outer, link("builtins.TypeError", dtype_mul, ["/x/y.py:3:f"])]
        self.assertTrue(self.both(elsewhere).startswith("bucket-"))

    def test_a_real_chain_from_torch(self):
        a, b = torch.ones(4, 2, dtype=torch.bfloat16), torch.ones(2, 3, dtype=torch.bfloat16)
        c = torch.zeros(4, 3, dtype=torch.float32)
        try:
            torch.addmm(c.clone(), a, b, out_dtype=torch.float32, out=c)
        except Exception as e:  # noqa: BLE001 -- CPU has no aten::addmm.dtype_out kernel
            template_links, flce_links = self.m.chain(e), errors.chain(e)
        else:
            self.skipTest("this torch runs addmm.dtype_out on CPU")
        self.assertEqual(self.m.classify(template_links)[0], "op-not-implemented-on-device")
        self.assertEqual(signatures.classify(flce_links, self.table), "op-not-implemented-on-device")

    def test_unknown_failures_get_a_stable_bucket_of_the_root_cause(self):
        root = "ValueError: bad shape [4, 8] at 0x7f12ab in /tmp/a/b.py line 12 (3, 4) value 1.5e-3"
        b1, matched = self.m.classify([link("builtins.RuntimeError", "wrapper"), link("my.Error", root)])
        b2, _ = self.m.classify([link("other.Outer", "x"),
                                 link("my.Error", root.replace("0x7f12ab", "0x55").replace("[4, 8]", "[2]")
                                      .replace("/tmp/a/b.py", "/home/u/c.py").replace("12", "99"))])
        b3, _ = self.m.classify([link("my.OtherError", root)])
        self.assertRegex(b1, r"^bucket-[0-9a-f]{12}$")
        self.assertEqual(b1, b2)  # addresses, shapes, paths and numbers do not split buckets
        self.assertNotEqual(b1, b3)  # the root's type does
        self.assertEqual(matched, f"my.Error: {root}")
        self.assertEqual(self.m.classify([]), ("bucket-empty", ""))

    def test_bucket_is_flces_fnv1a_of_type_and_normalized_first_line(self):
        def fnv1a(data, basis):
            h = basis
            for byte in data:
                h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
            return h

        standard = 0xCBF29CE484222325
        self.assertEqual(fnv1a(b"a", standard), 0xAF63DC4C8601EC8C)  # published FNV-1a test vectors
        self.assertEqual(fnv1a(b"foobar", standard), 0x85944171F73967E8)
        # flce's offset basis is judge/signature.cpp's (1469598103934665603, not FNV's standard
        # 14695981039346656037): the ids must be the C++ ones, whatever the constant.
        with open(os.path.join(support.REPO, "judge", "signature.cpp")) as f:
            basis = int(re.search(r"uint64_t fnv1a\(.*?\n\s*uint64_t h = ([0-9]+)ull;", f.read(), re.S).group(1))
        key = "my.Error|" + self.m.normalize_message("boom 42 at /a/b\nsecond line")
        self.assertEqual(key, "my.Error|boom <n> at <path>")
        got, _ = self.m.classify([link("my.Error", "boom 42 at /a/b\nsecond line")])
        self.assertEqual(got, f"bucket-{fnv1a(key.encode(), basis) & 0xFFFFFFFFFFFF:012x}")

    def test_normalize_message(self):
        n = self.m.normalize_message
        self.assertEqual(n("FakeTensor(size=s0) at 0xDEAD"), "FakeTensor(...) at <addr>")
        self.assertEqual(n("got [1, 2, 3]  and   (4, 5)"), "got <shape> and <shape>")
        self.assertEqual(n("first\nsecond 7"), "first")

    def test_innermost_torch_frame(self):
        links = [link("a.A", "", ["/v/site-packages/torch/_dynamo/eval.py:10:run"]),
                 link("b.B", "", ["/v/site-packages/torch/_inductor/lowering.py:77:tuned", "/me/sub.py:5:f"])]
        self.assertEqual(self.m.innermost_torch_frame(links), "torch/_inductor/lowering.py:tuned")
        self.assertEqual(self.m.innermost_torch_frame([link("c.C", "", ["/me/sub.py:5:f"])]), "")


class Chains(unittest.TestCase):
    """The template's exception chain is flce_subjects.errors.chain's (the host's record)."""

    @classmethod
    def setUpClass(cls):
        cls.m = load()

    @staticmethod
    def raised(make):
        try:
            make()
        except BaseException as e:  # noqa: BLE001 -- the exception is the test subject
            return e
        raise AssertionError("make() did not raise")

    def same(self, exc):
        got, want = self.m.chain(exc), errors.chain(exc)
        self.assertEqual(got, want)
        return got

    def test_cause_wrapper_attribute_and_context(self):
        class Wrapper(Exception):
            def __init__(self, inner):
                super().__init__("wrapped")
                self.inner_exception = inner

        def cause():
            try:
                raise KeyError("root")
            except KeyError as k:
                raise ValueError("middle") from k

        def wrapped():
            inner = self.raised(cause)
            raise Wrapper(inner) from None

        def context():
            try:
                wrapped()
            except Wrapper:
                raise RuntimeError("outer") from None

        types_ = [x["type"] for x in self.same(self.raised(wrapped))]
        self.assertEqual(types_[0].rsplit(".", 1)[-1], "Wrapper")
        self.assertEqual(types_[1:], ["builtins.ValueError", "builtins.KeyError"])  # the root is last
        # `from None` hides the context from Python's traceback, not from the chain
        ctx = self.same(self.raised(context))
        self.assertEqual([x["message"] for x in ctx], ["outer", "wrapped", "middle", "'root'"])

    def test_loops_end_and_long_chains_stop_at_32(self):
        a, b = ValueError("a"), TypeError("b")
        a.__context__, b.__context__ = b, a
        self.assertEqual([x["message"] for x in self.same(a)], ["a", "b"])
        e = ValueError("0")
        for i in range(1, 100):
            nxt = ValueError(str(i))
            nxt.__cause__ = e
            e = nxt
        self.assertEqual(len(self.same(e)), 32)

    def test_frames_are_path_line_function(self):
        def deep():
            raise OSError("x")

        frames = self.same(self.raised(deep))[0]["frames"]
        self.assertRegex(frames[-1], r"test_repro_template\.py:[0-9]+:deep$")

    def test_an_unprintable_exception_is_still_recorded(self):
        class Bad(Exception):
            def __str__(self):
                raise RuntimeError("no")

        got = self.m.chain(Bad())
        self.assertEqual(len(got), 1)
        self.assertIn("unprintable", got[0]["message"])


class Judge(unittest.TestCase):
    def judge_with(self, golden, outputs, reference=None, **case):
        m = load(casegen.case(**case), golden=golden)
        return m.judge(np, outputs, reference)

    @staticmethod
    def gold(values, bounds, shape=None):
        return {"shape": shape if shape is not None else [len(values)], "values": hex_f8(values),
                "bounds": hex_f8(bounds)}

    @staticmethod
    def out(values, dtype="fp32", shape=None):
        return (np.asarray(values, dtype=np.float64), dtype, shape if shape is not None else [len(values)])

    def test_within_and_out_of_bounds(self):
        golden = {"loss": self.gold([1.0, 2.0], [0.1, 0.1])}
        self.assertIsNone(self.judge_with(golden, {"loss": self.out([1.05, 1.91])}))
        self.assertEqual(self.judge_with(golden, {"loss": self.out([1.05, 2.2])}), "judge:loss:out-of-bounds")

    def test_missing_shape_dtype_findings_in_name_order(self):
        golden = {"loss": self.gold([1.0], [1.0]), "grad_input": self.gold([0.0, 0.0], [1.0, 1.0], [1, 2])}
        ok = {"loss": self.out([1.0]), "grad_input": self.out([0.0, 0.0], shape=[1, 2])}
        self.assertIsNone(self.judge_with(golden, ok))
        self.assertEqual(self.judge_with(golden, {"loss": ok["loss"]}), "judge:grad_input:missing")
        self.assertEqual(self.judge_with(golden, dict(ok, grad_input=self.out([0.0, 0.0], shape=[2]))),
                         "judge:grad_input:shape")
        bf16 = dict(ok, loss=self.out([1.0], dtype="bf16"))
        self.assertEqual(self.judge_with(golden, bf16, reference=ok), "judge:loss:dtype")
        self.assertIsNone(self.judge_with(golden, bf16))  # no reference: nothing to compare the dtype with
        # name order: grad_input is judged before loss
        self.assertEqual(self.judge_with(golden, {"loss": self.out([9.0])}), "judge:grad_input:missing")

    def test_non_finite_values_must_match_unless_the_regime_is_special(self):
        golden = {"loss": self.gold([np.nan, np.inf, 1.0], [0.1, 0.1, 0.1])}
        self.assertIsNone(self.judge_with(golden, {"loss": self.out([np.nan, np.inf, 1.0])}))
        wrong = {"loss": self.out([np.inf, np.inf, 1.0])}
        self.assertEqual(self.judge_with(golden, wrong), "judge:loss:nonfinite")
        self.assertIsNone(self.judge_with(golden, wrong, regime="special_values"))

    def test_predicted_tokens_accept_the_listed_alternatives(self):
        golden = {"predicted_tokens": dict(self.gold([3.0, 5.0, -1.0], [0, 0, 0]), acceptable=[[3, 4], [5], []])}
        self.assertIsNone(self.judge_with(golden, {"predicted_tokens": self.out([4, 5, -1], "int64")}))
        self.assertEqual(self.judge_with(golden, {"predicted_tokens": self.out([3, 6, -1], "int64")}),
                         "judge:predicted_tokens:prediction")
        self.assertEqual(self.judge_with(golden, {"predicted_tokens": self.out([3, 5, 2], "int64")}),
                         "judge:predicted_tokens:prediction")


def naive_flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, reduction="mean", **_):
    logits = x @ w.t() + (bias if bias is not None else 0)
    return torch.nn.functional.cross_entropy(logits.float(), target, weight=ce_weight, ignore_index=ignore_index,
                                             reduction=reduction)


class BackwardBoom(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("backward boom 17")


class Running(unittest.TestCase):
    """Subjects, run as flce's runner runs them (eager; compiled with the cheap eager backend)."""

    FP32 = dict(input_dtype="fp32", weight_dtype="fp32", compile={"backend": "eager"})

    def subject(self, m, flce, name="plug"):
        return m.from_object(name, types.SimpleNamespace(flce=flce), None)

    def test_flce_options_are_the_runners(self):
        full = casegen.case(ignore_index=-5, lse_square_scale=1e-3, label_smoothing=0.1, reduction="sum", softcap=5,
                            return_z_loss=True, accum_dtype="fp32", use_token_scaling=True,
                            return_token_accuracy=True, return_predicted_tokens=True)
        m = load(full)
        for c in (full, casegen.case()):
            self.assertEqual(m.flce_options(torch, c), runner.flce_options(c))

    def test_own_subjects_are_the_registrys(self):
        m = load()
        for name, module in m.FLCE_SUBJECT_MODULES.items():
            self.assertEqual(registry.BUILTIN.get(name), module, name)
        # The template's own copies (no flce_subjects needed).
        ported = {"aten-dtype-out", "liger", "cce", "cce-default"} | set(m.TORCH_NATIVE_PATHS)
        self.assertEqual(set(registry.BUILTIN) - set(m.FLCE_SUBJECT_MODULES), ported)

    def test_plugin_rule(self):
        m = load()
        bare = m.from_object("f", naive_flce, types.SimpleNamespace(__version__="9.1"))
        self.assertIs(bare.flce, naive_flce)
        self.assertEqual(bare.version, "9.1")

        def broken_version():
            raise OSError("gone")

        obj = types.SimpleNamespace(op=print, version=broken_version, supports=lambda c: "never")
        s = m.from_object("o", obj, None)
        self.assertIsNone(s.flce)
        self.assertEqual(s.version, "unknown (OSError: gone)")
        self.assertEqual(s.supports({}), "never")
        with self.assertRaises(m.Skip):
            m.from_object("n", types.SimpleNamespace(), None)

    def test_phases_of_a_failing_subject(self):
        m = load(casegen.case(**self.FP32))
        tensors, _ = m.make_tensors(torch, np, m.CASE)

        def forward_fails(x, w, target, **_):
            raise ValueError("forward boom 3")

        def backward_fails(x, w, target, **options):
            return naive_flce(BackwardBoom.apply(x), w, target, **options)

        for flce, phase, message in ((forward_fails, "forward", "forward boom 3"),
                                     (backward_fails, "backward", "backward boom 17")):
            r = m.run_oracle(torch, self.subject(m, flce), m.CASE, tensors, None, False)
            self.assertEqual((r["status"], r["phase"]), ("error", phase))
            self.assertRegex(r["signature"], r"^bucket-[0-9a-f]{12}$")
            self.assertIn(message, r["matched"])

    def test_a_correct_subject_passes_and_a_wrong_golden_is_found(self):
        c = casegen.case(bias=True, **self.FP32)
        m = load(c)
        tensors, _ = m.make_tensors(torch, np, c)
        subject = self.subject(m, naive_flce)
        eager = m.run_oracle(torch, subject, c, tensors, None, False)
        self.assertEqual(eager["status"], "ok")
        self.assertEqual(set(eager["outputs"]), {"loss", "grad_input", "grad_weight", "grad_bias"})
        # expected values: the same computation in fp64
        x, w, b = (tensors[n].to(torch.float64).requires_grad_() for n in ("x", "w", "bias"))
        loss = torch.nn.functional.cross_entropy(x @ w.t() + b, tensors["target"])
        loss.backward()
        want = {"loss": loss.detach(), "grad_input": x.grad, "grad_weight": w.grad, "grad_bias": b.grad}
        golden = {n: {"shape": list(t.shape), "values": hex_f8(t.numpy().reshape(-1)),
                      "bounds": hex_f8(np.full(t.numel(), 1e-4))} for n, t in want.items()}
        m.GOLDEN = golden
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            self.assertEqual(m.outcome_of(torch, np, subject, c, tensors, False), ("pass", ""))
        self.assertIn("within flce's bounds", printed.getvalue())
        golden["grad_weight"]["values"] = hex_f8(want["grad_weight"].numpy().reshape(-1) + 1e-3)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(m.outcome_of(torch, np, subject, c, tensors, False)[0],
                             "judge:grad_weight:out-of-bounds@eager")


class Main(unittest.TestCase):
    """main()'s early exits: what it says and its exit code, without running a subject."""

    def main_of(self, case, **payload_options):
        m = load(case, **payload_options)
        argv = sys.argv
        sys.argv = ["repro.py"]
        try:
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                rc = m.main()
        finally:
            sys.argv = argv
        return rc, printed.getvalue()

    def test_environment_and_case_are_printed(self):
        expect = [{"torch": ">=99.0", "device": "any", "outcome": "tier9@eager:-"}]  # skips before running
        _, text = self.main_of(casegen.case(bias=True, label_smoothing=0.1), expect=expect)
        self.assertIn(f"PyTorch: {torch.__version__}\n", text)
        self.assertRegex(text, r"Case: flce BT=8 H=16 V=32 bf16/bf16 accum none, .* bias label_smoothing=0.1;")
        self.assertIn("Subject: 'model'", text)

    @unittest.skipIf(torch.cuda.is_available(), "needs a torch without a CUDA device")
    def test_a_cuda_case_skips_here(self):
        rc, text = self.main_of(casegen.case(device="cuda"))
        self.assertEqual(rc, 2)
        self.assertIn("SKIP: the case runs on CUDA", text)

    def test_a_subject_without_the_kind_skips(self):
        rc, text = self.main_of(casegen.case(kind="mm", input_dtype="fp32", weight_dtype="fp32"), subject="model")
        self.assertEqual(rc, 2)
        self.assertIn("SKIP: subject 'model' has no op()", text)

    def test_a_numeric_finding_without_golden_skips(self):
        expect = [{"torch": "", "device": "any", "outcome": "judge:loss:out-of-bounds@eager"}]
        rc, text = self.main_of(casegen.case(input_dtype="fp32", weight_dtype="fp32"), expect=expect)
        self.assertEqual(rc, 2)
        self.assertIn("SKIP: the case is too large to carry flce's fp64 golden", text)

    def test_expectations_only_for_newer_torch_skip(self):
        expect = [{"torch": ">=99.0", "device": "any", "outcome": "tier9@eager:-"}]
        rc, text = self.main_of(casegen.case(), expect=expect)
        self.assertEqual(rc, 2)
        self.assertTrue(re.search(r"SKIP: torch .* is older than every torch", text), text)


class Template(unittest.TestCase):
    def test_the_marker_is_one_string_literal_inside_json_loads(self):
        text = support.template_text()
        self.assertEqual(text.count("@PAYLOAD@"), 1)
        self.assertIn('PAYLOAD = json.loads(\n    "@PAYLOAD@"\n)\n', text)
        self.assertTrue(text.startswith("#!/usr/bin/env python3\n"))


if __name__ == "__main__":
    unittest.main()
