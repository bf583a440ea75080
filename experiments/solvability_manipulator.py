# %% [markdown]
# # Uniqueness of reactions and drives in the redundant manipulator (Pękal & Frączek, Tables 8, 10)
#
# The kinetostatic (free-body-diagram) method at the paper's configuration
# `q = (0, 3 pi/4, 5 pi/6)`: for each studied element the criterion `||A_S N_S||`,
# the rank of `A_S` and the verdict, next to the paper's, for the three-DOF
# hydraulic manipulator (seven revolute joints A-G, cylindrical Hc and Ic, drives
# in A, Hc and Ic; Tab. 8) and its overactuated variant with a twin boom cylinder
# (revolutes J, K, cylindrical Lc, drive in Lc; Tab. 10). Then all five methods at
# that configuration, and a sweep over random configurations of the arm
# (`jmbs.reproduce.random_configurations`): the rank and every decision stay the
# same, and the five methods agree everywhere.
#
# The paper's joint names carry the type (Ar, Br, ..., Hc): here A, B, ..., Hc;
# its drives "Ar", "Hc", "Ic", "Lc" are the drivers dA, dHc, dIc, dLc.
#
# Run: `.venv/bin/python experiments/solvability_manipulator.py [--short] [--out DIR]`

# %%
import sys
from pathlib import Path

import numpy as np

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import paper_table, run, write_outputs  # noqa: E402

from jmbs.reproduce import random_configurations
from jmbs.reproduce.papers import MANIPULATOR_TABLES as PAPER

METHODS = ("rank", "qr", "svd", "nullspace", "kinetostatic")
BATCH = 256  # configurations per compiled sweep call (the tests use the same)


def sweeps(model, qs, ts) -> dict:
    """Every method over the reference (row 0) and the random configurations."""
    Q = np.vstack([np.asarray(model.q0)[None], qs])
    T = np.concatenate([[0.0], ts])
    return {m: jmbs.solvability_sweep(model, Q, T, method=m, batch_size=BATCH, progress=False)
            for m in METHODS}


def summarize(model, sw: dict, expected: dict, rank: int) -> tuple[str, dict]:
    """Agreement of the methods at the reference and over the sweep, and whether the
    rank and the paper's pattern hold in every configuration."""
    sigs = {m: s.signature() for m, s in sw.items()}
    ref = sigs["nullspace"]
    at_ref = all((s[0] == ref[0]).all() for s in sigs.values())
    everywhere = all((s == ref).all() for s in sigs.values())
    cols = [model.element_names.index(el) for el in expected]
    want = np.array([expected[el][-1] == "U" for el in expected])
    ranks = {m: np.unique(s.rank).tolist() for m, s in sw.items()}
    pattern = all((s.unique[:, cols] == want).all() for s in sw.values())
    constant = all((s.unique == s.unique[0]).all() and (s.component_unique == s.component_unique[0]).all()
                   for s in sw.values())
    margin = min(float(s.rank_margin.min()) for s in sw.values())
    crit = min(float(s.margin.min()) for s in sw.values())
    n = len(sw["nullspace"]) - 1
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
        summary, agree = summarize(model, sweeps(model, qs, ts), expected, rank)
        results[name] = {**res, **agree}
        texts.append(f"{table}\n{summary}\n")
        print(texts[-1])
    write_outputs(out, "solvability_manipulator", texts, results)
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
