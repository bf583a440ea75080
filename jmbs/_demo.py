"""`jmbs demo`: the papers' central results reproduced on the bundled mechanisms, as a report.

`run_demo(out)` writes `out/report.md` (one section per paper: the mechanism, what
the paper reports, what jmbs obtains, whether they match, figures), the figures
under `out/figures/`, and `out/results.json` (every number and every check with its
expected and obtained value, and `all_passed`). Host-side only.
"""

import dataclasses
import datetime
import importlib.metadata
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

import jmbs
from jmbs.examples import papers
from jmbs.examples.mobile_robot import slider_displacement

from ._model import GROUND
from ._reactions import element_wrenches

DPI = 90


@dataclasses.dataclass
class Check:
    """One comparison: the paper's (or the closed form's) value and jmbs's."""

    name: str
    expected: Any
    obtained: Any
    passed: bool


def _check(name: str, expected, obtained, passed: bool | None = None) -> Check:
    """A check that passes when `expected == obtained`, unless `passed` says otherwise
    (tolerances: `expected` is then a description such as `"< 1e-10"`)."""
    return Check(name, expected, obtained, expected == obtained if passed is None else bool(passed))


@dataclasses.dataclass
class _Section:
    title: str
    cites: tuple[str, ...]  # keys of `papers.PAPERS`; none for a check against a closed form
    mechanism: str
    text: list[str] = dataclasses.field(default_factory=list)  # Markdown blocks
    checks: list[Check] = dataclasses.field(default_factory=list)
    results: dict = dataclasses.field(default_factory=dict)
    seconds: float = 0.0

    def add(self, *checks: Check) -> list[Check]:
        self.checks.extend(checks)
        return list(checks)


class _Figures:
    """Saves figures as `figures/<name>.png` and returns the Markdown that shows them."""

    def __init__(self, folder: Path):
        import matplotlib.pyplot as plt

        self.plt, self.folder = plt, folder
        folder.mkdir(parents=True, exist_ok=True)

    def save(self, fig, name: str, caption: str) -> str:
        fig.savefig(self.folder / f"{name}.png", dpi=DPI, bbox_inches="tight")
        self.plt.close(fig)
        return f"![{caption}](figures/{name}.png)\n\n*{caption}*"


# ----- Markdown -----

def _verdict(unique) -> str:
    return "U" if unique else "N"


def _mark(passed: bool) -> str:
    return "✅ matches" if passed else "❌ **differs**"


def _fmt(x) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.2e}" if x != 0 and not 1e-3 <= abs(x) < 1e4 else f"{x:.6g}"
    if isinstance(x, dict):
        return ", ".join(f"{k}: {_fmt(v)}" for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(map(_fmt, x)) + "]"
    return str(x)


def _table(head: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(_fmt(c).replace("|", "\\|") for c in row) + " |"
                               for row in rows])


def _checks_table(checks: list[Check]) -> str:
    return _table(["check", "expected", "jmbs", ""],
                  [[c.name, c.expected, c.obtained, _mark(c.passed)] for c in checks])


# ----- helpers shared by the sections -----

def _components(rep, el: str) -> str:
    """The verdicts of an element's components, e.g. `"Fx:U Fy:N"`."""
    return " ".join(f"{c}:{_verdict(u)}" for c, u in zip(rep.model.element(el).components,
                                                         rep.unique_components(el)))


def _row_names(model) -> list[str]:
    """`"element.component"` for every row of `C`."""
    return [f"{el}.{c}" for el in model.element_names for c in model.element(el).components]


def _rank(A: np.ndarray, rtol: float = 1e-9) -> int:
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def _ground_resultant(rep, joints) -> tuple[float, dict[str, float]]:
    """How much the wrenches that the ground `joints` exert on the ground (force, and
    moment about the origin) change along the directions of `null(C^T)` at the
    report's configuration (spatial models): 0 where they are unique. Returns the
    change of their resultant and of each joint's wrench, relative to the largest."""
    model = rep.model
    U = np.linalg.svd(np.asarray(jmbs.constraint_matrix(model, rep.q, rep.t)))[0]
    N = jnp.asarray(U[:, rep.rank:])  # the p directions in which the multipliers are free
    P, F, T = (np.asarray(x) for x in jax.jit(jax.vmap(
        lambda lam: element_wrenches(model, rep.q, rep.t, lam), in_axes=1))(N))
    k = [model.element_names.index(j) for j in joints]
    # The elements' wrenches act on their body j; on the ground when it is body i.
    sign = np.array([1.0 if model.element(j).bodies[1] == GROUND else -1.0 for j in joints])[:, None]
    single = sign * np.concatenate([F[:, k], T[:, k] + np.cross(P[:, k], F[:, k])], axis=2)
    size = np.abs(single).max()
    each = np.abs(single).max(axis=(0, 2)) / size
    return float(np.abs(single.sum(axis=1)).max() / size), {j: float(c) for j, c in zip(joints, each)}


