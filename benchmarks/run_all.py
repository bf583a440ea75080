"""Rerun the benchmarks whose headline numbers the pages quote, and rewrite the one data
file those numbers come from, `benchmarks/headlines.json`.

    .venv/bin/python benchmarks/run_all.py [--only andrews dca ...] [--rounds 3] [--no-run] [--pages]

Each benchmark writes its full results with `--json` to `benchmarks/results/<name>.json`;
`headlines()` below picks the quoted numbers out of them. The pages mark every quoted
number with an HTML comment, `<!-- headline:ID -->1.1x`, and `tests/test_headlines.py`
fails when a marked number differs from `headlines.json` (or names an ID it does not
have). So a rerun that changes a number makes the test fail until the pages say the new
number. `docs/benchmarks.md` opens with a table of these numbers ("Headlines"); its
sections give the tables each script prints. `--no-run` only rewrites `headlines.json`
from the results already there.

A full run takes about an hour on the 2-core machine (the latency ratios, fresh
processes, and the shapes at 1,000 bodies are most of it); `--only NAME ...` reruns some.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
HEADLINES = ROOT / "benchmarks" / "headlines.json"
# The command of each benchmark, and its option for the number of timed repetitions.
BENCHMARKS = {"assembly": (["benchmarks/bench_assembly.py", "--wait-idle", "120"], "--rounds"),
              "andrews": (["benchmarks/bench_andrews.py"], "--rounds"),
              "bricard": (["benchmarks/bench_dynamics.py", "--variants", "base"], "--reps"),
              "dca": (["benchmarks/bench_dca.py"], "--repeats"),
              "shapes": (["benchmarks/bench_shapes.py"], "--reps"),
              "solvability": (["benchmarks/bench_solvability.py", "--wait-idle", "120",
                               "--blas-threads", "1"], "--rounds"),
              "structured": (["benchmarks/bench_structured.py", "--sizes", "10,40,160,640",
                              "--simulate", "40"], "--runs"),
              "sensitivity": (["benchmarks/bench_sensitivity.py"], "--reps"),
              "sampling": (["benchmarks/bench_sampling.py", "--old-reps", "1"], "--reps"),
              "latency": (["benchmarks/bench_latency.py", "ratio"], None),
              "stepper": (["benchmarks/bench_stepper.py", "--steps", "50"], "--reps"),
              "sweep": (["benchmarks/bench_sweep.py"], "--reps"),
              "distributed": (["benchmarks/bench_distributed.py"], "--reps"),
              "fair_share": (["benchmarks/bench_fair_share.py"], "--runs")}


def run(name: str, rounds: int) -> None:
    RESULTS.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's jmbs, whatever is installed
    command, repeat = BENCHMARKS[name]
    reps = [repeat, str(rounds)] if repeat else [str(rounds)]  # an option, or positional
    cmd = [sys.executable, *command, *reps, "--json", str(RESULTS / f"{name}.json")]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)


def _assembly(res: dict) -> dict:
    """Per N: µs per call of jmbs's jitted `constraint_terms` (model closed over, and the
    public function called directly), the NumPy loop, the vectorised NumPy and the XLA
    floor; NumPy's times over jmbs's; jmbs's compile seconds."""
    out = {}
    for r in res["results"]:
        tag = f"assembly.{r['N']}"
        out |= {f"{tag}.{k}_us": round(r[k]["median_us"], 1) for k in
                ("jmbs", "jmbs_direct", "numpy_loop", "numpy_vectorised", "xla_floor")}
        jm = r["jmbs"]["median_us"]
        out |= {f"{tag}.loop_ratio": _ratio(r["numpy_loop"]["median_us"] / jm),
                f"{tag}.vectorised_ratio": _ratio(r["numpy_vectorised"]["median_us"] / jm),
                f"{tag}.compile_s": round(r["compile_s"], 2)}
    return out


ANDREWS = {"SciPy DOP853": "dop853", "SciPy DOP853, JAX-compiled RHS": "dop853_jax",
           "SciPy Radau, JAX-compiled Jacobian": "radau_jac",
           "SciPy Radau, finite-difference Jacobian": "radau_fd",
           "SciPy BDF, JAX-compiled Jacobian": "bdf_jac",
           "Exudyn gen.-alpha index 3, rho 0.9": "exudyn_ga09",
           "Exudyn gen.-alpha index 3, rho 0.6": "exudyn_ga06",
           "Exudyn trapezoidal index 2": "exudyn_trap",
           "jmbs Elimination + Dopri8": "jmbs_elimination", "jmbs null space + Tsit5": "jmbs_nullspace"}


