"""Python mirror of judge/signature.cpp's known-signature lookup (for self-checks).

Semantics (same as the C++ table): entries in file order, first match wins; an entry
matches when one of its `patterns` is found (regex search) in "Type: message" of any
link of the chain, and -- if it has `frame_patterns` -- one of those is found in any frame.
"""
import json
import os
import re

import torch

DEFAULT_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "judge", "signatures.json")


def load(path=DEFAULT_PATH):
    with open(path) as f:
        return json.load(f)


def classify(chain, table):
    """The id of the first matching known signature, or None."""
    texts = [f"{link['type']}: {link['message']}" for link in reversed(chain)]
    frames = [fr for link in chain for fr in link["frames"]]
    for entry in table:
        if not any(re.search(p, t) for p in entry["patterns"] for t in texts):
            continue
        fps = entry.get("frame_patterns") or []
        if fps and not any(re.search(p, fr) for p in fps for fr in frames):
            continue
        return entry["id"]
    return None


def _version_tuple(text):
    parts = re.findall(r"[0-9]+", text.split("+")[0])[:3]
    return tuple(int(p) for p in parts) + (0,) * (3 - len(parts))


def in_range(version, spec):
    """'>=2.8,<2.13' style ranges; an empty spec matches every version."""
    v = _version_tuple(version)
    ops = {">=": v.__ge__, ">": v.__gt__, "<=": v.__le__, "<": v.__lt__, "==": v.__eq__, "!=": v.__ne__}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        op = re.match(r"[<>=!]+", part).group(0)
        if not ops[op](_version_tuple(part[len(op):])):
            return False
    return True


def expected_here(ids, table, version=None):
    """Of the given signature ids, those the table expects on this torch."""
    version = version or torch.__version__
    by_id = {e["id"]: e for e in table}
    return [i for i in ids if in_range(version, by_id[i].get("expected_torch", ""))]
