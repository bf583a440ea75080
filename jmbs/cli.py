"""The `jmbs` command line (host-side only): analyze, simulate, sweep, demo, models.

Exit codes (README.md and docs/cli.md say the same): 0 success; 1 internal error (a
bug: re-run with `--debug`); 2 usage error (an unknown option, a bad option value, an
output that cannot be written: an `--out` with a suffix, `--animate` in another format
than .gif or .mp4, .mp4 without ffmpeg; `--keyframe` for a model that is not MJCF; a
MuJoCo or URDF model without the mujoco package), checked before any computation; 3
bad model file or input (a missing file, `jmbs.ModelFileError`, a `ValueError` from
jmbs: an unknown model, driver, element or keyframe); 4 numerical failure (assembly
did not converge, the simulation failed, a `RuntimeError`); 5 `jmbs demo`: a
reproduced result differs from the paper. Errors are one
line `error: ...` on stderr; `--debug` shows the traceback too. Progress goes
to stderr, so that stdout holds only the JSON document with `--json`.
"""

import dataclasses
import json
import math
import os
import sys
import time
import traceback
import warnings
from enum import StrEnum
from importlib.metadata import version as _package_version
from pathlib import Path
from typing import Annotated

import diffrax
import numpy as np
import typer
from rich.console import Console

import jmbs

from ._config import enable_compilation_cache
from ._formulations.registry import FORMULATIONS, default_formulation
from ._kinematics import CLOSURE_WARNING, closure_error
from ._progress import tqdm
from ._solvability.registry import METHODS, default_uniqueness
from ._solvability.sweep import assemble_along, driver_names
from ._stabilization.registry import STABILIZATIONS
from ._threads import fair_share

EXIT_CODES = """Exit codes: 0 success, 1 internal error (re-run with --debug), 2 usage error
(checked before any computation: options, output files), 3 bad model file or input, 4
numerical failure (assembly or simulation), 5 a demo check failed (a result differs from
the paper)."""

