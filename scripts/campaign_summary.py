"""One block per campaign directory, from its report.json and state.json: what the GPU scripts
print so that a device call's log answers the issue's questions without unpacking the tarball.

    python3 scripts/campaign_summary.py DIR [DIR ...]
"""
import json
import statistics
import sys

TIME_FIELDS = ("golden", "eager", "reference", "compile", "ladder", "worker")


def lane_text(lanes):
    out = []
    for name, v in lanes.items():
        n = max(v.get("cases") or 1, 1)
        ms = v.get("ms", {})
        split = "".join(f" {f}={ms[f + '_ms'] / n:.0f}ms" for f in TIME_FIELDS if f + "_ms" in ms)
        out.append(f"{name}: {v.get('cases')} cases {v.get('cases_per_min', 0):.0f}/min w{v.get('workers')}{split}")
    return "; ".join(out)


def finding_line(f):
    confirm = " confirm " + json.dumps(f["confirm"]) if f.get("confirm") else ""
    return (f"   {'NEW  ' if f.get('new') else 'known'} {f.get('key')}  x{f.get('count')} at "
            f"{f.get('first_seen_s', 0):.1f}s outputs {f.get('outputs')} ablation {f.get('ablation_runs')} runs; "
            f"{f.get('cause_note', '')[:120]}{confirm} shrink {f.get('shrink')} ({f.get('shrink_runs')})")


def starts_text(starts):
    """Worker start-ups by lane: ready times (s after the campaign began) and the median ms of each step."""
    out = []
    for lane in sorted({s.get("lane") for s in starts}):
        mine = [s for s in starts if s.get("lane") == lane]
        ready = sorted(s.get("ready_s", 0) for s in mine)
        steps = sorted({k for s in mine for k in s.get("startup_ms", {})})
        med = " ".join(f"{k}={statistics.median(s['startup_ms'].get(k, 0) for s in mine):.0f}ms" for k in steps)
        forked = sum(s.get("host") == "forked" for s in mine)
        out.append(f"{lane} x{len(mine)} ({forked} forked) ready {ready[0]:.1f}-{ready[-1]:.1f} s ({med})")
    return "; ".join(out)


def summary(d):
    try:
        r = json.load(open(d + "/report.json"))
    except Exception as e:  # a campaign killed before its report: say so, do not stop the others
        print(f"{d}: no report.json ({e})")
        return
    try:
        graphs = len(json.load(open(d + "/state.json")).get("graphs", []))
    except Exception:
        graphs = "?"
    ladders = [(x["key"][:60], x["walks"], x["hits"]) for x in r.get("ladders", [])]
    print(f"== {d}: {r.get('cases_done')} cases, first finding {r.get('time_to_first_finding_s')}, "
          f"{r.get('new_findings')} new / {r.get('known_findings')} known, elapsed {r.get('elapsed_s', 0):.0f} s, "
          f"first ready {r.get('first_ready_s', -1):.1f} s | {lane_text(r.get('lanes', {}))}")
    print(f"   graphs {graphs} ({r.get('graphs_per_min', 0):.1f}/min, "
          f"{r.get('graphs_per_min_after_ready', 0):.1f}/min after ready), cases/min {r.get('cases_per_min', 0):.0f} "
          f"({r.get('cases_per_min_after_ready', 0):.0f} after ready), "
          f"analyses {r.get('analyses')} (from {r.get('lend_from', 'eager')}), "
          f"abandoned {r.get('abandoned')}, explained {list(r.get('explained', {}).keys())}, ladders {ladders}, "
          f"deferred walks {r.get('ladder_walks_deferred')}, spare swaps {r.get('spare_swaps')}")
    if r.get("worker_starts"):
        print(f"   starts: {starts_text(r['worker_starts'])}")
    if r.get("zygote"):
        z = r["zygote"]
        print(f"   zygote: ready at {z.get('ready_s')} s, preload {z.get('preload_ms')} ms {z.get('phases_ms')}, "
              f"refusing {z.get('refusing')}{', ended ' + z['ended'] if z.get('ended') else ''}")
    if r.get("ending"):
        print("   ending: " + ", ".join(f"{k} {v:.1f}" for k, v in r["ending"].items()))
    for f in r.get("findings", []):
        print(finding_line(f))


if __name__ == "__main__":
    for d in sys.argv[1:]:
        summary(d)
