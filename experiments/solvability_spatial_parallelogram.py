# %% [markdown]
# # Uniqueness of reactions in the spatial parallelogram with a triple pendulum (Pękal et al., §4)
#
# The divide-and-conquer paper analyses the mechanism in relative coordinates:
# the platform's multijoint connection to the ground (six spherical joints A, C,
# E, G, K, M through the rods) gives an 18 x 18 symmetric matrix of rank 17, and
# the reactions of A-H are not unique while those of K, L, M, N, P, Q, R are.
# jmbs works in absolute coordinates; uniqueness does not depend on the
# coordinates, so it must classify the joints in the same way. The paper's
# ground-connection matrix has an absolute-coordinate counterpart: with `C_G` the
# ground joints' rows and `V_I` an orthonormal basis of the null space of the other
# (internal) joints' rows, `G = C_G V_I V_I^T C_G^T` (18 x 18, symmetric) has rank
# `rank C - rank C_I`. Then all five methods, and a sweep over random
# configurations (platform anywhere on its circle away from the singular
# theta = +-pi/2, rods spun, pendulum in random orientations).
#
# Run: `.venv/bin/python experiments/solvability_spatial_parallelogram.py [--short] [--out DIR]`

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
from jmbs.reproduce.papers import SPATIAL_PARALLELOGRAM as PAPER
from jmbs.reproduce.papers import SPATIAL_PARALLELOGRAM_GROUND as GROUND
from jmbs.reproduce.papers import SPATIAL_PARALLELOGRAM_GROUND_MATRIX as PAPER_G

METHODS = ("rank", "qr", "svd", "nullspace", "kinetostatic")
BATCH = 256  # configurations per compiled sweep call (the tests use the same)


def rank_of(A, rtol: float = 1e-9) -> tuple[int, np.ndarray]:
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0, s


def ground_matrix(model, C: np.ndarray) -> tuple[np.ndarray, int, int, int]:
    """`G = C_G V_I V_I^T C_G^T` and the ranks of `G`, `C`, `C_I`."""
    rows = np.arange(model.nc)
    ground = np.isin(rows, np.concatenate([rows[model.rows(k)] for k in GROUND]))
    CG, CI = C[ground], C[~ground]
    rI, _ = rank_of(CI)
    _, _, Vt = np.linalg.svd(CI)
    VI = Vt[rI:].T  # orthonormal basis of null(C_I)
    G = CG @ VI @ VI.T @ CG.T
    return G, rank_of(G)[0], rank_of(C)[0], rI


def resultant_ground_wrench_unique(model, C: np.ndarray) -> float:
    """`max |W N|`: the total wrench of the ground joints on the ground (forces and
    moments about the origin; the ground joints' frames are global) applied to a
    basis `N` of `null(C^T)`. Zero: the resultant is unique."""
    U, s, _ = np.linalg.svd(C)
    N = U[:, rank_of(C)[0]:]
    W = np.zeros((6, model.nc))
    for k in GROUND:
        rows = np.arange(model.nc)[model.rows(k)]
        p = np.asarray(model.params()[f"{k}.point"])
        W[:3, rows] = np.eye(3)
        W[3:, rows] = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    return float(np.abs(W @ N).max())