app = typer.Typer(
    help="Rigid multibody systems with redundant constraints: which joint reactions are unique, "
         "simulation, sweeps along a driver.",
    epilog=EXIT_CODES, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

# Continuation steps from t = 0 to the time of `analyze --at`.
CONTINUATION_STEPS = 100

ModelArg = Annotated[str, typer.Argument(
    metavar="MODEL", help="A bundled mechanism's name (see `jmbs models`), a model file (.yaml, .toml), "
         "a MuJoCo model (.xml) or a URDF robot (.urdf); the last two need jmbs[mujoco].")]
KeyframeOpt = Annotated[str | None, typer.Option(
    "--keyframe", metavar="NAME|INDEX", help="A MuJoCo model's (.xml) keyframe, by name or index from "
    "0: its pose is the reference configuration, its velocities and controls the initial ones.")]
RankTol = Annotated[float | None, typer.Option(
    "--rank-tol", help="Relative rank tolerance of the method (default 1e-8). Assembled "
    "configurations reach a singular one only to ~1e-7: use 1e-6 to see such rank drops.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print only a JSON document on stdout.")]
TrustedOpt = Annotated[bool, typer.Option(
    "--trusted", help="Allow the model file's 'module:function' references (they import and run "
    "code). Off by default: loading a file runs no code.")]


# The choices are the library's registries' names.
Method = StrEnum("Method", {name: name for name in METHODS})
Formulation = StrEnum("Formulation", {name: name for name in FORMULATIONS})
Stabilization = StrEnum("Stabilization", {name: name for name in STABILIZATIONS})


# ----------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------


def _err(text: str) -> None:
    """Progress and notes: stderr, so that stdout stays clean for --json."""
    print(text, file=sys.stderr)


def _check(value: float | None, hint: str, low: float = -math.inf, high: float = math.inf,
           what: str = "finite") -> None:
    """A usage error (exit 2) for an option's value outside (`low`, `high`) or NaN,
    before any computation: a tolerance or time that would give NaN or silently
    meaningless results later."""
    if value is not None and not low < value < high:
        raise typer.BadParameter(f"must be {what}, got {value:g}", param_hint=hint)


def _check_rank_tol(rank_tol: float | None) -> None:
    # A relative rank tolerance outside (0, 1) decides nothing (a rank of 0 or every
    # singular value counted), and NaN compares false everywhere.
    _check(rank_tol, "--rank-tol", 0.0, 1.0, "between 0 and 1 (exclusive)")


def _load(model: str, trusted: bool, keyframe: str | None = None):
    """MODEL read (`jmbs.load`; a MuJoCo model at `keyframe`). Usage errors (exit 2) before
    anything is read: `--keyframe` for a model that is not MJCF, a MuJoCo or URDF model
    without the mujoco package."""
    suffix = Path(model).suffix.lower()
    if keyframe is not None and suffix != ".xml":
        why = ("a URDF robot has no keyframes (jmbs.from_urdf(path, positions=...) sets its pose)"
               if suffix == ".urdf" else f"{model!r} is not one")
        raise typer.BadParameter(f"applies to MuJoCo models (.xml) only; {why}", param_hint="--keyframe")
    if suffix in (".xml", ".urdf"):
        try:
            import mujoco  # noqa: F401
        except ImportError:
            raise typer.BadParameter(f"{model}: reading a {'URDF' if suffix == '.urdf' else 'MuJoCo'} "
                                     "model needs the mujoco package: pip install 'jmbs[mujoco]'",
                                     param_hint="MODEL") from None
    if keyframe is None:
        return jmbs.load(model, trusted=trusted)
    return jmbs.from_mjcf(model, keyframe=int(keyframe) if keyframe.lstrip("-").isdigit() else keyframe)


# Suffixes of the files the commands write: `--out PATH` takes none of them.
OUTPUT_SUFFIXES = (".npz", ".csv", ".png", ".gif", ".mp4")


def _output_prefix(out: str | None, default: str, writes: str) -> Path:
    """`--out` checked before a run (exit 2): no suffix of the files it names (the command
    adds them), a folder that exists or can be made."""
    path = Path(out or default)
    if path.suffix.lower() in OUTPUT_SUFFIXES:
        raise typer.BadParameter(f"give the path without a suffix ({writes}); got {out!r}, try "
                                 f"--out {path.with_suffix('')}", param_hint="--out")
    return _writable(path, "--out")


def _writable(path: Path, hint: str) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise typer.BadParameter(f"cannot make the folder {str(path.parent)!r}: {e.strerror}",
                                 param_hint=hint) from None
    if not os.access(path.parent, os.W_OK):
        raise typer.BadParameter(f"cannot write in {str(path.parent)!r}", param_hint=hint)
    return path


def _animation_file(animate: Path | None) -> Path | None:
    """`--animate FILE` checked before a run (exit 2): a format jmbs writes, the writer it needs."""
    if animate is None:
        return None
    try:
        _plotting().check_animation_file(animate)
    except (ValueError, RuntimeError) as e:
        raise typer.BadParameter(str(e), param_hint="--animate") from None
    return _writable(animate, "--animate")


def _method(name: Method | None, rank_tol: float | None, model):
    """The method instance: the given one, else the API's default for `model`."""
    cls = METHODS[default_uniqueness(model) if name is None else name.value]
    return cls() if rank_tol is None else cls(rtol=rank_tol)


def _model_info(name: str, model) -> dict:
    return {"name": name, "dim": model.dim, "bodies": model.n_bodies, "nq": model.nq,
            "nv": model.nv, "nc": model.nc,
            "forces": {s.name: s.kind for s in model.force_specs}}


def _read_configuration(path: Path, model) -> np.ndarray:
    """A configuration from a .npy file or a text file of numbers (whitespace or commas)."""
    if path.suffix == ".npy":
        q = np.load(path)
    else:
        try:
            q = np.array(path.read_text().replace(",", " ").split(), dtype=float)
        except ValueError as e:
            raise ValueError(f"{path}: expected numbers separated by spaces or commas ({e})") from None
    q = np.ravel(q).astype(float)
    if q.size != model.nq:
        names = list(model.coordinate_names)
        listed = ", ".join(names[:7]) + (", ..." if len(names) > 7 else "")
        raise ValueError(f"{path}: {q.size} numbers, but the model has nq = {model.nq} coordinates "
                         f"({listed}); write one number per coordinate")
    return q


def _write_csv(path: Path, names: list[str], columns: list[np.ndarray]) -> Path:
    np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(names), comments="",
               fmt="%.17g")
    return path