def _changing(each: dict[str, float]) -> str:
    """The joints whose wrench changes, with the change, e.g. `"J1 (1.0), J6 (0.71)"`."""
    return ", ".join(f"{j} ({c:.2g})" for j, c in each.items() if c > 1e-12)


def _kinetostatic_tables(sec: _Section, tables: dict[str, papers.Table]) -> dict:
    """The paper's kinetostatic tables next to jmbs's (`method="kinetostatic"`, at the
    paper's configuration): the size and rank of `A`, and per element the rank of
    `A_S` and the verdict. Returns the reports by mechanism name."""
    reports = {}
    for name, table in tables.items():
        model = jmbs.examples.ALL[name]()
        rep, obtained = papers.kinetostatic_comparison(model, table)
        reports[name] = rep
        size = sec.add(_check(f"{table.title}: size of A", list(table.shape), [model.nv, model.nc]),
                       _check(f"{table.title}: rank of A", table.rank, rep.rank))
        rows, result = [], {}
        for el, entry in table.elements.items():
            o = obtained[el]
            got = {"verdict": o.verdict, "rank A_S": o.set_rank}
            (c,) = sec.add(_check(f"{table.title}: {el}", {"verdict": entry.verdict,
                                                           "rank A_S": entry.set_rank}, got))
            rows.append([el, entry.criterion, f"{o.criterion:.1e}", entry.set_rank,
                         o.set_rank, entry.verdict, o.verdict, _mark(c.passed)])
            result[el] = {**got, "criterion": o.criterion}
        sec.results[name] = {"shape": [model.nv, model.nc], "rank": rep.rank,
                             "redundancy": rep.redundancy, "elements": result}
        sec.text += [f"**{table.title}** — `jmbs.examples.ALL[{name!r}]`: A is {model.nv} × "
                     f"{model.nc} (paper {table.shape[0]} × {table.shape[1]}), rank {rep.rank} "
                     f"(paper {table.rank}), rank margin {rep.rank_margin:.1f} digits: "
                     + ("size and rank match." if all(c.passed for c in size) else "**they differ.**"),
                     _table(["element", "paper ‖A_S N_S‖", "jmbs ‖A_S N_S‖", "paper rank A_S",
                             "jmbs rank A_S", "paper", "jmbs", ""], rows)]
    return reports


def _extremum(ts: np.ndarray, x: np.ndarray, sign: float) -> tuple[float, float]:
    """`(t, x)` of the saved sample maximising `sign * x`, refined by the parabola
    through it and its neighbours."""
    i = int(np.clip(np.argmax(sign * x), 1, len(x) - 2))
    a, b, c = x[i - 1:i + 2]
    d = 0.5 * (a - c) / (a - 2 * b + c)
    return float(ts[i] + d * (ts[1] - ts[0])), float(b - 0.25 * (a - c) * d)


# ----- the sections -----

def _slide(t):
    """Driver motion `f(t) = t`: the time is the slide of the robot's steering slider."""
    return t


