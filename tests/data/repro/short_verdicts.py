"""The short reproducer gives flce's verdict, case by case.

usage: short_verdicts.py FLCE WORKDIR CORPUS_DIR

For every corpus case that runs on CPU and has at most 4,096 input elements (the short form's
limit), with the subject its expectations.json entry names: `flce repro --emit-python` must
write the short script (not the long generator port), and running that script alone must end
with the verdict `flce repro` gives -- REPRODUCED or NOT REPRODUCED, and the exit code (flce's
3, "cannot run here", is the script's 2). Every short script must also pass ruff with the
project's rules, as a maintainer's linter would see it. Controls, so that both verdicts are
compared: a planted numeric bug and the correct subject on its case (tests/data/repro/), and the
seed case expecting a numeric finding where it fails to compile.
"""
import json
import os
import shutil
import subprocess
import sys
import time

flce, work, corpus = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
root = os.path.dirname(corpus)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
LIMIT = 4096


def input_elements(c):
    """case/case.cpp's case_size().elements, for the cases of this corpus."""
    bt, h, v, batch = c.get("BT", 8), c.get("H", 16), c.get("V", 32), c.get("batch", 1)
    kind = c.get("kind", "flce")
    if kind != "flce":
        return batch * v * bt + batch * bt * h + (batch * v * h if kind in ("addmm", "baddbmm") else 0)
    rows = bt + sum(c.get("extra_BT", []))
    return rows * (h + 2) + v * h + (v if c.get("bias") else 0) + (v if c.get("ce_weight") else 0)


def verdict(stdout):
    """The last line's verdict word: REPRODUCED, NOT REPRODUCED or SKIP."""
    last = (stdout.strip().splitlines() or [""])[-1]
    for word in ("NOT REPRODUCED", "REPRODUCED", "SKIP"):
        if last.startswith(word):
            return word, last
    return "?", last


env = dict(os.environ, PYTHONPATH=os.path.join(root, "subjects"))  # flce's own subjects, as the script says
runs = []  # (tag, case path, subject, extra flags)
for entry in json.load(open(os.path.join(corpus, "expectations.json"))):
    path = os.path.join(corpus, entry["case"])
    case = json.load(open(path))
    if case.get("device", "cpu") == "cpu" and not case.get("schema") and input_elements(case) <= LIMIT:
        runs.append((os.path.splitext(os.path.basename(path))[0], path, entry["subject"], []))
corpus_runs = len(runs)
smoothing = os.path.join(root, "tests", "data", "repro", "smoothing-fp32-aot-eager.json")
for subject in ("model-bug-smoothing", "model"):
    runs.append((f"smoothing-{subject}", smoothing, subject, ["--expect", "judge:grad_input:out-of-bounds@eager"]))
runs.append(("seed-wrong-expectation", os.path.join(corpus, "cases", "seed-model-bf16-accum-fp32.json"), "model",
             ["--expect", "judge:grad_weight:out-of-bounds@eager"]))  # it fails to compile instead
# A campaign may name a compile failure's stage from its signature's walk on another graph (inductor)
# where the case's own ladder breaks first at eager: the same failure, so both reproduce it and say so.
RESTAGED = "baddbmm-restaged"
runs.append((RESTAGED, os.path.join(corpus, "cases", "raw-baddbmm-dtype-out.json"), "aten-dtype-out",
             ["--expect", "tier1-baddbmm-decomposition@compiled:inductor"]))

failures, verdicts, scripts = [], set(), []
for tag, path, subject, flags in runs:
    script = os.path.join(work, f"{tag}.py")
    emit = subprocess.run([flce, "repro", "--emit-python", path, "--subject", subject, *flags, "-o", script],
                          capture_output=True, text=True)
    if emit.returncode != 0:
        failures.append(f"{tag}: emit exited {emit.returncode}: {emit.stderr.strip()}")
        continue
    text = open(script).read()
    if "PAYLOAD = json.loads(" in text:
        failures.append(f"{tag}: got the long script ({text.splitlines()[1]})")
        continue
    scripts.append(script)
    t0 = time.time()
    ours = subprocess.run([flce, "repro", path, "--subject", subject, *flags, "-q"], capture_output=True, text=True)
    t1 = time.time()
    theirs = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, cwd=work)
    t2 = time.time()
    (want, want_line), (got, got_line) = verdict(ours.stdout), verdict(theirs.stdout)
    want_rc = 2 if ours.returncode == 3 else ours.returncode
    print(f"{tag}: flce repro {want_line!r} (exit {ours.returncode}, {t1 - t0:.0f} s); "
          f"script {got_line!r} (exit {theirs.returncode}, {t2 - t1:.0f} s, {len(text.splitlines())} lines)")
    verdicts.add(want)
    if tag == RESTAGED:
        for who, out in (("flce repro", ours.stdout), ("the short script", theirs.stdout)):
            line = verdict(out)[1]
            if line != "REPRODUCED: tier1-baddbmm-decomposition@compiled:eager" or "note: " not in out:
                failures.append(f"{tag}: {who} ends {line!r}, want the eager stage reproduced with a note\n{out}")
    if (want, want_rc) != (got, theirs.returncode) and not (want_rc == 2 and got == "SKIP"):
        failures.append(f"{tag}: flce repro {want} (exit {ours.returncode}), the short script {got} "
                        f"(exit {theirs.returncode})\n{theirs.stdout}\n{theirs.stderr[-3000:]}")

lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", os.path.join(root, "ruff.toml"),
                       *scripts], capture_output=True, text=True)
if lint.returncode != 0:
    failures.append(f"ruff on the short scripts:\n{lint.stdout}{lint.stderr}")
if corpus_runs < 8:
    failures.append(f"only {corpus_runs} corpus cases compared: the filter lost some")
if verdicts != {"REPRODUCED", "NOT REPRODUCED"}:
    failures.append(f"the controls did not give both verdicts: {sorted(verdicts)}")
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print(f"{corpus_runs} corpus cases and {len(runs) - corpus_runs} controls: the short script's verdict is "
      "flce repro's; ruff clean")
