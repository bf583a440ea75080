"""`animate`: a GIF (or MP4) of a simulated motion, joints coloured by uniqueness at each frame."""

import pathlib

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import animation

from .._misc import as_configuration
from .._model import Model
from .._solvability.report import SolvabilityReport
from .._solvability.sweep import solvability_sweep
from .base import Layout, check_arguments, state
from .mechanism import add_legend, axes_for, draw, set_limits


def check_animation_file(path) -> pathlib.Path:
    """`path` as the file of an animation, checked before anything is computed or drawn.

    **Returns:** the `pathlib.Path`.

    **Raises:** `ValueError` for a suffix other than `.gif` (Pillow) or `.mp4`;
    `RuntimeError` for `.mp4` when ffmpeg is not found.
    """
    path = pathlib.Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"unsupported animation file {path.name!r}; use a .gif or .mp4 path")
    if suffix == ".mp4" and not animation.writers.is_available("ffmpeg"):
        raise RuntimeError("writing .mp4 needs ffmpeg, which was not found; install it or "
                           "write a .gif instead")
    return path


def animate(model: Model, solution, path, *, fps: int = 20, report: SolvabilityReport | None = None,
            every: int = 1, dpi: int = 80) -> pathlib.Path:
    """Write an animation of a motion, drawn as `plot_mechanism` draws one configuration.

    The joints are coloured by the uniqueness of their reactions at each frame:
    from `solution.reactions` (the decisions of the run, e.g. a `jmbs.Penalty`
    model's compliant joints are unique) when the solution has reactions, from
    `report` at every frame when one is given, otherwise from
    `jmbs.solvability_sweep` over the frames. The axis limits are fixed over
    the whole run.

    **Arguments:**
    - `model`: the model simulated.
    - `solution`: a `jmbs.Solution` (one run), or anything with `ts (T,)` and
      `q (T, nq)`, such as a `jmbs.KinematicsSolution`.
    - `path`: output file, `.gif` (Pillow) or `.mp4` (needs ffmpeg).
    - `fps`: frames per second.
    - `report`: a `jmbs.solvability` report whose decisions colour every frame.
    - `every`: draw every `every`-th saved state.
    - `dpi`: resolution.

    **Returns:** the `pathlib.Path` written.

    **Raises:** `ValueError` for another suffix, a `q` of the wrong size, or a
    report of another model; `RuntimeError` for `.mp4` without ffmpeg.
    """
    check_arguments("animate", model, solution)
    path = check_animation_file(path)
    gif = path.suffix.lower() == ".gif"
    writer = animation.PillowWriter(fps=fps) if gif else animation.FFMpegWriter(fps=fps)
    if int(every) < 1:
        raise ValueError(f"every must be a positive integer; got {every}")
    if report is not None and report.model.element_names != model.element_names:
        raise ValueError("report belongs to another model; pass jmbs.solvability(model, q)")
    qs = as_configuration(model, solution.q, "solution.q")[::every]
    ts = np.asarray(solution.ts, dtype=float)[::every]
    if qs.ndim != 2:
        raise ValueError(f"solution.q must be (T, {model.nq}), one run; got shape {qs.shape}")

    names = model.element_names
    if report is not None:
        fixed = {n: state(report.is_unique(n), report.unique_components(n)) for n in names}
        states = [fixed] * len(qs)
    else:
        reactions = getattr(solution, "reactions", None)
        if reactions is None:
            decided = solvability_sweep(model, qs, ts)
            unique, component = decided.unique, decided.component_unique
        else:
            unique = np.asarray(reactions.unique)[::every]
            component = np.asarray(reactions.component_unique)[::every]
        states = [{n: state(u[k], c[model.rows(n)]) for k, n in enumerate(names)}
                  for u, c in zip(unique, component)]

    layout = Layout(model)
    scenes = [layout.scene(q) for q in qs]
    extents = np.array([sc.extent() for sc in scenes])
    lo, hi = extents[:, 0].min(axis=0), extents[:, 1].max(axis=0)
    ax = axes_for(model.dim, None, lo, hi)
    fig = ax.figure
    try:
        with writer.saving(fig, str(path), dpi):
            for t, scene, st in zip(ts, scenes, states):
                ax.cla()
                draw(ax, layout, scene, st)
                set_limits(ax, layout, lo, hi)
                add_legend(ax, layout)
                ax.set_title(f"t = {t:.3g}")
                writer.grab_frame()
    finally:
        plt.close(fig)
    return path