def _mobile_robot(figs: _Figures, short: bool) -> _Section:
    sec = _Section("Mobile robot with a trolley", ("000",), "mobile robot with trolley (planar, 7 bodies)")
    model = jmbs.examples.mobile_robot(motion=_slide)
    rep = jmbs.solvability(model)

    def path(delta_deg: float):
        """The configuration with wheel W1 steered by `delta_deg`, and its time (the slide)."""
        d = float(slider_displacement(math.radians(delta_deg)))
        return jmbs.examples.mobile_robot_configuration(d), d

    turn = 30.0
    rep_turn = jmbs.solvability(model, *path(turn))
    angles = np.linspace(-80.0, 80.0, 9 if short else 33)  # the dead centres are at +-90 deg
    sweep = jmbs.solvability_path(model, path, angles, progress=False)
    qs = np.stack([np.asarray(model.q0)] + [path(a)[0] for a in angles])
    ts = np.array([0.0] + [path(a)[1] for a in angles])
    Cs = np.asarray(jax.jit(jax.vmap(lambda q, t: jmbs.constraint_matrix(model, q, t)))(qs, ts))
    hol = model.holonomic_rows
    ranks = {"rank(Phi_q)": [_rank(C[hol]) for C in Cs], "rank(Psi)": [_rank(C[~hol]) for C in Cs],
             "r": [_rank(C) for C in Cs]}
    ranks["p"] = [model.nc - r for r in ranks["r"]]

    sec.text.append(
        "**Mechanism** (`jmbs.examples.mobile_robot`): platform 1, steering linkage 2–6 driven "
        "in the translational joint H, trolley 7 hitched by revolute A; revolutes A–G, "
        "knife edges W1 (front wheel), W2 (back wheel), W3 and W4 (one axle on the platform), W5 "
        "(trolley): 21 velocity coordinates, 17 holonomic and 5 nonholonomic (Pfaffian) rows. "
        "The paper's dimensions are lost; jmbs's linkage has the paper's structure (W1 and W2 "
        "steered mirror-symmetrically about the W3/W4 axle).\n\n"
        "**The paper** (§4): in every nonsingular configuration rank(Φ_q) = 17, rank(Ψ) = 4, "
        "r = 20, p = 2; the reactions of A, D, E, F, G, H, the driver and W5 are unique, those of "
        "B, C and W1–W4 are not. Its dynamic simulations eliminate the constraint pairs "
        "{C_y, W4}, {W1, W4} and {W2, W4}, so each pair is redundant; its Fig. 4 shows the x and "
        "y components of B changing with that choice during the turns.")

    paper_ranks = papers.MOBILE_ROBOT_RANKS
    rank_checks = sec.add(*(_check(f"{k} at the reference", v, ranks[k][0]) for k, v in paper_ranks.items()))
    rows = []
    for el, paper in papers.MOBILE_ROBOT.items():
        (c,) = sec.add(_check(f"reaction of {el}", paper, _verdict(rep.is_unique(el))))
        info = model.element(el)
        rows.append([el, info.kind, "–".join(info.bodies), paper, c.obtained, _components(rep, el),
                     _components(rep_turn, el), f"{min(rep.margin(el), 99):.1f}", _mark(c.passed)])

    names = _row_names(model)

    def verdicts(r, rows: list[str]) -> dict[str, str]:
        return {n: _verdict(r.decisions.component_unique[names.index(n)]) for n in rows}

    eliminated = [_check(f"rank without {' and '.join(f'{el}.{c}' for el, c in pair)}", paper_ranks["r"],
                         _rank(np.delete(Cs[0], [names.index(f"{el}.{c}") for el, c in pair], axis=0)))
                  for pair in papers.MOBILE_ROBOT_ELIMINATIONS]
    dropped = sorted({f"{el}.{c}" for pair in papers.MOBILE_ROBOT_ELIMINATIONS for el, c in pair})
    eliminated += [_check("eliminated components unique?", dict.fromkeys(dropped, "N"),
                          verdicts(rep, dropped)),
                   _check(f"components of B steered by {turn:g}° (Fig. 4)", {"B.Fx": "N", "B.Fy": "N"},
                          verdicts(rep_turn, ["B.Fx", "B.Fy"]))]
    sec.add(*eliminated)

    cols = [model.element_names.index(el) for el in papers.MOBILE_ROBOT]
    want = np.array([v == "U" for v in papers.MOBILE_ROBOT.values()])
    n_pattern = int((sweep.sweep.unique[:, cols] == want).all(axis=1).sum())
    # Events where only single components change are reported below, not counted.
    changes = [e for e in sweep.events if e.elements or len({e.rank_before, e.rank_at, e.rank_after}) > 1]
    along = sec.add(
        _check(f"ranks at {len(angles)} steering angles, −80° to 80°",
               {k: [v] for k, v in paper_ranks.items()}, {k: sorted(set(v[1:])) for k, v in ranks.items()}),
        _check("steering angles with the paper's verdicts", len(angles), n_pattern),
        _check("changes of rank or verdict located along the sweep", 0, len(changes)))
    cu = sweep.sweep.component_unique
    varying = [names[i] for i in np.flatnonzero((cu != cu[:1]).any(axis=0))]

    sec.text += [
        "**jmbs** (`jmbs.solvability(model)`, null-space method) at the reference, straight ahead:",
        _checks_table(rank_checks),
        _table(["element", "type", "bodies", "paper", "jmbs", "components, straight",
                f"components, steered {turn:g}°", "margin [digits]", ""], rows),
        "The paper's eliminated constraints: removing each pair leaves the rank at 20, and "
        "none of the eliminated components is unique. Straight ahead, the x components of B "
        "and C are unique (the knife edges' normals then have no x component); steered, they "
        "are not, as the paper's Fig. 4 shows for B:",
        _checks_table(eliminated),
        f"Along a steering sweep (`jmbs.solvability_path`, W1 steered from −80° to 80°, "
        f"{len(angles)} configurations, changes bisected to 1e-10 between them), the rank and "
        "the reactions' verdicts never change:",
        _checks_table(along),
        f"The sweep also locates {len(sweep.events) - len(changes)} component-level change(s) "
        f"({', '.join(f'{e.s:+.1e}°' for e in sweep.events if e not in changes) or 'none'}) of "
        f"{', '.join(varying) or 'no component'}: unique only within the criterion's tolerance "
        "(1e-6) of the straight-ahead configuration."]

    # One panel under the other: each panel's legend sits to its right.
    fig, axes = figs.plt.subplots(2, 1, figsize=(9, 8))
    for ax, r, title in zip(axes, (rep, rep_turn), ("straight ahead (reference)", f"W1 steered {turn:g}°")):
        jmbs.plotting.plot_mechanism(model, report=r, ax=ax, title=title)
    sec.text.append(figs.save(fig, "mobile_robot", "Mobile robot: joints coloured by the uniqueness "
                                                   "of their reactions (jmbs.plotting.plot_mechanism)."))
    fig = jmbs.plotting.plot_sweep(sweep, xlabel="steering angle of W1 [deg]")
    sec.text.append(figs.save(fig, "mobile_robot_sweep", "Rank, redundancy and uniqueness along the "
                                                         "steering sweep (jmbs.plotting.plot_sweep)."))
    sec.results = {"reference": {k: v[0] for k, v in ranks.items()}, "rank_margin": rep.rank_margin,
                   "unique": {el: rep.is_unique(el) for el in model.element_names},
                   "components": {el: _components(rep, el) for el in model.element_names},
                   "components_steered": {el: _components(rep_turn, el) for el in model.element_names},
                   "sweep_angles_deg": angles.tolist(), "sweep_ranks": {k: v[1:] for k, v in ranks.items()},
                   "sweep_events": [dataclasses.asdict(e) for e in sweep.events]}
    return sec