def _andrews(res: dict) -> dict:
    """Per bar (8/6 and 5/3 digits) and contender: the setting that meets it, the errors
    of the angles and the rates there, the work (right-hand sides or steps), repeat and
    one-off seconds, and jmbs's ratios (> 1: jmbs faster)."""
    out = {}
    rows = {(r["method"], r["setting"]): r for r in res.get("rows", [])}
    for key, h in res.get("headline", {}).items():
        bar, _, label = key.partition(": ")
        if h is None or label not in ANDREWS:
            continue
        tag = f"andrews.{ANDREWS[label]}.{bar.split()[0].replace('/', '_')}"
        out |= {f"{tag}.repeat_ratio": round(h["repeat_ratio"], 1),
                f"{tag}.one_off_ratio": round(h["one_off_ratio"], 2),
                f"{tag}.setting": (int(h["setting"]) if h["setting"] >= 1  # steps, or a tolerance
                                   else float(f"{h['setting']:.3g}")),
                f"{tag}.repeat_s": round(h["repeat_s"], 3),
                f"{tag}.one_off_s": round(h["one_off_s"], 1)}
        r = rows.get((label, h["setting"]))
        if r is not None:
            out |= {f"{tag}.angles": float(f"{r['errors'][0]:.1e}"),
                    f"{tag}.rates": float(f"{r['errors'][1]:.1e}"), f"{tag}.work": r["work"]}
    rhs = {"scalar math + one solve": "scalar", "NumPy arrays": "numpy", "JAX-compiled": "jax"}
    out |= {f"andrews.rhs.{rhs[k]}_us": round(1e6 * v) for k, v in res.get("rhs_seconds", {}).items()
            if k in rhs}
    out |= {f"andrews.import.{k}_s": round(v, 1) for k, v in res.get("imports", {}).items()
            if k in ("SciPy", "jmbs", "Exudyn")}
    for key, f in res.get("fresh", {}).items():  # jmbs's first call without and with the cache
        if key.endswith(("cache cold", "cache warm")):
            out[f"andrews.cache_{key.rsplit(' ', 1)[-1]}.first_s"] = round(f["first_s"], 1)
    return out


def _bricard(res: dict) -> dict:
    """The Bricard against Exudyn: the headline ratios, every Exudyn setting's steps, error
    and repeat time, jmbs's default, its first call's parts, and the batched runs."""
    h = res.get("headline")
    if not h:
        return {}
    out = {"bricard.exudyn.repeat_ratio": round(h["repeat_ratio"], 1),
           "bricard.exudyn.one_off_ratio": round(h["one_off_ratio"], 2),
           "bricard.jmbs.one_off_s": round(h["one_off_jmbs_s"], 1),
           "bricard.exudyn.one_off_s": round(h["one_off_exudyn_s"], 2),
           "bricard.jmbs.import_s": round(res["import_s"]["jmbs"], 1),
           "bricard.jmbs.build_s": round(res["jmbs_build_s"], 2),
           "bricard.jmbs.first_call_s": round(res["compile_fresh"]["first_call_s"], 1)}
    for label, e in res.get("exudyn_variants", {}).items():
        tag = "bricard.exudyn." + ("trap2" if "trapezoidal" in label
                                   else "rho" + label.split("rho ")[-1].replace(".", ""))
        if "steps" in e:
            out |= {f"{tag}.steps": e["steps"], f"{tag}.err": float(f"{e['err']:.1e}"),
                    f"{tag}.repeat_s": round(e["wall_s"], 2)}
    j = next(iter(res["jmbs"].values()))
    out |= {"bricard.jmbs.steps": j["steps"], "bricard.jmbs.err": float(f"{j['err']:.1e}"),
            "bricard.jmbs.repeat_s": round(j["wall_s"], 3)}
    if "exudyn_per_run_s" in res.get("batch", {}):
        out["bricard.batch.exudyn_per_run_s"] = round(res["batch"]["exudyn_per_run_s"], 2)
    for size, b in res.get("batch", {}).get("sizes", {}).items():
        out |= {f"bricard.batch.{size}.per_sim_s": round(b["per_sim_s"], 3),
                f"bricard.batch.{size}.ratio": round(b["throughput_ratio"], 1)}
    return out


def _slope(rows: list, key: str) -> float:
    """Least-squares slope of log(row[key]) against log(bodies): the growth exponent."""
    x = np.log([r["bodies"] for r in rows])
    return round(float(np.polyfit(x, np.log([r[key] for r in rows]), 1)[0]), 2)


