"""Part two of the reproducer's template: failure signatures, the numeric judge, the verdict and main().

Part one is repro_template.py (the payload, flce's generator port, the subjects, the runs). The build
joins the two into the one self-contained script `flce repro --emit-python` writes: part one, then
this file after its JOIN marker line below (repro/CMakeLists.txt with cmake/EmbedText.cmake; the
Python tests join them alike, tests/python/support.py). The imports above the marker only name what
this part takes from part one, for ruff and for a reader; the script does not hold them.
"""
import json
import re
import sys

from repro_template import (
    CASE,
    DTYPE_OUT_SIGNATURES,
    EARLIER,
    EXPECT,
    GOLDEN,
    LADDER,
    NOT_GRAPH,
    PAYLOAD,
    SIGNATURES,
    SUBJECT,
    SUBJECT_PATH,
    VERBOSE,
    WORKAROUND_SUFFIX,
    Skip,
    compile_fn,
    describe,
    dump_inputs,
    dump_tensors,
    dynamo_config,
    in_range,
    load_subject,
    lower_bound,
    make_forward,
    make_tensors,
    print_environment,
    quiet,
    run_once,
    version_tuple,
    workaround,
)

# @JOIN@ the script goes on with part one's names from here


# ---------------------------------------------------------------- failure signatures (flce's rules)
def chain(exc):
    """The exception chain, outermost first: __cause__, wrapper attributes, __context__."""
    import traceback
    out, seen, stack = [], set(), [exc]
    while stack and len(out) < 32:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        try:
            text = str(e)
        except Exception as inner:
            text = f"<unprintable: {inner!r}>"
        frames = []
        if e.__traceback__:
            frames = [f"{f.filename}:{f.lineno}:{f.name}" for f in traceback.extract_tb(e.__traceback__)]
        out.append({"type": f"{type(e).__module__}.{type(e).__qualname__}", "message": text[:20000],
                    "frames": frames[-64:]})
        try:
            attrs = [v for v in vars(e).values() if isinstance(v, BaseException)]
        except TypeError:
            attrs = []
        linked = [x for x in (e.__cause__, *attrs, e.__context__) if x is not None]
        linked = [x for i, x in enumerate(linked) if all(x is not o for o in linked[:i])]
        if linked:
            stack.append(linked[0])
            stack.extend(reversed(linked[1:]))
    return out


def innermost_torch_frame(links):
    for link in reversed(links):
        for f in reversed(link["frames"]):
            pos = f.rfind("/torch/")
            if pos < 0:
                continue
            rel = f[pos + 1:]
            c1, c2 = rel.find(":"), rel.rfind(":")
            return rel if c1 < 0 or c1 == c2 else rel[:c1] + ":" + rel[c2 + 1:]
    return ""


def normalize_message(msg):
    s = msg.split("\n", 1)[0]
    for pattern, repl in ((r"0x[0-9a-fA-F]+", "<addr>"), (r"(/[^\s:'\"]+)+", "<path>"),
                          (r"FakeTensor\([^)]*\)", "FakeTensor(...)"), (r"\[[0-9, ]*\]|\([0-9, ]+\)", "<shape>"),
                          (r"[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?", "<n>"), (r"\s+", " ")):
        s = re.sub(pattern, repl, s)
    return s


def classify(links):
    """(signature id, matched text): the first known signature found in any link, innermost first;
    else flce's stable bucket id of the root cause."""
    for entry in SIGNATURES:
        for link in reversed(links):
            text = f"{link['type']}: {link['message']}"
            if not any(re.search(p, text) for p in entry["patterns"]):
                continue
            fps = entry.get("frame_patterns") or []
            if fps and not any(re.search(p, fr) for p in fps for link_ in links for fr in link_["frames"]):
                continue
            return entry["id"], text.split("\n", 1)[0]
    if not links:
        return "bucket-empty", ""
    root = links[-1]
    key = f"{root['type']}|{normalize_message(root['message'])}".encode()
    h = 1469598103934665603
    for byte in key:
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"bucket-{h & 0xFFFFFFFFFFFF:012x}", f"{root['type']}: {root['message'].split(chr(10), 1)[0]}"


# ---------------------------------------------------------------- numeric judge (flce's rules)
DTYPE_NAMES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float64": "fp64",
               "torch.int64": "int64"}