def _gripper(figs: _Figures, short: bool) -> _Section:
    sec = _Section("Planar gripper: Tables 2, 4 and 6", ("003",), "gripper (planar, 4 bodies), 3 actuations")
    sec.text.append(
        "**Mechanism** (`jmbs.examples.gripper`): translational joints Bt (ground–1, reaction "
        "along y), Ct (ground–2, along x), Dt (1–2, along (1, 1)), revolutes Br (1–3), Cr (2–4), "
        "Er (3–4), at φ4 = −π/6; without actuation, with a torque drive in Cr, and overactuated "
        "with a second (force) drive in Bt.\n\n"
        "**The paper** builds the free-body-diagram equilibrium `A x = b` (rows: the bodies' "
        "balances, `nv`; columns: reaction components and driving forces, `nc`) and declares "
        "an element's reaction unique iff `‖A_S N_S‖ = 0` with `A_S` of full rank. Its tables "
        "are reproduced below with jmbs's kinetostatic method "
        "(`jmbs.solvability(model, method=\"kinetostatic\")`).")
    reports = _kinetostatic_tables(sec, papers.GRIPPER_TABLES)
    fig, axes = figs.plt.subplots(3, 1, figsize=(8, 12), gridspec_kw={"hspace": 0.3})
    for ax, (name, rep) in zip(axes, reports.items()):
        jmbs.plotting.plot_mechanism(rep.model, report=rep, ax=ax, title=papers.GRIPPER_TABLES[name].title)
    sec.text.append(figs.save(fig, "gripper", "The gripper in its three actuations; joints and "
                                              "drives coloured by uniqueness."))
    return sec


def _spatial_parallelogram(figs: _Figures, short: bool) -> _Section:
    sec = _Section("Spatial parallelogram with a triple pendulum", ("001",),
                   "spatial parallelogram + triple pendulum (10 bodies)")
    model = jmbs.examples.spatial_parallelogram()
    rep = jmbs.solvability(model)
    ground = papers.SPATIAL_PARALLELOGRAM_GROUND
    C = np.asarray(jmbs.constraint_matrix(model, model.q0))
    in_ground = np.zeros(model.nc, bool)
    for j in ground:
        in_ground[model.rows(j)] = True
    # The paper's symmetric ground-connection matrix (relative coordinates) has the
    # absolute-coordinate counterpart G = C_G V_I V_I^T C_G^T (V_I: null space of the
    # other joints' rows), of size = the ground rows and rank = rank C - rank C_I.
    G = [int(in_ground.sum()), _rank(C) - _rank(C[~in_ground])]
    change, each = _ground_resultant(rep, ground)
    sec.text.append(
        "**Mechanism** (`jmbs.examples.spatial_parallelogram`): rods 1–4 parallel (ground joints "
        "A, C, E, G; platform joints B, D, F, H), rods 5–6 parallel in a second direction "
        "(ground K, M; platform L, N), platform 7 and a pendulum 7–8–9–10 through P, Q, R; "
        "15 spherical joints, θ = π/12.\n\n"
        "**The paper** analyses it in relative coordinates by divide and conquer: the platform's "
        "multijoint connection to the ground gives an 18 × 18 symmetric matrix of rank 17; the "
        "reactions of A–H are not unique, those of K, L, M, N, P, Q, R are. jmbs works in "
        "absolute coordinates; uniqueness does not depend on the coordinates, so the "
        "classification must be the same.")
    structure = sec.add(
        _check("ground-connection matrix: size, rank", list(papers.SPATIAL_PARALLELOGRAM_GROUND_MATRIX), G),
        _check("degree of redundancy p (18 − 17)", 1, rep.redundancy))
    rows = []
    for el, paper in papers.SPATIAL_PARALLELOGRAM.items():
        (c,) = sec.add(_check(f"reaction of {el}", paper, _verdict(rep.is_unique(el))))
        rows.append([el, "–".join(model.element(el).bodies), paper, c.obtained,
                     f"{min(rep.margin(el), 99):.1f}", _mark(c.passed)])
    resultant = sec.add(_check("resultant of the ground joints on the ground: change along null(C^T)",
                               "< 1e-12", change, change < 1e-12))
    sec.text += [
        f"**jmbs** (`jmbs.solvability(model)`, null-space method): rank {rep.rank} of {model.nc} rows, "
        f"p = {rep.redundancy}, rank margin {rep.rank_margin:.1f} digits. The ground-connection "
        "matrix's absolute-coordinate counterpart `G = C_G V_I V_I^T C_G^T` has as many rows "
        "as the ground joints and rank `rank C − rank C_I`:",
        _checks_table(structure),
        _table(["joint", "bodies", "paper", "jmbs", "margin [digits]", ""], rows),
        "Beyond the paper: the wrench the ground receives. Along the free direction of the "
        f"multipliers the wrenches of {_changing(each)} on the ground change (relative size in "
        "brackets), their resultant "
        "does not: what a force plate under the mechanism measures is unique, as in any "
        "mechanism (it balances the weights and inertia forces, which the motion fixes). "
        "(`SolvabilityReport.is_unique_group` answers another question: whether the group's "
        "generalized force on the moving bodies is unique; it acts on six different rods, so it is "
        "unique only if each of its joints is.)",
        _checks_table(resultant)]
    fig = figs.plt.figure(figsize=(7, 6))
    jmbs.plotting.plot_mechanism(model, report=rep, ax=fig.add_subplot(projection="3d"))
    sec.text.append(figs.save(fig, "spatial_parallelogram", "Spatial parallelogram: joints coloured by "
                                                            "the uniqueness of their reactions."))
    sec.results = {"rank": rep.rank, "redundancy": rep.redundancy, "ground_matrix": G,
                   "unique": {el: rep.is_unique(el) for el in papers.SPATIAL_PARALLELOGRAM},
                   "ground_resultant_change": change, "ground_joint_change": each}
    return sec


