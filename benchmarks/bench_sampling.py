"""`jmbs.sample_configurations` on the Sarrus linkage: the random walks (the default since
issue 32) against the former sampler (`method="perturb"`: perturb the reference, assemble
each sample by Gauss-Newton in a vmapped while loop).

    .venv/bin/python benchmarks/bench_sampling.py [--ns 1000,10000] [--reps 5]
                                                  [--old-reps 2] [--json PATH]

For each method and each n: the first call in a fresh process (compilation included,
no compilation cache; the import and the model's build are not counted), then `--reps`
repeated calls in that process (`--old-reps` for the former sampler, which takes minutes
at n = 10,000): the median, and milliseconds per configuration. The fresh processes run
one after another. Besides the times: the share of samples that converged, the plate's
height range (the reference is at 0.4 m; the branch is 0 < z < 0.5) and the samples at
or near singular configurations as `Samples` counts them (the former sampler is timed
as it was, `ranks=False`: without the rank decisions, so its counts are left out).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

WORKER = r"""
import json, sys, time, warnings
import numpy as np
import jmbs
method, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = jmbs.examples.sarrus()
z = model.coordinate_names.index("plate.z")
times = []
for k in range(1 + reps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        # The former sampler exactly as it was (no rank decisions afterwards).
        s = jmbs.sample_configurations(model, n, key=k, method=method, ranks=method == "walk")
        s.q.block_until_ready()
        times.append(time.perf_counter() - start)
ok = np.asarray(s.converged)
h = np.asarray(s.q)[ok, z]
print(json.dumps({"first": times[0], "repeats": times[1:], "converged": float(ok.mean()),
                  "z": [float(h.min()), float(h.max())], "singular": s.n_singular,
                  "near_singular": s.n_near_singular, "accepted": float(np.mean(s.accepted))}))
"""


def run(method: str, n: int, reps: int) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER, method, str(n), str(reps)],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["repeat"] = statistics.median(res["repeats"]) if res["repeats"] else None
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ns", default="1000,10000")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--old-reps", type=int, default=2)
    p.add_argument("--json", default=None)
    a = p.parse_args()
    rows = []
    for n in (int(x) for x in a.ns.split(",")):
        for method, reps in (("walk", a.reps), ("perturb", a.old_reps)):
            t0 = time.perf_counter()
            r = run(method, n, reps)
            r.update(method=method, n=n)
            rows.append(r)
            rep = f"{r['repeat']:.2f} s ({1e3 * r['repeat'] / n:.3f} ms/conf)" if r["repeat"] else "-"
            print(f"{method:8s} n={n:6d}: first {r['first']:.2f} s ({1e3 * r['first'] / n:.3f} ms/conf), "
                  f"repeat {rep}; converged {r['converged']:.3f}, plate z {r['z'][0]:.3f}..{r['z'][1]:.3f}, "
                  f"singular {r['singular']}, near-singular {r['near_singular']}, accepted "
                  f"{r['accepted']:.3f} [{time.perf_counter() - t0:.0f} s]", flush=True)
    by = {(r["method"], r["n"]): r for r in rows}
    for n in sorted({r["n"] for r in rows}):
        new, old = by[("walk", n)], by[("perturb", n)]
        ratio = lambda k: old[k] / new[k] if old[k] and new[k] else float("nan")  # noqa: E731
        print(f"n={n}: speed-up first call {ratio('first'):.0f}x, repeat {ratio('repeat'):.0f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
