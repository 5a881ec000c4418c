"""Every translation unit compiles on its own (issue #38).

usage: compile_alone.py BUILD_DIR          check the unity-batched sources of that build
       compile_alone.py --self-test        a source that lacks an include must be caught

The main build (and the sanitizer build) compile sources in unity batches of 8, where one file's
includes reach the next: a missing `#include` stays hidden there and breaks every build that
compiles file by file (the GPU box's, `FLCE_UNITY=0`). For each source a batch includes, this
runs the batch's own compile command on that source alone with -fsyntax-only (all but the
batch's first source, which the build compiled alone already): the same flags
and include paths, no code generated (a parse is about a third of a -O0 compile). Sources built
outside batches (kernels, fuzz targets) are compiled alone by the build itself already.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time


def alone_commands(build):
    """(source, argv) for every source of every unity batch in BUILD/compile_commands.json."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    out = []
    for e in entries:
        unity = e["file"]
        if not re.search(r"unity_\d+_cxx\.cxx$", unity):
            continue
        with open(unity) as f:
            sources = re.findall(r'^#include "([^"]+)"', f.read(), re.M)
        argv = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        base, skip = [], False
        for a in argv:  # drop the output and the unity file: -o X, -c F
            if skip:
                skip = False
            elif a in ("-o", "-c"):
                skip = True
            elif a != unity:
                base.append(a)
        # The first source of a batch is compiled alone by the build itself: nothing precedes it
        # in the unity file (a quarter of the sources; golden_vs_torch_test.cpp's 13 s parse).
        out += [(s, base + ["-fsyntax-only", s], e.get("directory", build)) for s in sources[1:]]
    return out


def check(commands):
    """The sources that fail alone, each with the compiler's first lines."""
    failures = []
    for src, argv, cwd in commands:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{src}: does not compile alone:\n" + "\n".join(r.stderr.splitlines()[:8]))
    return failures


def self_test():
    """A batch of two sources where only the first includes <vector>: the second must fail."""
    with tempfile.TemporaryDirectory() as d:
        a, b, u = (os.path.join(d, n) for n in ("a.cpp", "b.cpp", "unity_0_cxx.cxx"))
        open(a, "w").write("#include <vector>\nstd::vector<int> a;\n")
        open(b, "w").write("std::vector<int> b;  // relies on a.cpp's include\n")
        open(u, "w").write(f'#include "{a}"\n#include "{b}"\n')
        cxx = os.environ.get("CXX", "c++")
        json.dump([{"directory": d, "file": u, "command": f"{cxx} -std=gnu++20 -o u.o -c {u}"}],
                  open(os.path.join(d, "compile_commands.json"), "w"))
        batch = subprocess.run([cxx, "-std=gnu++20", "-fsyntax-only", u], capture_output=True)
        failures = check(alone_commands(d))
        if batch.returncode != 0 or len(failures) != 1 or not failures[0].startswith(b):
            sys.exit(f"FAIL: the planted missing include was not caught alone (batch rc {batch.returncode}, "
                     f"failures {failures})")
    print("self-test: a source that lacks an include its batch provides fails alone")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    commands = alone_commands(sys.argv[1])
    if len(commands) < 50:  # the batches hold ~130 sources, ~100 past their first; fewer means the parse lost some
        sys.exit(f"FAIL: only {len(commands)} sources found in the unity batches of {sys.argv[1]}")
    t0 = time.time()
    failures = check(commands)
    if failures:
        sys.exit("FAIL:\n" + "\n\n".join(failures))
    print(f"{len(commands)} sources of the unity batches each compile alone ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