def _manipulator(figs: _Figures, short: bool) -> _Section:
    sec = _Section("Redundant manipulator: Tables 8 and 10", ("003",),
                   "hydraulic manipulator (spatial, 7 and 9 bodies)")
    sec.text.append(
        "**Mechanism** (`jmbs.examples.redundant_manipulator`): turret, boom and arm (revolutes "
        "A, C, E), a boom and an arm cylinder (revolutes B, D, F, G; cylindrical Hc, Ic), "
        "drives in A, Hc and Ic, at q = (0, 3π/4, 5π/6); overactuated: a twin boom cylinder "
        "(revolutes J, K, cylindrical Lc) with a fourth drive in Lc. The paper's joint names "
        "carry the type (Ar, Br, …); its drives Ar, Hc, Ic, Lc are jmbs's drivers dA, dHc, dIc, "
        "dLc.\n\n"
        "**The paper** (kinetostatic method): the joint A to the ground is the only unique "
        "reaction; all drives are unique in the redundant manipulator, only dA and dIc in the "
        "overactuated one (the twin cylinders share the boom's load in an undetermined way).")
    reports = _kinetostatic_tables(sec, papers.MANIPULATOR_TABLES)
    fig = figs.plt.figure(figsize=(15, 6))
    fig.subplots_adjust(wspace=0.45)  # room for the first panel's legend
    for k, (name, rep) in enumerate(reports.items()):
        jmbs.plotting.plot_mechanism(rep.model, report=rep, ax=fig.add_subplot(1, 2, k + 1, projection="3d"),
                                     title=papers.MANIPULATOR_TABLES[name].title)
    sec.text.append(figs.save(fig, "manipulator", "The redundant manipulator and its overactuated "
                                                  "variant; joints coloured by uniqueness."))
    return sec