def _verdicts(unique: np.ndarray, names) -> dict[str, list[str]]:
    """Elements unique at every row of `unique (T, ne)`, at none, and those that change."""
    always, never = unique.all(axis=0), ~unique.any(axis=0)
    return {"always_unique": [n for n, a in zip(names, always) if a],
            "never_unique": [n for n, b in zip(names, never) if b],
            "changing": [n for n, a, b in zip(names, always, never) if not (a or b)]}


def _print_verdicts(v: dict[str, list[str]], where: str) -> None:
    print(f"unique {where}: {', '.join(v['always_unique']) or '-'}")
    print(f"not unique {where}: {', '.join(v['never_unique']) or '-'}")
    print(f"uniqueness changes: {', '.join(v['changing']) or '-'}")


def _plotting():
    import matplotlib

    matplotlib.use("Agg")  # files only; no display needed
    from jmbs import plotting

    return plotting


# ----------------------------------------------------------------------------------
# Commands
# ----------------------------------------------------------------------------------


def _show_version(value: bool) -> None:
    if value:
        print(f"jmbs {_package_version('jmbs')}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Compile every program anew: do not keep compiled programs on disk "
        "(default: ~/.cache/jmbs/jax, or $JMBS_CACHE_DIR; JMBS_NO_CACHE=1 also turns it off).")] = False,
) -> None:
    """`--debug` is read by `main`, which reports the errors that escape a command. Compiled
    programs are kept on disk (`jmbs.enable_compilation_cache`), so that the next command
    starts without compiling what this one compiled."""
    if not (no_cache or os.environ.get("JMBS_NO_CACHE")):
        enable_compilation_cache()


