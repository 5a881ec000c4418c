"""Shared helpers of the Python unit tests (tests/python/test_*.py).

    PYTHONPATH=subjects .venv/bin/python -m unittest discover -s tests/python

ctest runs them (python_unittests_*; FLCE names the flce binary for the few tests that ask it).
"""
import importlib.util
import json
import os
import sys
import tempfile
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBJECTS = os.path.join(REPO, "subjects")
TEMPLATE = os.path.join(REPO, "repro", "repro_template.py")
TEMPLATE_VERDICT = os.path.join(REPO, "repro", "repro_template_verdict.py")  # part two
SIGNATURES_JSON = os.path.join(REPO, "judge", "signatures.json")
MARKER = '"@PAYLOAD@"'

if SUBJECTS not in sys.path:  # flce_subjects, also when run without PYTHONPATH
    sys.path.insert(0, SUBJECTS)


def signature_table():
    with open(SIGNATURES_JSON) as f:
        return json.load(f)


def payload(case, subject="model", expect=(), golden=None, signatures=None):
    """A payload as emit_python.cpp builds it (signatures reduced to what classification needs)."""
    table = signature_table() if signatures is None else signatures
    return {
        "case": case,
        "subject": subject,
        "subject_path": "",
        "source": "tests/python",
        "expect": list(expect),
        "signatures": [{"id": e["id"], "patterns": e["patterns"], "frame_patterns": e.get("frame_patterns", []),
                        "expected_torch": e.get("expected_torch", "")} for e in table],
        "golden": golden,
    }


def template_text():
    """The template as the build embeds it (cmake/EmbedText.cmake): part one, then part two from
    the line after its JOIN marker line."""
    with open(TEMPLATE) as f:
        one = f.read()
    with open(TEMPLATE_VERDICT) as f:
        two = f.read()
    at = two.index("\n# @JOIN@") + 1
    return one + two[two.index("\n", at) + 1:]


def script_text(doc):
    """The template with `doc` spliced in where flce splices its payload: one string literal."""
    text = template_text()
    if text.count("@PAYLOAD@") != 1 or text.count(MARKER) != 1:
        raise AssertionError("repro_template.py must hold the payload marker literal exactly once")
    return text.replace(MARKER, repr(json.dumps(doc)))


_scratch = tempfile.TemporaryDirectory(prefix="flce-python-tests-")  # removed at exit
_loaded = 0


def scratch_dir(name):
    path = os.path.join(_scratch.name, name)
    os.makedirs(path, exist_ok=True)
    return path


FP32 = dict(input_dtype="fp32", weight_dtype="fp32")  # a case's fp32 operands (casegen.case(**FP32))


def plugin_tree(name, files):
    """A folder holding the given {relative path: source} files, for subject_path."""
    root = scratch_dir(os.path.join("plugins", name))
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
    return root


def load_template(doc):
    """Import the template, given payload `doc`, as a fresh module (main() does not run)."""
    global _loaded
    _loaded += 1
    path = os.path.join(scratch_dir("repro"), f"repro_{_loaded}.py")
    with open(path, "w") as f:
        f.write(script_text(doc))
    spec = importlib.util.spec_from_file_location(f"flce_repro_under_test_{_loaded}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