def main(short: bool = False, out: Path | None = None) -> dict:
    n = 100 if short else 1000
    model, qs, ts = random_configurations("spatial_parallelogram", n, seed=1)
    Q = np.vstack([np.asarray(model.q0)[None], qs])
    T = np.concatenate([[0.0], ts])
    lines = ["Spatial parallelogram with a triple pendulum (paper 001, §4), theta = pi/12: "
             f"nc = {model.nc}, nv = {model.nv}"]

    # The ground-connection matrix, at the reference and over the sweep.
    Cs = np.asarray(jax.jit(jax.vmap(lambda q, t: jmbs.constraint_matrix(model, q, t)))(Q, T))
    G, rG, rC, rI = ground_matrix(model, Cs[0])
    sG = np.linalg.svd(G, compute_uv=False)
    sweep_G = sorted({ground_matrix(model, C)[1] for C in Cs[1:]})
    lines += [f"ground-connection matrix: paper {PAPER_G[0]} x {PAPER_G[0]}, rank {PAPER_G[1]}; "
              f"jmbs G = C_G V_I V_I^T C_G^T {G.shape[0]} x {G.shape[1]}, symmetric "
              f"(|G - G^T| = {np.abs(G - G.T).max():.1e}), rank {rG} = rank C - rank C_I = "
              f"{rC} - {rI}; its two smallest singular values {sG[-2]:.2e}, {sG[-1]:.1e}; "
              f"rank over {n} random configurations: {sweep_G}"]

    rep = jmbs.solvability(model, method="kinetostatic")
    rows, match = [], {}
    for el, paper in PAPER.items():
        got = "U" if rep.is_unique(el) else "N"
        match[el] = got == paper
        rows.append([el, "-".join(model.element(el).bodies), paper, got, f"{min(rep.margin(el), 99):.1f}",
                     "yes" if match[el] else "NO"])
    lines += [f"Reactions at the reference (kinetostatic method, rank {rep.rank}, p = {rep.redundancy}):",
              format_table(["joint", "bodies", "paper", "jmbs", "margin", "match"], rows)]
    group = rep.is_unique_group(list(GROUND))
    wrench = resultant_ground_wrench_unique(model, Cs[0])
    api = rep.resultant_margin(list(GROUND), "ground")
    lines += [f"is_unique_group({list(GROUND)}) = {group}: the group's generalized force acts on six "
              "different rods, so it is unique only if each of its joints is (A, C, E, G are not).",
              f"The resultant wrench of the ground joints on the ground is unique: max |W N| = "
              f"{wrench:.1e} (by hand from the joint points); rep.is_unique_resultant = {api[0]} "
              f"(criterion {api[1]:.1e})."]

    sw = {m: jmbs.solvability_sweep(model, Q, T, method=m, batch_size=BATCH, progress=False) for m in METHODS}
    sigs = {m: s.signature() for m, s in sw.items()}
    base = sigs["nullspace"]
    agree_ref = all((s[0] == base[0]).all() for s in sigs.values())
    agree = all((s == base).all() for s in sigs.values())
    cols = [model.element_names.index(el) for el in PAPER]
    want = np.array([PAPER[el] == "U" for el in PAPER])
    pattern = all((s.unique[:, cols] == want).all() for s in sw.values())
    ranks = sorted(set(np.concatenate([s.rank for s in sw.values()]).tolist()))
    margin = min(float(s.rank_margin.min()) for s in sw.values())
    lines += [f"five methods at the reference: {'agree' if agree_ref else 'DISAGREE'}; over {n} random "
              f"configurations: {'agree' if agree else 'DISAGREE'}; rank {ranks} of {model.nc} rows (one "
              f"redundancy, as in the paper); the paper's pattern {'holds' if pattern else 'FAILS'} "
              f"everywhere; smallest rank margin {margin:.1f} digits"]
    text = "\n".join(lines)
    print(text)
    results = {
        "ground_matrix_shape": list(G.shape), "ground_matrix_rank": rG, "rank_C": rC, "rank_C_internal": rI,
        "ground_matrix_rank_sweep": sweep_G, "rank": rep.rank, "redundancy": rep.redundancy,
        "unique": {el: rep.is_unique(el) for el in PAPER}, "matches": bool(all(match.values())),
        "ground_group_unique": group, "ground_resultant_criterion": wrench,
        "ground_resultant_api": [bool(api[0]), api[1]],
        "methods_agree_reference": bool(agree_ref), "methods_agree_sweep": bool(agree),
        "sweep_ranks": ranks, "pattern_everywhere": bool(pattern), "n_sweep": n,
        "min_rank_margin": margin,
    }
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "solvability_spatial_parallelogram.txt").write_text(text + "\n")
        (out / "solvability_spatial_parallelogram.json").write_text(json.dumps(results, indent=1))
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