def _ratio(x: float) -> float:
    """A ratio as the pages quote it: two significant digits below 1, two decimals below
    10, whole numbers above."""
    return float(f"{x:.2g}") if x < 1 else round(x, 2) if x < 10 else round(x)


def _dca(res: list) -> dict:
    """Per mechanism: the run ratios of the dense baselines to dca at the largest size both
    ran, dca's run and first call at the largest size, and its growth exponent from 161
    bodies up."""
    out = {}
    for model in ("planar", "spatial"):
        rows = [r for r in res if r["model"] == model]
        if not rows:
            continue
        top, both = rows[-1], [r for r in rows if "nullspace" in r][-1]
        tag = f"dca.{model}"
        out |= {f"{tag}.bodies": top["bodies"], f"{tag}.run_ms": round(1e3 * top["dca"], 1),
                f"{tag}.compile_s": round(top["dca_compile"], 1),
                f"{tag}.dense_bodies": both["bodies"],
                f"{tag}.nullspace_ratio": _ratio(both["nullspace"] / both["dca"]),
                f"{tag}.sized_ratio": _ratio(both["dense_sized"] / both["dca"]),
                f"{tag}.sized_one_off_ratio": round((both["dense_sized_compile"] + both["dense_sized"])
                                                    / (both["dca_compile"] + both["dca"]), 2),
                f"{tag}.exponent": _slope([r for r in rows if r["bodies"] >= 161], "dca"),
                f"{tag}.sized_exponent": _slope([r for r in rows if r["bodies"] >= 161
                                                 and "dense_sized" in r], "dense_sized")}
    return out


def _shapes(res: list) -> dict:
    """Per shape at its largest size: the default's and the dense method's repeat analysis
    (ms), their ratio, both first calls (s), the growth exponents over the sizes, and the
    same ratio and exponent for one evaluation of the accelerations."""
    out = {}
    for shape in dict.fromkeys(r["shape"] for r in res):
        rows = [r for r in res if r["shape"] == shape]
        top, tag = rows[-1], f"shapes.{shape}"
        out |= {f"{tag}.bodies": top["bodies"], f"{tag}.build_s": round(top["build_s"], 2),
                f"{tag}.default_ms": round(1e3 * top["default_repeat_s"], 1),
                f"{tag}.dense_ms": round(1e3 * top["dense_repeat_s"], 1),
                f"{tag}.dense_ratio": _ratio(top["dense_repeat_s"] / top["default_repeat_s"]),
                f"{tag}.one_off_ratio": _ratio(top["dense_first_s"] / top["default_first_s"]),
                f"{tag}.default_first_s": round(top["default_first_s"], 1),
                f"{tag}.dense_first_s": round(top["dense_first_s"], 1),
                f"{tag}.exponent": _slope(rows, "default_repeat_s"),
                f"{tag}.dense_exponent": _slope(rows, "dense_repeat_s"),
                f"{tag}.build_max_s": round(max(r["build_s"] for r in rows), 2)}
        if "dynamics_repeat_s" in top:  # one evaluation of the accelerations
            ratio = top["dense_dynamics_repeat_s"] / top["dynamics_repeat_s"]
            out |= {f"{tag}.dynamics_ratio": _ratio(ratio),
                    f"{tag}.dynamics_exponent": _slope(rows, "dynamics_repeat_s")}
    return out


def _solvability(res: dict) -> dict:
    """The sweep of the mobile robot per method, and the N-four-bar's sweeps: the faster
    SciPy baseline's time over jmbs's, repeat (compiled) and one-off (the whole batch of
    the run, jmbs's compilation included)."""
    out, r = {}, res["results"]
    if "robot" in r:
        robot, main = r["robot"], r["robot"]["main"]
        scipy_us = min(main["SciPy batched"]["median_us"], main["SciPy loop"]["median_us"])
        out["solvability.robot.configs"] = robot["configs"]
        for method, c in robot["compile"].items():
            us = main[f"jmbs {method}"]["median_us"]
            one_off = scipy_us * robot["configs"] / (us * robot["configs"] + 1e6 * c["compile_s"])
            out |= {f"solvability.robot.{method}.us": round(us, 1),
                    f"solvability.robot.{method}.compile_s": round(c["compile_s"], 2),
                    f"solvability.robot.{method}.repeat_ratio": round(scipy_us / us, 1),
                    f"solvability.robot.{method}.one_off_ratio": round(one_off, 2)}
        out |= {"solvability.robot.scipy_loop_us": round(main["SciPy loop"]["median_us"], 1),
                "solvability.robot.scipy_batched_us": round(main["SciPy batched"]["median_us"], 1)}
    if "four_bar" in r:
        t = r["four_bar"]["times"]
        scipy_us = min(t["SciPy batched"]["median_us"], t["SciPy loop"]["median_us"])
        for name, tag in (("jmbs sweep", "qr"), ("jmbs sweep (dca)", "dca"), ("jmbs single", "single"),
                          ("SciPy loop", "scipy_loop"), ("SciPy batched", "scipy_batched")):
            out[f"solvability.four_bar.{tag}.ms"] = round(t[name]["median_us"] / 1e3, 2)
            if tag in ("qr", "dca", "single"):
                out[f"solvability.four_bar.{tag}.repeat_ratio"] = round(scipy_us / t[name]["median_us"], 1)
        first = r["four_bar"]["first_call_s"]
        out |= {f"solvability.four_bar.{k}_first_s": round(v, 1) for k, v in first.items()}
        if "sweep_dca" in first:  # the first call sweeps one batch: SciPy's time for as many
            scipy_s = scipy_us * 1e-6 * r["four_bar"]["batch"]
            out["solvability.four_bar.dca.one_off_ratio"] = round(scipy_s / first["sweep_dca"], 2)
    return out


