# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Making an overconstrained mechanism statically determinate
#
# ## What you will learn
#
# - how to ask jmbs which joint to change, and into what, so that every reaction of an
#   overconstrained mechanism becomes unique without changing its motion
#   (`jmbs.advise`);
# - how to read a release (the components it frees, the substitutions, its cost) and
#   what the advisor checked before proposing it;
# - how to apply it (`Release.apply`) and see for yourself that the motion is the same,
#   the reactions that were unique keep their values and the others become unique;
# - what happens where no joint of the table fits: a general joint.
#
# The page [Making a mechanism statically determinate](../determinate.md) has the
# definitions; this notebook runs them. With `JMBS_NOTEBOOK_SHORT=1` it asks for fewer
# releases.

# %%
import os
from pathlib import Path

import diffrax
import matplotlib.pyplot as plt
import numpy as np

import jmbs
import jmbs.plotting

SHORT = os.environ.get("JMBS_NOTEBOOK_SHORT") == "1"
N = 1 if SHORT else 3

# %% [markdown]
# ## The Bricard mechanism: one redundant row
#
# Five rods on six revolute joints (IFToMM A04). Grübler's count in space says the loop
# is rigid (6 x 5 - 5 x 6 = 0), yet it moves with one degree of freedom: one of its 30
# constraint rows is redundant, and the reactions that row touches cannot be found by
# rigid-body mechanics.

# %%
bricard = jmbs.load("bricard")
report = jmbs.solvability(bricard)
print(report)

# %% [markdown]
# Every component of every joint is `N`: the self-stress that the one redundant row
# allows runs through the whole loop. The advisor looks for exactly `p = 1`
# component whose removal keeps the rank of `C` at several configurations along the
# motion, and expresses it as a joint of the element table:

# %%
advice = jmbs.advise(bricard, n=N)
print(advice)

# %%
best = advice[0]
print("releases:", best.components)
print("cost terms:", best.cost_terms)
print("checked on the applied model:", best.checks)

# %% [markdown]
# A revolute without one of its bending moments is a universal joint (its second axis
# is the released moment's). The advisor prefers a rotational release (cheap to build,
# tolerant of misalignment) and one joint touched over several.
#
# Apply it: the new model is determinate, every component `U`.

# %%
determinate = best.apply(bricard)
print(jmbs.solvability(determinate))


# %% [markdown]
# ## Proof by simulation
#
# Run both models for 1 s under gravity with the same fixed steps (so that the two
# integrations take the same steps): the motion is the same.

# %%
def run(model):
    ts = np.linspace(0.0, 1.0, 11)
    return jmbs.simulate(model, 1.0, saveat=ts, solver=diffrax.Tsit5(), dt0=2e-3,
                         stepsize_controller=diffrax.ConstantStepSize(), stabilization=None)


a, b = run(bricard), run(determinate)
print(f"largest difference in q: {np.max(np.abs(np.asarray(b.q) - np.asarray(a.q))):.1e}")
print("every reaction unique along the run:",
      all(bool(np.all(b.reactions.is_unique(n))) for n in determinate.element_names))

# %% [markdown]
# In the Bricard no reaction was unique before. In the planar parallelogram with a third
# crank (p = 1) only the cranks' forces along their axes are not; the release (a pin in a
# slot) frees one of them, and every component that was unique keeps its value along the
# run. `jmbs.plotting.plot_release` draws the mechanism coloured by uniqueness with the
# substituted element circled.

# %%
parallelogram = jmbs.load("parallelogram")
release = jmbs.advise(parallelogram, n=1)[0]
print(release)
ax = jmbs.plotting.plot_release(parallelogram, release)
plt.show()

# %%
slotted = release.apply(parallelogram)
a, b = run(parallelogram), run(slotted)
print(f"largest difference in q: {np.max(np.abs(np.asarray(b.q) - np.asarray(a.q))):.1e}")
print("element  unique before  largest change of those (N)")
for name in parallelogram.element_names:
    if name in release.substitutions:
        continue
    was = np.asarray(a.reactions.unique_components(name))[0]
    fa = np.asarray(a.reactions.components(name, allow_nonunique=True))[:, was]
    fb = np.asarray(b.reactions.components(name))[:, was]
    comps = [c for c, u in zip(parallelogram.element(name).components, was) if u]
    print(f"{name:8} {', '.join(comps):14} {np.max(np.abs(fb - fa), initial=0.0):.1e}")

# %% [markdown]
# ## A MuJoCo model
#
# A four-bar closed by a `connect` equality (a spherical joint in jmbs) is overconstrained
# in space (see the notebook on MuJoCo loops). The advisor frees a moment rather than a
# force: a universal joint.

# %%
four_bar = jmbs.from_mjcf(Path(jmbs.__file__).parent / "models" / "mjcf" / "four_bar.xml")
print(jmbs.advise(four_bar, n=1))

# %% [markdown]
# ## Where no joint of the table fits: a general joint
#
# The same parallelogram with a third crank, built in space with revolutes about `z`, its
# outer ground pivots points on lines along `z` (so the out-of-plane redundancy is
# designed out): p = 1, the force along the cranks. A revolute without that force keeps
# `Fx, Fz, Mx, My`, which no joint of the table does; the advisor proposes a general
# joint keeping them (a pin sliding in a slot across its axis), after the catalogued
# releases of the inline joints, and proves it like any other.

# %%
b = jmbs.ModelBuilder(dim=3, gravity=(0.0, -9.81, 0.0))
z = (0.0, 0.0, 1.0)
for k in range(3):
    b.add_body(f"crank{k}", 1.0, (0.1, 0.01, 0.1), (k, 0.5, 0.0))
b.add_body("coupler", 2.0, (0.01, 0.7, 0.7), (1.0, 1.0, 0.0))
b.add_revolute("O0", b.ground, "crank0", (0.0, 0.0, 0.0), z)
b.add_inline("O1", b.ground, "crank1", (1.0, 0.0, 0.0), z)
b.add_inline("O2", b.ground, "crank2", (2.0, 0.0, 0.0), z)
for k in range(3):
    b.add_revolute(f"A{k}", f"crank{k}", "coupler", (k, 1.0, 0.0), z)
cranks = b.build()
print(jmbs.advise(cranks, n=3))
