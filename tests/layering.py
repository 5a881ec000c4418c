"""The tree shows the design: each room includes only the rooms below it, no room holds more
than a third of the code, no code file is over 800 lines, and README's layout section names every
room.

    python3 tests/layering.py [REPO]      # exit 1 naming each broken rule

Rooms and what each may include (docs/architecture.md draws the same picture). Link dependencies in
CMake enforce the direction for symbols; this enforces it for headers too, which the linker
cannot see (an inline function from an upper room would link fine).
"""
import os
import re
import sys

BELOW = {
    "case": set(),
    "process": set(),
    "report": set(),
    "kernels": {"case"},
    "oracles": {"case", "process", "kernels"},
    "judge": {"case", "process", "kernels", "oracles"},
    "repro": {"case", "process", "kernels", "oracles", "judge", "report"},
    "fuzz": {"case", "process", "kernels", "oracles", "judge", "report", "repro"},
    "nights": {"case", "process", "kernels", "oracles", "judge", "report", "repro", "fuzz"},
    "gate": {"case", "process", "kernels", "oracles", "judge", "report"},
    "cli": {"case", "process", "kernels", "oracles", "judge", "report", "repro", "fuzz", "nights", "gate"},
}
# Rooms inside a room: the folders of fuzz/, and what each may include of its siblings.
SUBROOMS = {
    "fuzz": {"findings": set(), "campaign": {"findings"}, "targets": {"findings", "campaign"}},
}
CODE = (".cpp", ".hpp", ".cu", ".cuh", ".h", ".py", ".cmake")
MAX_FILE_LINES = 800  # a file longer than this is read in pieces: split it by concept
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def lines_of(path):
    """(non-blank lines, all lines): the first for a room's share, the second for a file's length."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    return sum(1 for line in lines if line.strip()), len(lines)


def main(root):
    errors = []
    sizes = {}
    for top in sorted(os.listdir(root)):
        d = os.path.join(root, top)
        if not os.path.isdir(d) or top.startswith(".") or top.startswith("build"):
            continue
        n = 0
        for dirpath, _, files in os.walk(d):
            for name in files:
                if name.endswith(CODE) or name == "CMakeLists.txt":
                    p = os.path.join(dirpath, name)
                    code, length = lines_of(p)
                    n += code
                    if length > MAX_FILE_LINES:
                        errors.append(f"{os.path.relpath(p, root)} has {length} lines, more than {MAX_FILE_LINES}")
                    if top in BELOW and name.endswith((".cpp", ".hpp", ".cu", ".cuh", ".h")):
                        with open(p, encoding="utf-8", errors="replace") as f:
                            text = f.read()
                        for inc in INCLUDE.findall(text):
                            room = inc.split("/")[0] if "/" in inc else top
                            rel = os.path.relpath(p, root)
                            if room in BELOW and room != top and room not in BELOW[top]:
                                errors.append(f"{rel} includes {inc}: {top}/ may include only "
                                              f"{', '.join(sorted(BELOW[top])) or 'itself'}")
                            sub = SUBROOMS.get(top)
                            if sub and room == top:
                                mine = rel.split(os.sep)[1] if rel.count(os.sep) >= 2 else ""
                                theirs = inc.split("/")[1] if inc.count("/") >= 2 else ""
                                if mine not in sub:
                                    errors.append(f"{rel}: {top}/ holds code only in {', '.join(sorted(sub))}/")
                                elif theirs != mine and theirs not in sub[mine]:
                                    errors.append(f"{rel} includes {inc}: {top}/{mine}/ may include only "
                                                  f"{', '.join(f'{top}/{x}/' for x in sorted(sub[mine])) or 'itself'}")
        if n:
            sizes[top] = n
    total = sum(sizes.values())
    for top, n in sizes.items():
        if 3 * n > total:
            errors.append(f"{top}/ holds {n} of {total} lines of code, more than a third")
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0] if "## Layout" in readme else ""
    for top in sizes:
        if not re.search(rf"^{re.escape(top)}/", layout, re.M):
            errors.append(f"README.md's Layout section does not name {top}/")
    for top, sub in SUBROOMS.items():
        for name in sub:
            if not re.search(rf"^{re.escape(top)}/{re.escape(name)}/", layout, re.M):
                errors.append(f"README.md's Layout section does not name {top}/{name}/")
    for top in BELOW:
        if not os.path.isfile(os.path.join(root, top, "CMakeLists.txt")):
            errors.append(f"{top}/ has no CMakeLists.txt (each room is a CMake library)")
    for e in errors:
        print("layering:", e)
    print(f"layering: {len(sizes)} folders, {total} lines; largest "
          + ", ".join(f"{k} {v}" for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:4]))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
