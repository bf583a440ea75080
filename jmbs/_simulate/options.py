"""Host-side checks of `jmbs.simulate`'s integration options, before anything is traced:
diffrax would refuse most of them only from inside the compiled run (a long
traceback from equinox, or an error that names an internal checkpoint)."""

import diffrax
import numpy as np

from .._misc import check_int, check_positive, is_traced

_WHERE = "jmbs.simulate"


def check_max_steps(max_steps, adjoint) -> None:
    if max_steps is None:
        if isinstance(adjoint, diffrax.RecursiveCheckpointAdjoint):
            raise ValueError(f"{_WHERE}: max_steps=None needs an adjoint other than "
                             "diffrax.RecursiveCheckpointAdjoint (the default); give a step limit "
                             "such as max_steps=100_000")
        return
    check_int(_WHERE, "max_steps", max_steps, "it bounds the integration steps (default 100_000)")


def check_dt0(dt0, t0, t1) -> None:
    """`dt0`: a finite non-zero scalar step pointing from `t0` towards `t1`."""
    if dt0 is None:
        return
    if np.ndim(dt0) != 0:
        raise ValueError(f"{_WHERE}: dt0 must be a scalar step, got shape {np.shape(dt0)}")
    if is_traced(dt0, t0, t1):
        return
    dt = float(dt0)
    if not np.isfinite(dt) or dt == 0:
        raise ValueError(f"{_WHERE}: dt0 must be a finite non-zero step, got {dt:g}; or leave it "
                         "out (None) to let the step-size controller pick it")
    if (dt > 0) != (float(t1) > float(t0)):
        direction = "positive (t1 > t0)" if float(t1) > float(t0) else "negative (a backward run, t1 < t0)"
        raise ValueError(f"{_WHERE}: dt0 = {dt:g} points away from t1; it must be {direction}")


def check_controller(controller, solver, dt0) -> None:
    """The step-size controller's values and its fit with the solver and `dt0`."""
    if isinstance(controller, diffrax.ConstantStepSize) and dt0 is None:
        raise ValueError(f"{_WHERE}: stepsize_controller=diffrax.ConstantStepSize() needs the step "
                         "dt0=; give it, or use diffrax.PIDController(rtol=..., atol=...)")
    if not isinstance(controller, diffrax.AbstractAdaptiveStepSizeController):
        return
    if not isinstance(solver, diffrax.AbstractAdaptiveSolver):
        raise ValueError(f"{_WHERE}: solver {type(solver).__name__} gives no error estimate, so "
                         f"the adaptive stepsize_controller {type(controller).__name__} cannot "
                         "choose steps; pass dt0= with diffrax.ConstantStepSize(), or use an "
                         "adaptive solver such as diffrax.Tsit5()")
    if isinstance(controller, diffrax.PIDController):
        for name in ("rtol", "atol"):
            check_positive(_WHERE, f"stepsize_controller.{name}", getattr(controller, name), zero=True)
        if not is_traced(controller.rtol, controller.atol) and \
                float(np.max(controller.rtol)) == 0 and float(np.max(controller.atol)) == 0:
            raise ValueError(f"{_WHERE}: stepsize_controller has rtol = atol = 0, a tolerance no "
                             "step can meet; give positive tolerances (e.g. 1e-8)")
        lo, hi = controller.dtmin, controller.dtmax
        for name, x in (("dtmin", lo), ("dtmax", hi)):
            if x is not None:
                check_positive(_WHERE, f"stepsize_controller.{name}", x)
        if lo is not None and hi is not None and not is_traced(lo, hi) and float(lo) > float(hi):
            raise ValueError(f"{_WHERE}: stepsize_controller.dtmin = {float(lo):g} is above dtmax = "
                             f"{float(hi):g}; make dtmin <= dtmax")


def check_solver(solver) -> None:
    """An ODE solver of one vector field (not a split or stochastic one)."""
    if solver.term_structure is not diffrax.AbstractTerm:
        raise ValueError(f"{_WHERE}: solver {type(solver).__name__} integrates split or stochastic "
                         "terms, not one ordinary differential equation; use an ODE solver such as "
                         "diffrax.Tsit5() or diffrax.Kvaerno5()")


def check_saveat(saveat: diffrax.SaveAt) -> None:
    """A user's `diffrax.SaveAt`: one set of saved states `y` (no `fn`, no nesting), and
    save times (if any) that are finite."""
    subs = saveat.subs
    if subs is None:
        raise ValueError(f"{_WHERE}: saveat saves no state (give ts=, steps=True or t0/t1=True)")
    if not isinstance(subs, diffrax.SubSaveAt) or subs.fn is not diffrax.SaveAt(t1=True).subs.fn:
        raise ValueError(f"{_WHERE}: saveat must save the states themselves (a diffrax.SaveAt "
                         "with ts=, steps= or t0/t1=, without fn= or nested SubSaveAt); "
                         "post-process the Solution instead")
    if not (subs.t0 or subs.t1 or subs.steps or subs.ts is not None):
        raise ValueError(f"{_WHERE}: saveat saves no state (give ts=, steps=True or t0/t1=True)")