@app.command()
def analyze(
    model: ModelArg,
    at: Annotated[float | None, typer.Option(
        "--at", metavar="T", help="Analyse at time T: a driven model is assembled there by "
        "continuation from t = 0; a model without drivers stays in its reference configuration.")]
    = None,
    q: Annotated[Path | None, typer.Option(
        "--q", metavar="FILE", help="Analyse this configuration (nq numbers: .npy, or text "
        "separated by spaces or commas), at t = 0.")] = None,
    method: Annotated[Method | None, typer.Option(
        help="Uniqueness method (default: nullspace; dca from 100 velocity coordinates on).",
        show_default=False)] = None,
    rank_tol: RankTol = None,
    json_: JsonOpt = False,
    trusted: TrustedOpt = False,
    components: Annotated[bool, typer.Option(
        "--components", help="Also list every reaction component with its criterion.")] = False,
    resultant: Annotated[list[str] | None, typer.Option(
        "--resultant", metavar="GROUP@ON", help="Also decide the resultant wrench that the elements "
        "GROUP apply to the bodies ON, both comma-separated, e.g. 'J1,J6@ground' (repeatable).")] = None,
    advise: Annotated[bool, typer.Option(
        "--advise", help="Also propose how to make the mechanism statically determinate: "
        "the element substitutions that release exactly p reaction components, best first, each "
        "checked (jmbs.advise).")] = False,
    keyframe: KeyframeOpt = None,
) -> None:
    """Which reactions of MODEL are unique, at one configuration.

    Prints the uniqueness table (per element: kind, bodies, U/N per component and
    for the whole reaction, criterion, margin in decimal digits) and the rank of
    C, the redundancy p, the degrees of freedom. Default configuration: the
    reference one, at t = 0.

    Example: jmbs analyze gripper_torque --json
    """
    if at is not None and q is not None:
        raise typer.BadParameter("give --at or --q, not both", param_hint="--at / --q")
    _check(at, "--at")
    _check_rank_tol(rank_tol)
    groups = [_resultant_group(text) for text in resultant or []]
    mdl = _load(model, trusted, keyframe)
    solvability_method = _method(method, rank_tol, mdl)
    t = 0.0 if at is None else at
    if q is not None:
        config, source = _read_configuration(q, mdl), f"configuration from {q}"
        off, worst, size = closure_error(mdl, config, t)
        if off > CLOSURE_WARNING * size:
            _err(f"warning: {q} violates the constraints by {off:.2g} (worst: {worst}); the "
                 "decisions are about that configuration")
    elif at is not None and driver_names(mdl):
        config = assemble_along(mdl, np.linspace(0.0, t, CONTINUATION_STEPS + 1), progress=True)[-1]
        source = "assembled by continuation from t = 0"
    else:
        config, source = np.asarray(mdl.q0), "reference configuration"
    rep = jmbs.solvability(mdl, config, t, method=solvability_method)
    resultants = [_resultant(rep, group, on) for group, on in groups]
    advice = jmbs.advise(mdl, config, method=solvability_method, t=t) if advise else None
    if json_:
        extra = {"advice": {"message": advice.message, "redundancy": advice.redundancy,
                            "generic": advice.generic, "releases": [r.to_dict() for r in advice]}
                 } if advice is not None else {}
        print(json.dumps({"model": _model_info(model, mdl), "configuration": source,
                          "q": config.tolist(), **rep.to_dict(),
                          **({"resultants": resultants} if resultants else {}), **extra}, indent=1))
        return
    print(f"{model}: {mdl.dim}-D, {mdl.n_bodies} bodies, nq = {mdl.nq}, nv = {mdl.nv}, "
          f"nc = {mdl.nc}; {source}, t = {t:g}")
    if mdl.force_specs:
        print("force elements (no reactions of their own): "
              + ", ".join(f"{s.name} ({s.kind})" for s in mdl.force_specs))
    print(rep)
    for r in resultants:
        print(f"resultant of {' + '.join(r['group'])} on {', '.join(r['on'])}: "
              f"{'U' if r['unique'] else 'N'} (criterion {r['criterion']:.1e}, margin "
              f"{min(r['margin'], 99):.1f})")
    if advice is not None:
        print("\nHow to make it statically determinate (jmbs.advise):")
        print(advice)
    if components:
        d = rep.decisions
        names = jmbs.component_names(mdl)
        w = max(map(len, names + ["component"]))
        print(f"\n{'component':<{w}}  U/N  {'criterion':>9}  margin")
        for k, name in enumerate(names):
            print(f"{name:<{w}}  {'U' if d.component_unique[k] else 'N':>3}  "
                  f"{d.component_criterion[k]:9.1e}  {min(float(d.component_margin[k]), 99):6.1f}")


def _resultant_group(text: str) -> tuple[list[str], list[str]]:
    """`--resultant GROUP@ON` read before the analysis (a usage error: exit 2)."""
    group, at, on = text.partition("@")
    group, on = [g.strip() for g in group.split(",") if g.strip()], [b.strip() for b in on.split(",")
                                                                       if b.strip()]
    if not at or not group or not on:
        raise typer.BadParameter(f"{text!r}: expected GROUP@ON, e.g. 'J1,J6@ground'",
                                 param_hint="--resultant")
    return group, on


def _resultant(rep, group: list[str], on: list[str]) -> dict:
    """The decision of `--resultant GROUP@ON` as plain data."""
    unique, criterion, margin = rep.resultant_margin(group, on)
    return {"group": group, "on": on, "unique": bool(unique), "criterion": criterion, "margin": margin}


