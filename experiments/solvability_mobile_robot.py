# %% [markdown]
# # Uniqueness of reactions in the mobile robot with a trolley (Wojtyra & Frączek, §4)
#
# Redundant nonholonomic constraints: seven revolute joints, a translational
# joint with a driver, five knife edges. The paper finds, in every nonsingular
# configuration, `rank(Phi_q) = 17`, `rank(Psi) = 4`, `r = 20`, `p = 2`, the
# reactions of A, D, E, F, G, H, the driver and W5 unique and those of B, C and
# W1-W4 not. jmbs checks this at the reference configuration (straight ahead),
# along the paper's steering manoeuvre (turn right, straight, turn left) and at
# random configurations over the whole steering range, with all five methods.
#
# Run: `.venv/bin/python experiments/solvability_mobile_robot.py [--short] [--out DIR]`

# %%
import json
import sys
from pathlib import Path

import jax
import numpy as np

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run  # noqa: E402

from jmbs import examples
from jmbs.examples.mobile_robot import slider_displacement
from jmbs.reproduce import random_configurations
from jmbs.reproduce.papers import MOBILE_ROBOT as PAPER
from jmbs.reproduce.papers import MOBILE_ROBOT_RANKS as PAPER_RANKS

METHODS = ("rank", "qr", "svd", "nullspace", "kinetostatic")
BATCH = 256  # configurations per compiled sweep call (the tests use the same)


def ranks(model, qs, ts) -> dict[str, np.ndarray]:
    """`rank(Phi_q)` (holonomic rows), `rank(Psi)` (knife edges), `r` and `p` per configuration."""
    Cs = np.asarray(jax.jit(jax.vmap(lambda q, t: jmbs.constraint_matrix(model, q, t)))(qs, ts))
    hol = model.holonomic_rows

    def rank(A):
        s = np.linalg.svd(A, compute_uv=False)
        return np.sum(s > 1e-9 * s[:, :1], axis=1)

    r = rank(Cs)
    return {"rank(Phi_q)": rank(Cs[:, hol]), "rank(Psi)": rank(Cs[:, ~hol]), "r": r, "p": model.nc - r}


def manoeuvre(model, n: int):
    """Configurations along the paper's manoeuvre (`examples.steering_manoeuvre`: turn
    right, straight, turn left), with the trolley swinging; times for `model`,
    whose driver is `f(t) = t` (the slide)."""
    t = np.linspace(0.0, 11.0, n)
    ds = np.asarray(slider_displacement(examples.steering_manoeuvre(t)))
    hitch = 0.4 * np.sin(0.5 * t)
    qs = examples.mobile_robot_configurations(ds, hitch)
    return qs, ds


def main(short: bool = False, out: Path | None = None) -> dict:
    n_random, n_path = (100, 56) if short else (1000, 551)
    # The robot of random_configurations: the default geometry, straight ahead at its
    # reference, its driver f(t) = t (the slide); one model serves every sweep.
    model, qs_rand, ts_rand = random_configurations("mobile_robot", n_random, seed=1)
    qs_path, ts_path = manoeuvre(model, n_path)
    Q = np.vstack([np.asarray(model.q0)[None], qs_path, qs_rand])
    T = np.concatenate([[0.0], ts_path, ts_rand])
    path, rand = slice(1, 1 + n_path), slice(1 + n_path, None)
    rk = ranks(model, Q, T)
    sw = {m: jmbs.solvability_sweep(model, Q, T, method=m, batch_size=BATCH, progress=False) for m in METHODS}

    lines = ["Mobile robot with trolley (paper 000, §4): n = 21, 17 holonomic rows, 5 knife edges",
             format_table(["quantity", "paper", "reference", "manoeuvre", "random"],
                          [[k, v, int(rk[k][0]), sorted(set(rk[k][path].tolist())),
                            sorted(set(rk[k][rand].tolist()))] for k, v in PAPER_RANKS.items()]),
             ""]
    ref = sw["nullspace"]  # row 0: the reference configuration
    rows, match = [], {}
    for el, paper in PAPER.items():
        got = "U" if ref.is_unique(el)[0] else "N"
        comps = " ".join(f"{c}:{'U' if u else 'N'}" for c, u in
                         zip(model.element(el).components, ref.unique_components(el)[0]))
        match[el] = got == paper
        rows.append([el, model.element(el).kind, paper, got, comps,
                     f"{min(ref.margin[0, model.element_names.index(el)], 99):.1f}",
                     "yes" if match[el] else "NO"])
    lines += ["Reactions at the reference configuration (null-space method):",
              format_table(["element", "type", "paper", "jmbs", "components", "margin", "match"], rows)]

    sigs = {m: s.signature() for m, s in sw.items()}
    base = sigs["nullspace"]
    agree_ref = all((s[0] == base[0]).all() for s in sigs.values())
    agree = {part: all((s[sl] == base[sl]).all() for s in sigs.values())
             for part, sl in (("manoeuvre", path), ("random", rand))}
    cols = [model.element_names.index(el) for el in PAPER]
    want = np.array([PAPER[el] == "U" for el in PAPER])
    pattern = {part: all((s.unique[sl][:, cols] == want).all() for s in sw.values())
               for part, sl in (("manoeuvre", path), ("random", rand))}
    margin = min(float(s.rank_margin.min()) for s in sw.values())
    lines += ["",
              f"five methods at the reference: {'agree' if agree_ref else 'DISAGREE'}; along the "
              f"manoeuvre ({n_path} configurations): {'agree' if agree['manoeuvre'] else 'DISAGREE'}, "
              f"paper's pattern {'holds' if pattern['manoeuvre'] else 'FAILS'}; at {n_random} random "
              f"configurations (steering within +-80 deg, any hitch and pose): "
              f"{'agree' if agree['random'] else 'DISAGREE'}, paper's pattern "
              f"{'holds' if pattern['random'] else 'FAILS'}; smallest rank margin {margin:.1f} digits"]
    text = "\n".join(lines)
    print(text)

    def values(sl):
        return {k: sorted(set(v[sl].tolist())) for k, v in rk.items()}

    results = {
        "reference": {k: int(v[0]) for k, v in rk.items()},
        "manoeuvre": values(path), "random": values(rand),
        "unique": {el: bool(ref.is_unique(el)[0]) for el in PAPER},
        "matches": bool(all(match.values())),
        "methods_agree_reference": bool(agree_ref),
        "methods_agree_manoeuvre": bool(agree["manoeuvre"]),
        "methods_agree_random": bool(agree["random"]),
        "pattern_manoeuvre": bool(pattern["manoeuvre"]), "pattern_random": bool(pattern["random"]),
        "n_manoeuvre": n_path, "n_random": n_random, "min_rank_margin": margin,
    }
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "solvability_mobile_robot.txt").write_text(text + "\n")
        (out / "solvability_mobile_robot.json").write_text(json.dumps(results, indent=1))
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