def _loops(figs: _Figures, short: bool) -> _Section:
    sec = _Section("Parallelogram and Bricard mechanism: one redundancy shared by a loop", ("002", "A04"),
                   "parallelogram (planar), Bricard (IFToMM A04)")
    par = jmbs.examples.parallelogram()
    rp = jmbs.solvability(par)
    bri = jmbs.examples.bricard()
    rb = jmbs.solvability(bri)
    ground = [j for j in bri.element_names if GROUND in bri.element(j).bodies]
    change, each = _ground_resultant(rb, ground)

    t1 = 1.0 if short else 5.0
    ts = np.linspace(0.0, t1, int(round(25 * t1)) + 1)
    sol = jmbs.simulate(bri, t1, formulation=jmbs.NullSpaceProjection(), stabilization=jmbs.Projection(),
                        saveat=ts, throw=False)
    x = np.asarray(sol.reactions.point("J3"))[:, 0]
    violation = float(np.max(sol.violation))
    energy = np.asarray(sol.energy)
    drift = float(np.max(np.abs(energy - energy[0])) / np.abs(energy[0]))
    # Newton for the whole mechanism: the ground joints' resultant force on the rods
    # equals sum m (a - g); J1 acts on rod 1, J6 on the ground.
    f_ground = np.asarray(sol.reactions.force("J1") - sol.reactions.force("J6"))
    m = np.asarray(bri.mass)
    a = np.asarray(sol.v_dot).reshape(len(ts), bri.n_bodies, 6)[:, :, :3]
    newton = np.einsum("b,tbd->td", m, a - np.asarray(bri.gravity))
    newton_error = float(np.abs(f_ground - newton).max() / np.abs(newton).max())

    sec.text.append(
        "**Mechanisms**: `jmbs.examples.parallelogram` — three equal cranks pinned to the ground "
        "and to one coupler (a parallelogram with a third crank); `jmbs.examples.bricard` — "
        "IFToMM A04, five 1 m rods and six revolutes in one loop, J1 and J6 to the ground.\n\n"
        "**What is known**: both have one redundant constraint (the Bricard's Grübler count is 0, "
        "its real mobility 1). The redundancy is a self-stress that runs through every joint of "
        "the loop, so no joint reaction is unique; in the parallelogram the self-stress acts "
        "along the cranks (axial forces t = (1, −2, 1)), so with vertical cranks the x components "
        "are unique. Paper 002 and IFToMM A04: released at rest under gravity, the Bricard "
        "moves (joint J3 from x = +1 to x = −1 at t ≈ 2.5 s and back at t ≈ 5 s) with energy "
        "conserved; projection keeps the constraint violation at rounding level.")

    unique_p = [el for el in par.element_names if rp.is_unique(el)]
    comps_p = {el: _components(rp, el) for el in par.element_names}
    unique_b = [el for el in bri.element_names if rb.is_unique(el)]
    structure = sec.add(
        _check("parallelogram: redundancy p", papers.PARALLELOGRAM["redundancy"], rp.redundancy),
        _check("parallelogram: joints with a unique reaction", list(papers.PARALLELOGRAM["unique"]),
               unique_p),
        _check("parallelogram, vertical cranks: components", dict.fromkeys(par.element_names, "Fx:U Fy:N"),
               comps_p),
        _check("Bricard: Grübler count nv − nc, p, dof",
               {k: papers.BRICARD[k] for k in ("grubler", "redundancy", "dof")},
               {"grubler": bri.nv - bri.nc, "redundancy": rb.redundancy, "dof": rb.dof}),
        _check("Bricard: joints with a unique reaction", list(papers.BRICARD["unique"]), unique_b),
        _check("Bricard: resultant of J1, J6 on the ground, change along null(C^T)", "< 1e-12", change,
               change < 1e-12))

    dynamics = sec.add(
        _check("simulation result", "success", sol.message),
        _check("max constraint violation |Φ|", "< 1e-10", violation, violation < 1e-10),
        _check("relative energy error", "< 1e-6", drift, drift < 1e-6),
        _check("saved states where any joint's reaction is flagged unique", 0,
               int(np.asarray(sol.reactions.unique).any(axis=1).sum())),
        _check("ground resultant force vs Σ m (a − g), relative", "< 1e-8", newton_error,
               newton_error < 1e-8))
    swing = papers.BRICARD_SWING
    if not short:
        t_min, x_min = _extremum(ts, x, -1.0)
        x_end = float(x[-1])
        dynamics += sec.add(
            _check("J3: time of x = −1 [s]", f"{swing['t_min']} ± 0.05", t_min,
                   abs(t_min - swing["t_min"]) < 0.05),
            _check("J3: minimum x [m]", f"{swing['x_min']} ± 1e-3", x_min,
                   abs(x_min - swing["x_min"]) < 1e-3),
            _check(f"J3: x at t = {swing['t_return']:g} s [m]", f"{swing['x_return']} ± 1e-2", x_end,
                   abs(x_end - swing["x_return"]) < 1e-2))

    sec.text += [
        f"**jmbs** (`jmbs.solvability`): parallelogram rank {rp.rank} of {par.nc}, Bricard rank "
        f"{rb.rank} of {bri.nc} (rank margin {rb.rank_margin:.1f} digits).",
        _checks_table(structure),
        f"Along the free direction of the Bricard's multipliers the wrenches of {_changing(each)} "
        "on the ground change, their resultant does not.",
        f"**Bricard simulation**, {t1:g} s (`jmbs.simulate`, `NullSpaceProjection()` + "
        f"`Projection()`, Tsit5, rtol = atol = 1e-8; {int(sol.stats['num_accepted_steps'])} steps). "
        "The reactions of J1 and J6 are the formulation's choice (minimum norm) and flagged "
        "non-unique at every state; their resultant obeys Newton's law for the whole mechanism:",
        _checks_table(dynamics)]

    fig = figs.plt.figure(figsize=(14, 5))
    fig.subplots_adjust(wspace=0.45)
    jmbs.plotting.plot_mechanism(par, report=rp, ax=fig.add_subplot(1, 2, 1), title="parallelogram")
    jmbs.plotting.plot_mechanism(bri, report=rb, ax=fig.add_subplot(1, 2, 2, projection="3d"),
                                 title="Bricard")
    sec.text.append(figs.save(fig, "loops", "Parallelogram with a third crank and Bricard mechanism: "
                                            "no joint reaction is unique."))
    fig, axes = figs.plt.subplots(3, 1, sharex=True, figsize=(8, 8))
    axes[0].plot(ts, x, "k-")
    if not short:
        axes[0].plot([swing["t_min"], swing["t_return"]], [swing["x_min"], swing["x_return"]], "o",
                     mfc="none", color="C3", ms=10, label="IFToMM A04")
        axes[0].legend()
    axes[0].set_ylabel("x of joint J3 [m]")
    axes[1].semilogy(ts, np.maximum(np.asarray(sol.violation), 1e-17), label="max |Φ| [m]")
    axes[1].semilogy(ts, np.maximum(np.abs(energy - energy[0]) / abs(energy[0]), 1e-17),
                     label="|E − E0| / |E0|")
    axes[1].legend()
    for k, axis in enumerate("xyz"):
        axes[2].plot(ts, f_ground[:, k], f"C{k}-", label=f"{axis}: J1 + J6 from the reactions")
        axes[2].plot(ts, newton[:, k], f"C{k}o", ms=3, mfc="none", label=f"{axis}: Σ m (a − g)")
    axes[2].set_ylabel("ground resultant force [N]")
    axes[2].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[2].set_xlabel("t [s]")
    fig.suptitle("Bricard released at rest (NullSpaceProjection + Projection)")
    sec.text.append(figs.save(fig, "bricard_run", "Bricard run: the tracked joint, the constraint violation "
                                                  "and energy error, and the unique ground resultant."))
    fig = jmbs.plotting.plot_reactions(sol, names=["J1", "J6"])
    sec.text.append(figs.save(fig, "bricard_reactions", "Reaction forces of the ground joints J1 and J6: "
                                                        "not unique (dashed), the null-space projection's "
                                                        "minimum-norm choice."))
    if not short:
        gif = jmbs.plotting.animate(bri, sol, figs.folder / "bricard.gif", fps=12, every=2)
        sec.text.append(f"![Bricard motion](figures/{gif.name})\n\n*The Bricard's motion, {t1:g} s "
                        "(jmbs.plotting.animate).*")
    sec.results = {
        "parallelogram": {"rank": rp.rank, "redundancy": rp.redundancy, "unique": unique_p,
                          "components": comps_p},
        "bricard": {"rank": rb.rank, "redundancy": rb.redundancy, "dof": rb.dof, "unique": unique_b,
                    "ground_resultant_change": change, "ground_joint_change": each},
        "simulation": {"t1": t1, "steps": int(sol.stats["num_accepted_steps"]), "max_violation": violation,
                       "relative_energy_error": drift, "newton_relative_error": newton_error,
                       "x_J3": x.tolist(), "ts": ts.tolist()}}
    return sec


