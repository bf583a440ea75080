# %% [markdown]
# # Uniqueness of reactions in two overconstrained linkages with one redundancy
#
# **Planar parallelogram with a third crank** (`examples.parallelogram`): three
# equal cranks pinned to the ground and to one coupler, `p = 1`. The redundancy
# is a self-stress: the cranks are two-force members with axial forces `t_k`
# along the crank direction `u`, and the coupler's equilibrium (no load),
# `sum t_k = 0` and `sum x_k t_k = 0` (moments, pivots at `x_k`), leaves the
# one-dimensional self-stress `t = (1, -2, 1)`. Every joint carries it, so no
# joint reaction is unique; its components are unique exactly where the
# self-stress has no component, i.e. `Fx` when the cranks are vertical (the
# reference configuration). jmbs's null space of `C^T` must be this self-stress.
#
# **Bricard mechanism** (IFToMM A04): six revolute joints in one loop, Grübler
# count 0, mobility 1, `p = 1`; no joint reaction is unique, and this holds all
# along its motion (both halves of its loop, `jmbs.reproduce.random_configurations`).
#
# Both with all five methods at the reference and over random configurations.
#
# Run: `.venv/bin/python experiments/solvability_parallelogram_bricard.py [--short] [--out DIR]`

# %%
import json
import sys
from pathlib import Path

import jax
import numpy as np

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run  # noqa: E402

from jmbs.reproduce import random_configurations
from jmbs.reproduce.papers import BRICARD, PARALLELOGRAM

METHODS = ("rank", "qr", "svd", "nullspace", "kinetostatic")
BATCH = 256  # configurations per compiled sweep call (the tests use the same)
CTOL = 1e-6  # the methods' default criterion tolerance


def sweeps(model, qs, ts) -> dict:
    """Every method over the reference (row 0) and the random configurations."""
    Q = np.vstack([np.asarray(model.q0)[None], qs])
    T = np.concatenate([[0.0], ts])
    return {m: jmbs.solvability_sweep(model, Q, T, method=m, batch_size=BATCH, progress=False)
            for m in METHODS}


def agreement(sw: dict) -> tuple[bool, bool, list[int], float]:
    sigs = {m: s.signature() for m, s in sw.items()}
    base = sigs["nullspace"]
    at_ref = all((s[0] == base[0]).all() for s in sigs.values())
    everywhere = all((s == base).all() for s in sigs.values())
    ranks = sorted(set(np.concatenate([s.rank for s in sw.values()]).tolist()))
    return at_ref, everywhere, ranks, min(float(s.rank_margin.min()) for s in sw.values())


def self_stress(model, q: np.ndarray) -> np.ndarray:
    """The analytic self-stress of the parallelogram as multipliers of its rows:
    crank k carries `t_k u` at both of its joints (O_k and B_k, components Fx, Fy),
    `t` spanning the null space of the coupler's equilibrium `[1 1 1; x_0 x_1 x_2]`."""
    p = model.params()
    x = np.array([float(p[f"O{k}.point"][0]) for k in range(3)])
    t = np.linalg.svd(np.stack([np.ones(3), x]))[2][-1]
    a = q.reshape(-1, 3)[0, 2]  # the cranks' angle
    u = np.array([np.cos(a), np.sin(a)])
    lam = np.zeros(model.nc)
    for k in range(3):
        for joint in (f"O{k}", f"B{k}"):
            lam[model.rows(joint)] = t[k] * u
    return lam / np.linalg.norm(lam)


