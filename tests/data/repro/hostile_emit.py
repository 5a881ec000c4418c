"""No case content may become code in an emitted reproducer.

usage: hostile_emit.py FLCE WORKDIR CASE.json

Subject name, subject path, expected outcome and the case file's path carry quotes, triple
quotes, backslashes, newlines and statements that would create a marker file if executed.
The long script must compile, carry every string back exactly (parsed out of its PAYLOAD with
ast, never executed for that), have the same statements as a benign emission, and running
it must not create the marker (it skips: the hostile subject cannot be imported). The short
script (a built-in subject, so only the subject path and the case's path are hostile) must
compile, carry the path back in its sys.path literal, have a benign emission's statements,
and run without creating the marker.
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
text = emit([case_path, "--subject", subject, "--subject-path", subject_path, "--expect", expect, "--long-form"],
            hostile)
benign = emit([case_src, "--subject", "aten-dtype-out", "--expect", "pass", "--long-form"],
              os.path.join(work, "benign.py"))
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


def shape_short(source):
    """The short script's statements with every string constant blanked."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def path_literal(source):
    """The argument of the short script's sys.path.insert(0, ...), read as a literal."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "sys.path.insert":
            return ast.literal_eval(node.args[1])
    return None


short = os.path.join(work, "short.py")
text = emit([case_path, "--subject", "aten-dtype-out", "--subject-path", subject_path, "--expect", "pass"], short)
benign_path = os.path.join(work, "benign-tree")
os.makedirs(benign_path)
benign = emit([case_src, "--subject", "aten-dtype-out", "--subject-path", benign_path, "--expect", "pass"],
              os.path.join(work, "benign-short.py"))
py_compile.compile(short, doraise=True)
if "PAYLOAD = json.loads(" in text or not text.isascii():
    failures.append("the short script is not the short form, or not plain ASCII")
if path_literal(text) != subject_path:
    failures.append(f"short: subject path did not round-trip: {path_literal(text)!r}")
if shape_short(text) != shape_short(benign):
    failures.append("the hostile short script's statements differ from a benign one's")
run = subprocess.run([sys.executable, short], capture_output=True, text=True, cwd=work, timeout=300)
if os.path.exists(marker):
    failures.append("the short script executed a hostile string (marker file exists)")
if run.returncode not in (0, 1) or "REPRODUCED" not in run.stdout:
    failures.append(f"the short script did not run to a verdict ({run.returncode}):\n{run.stdout}\n{run.stderr}")
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print("hostile strings stayed data: compiled, round-tripped, not executed, skipped (long); run to a verdict (short)")