@app.command()
def simulate(
    model: ModelArg,
    t1: Annotated[float, typer.Option("--t1", metavar="T", help="End time (s), > 0.")],
    formulation: Annotated[Formulation | None, typer.Option(
        help="How redundancy is handled (default: nullspace; divide-and-conquer from "
        "100 velocity coordinates on).", show_default=False)] = None,
    stabilization: Annotated[Stabilization, typer.Option(
        help="Constraint stabilization.")] = Stabilization("projection"),
    n_saves: Annotated[int, typer.Option(
        "--n-saves", metavar="N", min=2, help="Saved times, equally spaced from 0 to T.")] = 101,
    rtol: Annotated[float, typer.Option(help="Relative tolerance of the step-size control.")] = 1e-8,
    atol: Annotated[float, typer.Option(help="Absolute tolerance of the step-size control.")] = 1e-8,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="PATH", help="Write PATH.npz and PATH.csv (default: the model's name).")]
    = None,
    plot: Annotated[bool, typer.Option(
        "--plot", help="Also write PATH-reactions.png, every reaction component over time "
        "(N, N m), driving forces included.")] = False,
    animate: Annotated[Path | None, typer.Option(
        "--animate", metavar="FILE.gif", help="Also write an animation of the motion (.gif, or .mp4 "
        "with ffmpeg).")] = None,
    keyframe: KeyframeOpt = None,
    json_: JsonOpt = False,
    trusted: TrustedOpt = False,
) -> None:
    """Simulate MODEL from t = 0 to T, and record the reactions with their uniqueness.

    Initial state: the model's reference configuration, and its initial
    velocities made consistent with the constraints (jmbs.consistent_velocity).
    The run is one compiled call (jmbs.simulate): stderr shows a spinner with the
    elapsed time (compilation + integration), then the time taken.

    Writes PATH.npz (ts, q, v, v_dot, multipliers, unique, component_unique,
    violation, velocity_violation, energy, work of the dampers, loads and friction,
    and the names) and PATH.csv (one row
    per saved time: t, the coordinates <body>.<coord>, the reaction components
    <element>.<component> = -multipliers, and <element>.unique as 0/1), and
    prints a summary: steps, constraint violation, energy drift, which
    reactions are unique throughout, never, or change. The output paths are
    checked before the run (no suffix on PATH; a .gif or .mp4 animation, ffmpeg for .mp4).

    Example: jmbs simulate slider_crank --t1 2 --out run --plot
    """
    _check(t1, "--t1", 0.0, what="positive and finite")
    _check_tolerances(rtol, atol)
    path = _output_prefix(out, Path(model).stem, "it writes PATH.npz and PATH.csv")
    movie = _animation_file(animate)
    mdl = _load(model, trusted, keyframe)
    form = default_formulation(mdl) if formulation is None else FORMULATIONS[formulation.value]()
    stab_cls = STABILIZATIONS[stabilization.value]
    stab = None if stab_cls is None else stab_cls()
    sol = _run(model, mdl, t1, form, stab, np.linspace(0.0, t1, n_saves), rtol, atol)
    data, files = _save_run(path, mdl, sol)
    if plot or movie:
        files += _figures(path, mdl, sol, plot, movie)
    form_name = next(name for name, cls in FORMULATIONS.items() if type(form) is cls)
    summary = _run_summary(model, mdl, sol, data, files, {
        "t1": t1, "formulation": form_name, "stabilization": stabilization.value})
    if json_:
        print(json.dumps(summary, indent=1))
    else:
        _print_run(model, mdl, summary, float(data["energy"][0]))


def _check_tolerances(rtol: float, atol: float) -> None:
    """The step-size control needs finite tolerances >= 0, not both 0 (a negative one
    accepts every step): usage errors (exit 2)."""
    for value, hint in ((rtol, "--rtol"), (atol, "--atol")):
        if not 0 <= value < math.inf:
            raise typer.BadParameter(f"must be finite and >= 0, got {value:g}", param_hint=hint)
    if rtol == atol == 0:
        raise typer.BadParameter("--rtol and --atol cannot both be 0", param_hint="--rtol / --atol")


def _run(name: str, mdl, t1: float, form, stab, ts: np.ndarray, rtol: float, atol: float):
    """`jmbs.simulate` from the reference configuration and consistent velocities, under a
    spinner on stderr, then the time taken."""
    start = time.perf_counter()
    with Console(stderr=True).status(f"simulating {name} to t = {t1:g} (compiling, then running)"):
        v0 = jmbs.consistent_velocity(mdl, mdl.q0)
        sol = jmbs.simulate(mdl, t1, formulation=form, stabilization=stab, saveat=ts, v0=v0,
                            stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol))
    _err(f"simulated in {time.perf_counter() - start:.1f} s (compilation included)")
    return sol