def _structured(res: dict) -> dict:
    """Per N: one evaluation of the dynamics with the tree and with the dense null-space
    projection (ms), their ratio, both compile times; the fresh-process simulate of N = 40."""
    out = {}
    for r in res["per_evaluation"]:
        tag = f"structured.{r['N']}"
        out |= {f"{tag}.tree_ms": round(r["tree_ms"], 3),
                f"{tag}.tree_compile_s": round(r["tree_compile_s"], 2)}
        if "dense_ms" in r:
            out |= {f"{tag}.dense_ms": round(r["dense_ms"], 3),
                    f"{tag}.dense_compile_s": round(r["dense_compile_s"], 2),
                    f"{tag}.ratio": _ratio(r["dense_ms"] / r["tree_ms"])}
    for r in res["simulate"]:
        tag = f"structured.simulate.{r['N']}{'.dense' if r['dense'] else ''}"
        out |= {f"{tag}.build_s": round(r["build"], 2), f"{tag}.first_s": round(r["first"], 1),
                f"{tag}.repeat_s": round(r["repeat"], 2)}
    return out


def _sensitivity(res: dict) -> dict:
    """Per variant: forward and gradient seconds, their ratio, the first gradient; central
    differences timed (one after another, and vmapped) over the gradient."""
    out = {}
    for name, r in res["results"].items():
        tag = f"sensitivity.{name}"
        out |= {f"{tag}.forward_s": round(r["forward_s"], 3),
                f"{tag}.gradient_s": round(r["gradient_s"], 3), f"{tag}.ratio": round(r["ratio"], 2),
                f"{tag}.first_gradient_s": round(r["first_gradient_s"], 1)}
        for key in ("fd_sequential_over_gradient", "fd_vmapped_over_gradient"):
            if key in r:
                out[f"{tag}.{key}"] = round(r[key], 1)
        if "fd_sequential_s" in r:  # one-off: the forward's compilation + 16 runs, over the first gradient
            fd = r["first_forward_s"] - r["forward_s"] + r["fd_sequential_s"]
            out[f"{tag}.fd_one_off_ratio"] = _ratio(fd / r["first_gradient_s"])
    return out


def _sampling(res: list) -> dict:
    """Per n: the random walks' and the former sampler's first and repeat calls (s), and
    the former's time over the walks' (> 1: the walks faster)."""
    out, by = {}, {(r["method"], r["n"]): r for r in res}
    for (method, n), r in by.items():
        out |= {f"sampling.{method}.{n}.first_s": round(r["first"], 1),
                f"sampling.{method}.{n}.repeat_s": round(r["repeat"], 2)}
        old = by.get(("perturb", n))
        if method == "walk" and old:
            out |= {f"sampling.{n}.first_ratio": round(old["first"] / r["first"], 1),
                    f"sampling.{n}.repeat_ratio": round(old["repeat"] / r["repeat"])}
    return out


def _sweep(res: dict) -> dict:
    """Per device count: designs per second, its ratio to one device, cores used, compile s."""
    runs = {("pool1" if r["pjrt_nproc"] == 1 else str(r["devices"])): r for r in res["runs"]}
    one = runs["1"]["designs_per_s"]
    return {k: v for tag, r in runs.items() for k, v in (
        (f"sweep.{tag}.designs_per_s", round(r["designs_per_s"])),
        (f"sweep.{tag}.ratio", round(r["designs_per_s"] / one, 2)),
        (f"sweep.{tag}.cores", round(r["cores_median"], 2)),
        (f"sweep.{tag}.compile_s", round(r["compile_s"], 1)))}


