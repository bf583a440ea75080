"""Rerun the benchmarks whose headline numbers the pages quote, and rewrite the one data
file those numbers come from, `benchmarks/headlines.json`.

    .venv/bin/python benchmarks/run_all.py [--only andrews] [--rounds 3]

Each benchmark writes its full results with `--json` to `benchmarks/results/<name>.json`;
`headlines()` below picks the quoted numbers out of them. The pages mark every quoted
number with an HTML comment, `<!-- headline:ID -->1.1x`, and `tests/test_headlines.py`
fails when a marked number differs from `headlines.json` (or names an ID it does not
have). So a rerun that changes a number makes the test fail until the pages say the new
number. Wired in so far: Andrews' squeezer and the Bricard against Exudyn (issue 35,
item 3: the other pages' figures are still quoted by hand).
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
HEADLINES = ROOT / "benchmarks" / "headlines.json"
# The command of each benchmark, and its option for the number of timed repetitions.
BENCHMARKS = {"andrews": (["benchmarks/bench_andrews.py"], "--rounds"),
              "bricard": (["benchmarks/bench_dynamics.py", "--variants", "base"], "--reps")}


def run(name: str, rounds: int) -> None:
    RESULTS.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's jmbs, whatever is installed
    command, repeat = BENCHMARKS[name]
    cmd = [sys.executable, *command, repeat, str(rounds), "--json", str(RESULTS / f"{name}.json")]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)


def _andrews(res: dict) -> dict:
    out = {}
    short = {"SciPy DOP853": "dop853", "SciPy DOP853, JAX-compiled RHS": "dop853_jax",
             "SciPy Radau, JAX-compiled Jacobian": "radau_jac",
             "SciPy Radau, finite-difference Jacobian": "radau_fd",
             "SciPy BDF, JAX-compiled Jacobian": "bdf_jac",
             "Exudyn gen.-alpha index 3, rho 0.9": "exudyn_ga09",
             "Exudyn gen.-alpha index 3, rho 0.6": "exudyn_ga06",
             "Exudyn trapezoidal index 2": "exudyn_trap"}
    for key, h in res.get("headline", {}).items():
        bar, _, label = key.partition(": ")
        if h is None or label not in short:
            continue
        tag = f"andrews.{short[label]}.{bar.split()[0].replace('/', '_')}"
        out[f"{tag}.repeat_ratio"] = round(h["repeat_ratio"], 1)
        out[f"{tag}.one_off_ratio"] = round(h["one_off_ratio"], 2)
    return out


def _bricard(res: dict) -> dict:
    h = res.get("headline")
    if not h:
        return {}
    return {"bricard.exudyn.repeat_ratio": round(h["repeat_ratio"], 1),
            "bricard.exudyn.one_off_ratio": round(h["one_off_ratio"], 2)}


def headlines() -> dict:
    out = {}
    for name, pick in (("andrews", _andrews), ("bricard", _bricard)):
        path = RESULTS / f"{name}.json"
        if path.exists():
            out.update(pick(json.loads(path.read_text())))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(BENCHMARKS), choices=list(BENCHMARKS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-run", action="store_true", help="only rewrite headlines.json")
    args = ap.parse_args()
    if not args.no_run:
        for name in args.only:
            run(name, args.rounds)
    data = headlines()
    HEADLINES.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{HEADLINES.relative_to(ROOT)}: {len(data)} numbers")


if __name__ == "__main__":
    main()