def _save_run(path: Path, mdl, sol) -> tuple[dict, list[Path]]:
    """PATH.npz (every saved array and the names) and PATH.csv (t, coordinates, reaction
    components, uniqueness per element); returns the arrays and the files."""
    r = sol.reactions
    multipliers, unique = np.asarray(r.multipliers), np.asarray(r.unique)
    data = {"ts": np.asarray(sol.ts), "q": np.asarray(sol.q), "v": np.asarray(sol.v),
            "v_dot": np.asarray(sol.v_dot), "multipliers": multipliers, "unique": unique,
            "component_unique": np.asarray(r.component_unique),
            "violation": np.asarray(sol.violation),
            "velocity_violation": np.asarray(sol.velocity_violation),
            "energy": np.asarray(sol.energy), "work": np.asarray(sol.work),
            "element_names": np.array(mdl.element_names),
            "component_names": np.array(jmbs.component_names(mdl)),
            "coordinate_names": np.array(list(mdl.coordinate_names))}
    files = [path.with_name(path.name + ".npz"), path.with_name(path.name + ".csv")]
    np.savez(files[0], **data)
    _write_csv(files[1], ["t"] + list(mdl.coordinate_names) + jmbs.component_names(mdl)
               + [f"{e}.unique" for e in mdl.element_names],
               [data["ts"], data["q"], -multipliers, unique.astype(float)])
    return data, files


def _figures(path: Path, mdl, sol, plot: bool, movie: Path | None) -> list[Path]:
    """PATH-reactions.png with `--plot`, the animation with `--animate`."""
    plotting, files = _plotting(), []
    if plot:
        files.append(path.with_name(path.name + "-reactions.png"))
        plotting.plot_reactions(sol, kind="components").savefig(files[-1])
    if movie:
        files.append(plotting.animate(mdl, sol, movie))
    return files


def _run_summary(name: str, mdl, sol, data: dict, files: list[Path], settings: dict) -> dict:
    """The run's `settings`, steps, constraint violations, energy balance and verdicts."""
    # The force elements' non-conservative work (dampers, loads, actuators, friction) is
    # not a drift.
    balance = data["energy"] - data["work"]
    return {
        "model": _model_info(name, mdl), **settings, "steps": int(sol.stats["num_steps"]),
        "rejected_steps": int(sol.stats["num_rejected_steps"]),
        "max_violation": float(data["violation"].max()),
        "max_velocity_violation": float(data["velocity_violation"].max()),
        "energy_drift": float(np.abs(balance - balance[0]).max()),
        "work": float(data["work"][-1]),
        **_verdicts(data["unique"], mdl.element_names), "files": [str(f) for f in files]}


def _print_run(name: str, mdl, summary: dict, energy0: float) -> None:
    print(f"{name}: t = 0 .. {summary['t1']:g}, {summary['formulation']} formulation, "
          f"{summary['stabilization']} stabilization: {summary['steps']} steps "
          f"({summary['rejected_steps']} rejected)")
    print(f"max constraint violation: |Phi| = {summary['max_violation']:.2g}, "
          f"|C v + b| = {summary['max_velocity_violation']:.2g}")
    print(f"energy drift: max |E - W - E(0)| = {summary['energy_drift']:.2g} (E(0) = {energy0:.6g}"
          + (f"; W = {summary['work']:.6g}, the work of the force elements' non-conservative "
             "part" if mdl.force_names else "")
          + ")" + ("; the drivers do work" if driver_names(mdl) else ""))
    _print_verdicts(summary, "throughout")
    print(f"wrote {', '.join(summary['files'])}")