def parallelogram(n: int) -> tuple[str, dict]:
    model, qs, ts = random_configurations("parallelogram", n, seed=1)
    sw = sweeps(model, qs, ts)
    Q = np.vstack([np.asarray(model.q0)[None], qs])
    Cs = np.asarray(jax.jit(jax.vmap(lambda q: jmbs.constraint_matrix(model, q, 0.0)))(Q))
    residual, alignment, predicted = [], [], []
    for q, C in zip(Q, Cs):
        lam = self_stress(model, q)
        U, s, _ = np.linalg.svd(C)
        N = U[:, -1]  # null(C^T) is one-dimensional (rank 11 of 12)
        residual.append(np.abs(C.T @ lam).max() / np.abs(C).max())
        alignment.append(abs(N @ lam))
        predicted.append(np.abs(lam) <= CTOL)
    predicted = np.array(predicted)
    comp_match = all((s.component_unique == predicted).all() for s in sw.values())
    at_ref, everywhere, ranks, margin = agreement(sw)
    ref = sw["nullspace"]
    rows = []
    for el in model.element_names:
        comps = " ".join(f"{c}:{'U' if u else 'N'}" for c, u in
                         zip(model.element(el).components, ref.unique_components(el)[0]))
        pred = " ".join(f"{c}:{'U' if u else 'N'}" for c, u in
                        zip(model.element(el).components, predicted[0][model.rows(el)]))
        rows.append([el, "U" if el in PARALLELOGRAM["unique"] else "N",
                     "U" if ref.is_unique(el)[0] else "N", pred, comps])
    lam0 = self_stress(model, Q[0])
    lam0 = (np.round(lam0 / np.abs(lam0).max(), 3) + 0.0).tolist()
    text = "\n".join([
        "Planar parallelogram with a third crank (vertical cranks at the reference):",
        format_table(["joint", "expected", "jmbs", "self-stress: components", "jmbs components"], rows),
        f"rank {int(ref.rank[0])} of {model.nc} rows (p = {model.nc - int(ref.rank[0])}); self-stress "
        f"t = (1, -2, 1) along the cranks: multipliers {lam0}",
        f"max |C^T lambda| / max |C| = {max(residual):.1e}; |cos(lambda, null(C^T))| >= "
        f"{min(alignment):.15f} over the reference and {n} random crank angles; jmbs's component "
        f"decisions {'equal' if comp_match else 'DIFFER FROM'} the self-stress prediction everywhere",
        f"five methods at the reference: {'agree' if at_ref else 'DISAGREE'}; over {n} random "
        f"configurations: {'agree' if everywhere else 'DISAGREE'}; rank {ranks}; no joint reaction "
        f"unique anywhere: {not any(s.unique.any() for s in sw.values())}; smallest rank margin "
        f"{margin:.1f} digits"])
    return text, {
        "rank": int(ref.rank[0]), "redundancy": model.nc - int(ref.rank[0]),
        "unique": {el: bool(ref.is_unique(el)[0]) for el in model.element_names},
        "components_reference": {el: ref.unique_components(el)[0].tolist() for el in model.element_names},
        "self_stress_residual": max(residual), "self_stress_alignment": min(alignment),
        "components_match_self_stress": bool(comp_match),
        "none_unique_anywhere": not any(s.unique.any() for s in sw.values()),
        "methods_agree_reference": bool(at_ref), "methods_agree_sweep": bool(everywhere),
        "sweep_ranks": ranks, "n_sweep": n, "min_rank_margin": margin}


def bricard(n: int) -> tuple[str, dict]:
    model, qs, ts = random_configurations("bricard", n, seed=1)
    sw = sweeps(model, qs, ts)
    at_ref, everywhere, ranks, margin = agreement(sw)
    ref = sw["nullspace"]
    rows = []
    for el in model.element_names:
        comps = " ".join(f"{c}:{'U' if u else 'N'}" for c, u in
                         zip(model.element(el).components, ref.unique_components(el)[0]))
        rows.append([el, "-".join(model.element(el).bodies), "U" if el in BRICARD["unique"] else "N",
                     "U" if ref.is_unique(el)[0] else "N",
                     comps, f"{min(ref.margin[0, model.element_names.index(el)], 99):.1f}"])
    none = not any(s.unique.any() or s.component_unique.any() for s in sw.values())
    text = "\n".join([
        "Bricard mechanism (IFToMM A04), reference configuration:",
        format_table(["joint", "bodies", "expected", "jmbs", "components", "margin"], rows),
        f"rank {int(ref.rank[0])} of {model.nc} rows: p = {model.nc - int(ref.rank[0])}, "
        f"dof = {model.nv - int(ref.rank[0])} (Grübler: {model.nv - model.nc})",
        f"five methods at the reference: {'agree' if at_ref else 'DISAGREE'}; over {n} random "
        f"configurations along its motion: {'agree' if everywhere else 'DISAGREE'}; rank {ranks}; "
        f"no reaction or component unique anywhere: {none}; smallest rank margin {margin:.1f} digits"])
    return text, {
        "rank": int(ref.rank[0]), "redundancy": model.nc - int(ref.rank[0]),
        "dof": model.nv - int(ref.rank[0]),
        "unique": {el: bool(ref.is_unique(el)[0]) for el in model.element_names},
        "none_unique_anywhere": bool(none), "methods_agree_reference": bool(at_ref),
        "methods_agree_sweep": bool(everywhere), "sweep_ranks": ranks, "n_sweep": n,
        "min_rank_margin": margin}


def main(short: bool = False, out: Path | None = None) -> dict:
    n = 100 if short else 1000
    texts, results = [], {}
    for name, analyse in (("parallelogram", parallelogram), ("bricard", bricard)):
        text, results[name] = analyse(n)
        texts.append(text)
        print(text + "\n")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "solvability_parallelogram_bricard.txt").write_text("\n\n".join(texts) + "\n")
        (out / "solvability_parallelogram_bricard.json").write_text(json.dumps(results, indent=1))
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
