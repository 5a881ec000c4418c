"""The emitted reproducer must build, without flce, the very inputs flce builds.

usage: check_inputs.py FLCE WORKDIR CASE.json...

1. generator: for every case, the script's generated values (its port of Philox and the
   transforms) equal `flce repro --dump-inputs` bit for bit -- every tensor, extra_BT too;
2. end to end: the tensors the script hands the subject equal, bit for bit, those flce's
   runner hands a plug-in subject (dump_subject.py, run through `flce replay`);
3. the script's own --dump-inputs flag writes the same text as flce (one case, via the CLI);
4. the short script (cases of at most 4,096 input elements): its literal tensors, built by
   running only its imports and tensor assignments, are what flce handed the subject, bit for
   bit, and its upstream gradient is flce's token_grad.
Controls that this can fail: another seed changes the dump; the cases contain fp16
subnormals and NaNs (the rounding paths most easily ported wrong), bf16 NaNs in a short script
too (written as fp32 and converted by torch, as flce's host converts them).
"""
import ast
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

flce, work, cases = sys.argv[1], os.path.abspath(sys.argv[2]), [os.path.abspath(c) for c in sys.argv[3:]]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "plugin"))
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the scripts must not need flce
failures = []


def run(cmd, env=env, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)
    if p.returncode != 0:
        sys.exit(f"FAIL: {cmd} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def subject_of(case_path):
    return "model" if json.load(open(case_path)).get("kind", "flce") == "flce" else "aten-dtype-out"


def emit(case_path, tag):
    """The long (generator-port) script, loaded as a module."""
    script = os.path.join(work, f"{tag}.py")
    run([flce, "repro", "--emit-python", case_path, "--subject", subject_of(case_path), "--expect", "pass",
         "--long-form", "-o", script])
    spec = importlib.util.spec_from_file_location(f"repro_{len(sys.modules)}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines functions only: main() runs under __main__
    return script, module


TENSORS = ("x", "w", "target", "bias", "ce_weight", "grad_loss", "a", "b", "c")


def short_tensors(case_path, tag):
    """The short script's tensors (None: the case gets the long form), from its imports and
    tensor assignments only: nothing else of it runs."""
    script = os.path.join(work, f"{tag}-short.py")
    run([flce, "repro", "--emit-python", case_path, "--subject", subject_of(case_path), "--expect", "pass",
         "-o", script])
    tree = ast.parse(open(script).read())
    if any(isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAYLOAD" for n in tree.body):
        return None
    inputs = tree.body[:next(i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef))]
    keep = [n for n in inputs
            if isinstance(n, ast.Import) or (isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") in TENSORS)]
    namespace = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), script, "exec"), namespace)
    return {name: namespace[name] for name in TENSORS if name in namespace}


def tensor_lines(tensors, names, rename=None):
    """dump_subject.py's text of these tensors (storage-dtype bits), sorted by name."""
    from dump_subject import BITS
    lines = []
    for name in sorted(n for n in names if n in tensors):
        t = tensors[name].detach().cpu().contiguous()
        dtype, view = BITS[t.dtype]
        raw = t.view(view).numpy().reshape(-1)
        raw = raw.astype(raw.dtype.newbyteorder("<"), copy=False).tobytes().hex()
        lines.append(f"{(rename or {}).get(name, name)} {dtype} {','.join(str(s) for s in t.shape)} {raw}\n")
    return "".join(lines)


def script_dumps(module, tag):
    values, tensors = os.path.join(work, f"{tag}.values"), os.path.join(work, f"{tag}.tensors")
    module.dump_inputs(np, module.CASE, values)
    module.dump_tensors(torch, *module.make_tensors(torch, np, module.CASE), tensors)
    return open(values).read(), open(tensors).read()


def first_difference(a, b):
    for la, lb in zip(a.splitlines(), b.splitlines()):
        if la != lb:
            name, dtype, shape, bits_a = la.split(" ")
            bits_b = lb.split(" ")[-1]
            w = 16 if dtype == "int64" else 8
            k = next((i for i in range(0, len(bits_a), w) if bits_a[i:i + w] != bits_b[i:i + w]), 0)
            return f"{name} ({dtype} [{shape}]) element {k // w}: flce {bits_a[k:k + w]}, script {bits_b[k:k + w]}"
    return f"{len(a.splitlines())} vs {len(b.splitlines())} tensors"


def count(dump, dtype, test):
    n = 0
    for line in dump.splitlines():
        name, dt, shape, bits = line.split(" ")
        if dt == dtype:
            n += sum(test(int(bits[i + 2:i + 4] + bits[i:i + 2], 16)) for i in range(0, len(bits), 4))
    return n


subject_sees, subnormals, nans, short_sees, short_nans, upstream = {}, 0, 0, {}, 0, 0
for path in cases:
    tag = os.path.splitext(os.path.basename(path))[0]
    script, module = emit(path, tag)
    ours = run([flce, "repro", "--dump-inputs", path])
    values, tensors = script_dumps(module, tag)
    if not ours.strip() or ours != values:
        why = first_difference(ours, values) if ours.strip() else "flce dumped nothing"
        failures.append(f"generator, {tag}: {why}")
    else:
        print(f"generator identical: {tag} ({len(ours.splitlines())} tensors)")
    kind = module.CASE["kind"]
    names = ("x", "w", "target", "bias", "ce_weight") if kind == "flce" else ("a", "b", "c")
    subject_sees[tag] = "".join(line + "\n" for line in tensors.splitlines() if line.split(" ")[0] in names)
    short = short_tensors(path, tag)
    if short is not None:
        short_sees[tag] = tensor_lines(short, names)
        short_nans += count(short_sees[tag], "bf16", lambda h: (h & 0x7F80) == 0x7F80 and (h & 0x7F) != 0)
        if "grad_loss" in short:
            upstream += 1
            if tensor_lines(short, ["grad_loss"], {"grad_loss": "token_grad"}) not in ours:
                failures.append(f"short script, {tag}: its upstream gradient is not flce's token_grad")
    subnormals += count(tensors, "fp16", lambda h: (h & 0x7C00) == 0 and (h & 0x3FF) != 0)
    nans += count(tensors, "bf16", lambda h: (h & 0x7F80) == 0x7F80 and (h & 0x7F) != 0)
    # The subject side through flce's runner: same case, cheap compile (inputs do not depend on it).
    case = json.load(open(path))
    case["compile"] = {"backend": "eager"}
    json.dump(case, open(os.path.join(work, "plugin", f"{tag}.json"), "w"))

# One flce process runs every case through the plug-in, which writes what it received.
entries = [{"case": f"plugin/{t}.json", "subject": "dump_subject:", "expect": []} for t in subject_sees]
json.dump(entries, open(os.path.join(work, "expectations.json"), "w"))
dumps = os.path.join(work, "received")
os.makedirs(dumps)
run([flce, "replay", os.path.join(work, "expectations.json")],
    env=dict(env, PYTHONPATH=os.path.dirname(os.path.abspath(__file__)), FLCE_TEST_DUMP_DIR=dumps))
received = {open(f).read() for f in glob.glob(os.path.join(dumps, "*.txt"))}
for tag, text in subject_sees.items():
    if text not in received:
        failures.append(f"end to end, {tag}: the script's tensors are not what flce handed the subject")
    else:
        print(f"end to end identical: {tag}")

for tag, text in short_sees.items():
    if text not in received:
        failures.append(f"short script, {tag}: its literal tensors are not what flce handed the subject")
    else:
        print(f"short script identical: {tag}")

# The script's own flag, through its command line.
script = os.path.join(work, f"{os.path.splitext(os.path.basename(cases[0]))[0]}.py")
run([sys.executable, script, "--dump-inputs", os.path.join(work, "cli.values")], cwd=work)
if open(os.path.join(work, "cli.values")).read() != run([flce, "repro", "--dump-inputs", cases[0]]):
    failures.append("the script's --dump-inputs differs from flce's")

# Controls: the comparisons must be able to fail.
case = json.load(open(cases[0]))
case["seed"] = int(case.get("seed", 0)) + 1
json.dump(case, open(os.path.join(work, "other-seed.json"), "w"))
_, other = emit(os.path.join(work, "other-seed.json"), "other-seed")
if script_dumps(other, "other-seed")[0] == run([flce, "repro", "--dump-inputs", cases[0]]):
    failures.append("control: another seed gave the same values")
if subnormals == 0 or nans == 0:
    failures.append(f"control: fp16 subnormals {subnormals}, bf16 NaNs {nans}: a rounding path went untested")
if len(short_sees) < 5 or short_nans == 0 or upstream == 0:
    failures.append(f"control: {len(short_sees)} short scripts, {short_nans} bf16 NaNs, {upstream} upstream gradients "
                    "in them: too little compared")
print(f"compared {subnormals} fp16 subnormals and {nans} bf16 NaNs; {len(short_sees)} short scripts, "
      f"{short_nans} bf16 NaNs and {upstream} upstream gradients in them")
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print("the script's inputs are flce's, bit for bit")
