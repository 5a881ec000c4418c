"""The emitted reproducer must build, without flce, the very inputs flce builds.

usage: check_inputs.py FLCE WORKDIR CASE.json...

1. generator: for every case, the script's generated values (its port of Philox and the
   transforms) equal `flce repro --dump-inputs` bit for bit -- every tensor, extra_BT too;
2. end to end: the tensors the script hands the subject equal, bit for bit, those flce's
   runner hands a plug-in subject (dump_subject.py, run through `flce replay`);
3. the script's own --dump-inputs flag writes the same text as flce (one case, via the CLI).
Controls that this can fail: another seed changes the dump; the cases contain fp16
subnormals and NaNs (the rounding paths most easily ported wrong).
"""
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


def emit(case_path, tag):
    script = os.path.join(work, f"{tag}.py")
    subject = "model" if json.load(open(case_path)).get("kind", "flce") == "flce" else "aten-dtype-out"
    run([flce, "repro", "--emit-python", case_path, "--subject", subject, "--expect", "pass", "-o", script])
    spec = importlib.util.spec_from_file_location(f"repro_{len(sys.modules)}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines functions only: main() runs under __main__
    return script, module


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


subject_sees, subnormals, nans = {}, 0, 0
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
print(f"compared {subnormals} fp16 subnormals and {nans} bf16 NaNs")
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print("the script's inputs are flce's, bit for bit")