def host_copy(torch, t):
    """(values widened to float64, dtype name, shape), as flce's host hands outputs to its judge."""
    t = t.detach().cpu()
    return t.to(torch.float64).numpy().reshape(-1), DTYPE_NAMES.get(str(t.dtype), str(t.dtype)), list(t.shape)


def judge(np, outputs, reference):
    """flce's first finding over the golden's outputs in name order: "judge:<output>:<finding>", or None."""
    special = CASE["regime"] == "special_values"
    for name in sorted(GOLDEN):
        g = GOLDEN[name]
        gold = np.frombuffer(bytes.fromhex(g["values"]), dtype="<f8")
        bound = np.frombuffer(bytes.fromhex(g["bounds"]), dtype="<f8")
        if "allowance" in g:  # the subject's declared approximation (flce's judge/MATH.md item 10)
            bound = bound + np.frombuffer(bytes.fromhex(g["allowance"]), dtype="<f8")
        if name not in outputs:
            return f"judge:{name}:missing"
        got, dtype, shape = outputs[name]
        if shape != g["shape"]:
            return f"judge:{name}:shape"
        if reference is not None and name in reference and reference[name][1] != dtype:
            return f"judge:{name}:dtype"
        if name == "predicted_tokens":
            for k, (s, t) in enumerate(zip(got, gold)):
                if s != t and (t < 0 or int(s) not in g["acceptable"][k]):
                    return f"judge:{name}:prediction"
            continue
        def cls(v):
            return np.where(np.isnan(v), 1, np.where(np.isposinf(v), 2, np.where(np.isneginf(v), 3, 0)))
        cg, cs = cls(gold), cls(got)
        if not special and (cg != cs).any():
            return f"judge:{name}:nonfinite"
        finite = (cg == 0) & (cs == 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.abs(got[finite] - gold[finite]) / bound[finite]
        if (ratio > 1).any():
            return f"judge:{name}:out-of-bounds"
    return None


def graph_key(c, backend):
    return json.dumps({k: v for k, v in c.items() if k not in NOT_GRAPH}, sort_keys=True) + "|" + backend


def run_oracle(torch, subject, c, tensors, backend, use_workaround, cache=None):
    """{"status": ok|error|unsupported, ...} for eager (backend None) or one compile backend;
    `cache` (a sequence case): compiled functions shared with earlier calls of the same graph."""
    phase = ["setup"]
    try:
        with quiet(), workaround(use_workaround):
            fn = make_forward(torch, subject, c)
            if backend is None:
                outputs = run_once(torch, c, fn, tensors, "", phase)
            else:
                if cache is None:
                    fn = compile_fn(torch, fn, c, backend)
                else:
                    key = graph_key(c, backend)
                    if key not in cache:
                        cache[key] = compile_fn(torch, fn, c, backend)
                    fn = cache[key]
                with dynamo_config(torch, c):
                    probe = "x" if c["kind"] == "flce" else "a"
                    for bt in c["extra_BT"]:
                        if f"{probe}@{bt}" in tensors:
                            run_once(torch, c, fn, tensors, f"@{bt}", phase)
                    outputs = run_once(torch, c, fn, tensors, "", phase)
        return {"status": "ok", "outputs": {n: host_copy(torch, t) for n, t in outputs.items()}}
    except (KeyboardInterrupt, Skip):
        raise
    except BaseException as e:  # noqa: BLE001 -- whatever the subject raises is the result
        links = chain(e)
        sig, matched = classify(links)
        result = {"status": "error", "signature": sig, "matched": matched, "phase": phase[0], "links": links}
        if sig == "op-not-implemented-on-device" and backend is None:
            result.update(status="unsupported", reason="no kernel here: " + matched)  # eager shows nothing
        return result


def show(label, r):
    if r["status"] == "ok":
        verdict = r.get("judge") or ("within flce's bounds" if "judge" in r else "ran (not judged)")
        print(f"{label:<28} ok           {verdict}")
    elif r["status"] == "unsupported":
        print(f"{label:<28} unsupported  {r['reason'][:160]}")
    else:
        print(f"{label:<28} error        {r['signature']} (phase {r['phase']}) {r['matched'][:160]}")
        if VERBOSE:
            for link in r["links"]:
                print(f"    <- {link['type']}: {link['message'].splitlines()[0] if link['message'] else ''}")
            print_traceback(r["links"])


def print_traceback(links):
    """Each link's frames in Python's own traceback format (what flce's CUDA-fault re-run parses
    for the line that launched a faulting kernel, fuzz/findings/cuda_fault.hpp)."""
    import linecache
    for link in links:
        print("Traceback (most recent call last):")
        for frame in link["frames"]:
            path, line, func = (frame.rsplit(":", 2) + ["", ""])[:3]
            print(f'  File "{path}", line {line}, in {func}')
            code = linecache.getline(path, int(line)).strip() if line.isdigit() else ""
            if code:
                print(f"    {code}")
        print(f"{link['type']}: {link['message'].splitlines()[0] if link['message'] else ''}")


def outcome_of(torch, np, subject, c, tensors, use_workaround, cache=None, judged=True):
    """flce's outcome line: "pass", "unsupported", "<signature>@<oracle>:<stage>" or
    "judge:<output>:<finding>@<oracle>" (numeric findings only when GOLDEN is carried)."""
    eager = run_oracle(torch, subject, c, tensors, None, use_workaround)
    if eager["status"] == "ok" and GOLDEN and judged:
        eager["judge"] = judge(np, eager["outputs"], None)
    show("eager", eager)
    backend = c["compile"]["backend"]
    compiled = run_oracle(torch, subject, c, tensors, backend, use_workaround, cache)
    if compiled["status"] == "ok" and GOLDEN and judged:
        compiled["judge"] = judge(np, compiled["outputs"], eager["outputs"] if eager["status"] == "ok" else None)
    show(f"compiled({backend})", compiled)
    stage = backend
    if compiled["status"] == "error":
        # The first backend down the ladder that shows the same failure names the stage.
        steps, first_any, stage = [], "", ""
        for b in LADDER:
            r = compiled if b == backend else run_oracle(torch, subject, c, tensors, b, use_workaround, cache)
            what = "ok" if r["status"] == "ok" else r.get("signature", r["status"])
            steps.append(f"{b}={what}")
            if r["status"] != "ok":
                first_any = first_any or b
                if what == compiled["signature"]:
                    stage = b
                    break  # as flce's walk: the rungs above the stage cost a trace each and name nothing
        if backend not in [step.split("=", 1)[0] for step in steps]:
            steps.append(f"{backend}={compiled['signature']}")
        stage = stage or first_any
        print("backend ladder: " + " ".join(steps))
        print(f"first failing stage: {stage}")
    if eager["status"] == "unsupported" and compiled["status"] == "unsupported":
        return "unsupported", eager.get("reason", "")
    for oracle, r in (("eager", eager), ("compiled", compiled)):
        if r["status"] == "error":
            return (f"{r['signature']}@eager:-" if oracle == "eager" else f"{r['signature']}@compiled:{stage}"), ""
        if r.get("judge"):
            return f"{r['judge']}@{oracle}", ""
    return "pass", ""


def expected_outcome(torch):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for e in EXPECT:
        if in_range(torch.__version__, e.get("torch", "")) and e.get("device", "any") in ("any", device):
            return e["outcome"]
    return None


def alternatives(expected):
    """The outcome lines an expectation accepts ("a | b": one memory-safety bug, several symptoms)."""
    return (expected or "").split(" | ")


def restaged(got, expected):
    """The alternative of `expected` that names the compile failure `got` at another stage, or None:
    the stage is the first rung of the backend ladder that showed it (flce's rule, repro.hpp)."""
    sig, at, _ = got.partition("@compiled:")
    return next((e for e in alternatives(expected) if at and e != got and e.startswith(sig + at)), None)


def reproduced(got, expected):
    """got is the expected outcome or one of its alternatives, or the same compile failure shown at
    another stage; with no expectation, any failure."""
    if expected is None:
        return got not in ("pass", "unsupported")
    return got in alternatives(expected) or restaged(got, expected) is not None


def needs_dtype_out(c, expected):
    sigs = {alt.split("@", 1)[0] for alt in alternatives(expected)}
    return bool(sigs & set(DTYPE_OUT_SIGNATURES)) or c["kind"] != "flce"  # the op kinds always pass out_dtype=


def main():
    try:
        import torch
    except Exception as e:
        print(f"SKIP: cannot import torch: {e}")
        return 2
    print_environment(torch)
    print(f"Subject: {SUBJECT!r}" + (f" (subject path {SUBJECT_PATH!r})" if SUBJECT_PATH else ""))
    print(f"Case: {describe(CASE)}")
    print(f"Source: {PAYLOAD['source']!r}")
    try:
        import numpy as np
    except Exception as e:
        print(f"SKIP: numpy is needed to generate the inputs: {e}")
        return 2
    tensors = None
    try:
        if CASE["device"] == "cuda" and not torch.cuda.is_available():
            raise Skip("the case runs on CUDA and this torch has no CUDA device")
        if "--dump-inputs" in sys.argv:
            path = sys.argv[sys.argv.index("--dump-inputs") + 1]
            dump_inputs(np, CASE, path)
            print(f"generated values written to {path!r}")
            return 0
        if "--dump-tensors" in sys.argv:
            path = sys.argv[sys.argv.index("--dump-tensors") + 1]
            dump_tensors(torch, *make_tensors(torch, np, CASE), path)
            print(f"tensors written to {path!r}")
            return 0
        expected = expected_outcome(torch)
        lows = [lower_bound(e.get("torch", "")) for e in EXPECT]
        if EXPECT and expected is None and all(lo is not None and version_tuple(torch.__version__) < lo for lo in lows):
            raise Skip(f"torch {torch.__version__} is older than every torch this case is expected to fail on: "
                       + ", ".join(repr(e.get("torch", "")) for e in EXPECT))
        op = CASE["kind"] if CASE["kind"] != "flce" else "addmm"
        if needs_dtype_out(CASE, expected) and "dtype_out" not in getattr(torch.ops.aten, op).overloads():
            raise Skip(f"this torch has no aten.{op}.dtype_out overload (torch >= 2.8)")
        name = SUBJECT[: -len(WORKAROUND_SUFFIX)] if SUBJECT.endswith(WORKAROUND_SUFFIX) else SUBJECT
        subject = load_subject(torch, name)
        if name == "liger" and needs_dtype_out(CASE, expected) and torch.cuda.get_device_capability()[0] < 8:
            raise Skip("the out_dtype fast path needs compute capability 8.0+")
        print(f"Subject version: {subject.version}")
        print(f"Expected: {expected if expected is not None else 'any failure (no expectation for this torch)'}")
        if (CASE["kind"] == "flce" and subject.flce is None) or (CASE["kind"] != "flce" and subject.op is None):
            raise Skip(f"subject {name!r} has no {'flce' if CASE['kind'] == 'flce' else 'op'}()")
        reason = subject.supports(CASE)
        if reason:
            raise Skip(f"subject {name!r} does not run this case: {reason}")
        if any(alt.startswith("judge:") for alt in alternatives(expected)) and not GOLDEN:
            raise Skip("the case is too large to carry flce's fp64 golden reference, which numeric findings need "
                       "(use `flce repro`)")
        cache = {} if EARLIER else None
        for k, call in enumerate(EARLIER):
            print(f"Earlier call {k + 1}/{len(EARLIER)}: {describe(call)}")
            earlier_tensors, _ = make_tensors(torch, np, call)
            outcome_of(torch, np, subject, call, earlier_tensors, name != SUBJECT, cache, judged=False)
        if EARLIER:
            print(f"Last call ({len(EARLIER)} earlier, same process and compiled functions):")
        tensors, _ = make_tensors(torch, np, CASE)
        got, why = outcome_of(torch, np, subject, CASE, tensors, name != SUBJECT, cache)
    except Skip as s:
        print(f"SKIP: {s}")
        return 2
    print(f"outcome: {got}")
    if got == "unsupported" and expected != "unsupported":
        print(f"SKIP: the subject cannot run this case here: {why}")
        return 2
    if reproduced(got, expected):
        named = restaged(got, expected) if expected is not None else None
        if named:
            print(f"note: {got} is the failure {named} names, first shown at another rung of the backend ladder here")
        print(f"REPRODUCED: {got}")
        return 0
    print(f"NOT REPRODUCED: got {got}, expected {expected if expected is not None else 'a failure'}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