def _distributed(res: dict) -> dict:
    """Per configuration (1 process on 1 core, 2 processes, 1 process on 2 cores): median
    seconds, designs per second, speed-up over the first."""
    tags = {"1 process, 1 core": "one_core", "2 processes, 1 core each": "two_processes",
            "1 process, 2 cores": "two_cores"}
    return {k: v for r in res["runs"] if r["label"] in tags for k, v in (
        (f"distributed.{tags[r['label']]}.median_s", round(r["median_s"], 2)),
        (f"distributed.{tags[r['label']]}.designs_per_s", round(r["designs_per_s"])),
        (f"distributed.{tags[r['label']]}.speedup", round(r["speedup"], 2)))}


def _fair_share(res: dict) -> dict:
    """Default thread pool and `jmbs.fair_share()`: a warm run alone, the slower of two side
    by side (s), and the share of its alone-speed a process keeps."""
    return {k: v for name, r in res.items() for k, v in (
        (f"fair_share.{name}.alone_s", round(r["alone_s"], 3)),
        (f"fair_share.{name}.pair_s", round(max(r["pair_s"]), 3)),
        (f"fair_share.{name}.kept", round(r["kept"], 2)))}


def _latency(res: dict) -> dict:
    """Per case: import + build + first simulate (and first gradient) in a fresh process,
    over a bare diffrax solve (and gradient) of the same size in a fresh process."""
    out = {}
    for case, row in res.items():
        for kind, x in row.items():
            tag = f"latency.{case}.{kind}"
            out |= {f"{tag}.ratio": round(x["ratio"], 1), f"{tag}.jmbs_s": round(x["jmbs_s"], 1),
                    f"{tag}.bare_s": round(x["bare_diffrax_s"], 1)}
    return out


def _stepper(res: dict) -> dict:
    """Per model and batch: jmbs's steps per second over MuJoCo's (repeat), and the run of
    the batch with jmbs's compilation included over MuJoCo's (one-off)."""
    out = {}
    for r in res["runs"]:
        tag = f"stepper.{r['model']}.{r['batch']}"
        one_off = r["mujoco"]["seconds"] / (r["jmbs"]["seconds"] + r["jmbs"]["compile_s"])
        out |= {f"{tag}.repeat_ratio": _ratio(r["ratio"]), f"{tag}.one_off_ratio": _ratio(one_off),
                f"{tag}.jmbs_steps_per_s": int(float(f"{r['jmbs']['steps_per_s']:.3g}")),
                f"{tag}.mujoco_steps_per_s": int(float(f"{r['mujoco']['steps_per_s']:.3g}")),
                f"{tag}.jmbs_compile_s": round(r["jmbs"]["compile_s"], 1)}
    return out


PICKS = {"assembly": _assembly, "andrews": _andrews, "bricard": _bricard, "dca": _dca, "shapes": _shapes,
         "solvability": _solvability, "structured": _structured, "sensitivity": _sensitivity,
         "sampling": _sampling, "sweep": _sweep, "distributed": _distributed,
         "fair_share": _fair_share, "latency": _latency,
         "stepper": _stepper}
MARK = re.compile(r"(<!-- headline:([\w.]+) -->\**)([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def pages(data: dict) -> None:
    """Rewrite every marked number of README.md and docs/*.md from `data`."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        new = MARK.sub(lambda m: m[1] + (json.dumps(data[m[2]]) if m[2] in data else m[3]), text)
        if new != text:
            page.write_text(new)
            print(f"{page.relative_to(ROOT)}: marked numbers rewritten")


def headlines() -> dict:
    out = {}
    for name, pick in PICKS.items():
        path = RESULTS / f"{name}.json"
        if path.exists():
            out.update(pick(json.loads(path.read_text())))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(BENCHMARKS), choices=list(BENCHMARKS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-run", action="store_true", help="only rewrite headlines.json")
    ap.add_argument("--pages", action="store_true",
                    help="also rewrite the marked numbers of README.md and docs/*.md (then "
                         "read the prose around them: it may need to follow)")
    args = ap.parse_args()
    if not args.no_run:
        for name in args.only:
            run(name, args.rounds)
    data = headlines()
    HEADLINES.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{HEADLINES.relative_to(ROOT)}: {len(data)} numbers")
    if args.pages:
        pages(data)


if __name__ == "__main__":
    main()