@app.command()
def sweep(
    model: ModelArg,
    range_: Annotated[tuple[float, float], typer.Option(
        "--range", metavar="A B", help="Start and end of the driver's coordinate (rad or m, "
        "from the reference configuration); without --driver, of time (s).")],
    n: Annotated[int, typer.Option("--n", metavar="K", min=2, help="Configurations on the grid.")],
    method: Annotated[Method | None, typer.Option(
        help="Uniqueness method (default: nullspace; dca from 100 velocity coordinates on).",
        show_default=False)] = None,
    rank_tol: RankTol = None,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="PREFIX", help="Write PREFIX.csv and PREFIX.png (default: "
        "<model>-sweep-<driver>).")] = None,
    json_: JsonOpt = False,
    trusted: TrustedOpt = False,
    no_plot: Annotated[bool, typer.Option("--no-plot", help="Do not write PREFIX.png.")] = False,
    driver: Annotated[str | None, typer.Option(
        "--driver", metavar="NAME", help="The driver to move; without it, every driver "
        "follows its motion and the sweep is along time.")] = None,
) -> None:
    """Rank and uniqueness along a driver's coordinate or along time, with the singular
    configurations.

    With --driver NAME, its coordinate s takes K values from A to B; the other
    drivers hold their reference values, except those it makes redundant (an
    overactuated model), which follow. Without --driver, s is the time and every
    driver follows its motion. Each configuration is assembled from the previous
    one, starting from the reference configuration (s = 0). Position
    freedom left besides the drivers (a mobile robot's platform) follows the
    nearest configuration; velocity constraints (knife edges) do not restrict
    positions. Where the rank or a decision changes, jmbs.solvability_path
    locates it by bisection; isolated singular configurations are found from the
    minima of the smallest rank-revealing value.

    Writes PREFIX.csv (s, rank, p, <element>.unique as 1/0) and PREFIX.png
    (jmbs.plotting.plot_sweep), and prints the events.

    Examples: jmbs sweep gripper_torque --driver drive_Cr --range -0.3 0.3 --n 61;
    jmbs sweep mobile_robot --range 0 4 --n 81 (along time)
    """
    a, b = range_
    if not a < b:
        raise typer.BadParameter(f"needs A < B, got {a:g} {b:g}", param_hint="--range")
    _check_rank_tol(rank_tol)
    # "-sweep-t" along time
    prefix = _output_prefix(out, f"{Path(model).stem}-sweep-{driver or 't'}",
                            "it writes PREFIX.csv and PREFIX.png")
    mdl = _load(model, trusted)
    solvability_method = _method(method, rank_tol, mdl)
    if not driver_names(mdl):
        raise ValueError(f"{model} has no drivers: a sweep moves a driver's coordinate; add a "
                         "driver to the model file, or analyse single configurations with "
                         "`jmbs analyze --q`")
    s = np.linspace(a, b, n)
    path = (jmbs.time_path(mdl, s, progress=True) if driver is None
            else jmbs.driver_path(mdl, driver, s, progress=True))
    unit, driver = path.unit, driver or "t"
    result = jmbs.solvability_path(path.model, path, s, method=solvability_method)
    sw = result.sweep
    events = [dataclasses.asdict(e) | {"components": list(e.components)} for e in result.events]
    files = [_write_csv(prefix.with_name(prefix.name + ".csv"),
                        ["s", "rank", "p"] + [f"{e}.unique" for e in mdl.element_names],
                        [s, sw.rank, sw.redundancy, sw.unique.astype(float)])]
    if not no_plot:
        files.append(prefix.with_name(prefix.name + ".png"))
        _plotting().plot_sweep(result, xlabel=f"{driver} ({unit})").savefig(files[-1])

    verdicts = _verdicts(sw.unique, mdl.element_names)
    if json_:
        print(json.dumps({
            "model": _model_info(model, mdl), "driver": path.driver, "unit": unit, "method": sw.method,
            "s": s.tolist(), "rank": sw.rank.tolist(), "redundancy": sw.redundancy.tolist(),
            "unique": {e: sw.unique[:, k].tolist() for k, e in enumerate(mdl.element_names)},
            **verdicts, "events": events, "files": [str(f) for f in files]}, indent=1))
        return
    print(f"{model}: {driver} from {a:g} to {b:g} {unit}, {n} configurations, {sw.method} method; "
          f"rank {sw.rank.min()}..{sw.rank.max()}, p {sw.redundancy.min()}..{sw.redundancy.max()}")
    _print_verdicts(verdicts, "on the grid")
    for e in result.events:
        print(f"event at {driver} = {e.s:.9g} {unit} (+-{(e.s_after - e.s_before) / 2:.1g}): "
              f"{e.describe('--rank-tol 1e-6')}")
    if not events:
        print("no events: the rank and every decision stay the same along the sweep")
    print(f"wrote {', '.join(map(str, files))}")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(
        "--out", metavar="DIR", help="Folder of the report.")] = Path("jmbs-demo-report"),
    short: Annotated[bool, typer.Option(
        "--short", help="Fewer sweep points, a shorter simulation, no GIF.")]
    = False,
) -> None:
    """The main job: reproduce the papers' central results on the bundled mechanisms.

    Writes DIR/report.md (per paper: what it reports, what jmbs obtains, whether
    they match, figures), DIR/figures/ and DIR/results.json, and prints where
    the report is and whether every check passed.
    """
    from jmbs.reproduce.demo import run_demo

    report = run_demo(out, short=short)
    passed = json.loads((report.parent / "results.json").read_text())["all_passed"]
    print(f"report: {report}")
    if not passed:
        print(f"error: some results differ from the papers: see {report}", file=sys.stderr)
        raise typer.Exit(5)
    print("every check agrees with the papers")


