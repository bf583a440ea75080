"""Baumgarte's stabilization: feedback of the constraint violation into `Gamma`."""

import equinox as eqx

from .._custom_types import RealScalarLike
from .._misc import as_float, check_positive
from .._terms import baumgarte_gamma
from .base import AbstractStabilization


class Baumgarte(AbstractStabilization):
    """Baumgarte's stabilization: `C v_dot = Gamma - 2 alpha (C v + b) - beta^2 Phi`.

    The violation then obeys a damped oscillator (`alpha = beta` is critically
    damped). Gains are in 1/s; too large gains make the equations stiff. They
    are array leaves: a new value reuses the compiled simulation.
    """

    alpha: RealScalarLike = eqx.field(converter=as_float, default=5.0)
    beta: RealScalarLike = eqx.field(converter=as_float, default=5.0)

    def __check_init__(self):
        for name in ("alpha", "beta"):  # a negative gain makes the violation grow
            check_positive("Baumgarte", name, getattr(self, name), zero=True)

    def terms(self, formulation, model, q, v, t):
        return baumgarte_gamma(formulation.terms(model, q, v, t, with_phi=True), self.alpha, self.beta)

    def wrap_solver(self, solver):
        return solver

    def project_saved(self, model, qs, vs, ts):
        return qs, vs

    def check_adjoint(self, adjoint):
        pass  # the feedback is part of the continuous equations: every adjoint applies
