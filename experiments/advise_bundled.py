# %% [markdown]
# # Making every bundled overconstrained mechanism statically determinate (`jmbs.advise`)
#
# For each bundled mechanism with p > 0 (and the MuJoCo four-bar closed by a
# `connect`): the best release `jmbs.advise` proposes, the model it gives
# (`Release.apply`), and the independent check: both models simulated under
# gravity and a load (a constant force `LOAD` on the first body's centre) for `T1`
# with the same fixed steps (so that the two integrations take
# the same steps; no stabilization, whose projection would differ), the largest
# difference of the motions, whether every reaction of the applied model is
# unique, and the largest difference of the reactions that were unique in the
# original (relative to the largest reaction).
#
# Run: `.venv/bin/python experiments/advise_bundled.py [--short] [--out DIR]`

# %%
import sys
import tempfile
import time
from pathlib import Path

import diffrax
import numpy as np

import jmbs
import jmbs.plotting

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, write_outputs  # noqa: E402

MODELS = ("parallelogram", "bricard", "gripper", "gripper_overactuated", "spatial_parallelogram",
          "mobile_robot", "four_wheeled_robot", "redundant_manipulator", "redundant_manipulator_overactuated",
          "mjcf:four_bar")
SHORT = ("parallelogram", "gripper", "mjcf:four_bar")
T1, DT = 1.0, 2e-3
LOAD = (2.0, -1.0, 0.5)  # N, global frame


def load(name: str) -> jmbs.Model:
    """The model, with the force `LOAD` on its first body: a built model takes no new
    elements, so the load goes in through its model file (`jmbs.save`, `jmbs.load`)."""
    if name.startswith("mjcf:"):
        model = jmbs.from_mjcf(Path(jmbs.__file__).parent / "models" / "mjcf" / f"{name[5:]}.xml")
    else:
        model = jmbs.load(name)
    entry = (f"  load:\n    type: force\n    body: {model.body_names[0]}\n"
             f"    force: [{', '.join(str(f) for f in LOAD[:model.dim])}]\n")
    with tempfile.TemporaryDirectory() as folder:
        path = jmbs.save(model, Path(folder) / f"{name.replace(':', '_')}.yaml")
        text = path.read_text()
        text = (text.replace("\nforces:\n", "\nforces:\n" + entry, 1) if "\nforces:\n" in text
                else text + "forces:\n" + entry)
        path.write_text(text)
        return jmbs.load(path, trusted=True)


def simulate(model):
    return jmbs.simulate(model, T1, solver=diffrax.Tsit5(), dt0=DT, saveat=np.linspace(0, T1, 5),
                         stabilization=None, stepsize_controller=diffrax.ConstantStepSize())


def compare(model, new) -> dict:
    a, b = simulate(model), simulate(new)
    motion = float(np.abs(np.asarray(b.q) - np.asarray(a.q)).max())
    all_unique = all(bool(np.all(b.reactions.is_unique(n))) for n in new.element_names)
    big, worst = 1e-12, 0.0
    for n in model.element_names:
        if n in new.element_names and bool(np.all(a.reactions.is_unique(n))):
            for get in ("force", "torque"):
                x0 = np.asarray(getattr(a.reactions, get)(n))
                x1 = np.asarray(getattr(b.reactions, get)(n))
                big, worst = max(big, float(np.abs(x0).max())), max(worst, float(np.abs(x1 - x0).max()))
    return {"motion": motion, "all_unique": all_unique, "reactions": worst / big}


def main(short: bool = False, out: Path | None = None, names: tuple[str, ...] | None = None) -> dict:
    """`names`: the models to run (default all of `MODELS`, or `SHORT` with `short`)."""
    results, rows = {}, []
    for name in names or (SHORT if short else MODELS):
        model = load(name)
        start = time.perf_counter()
        advice = jmbs.advise(model, n=1)
        seconds = time.perf_counter() - start
        (best,) = advice
        res = {"p": advice.redundancy, "components": list(best.components),
               "sentences": best.sentences(), "advise_s": round(seconds, 1),
               **compare(model, best.apply(model))}
        results[name] = res
        if name == "parallelogram":  # the figure of docs/determinate.md
            ax = jmbs.plotting.plot_release(model, best)
            save_figure(out, "advise_parallelogram", ax.figure)
        rows.append([name, res["p"], "; ".join(res["sentences"]), f"{res['motion']:.1e}",
                     "yes" if res["all_unique"] else "NO", f"{res['reactions']:.1e}", res["advise_s"]])
        print(rows[-1], flush=True)
    text = format_table(["model", "p", "best release", "|dq|", "all unique", "d reactions", "advise s"],
                        rows)
    print(text)
    write_outputs(out, "advise_bundled", [text], results)
    return results


if __name__ == "__main__":
    run(main, __doc__)
