"""No case content may become code in an emitted reproducer.

usage: hostile_emit.py FLCE WORKDIR CASE.json

Subject name, subject path, expected outcome and the case file's path carry quotes, triple
quotes, backslashes, newlines and statements that would create a marker file if executed.
The script must compile, carry every string back exactly (parsed out of its PAYLOAD with
ast, never executed for that), have the same statements as a benign emission, and running
it must not create the marker (it skips: the hostile subject cannot be imported).
"""
import ast
import json
import os
import py_compile
import shutil
import subprocess
import sys

flce, work, case_src = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
marker = os.path.join(work, "PWNED")
touch = f"__import__('os').system('touch {marker}')"
subject = f'evil"""\'\'\'\\"\\\\\n{touch}\n#\r\t\x7f é \u2028 😀 \'); {touch} #:x'
subject_path = f"\\'); {touch} # \"\"\"\n{touch}\n\\"
# flce refuses a --subject-path that does not exist (bad input): make the hostile one, under work.
subject_path = os.path.join(work, subject_path)
os.makedirs(subject_path, exist_ok=True)
expect = f'"""; {touch}; """ \\n \n'
case_dir = os.path.join(work, "dir \"'\n{touch} \\")  # "{touch}" literally: no "/" in a name
os.makedirs(case_dir)
case_path = os.path.join(case_dir, "case.json")
shutil.copy(case_src, case_path)


def emit(args, out):
    p = subprocess.run([flce, "repro", "--emit-python", *args, "-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: emit exited {p.returncode}\n{p.stderr}")
    return open(out, encoding="utf-8").read()


def payload_of(source):
    """PAYLOAD's json.loads argument, read as a literal (nothing of the script runs)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PAYLOAD":
            return json.loads(ast.literal_eval(node.value.args[0]))
    sys.exit("FAIL: no PAYLOAD assignment")


def shape(source):
    """Top-level statements with the payload literal blanked: what the script does."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PAYLOAD":
            node.value.args[0] = ast.Constant("")
    return ast.dump(tree)


hostile = os.path.join(work, "hostile.py")
text = emit([case_path, "--subject", subject, "--subject-path", subject_path, "--expect", expect], hostile)
benign = emit([case_src, "--subject", "aten-dtype-out", "--expect", "pass"], os.path.join(work, "benign.py"))
py_compile.compile(hostile, doraise=True)
failures = []
if not text.isascii():
    failures.append("script is not plain ASCII")
p = payload_of(text)
for key, want in (("subject", subject), ("subject_path", subject_path), ("source", case_path)):
    if p[key] != want:
        failures.append(f"{key} did not round-trip: {p[key]!r} != {want!r}")
if p["expect"] != [{"torch": "", "device": "any", "outcome": expect}]:
    failures.append(f"expect did not round-trip: {p['expect']!r}")
if shape(text) != shape(benign):
    failures.append("the hostile script's statements differ from a benign one's")
run = subprocess.run([sys.executable, hostile], capture_output=True, text=True, cwd=work, timeout=300)
if os.path.exists(marker):
    failures.append("the payload was executed (marker file exists)")
if run.returncode != 2 or "SKIP: cannot import subject" not in run.stdout:
    failures.append(f"expected SKIP (exit 2) for the unimportable subject, got {run.returncode}:\n"
                    f"{run.stdout}\n{run.stderr}")
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print("hostile strings stayed data: compiled, round-tripped, not executed, skipped")
