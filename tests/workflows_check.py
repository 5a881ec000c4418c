"""Checks the example GitHub Actions workflows (docs/workflows/*.yml) for what breaks a copied
workflow silently, beside actionlint (which is skipped where it cannot be installed):

    python tests/workflows_check.py [REPO]      # exit 1 naming each problem

* the YAML parses, has `on` and `jobs`, and each job has `runs-on` and steps;
* every `uses:` names an action at a version (owner/repo@ref);
* every `${{ env.X }}` and every `$X` of a `run:` that the workflow sets is defined;
* every flce script a step runs exists in the repository and is executable;
* each `run:` is valid bash (`bash -n`, with the `${{ }}` expressions replaced), and passes
  shellcheck where it is installed.
"""
import os
import re
import shutil
import subprocess
import sys

import yaml

EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
SCRIPT = re.compile(r"flce/((?:scripts/)?[\w.-]+\.(?:sh|sbatch))")


def check(path, repo):
    problems = []
    with open(path) as f:
        wf = yaml.safe_load(f)
    # YAML 1.1 reads the key `on` as True.
    on = wf.get("on", wf.get(True))
    if not on or "jobs" not in wf:
        return [f"{path}: needs `on` and `jobs`"]
    env = set(wf.get("env", {}))
    for name, job in wf["jobs"].items():
        where = f"{path}: job {name}"
        if "runs-on" not in job or not job.get("steps"):
            problems.append(f"{where}: needs runs-on and steps")
            continue
        job_env = env | set(job.get("env", {}))
        for i, step in enumerate(job["steps"]):
            at = f"{where} step {i + 1} ({step.get('name', step.get('uses', 'run'))})"
            uses = step.get("uses")
            if uses and not re.fullmatch(r"[\w.-]+/[\w./-]+@[\w.-]+", uses):
                problems.append(f"{at}: uses '{uses}' is not owner/repo@version")
            step_env = job_env | set(step.get("env", {}))
            text = yaml.safe_dump(step)
            for expr in EXPR.findall(text):
                m = re.fullmatch(r"env\.(\w+)", expr)
                if m and m.group(1) not in step_env:
                    problems.append(f"{at}: ${{{{ {expr} }}}} is not set in env")
            run = step.get("run")
            if not run:
                continue
            for m in SCRIPT.finditer(run):
                full = os.path.join(repo, m.group(1))
                with_bash = run[:m.start()].rstrip().endswith("bash")
                if not os.path.isfile(full):
                    problems.append(f"{at}: runs flce/{m.group(1)}, not in the repository")
                elif not with_bash and not os.access(full, os.X_OK):
                    problems.append(f"{at}: runs flce/{m.group(1)} directly, but it is not executable")
            shell = EXPR.sub("EXPR", run)
            r = subprocess.run(["bash", "-n"], input=shell, text=True, capture_output=True)
            if r.returncode:
                problems.append(f"{at}: bash -n: {r.stderr.strip()}")
            elif shutil.which("shellcheck"):
                # GitHub runs `bash -e {0}`; the step's and workflow's env and GitHub's own
                # variables are set from outside.
                known = " ".join(sorted(step_env | {"GITHUB_SHA", "GITHUB_STEP_SUMMARY"}))
                r = subprocess.run(["shellcheck", "-s", "bash", "-e", "SC2154", "-"],
                                   input=f"# known: {known}\n{shell}", text=True, capture_output=True)
                if r.returncode:
                    problems.append(f"{at}: shellcheck:\n{r.stdout.strip()}")
    return problems


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = os.path.join(repo, "docs", "workflows")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".yml"))
    if not files:
        print(f"no workflows in {folder}")
        return 1
    problems = [p for f in files for p in check(f, repo)]
    for p in problems:
        print(p)
    print(f"{len(files)} workflows, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