def _slider_crank(figs: _Figures, short: bool) -> _Section:
    sec = _Section("Driven slider-crank: kinematics against the closed form", (),
                   "slider-crank (planar, crank driven)")
    omega, theta0 = 2.0, math.pi / 6
    model = jmbs.examples.slider_crank(theta=theta0, omega=omega)
    ts = jnp.linspace(0.0, 2 * math.pi / omega, 41 if short else 201)
    sol = jmbs.kinematics(model, ts)
    k = 3 * model.body_index("slider")

    def x_of_t(t):
        return jmbs.examples.slider_crank_position(theta0 + omega * t)[0]

    exact = {"x": jax.vmap(x_of_t)(ts), "v": jax.vmap(jax.grad(x_of_t))(ts),
             "a": jax.vmap(jax.grad(jax.grad(x_of_t)))(ts)}
    got = {"x": sol.q[:, k], "v": sol.v[:, k], "a": sol.v_dot[:, k]}
    err = {n: float(jnp.max(jnp.abs(got[n] - exact[n]))) for n in exact}
    residual = float(jnp.max(sol.residual))
    tol = {"x": 1e-10, "v": 1e-9, "a": 1e-8}
    sec.text.append(
        "**Mechanism** (`jmbs.examples.slider_crank(theta=π/6, omega=2)`): crank 0.5 m, rod "
        "1.5 m, slider on the x axis, the crank driven at 2 rad/s. No paper: the reference is "
        "the closed form of the slider position (`jmbs.examples.slider_crank_position`) and "
        f"its time derivatives by `jax.grad`. jmbs solves position, velocity and acceleration "
        f"(`jmbs.kinematics`) at {len(ts)} times over one crank turn.")
    sec.text.append(_checks_table(sec.add(
        *(_check(f"max |{n}_slider − closed form|", f"< {tol[n]:g}", err[n], err[n] < tol[n]) for n in err),
        _check("max |Φ| over the run", "< 1e-10", residual, residual < 1e-10))))

    fig = figs.plt.figure(figsize=(8, 10))
    grid = fig.add_gridspec(4, 1, height_ratios=(1.3, 1, 1, 1))
    jmbs.plotting.plot_mechanism(model, ax=fig.add_subplot(grid[0]), title="t = 0")
    for row, (n, unit) in enumerate(zip("xva", ("m", "m/s", "m/s²"))):
        ax = fig.add_subplot(grid[row + 1])
        ax.plot(ts, exact[n], "k-", lw=3, alpha=0.3, label="closed form")
        ax.plot(ts, got[n], "C0--", label="jmbs.kinematics")
        ax.set_ylabel(f"slider {n} [{unit}]")
        if row == 0:
            ax.legend()
    ax.set_xlabel("t [s]")
    sec.text.append(figs.save(fig, "slider_crank", "Slider-crank: slider position, velocity and "
                                                   "acceleration, jmbs against the closed form."))
    sec.results = {"errors": err, "max_residual": residual, "n_times": len(ts)}
    return sec


