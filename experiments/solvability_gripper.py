# %% [markdown]
# # Uniqueness of reactions and drives in the planar gripper (Pękal & Frączek, Tables 2, 4, 6)
#
# The kinetostatic (free-body-diagram) method at the paper's configuration
# (`phi4 = -pi/6`): for each studied element the criterion `||A_S N_S||`, the rank
# of `A_S` and the verdict, next to the paper's, for the gripper without
# actuation (Tab. 2), with a torque drive in Cr (Tab. 4) and overactuated with a
# second drive in Bt (Tab. 6). Then all five methods at that configuration, and
# a sweep over random configurations along the gripper's motion
# (`jmbs.reproduce.random_configurations`): the rank and every decision stay the
# same, and the five methods agree everywhere.
#
# One configuration of the overactuated gripper is special without being
# singular: where the sliders' common slide is stationary in the jaw angle
# (`d s / d phi4 = 0`, about 0.097 rad before the paper's configuration), the Bt
# drive cannot move the gripper (a dead point of that actuator), and the Cr
# torque becomes unique while the rank stays 12. jmbs finds it too.
#
# Run: `.venv/bin/python experiments/solvability_gripper.py [--short] [--out DIR]`

# %%
import sys
from pathlib import Path

import jax
import numpy as np

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import paper_table, run, write_outputs  # noqa: E402

from jmbs.examples import gripper_slide
from jmbs.reproduce import random_configurations
from jmbs.reproduce.papers import GRIPPER_TABLES as PAPER

METHODS = ("rank", "qr", "svd", "nullspace", "kinetostatic")
BATCH = 256  # configurations per compiled sweep call (the tests use the same)


def dead_point(model) -> tuple[float, np.ndarray]:
    """The Cr angle `t` from the reference where the common slide `s(phi4)` is
    stationary (bisection on `ds/dphi4`, by `jax.grad`, over the sampled range
    `(-1, 0)`), and the configuration there (`jmbs.assemble` from the reference:
    the model's Cr drive is `f(t) = t`)."""
    p = model.params()
    B, C, E = (np.asarray(p[f"{k}.point"]) for k in ("Br", "Cr", "Er"))
    ref = float(np.arctan2(E[1] - C[1], E[0] - C[0]))
    slope = jax.grad(lambda t: gripper_slide(ref + t, float(B[0]), float(C[1]),
                                             float(np.linalg.norm(E - C)), ref))
    lo, hi = -1.0, 0.0
    assert slope(lo) > 0 > slope(hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if slope(mid) > 0 else (lo, mid)
    t = 0.5 * (lo + hi)
    return t, np.asarray(jmbs.assemble(model, model.q0, t))


def sweeps(model, Q, T) -> dict:
    """Every method over the configurations `Q` at times `T`."""
    return {m: jmbs.solvability_sweep(model, Q, T, method=m, batch_size=BATCH, progress=False)
            for m in METHODS}


def summarize(model, sw: dict, expected: dict, rank: int, rows=slice(None)) -> tuple[str, dict]:
    """Agreement of the methods at the reference (row 0) and over the random
    configurations (the other `rows`), and whether the rank and the paper's pattern
    hold in every one."""
    sigs = {m: s.signature()[rows] for m, s in sw.items()}
    ref = sigs["nullspace"]
    at_ref = all((s[0] == ref[0]).all() for s in sigs.values())
    everywhere = all((s == ref).all() for s in sigs.values())
    cols = [model.element_names.index(el) for el in expected]
    want = np.array([expected[el][-1] == "U" for el in expected])
    ranks = {m: np.unique(s.rank[rows]).tolist() for m, s in sw.items()}
    unique = {m: s.unique[rows] for m, s in sw.items()}
    comps = {m: s.component_unique[rows] for m, s in sw.items()}
    pattern = all((u[:, cols] == want).all() for u in unique.values())
    constant = all((unique[m] == unique[m][0]).all() and (comps[m] == comps[m][0]).all() for m in sw)
    margin = min(float(s.rank_margin[rows].min()) for s in sw.values())
    crit = min(float(s.margin[rows].min()) for s in sw.values())
    n = len(ref) - 1
    text = (f"  five methods at the reference: {'agree' if at_ref else 'DISAGREE'}; "
            f"over {n} random configurations: {'agree' if everywhere else 'DISAGREE'}\n"
            f"  rank over the sweep: {ranks['nullspace']} (paper {rank}); the paper's pattern "
            f"{'holds' if pattern else 'FAILS'} in every configuration; decisions "
            f"{'constant' if constant else 'CHANGE'}; smallest rank margin {margin:.1f}, "
            f"smallest criterion margin {crit:.1f} digits")
    return text, {"methods_agree_reference": bool(at_ref), "methods_agree_sweep": bool(everywhere),
                  "sweep_ranks": ranks, "pattern_everywhere": bool(pattern),
                  "decisions_constant": bool(constant), "n_sweep": n, "min_rank_margin": margin,
                  "min_criterion_margin": crit}


def main(short: bool = False, out: Path | None = None) -> dict:
    n = 100 if short else 1000
    results, texts = {}, []
    for name, (title, _, rank, expected) in PAPER.items():
        model, qs, ts = random_configurations(name, n, seed=1)
        table, res = paper_table(PAPER[name], model)
        Q = np.vstack([np.asarray(model.q0)[None], qs])
        T = np.concatenate([[0.0], ts])
        if name == "gripper_overactuated":
            t_dead, q_dead = dead_point(model)
            Q, T = np.vstack([Q, q_dead[None]]), np.concatenate([T, [t_dead]])
        sw = sweeps(model, Q, T)
        if name == "gripper_overactuated":
            special = {m: s.signature()[-1] for m, s in sw.items()}
            same = all((v == special["nullspace"]).all() for v in special.values())
            dead = {el: bool(sw["nullspace"].is_unique(el)[-1]) for el in expected}
            k = model.element_names.index("drive_Cr")
            table += (f"\n  dead point of the Bt drive (ds/dphi4 = 0) at t = {t_dead:.10f} rad from the "
                      f"reference (phi4 = {np.degrees(-np.pi / 6 + t_dead):.3f} deg): rank "
                      f"{int(sw['nullspace'].rank[-1])}, unique: "
                      f"{', '.join(el for el, u in dead.items() if u) or 'none'} (criterion of "
                      f"drive_Cr {sw['nullspace'].criterion[-1, k]:.1e}); five methods "
                      f"{'agree' if same else 'DISAGREE'}")
            res.update(dead_point_t=t_dead, dead_point_rank=int(sw["nullspace"].rank[-1]),
                       dead_point_unique=dead, dead_point_methods_agree=bool(same))
        rows = slice(0, len(Q) - 1) if name == "gripper_overactuated" else slice(None)
        summary, agree = summarize(model, sw, expected, rank, rows)
        results[name] = {**res, **agree}
        texts.append(f"{table}\n{summary}\n")
        print(texts[-1])
    write_outputs(out, "solvability_gripper", texts, results)
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