@app.command()
def models(json_: JsonOpt = False) -> None:
    """List the bundled mechanisms: dimension, bodies, sizes, rank of C, redundancy p, dof.

    Each model is loaded and its rank computed at the reference configuration
    (a few seconds each, mostly compilation).
    """
    rows = []
    for name in tqdm(jmbs.bundled_models(), desc="models", delay=1.0, leave=False):
        m = jmbs.load(name)
        rep = jmbs.solvability(m)
        rows.append(_model_info(name, m) | {"rank": rep.rank, "p": rep.redundancy, "dof": rep.dof})
    if json_:
        print(json.dumps(rows, indent=1))
        return
    columns = ["dim", "bodies", "nq", "nv", "nc", "rank", "p", "dof"]
    w = max(len(r["name"]) for r in rows) + 2
    print(f"{'name':<{w}}" + "".join(f"{c:>7}" for c in columns))
    for r in rows:
        print(f"{r['name']:<{w}}" + "".join(f"{r[c]:>7}" for c in columns))
    print("p: redundancy, nc - rank C; dof: degrees of freedom, nv - rank C "
          "(at the reference configuration)")


# ----------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------


def _fail(e: Exception, debug: bool) -> int:
    """Report an exception that escaped a command: one line on stderr (after the
    traceback when `debug`), an exit code."""
    if debug:
        traceback.print_exc()
    if isinstance(e, OSError) and e.filename:
        code, message = 3, f"{e.filename}: {e.strerror}"
    elif isinstance(e, (RuntimeError, np.linalg.LinAlgError)):  # a LinAlgError is a ValueError
        code, message = 4, str(e)
    elif isinstance(e, (ValueError, OSError)):
        code, message = 3, str(e)
    else:
        code, message = 1, (f"internal error ({type(e).__name__}: {e}); re-run with --debug for "
                            "the traceback and report it")
    lines = [line for line in message.splitlines() if line.strip()]
    print(f"error: {lines[0] if lines else type(e).__name__}", file=sys.stderr)
    return code


def _backend_started() -> bool:
    bridge = sys.modules.get("jax._src.xla_bridge")
    return bridge is not None and bridge.backends_are_initialized()


def main(argv: list[str] | None = None) -> int:
    """Run the `jmbs` command with `argv` (default `sys.argv[1:]`); returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # A core of its own for the XLA:CPU programs: commands side by side share the cores (jmbs.fair_share);
    # nothing is changed where the process already runs JAX (a test calling main in-process).
    if not _backend_started():
        fair_share()
    # The root option `--debug` (click accepts it only before the command).
    debug = "--debug" in argv
    formatwarning = warnings.formatwarning
    warnings.formatwarning = lambda message, *args, **kwargs: f"warning: {message}\n"
    try:
        app(args=argv, prog_name="jmbs")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else int(e.code is not None)
    except Exception as e:  # noqa: BLE001 - every error becomes one line and an exit code
        return _fail(e, debug)
    finally:
        warnings.formatwarning = formatwarning
    return 0


if __name__ == "__main__":
    sys.exit(main())