SECTIONS = (_mobile_robot, _gripper, _spatial_parallelogram, _manipulator, _loops, _slider_crank)


# ----- the report -----

def run_demo(out: Path, *, short: bool = False, progress: bool = True) -> Path:
    """Reproduce the papers' central results on the bundled mechanisms and write a report.

    **Arguments:**
    - `out`: folder for `report.md`, `results.json` and `figures/` (created; files
      of an earlier run are overwritten).
    - `short`: fewer sweep points and a 1 s instead of a 5 s simulation, no GIF
      (the test suite's mode, about a minute on two cores).
    - `progress`: a progress bar over the sections on stderr.

    **Returns:** the path of `report.md`. `results.json` beside it holds every
    number and check and `"all_passed"` (false when jmbs differs from a paper).
    """
    import matplotlib

    matplotlib.use("Agg")
    import jmbs.plotting  # noqa: F401  (after the backend is chosen)

    out = Path(out)
    figs = _Figures(out / "figures")
    start = time.perf_counter()
    sections = []
    bar = tqdm(SECTIONS, desc="jmbs demo", unit="section", file=sys.stderr, disable=not progress)
    for make in bar:
        bar.set_postfix_str(make.__name__.strip("_").replace("_", " "))
        t0 = time.perf_counter()
        sec = make(figs, short)
        sec.seconds = time.perf_counter() - t0
        sections.append(sec)
    total = time.perf_counter() - start

    checks = [c for s in sections for c in s.checks]
    all_passed = all(c.passed for c in checks)
    version = importlib.metadata.version("jmbs")
    results = {"jmbs": version, "short": short, "all_passed": all_passed, "seconds": round(total, 1),
               "n_checks": len(checks), "n_passed": sum(c.passed for c in checks),
               "sections": [{"title": s.title, "papers": list(s.cites), "mechanism": s.mechanism,
                             "seconds": round(s.seconds, 1), "passed": sum(c.passed for c in s.checks),
                             "total": len(s.checks), "checks": [dataclasses.asdict(c) for c in s.checks],
                             "results": s.results} for s in sections]}
    (out / "results.json").write_text(json.dumps(results, indent=1, default=_json))

    def cited(keys: tuple[str, ...]) -> str:
        authors = [papers.PAPERS[k].split(":")[0] for k in keys]
        return "; ".join(f"{k} {a.split(',')[0] + ' et al.' if ',' in a else a}"
                         for k, a in zip(keys, authors)) or "closed form"

    summary = _table(["", "section", "paper", "mechanism", "checks", "time [s]"],
                     [["✅" if all(c.passed for c in s.checks) else "❌", f"[{s.title}](#section-{k + 1})",
                       cited(s.cites), s.mechanism, f"{sum(c.passed for c in s.checks)}/{len(s.checks)}",
                       f"{s.seconds:.0f}"] for k, s in enumerate(sections)])
    verdict = (f"**All {len(checks)} checks pass.**" if all_passed else
               f"**{len(checks) - results['n_passed']} of {len(checks)} checks differ** (marked ❌).")
    lines = [
        "# jmbs: the papers' results, reproduced", "",
        f"jmbs {version}, {datetime.date.today().isoformat()}, {'short' if short else 'full'} run "
        f"(`jmbs demo`), {total:.0f} s including JIT compilation. {verdict}", "",
        "Each section names the mechanism (all bundled in `jmbs.examples`), what the paper "
        "reports, what jmbs computes, and per item whether they match. **U**: the reaction (or "
        "driving force) is uniquely determined by the rigid model; **N**: it is not — its value "
        "depends on how a solver resolves the redundancy. Margins are the decimal digits "
        "between a decision's criterion and its tolerance. Every number is also in "
        "`results.json`.", "",
        summary, "",
        "Papers: " + "; ".join(f"**{k}** {v}" for k, v in papers.PAPERS.items()) + ".", ""]
    for k, s in enumerate(sections):
        heading = f"## {k + 1}. {s.title}" + (f" ({', '.join(s.cites)})" if s.cites else "")
        lines += [f'<a id="section-{k + 1}"></a>', "", heading, "", *(block + "\n" for block in s.text)]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    return report


def _json(x):
    """NumPy scalars and arrays in `results.json`."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.tolist()
    raise TypeError(f"{type(x).__name__} is not JSON serialisable")
