"""What a constraint stabilization does to an integration, and "none"."""

import abc

import diffrax
import equinox as eqx
from jaxtyping import Array

from .._model import Model
from .._terms import DynamicsTerms


class AbstractStabilization(eqx.Module):
    """A way of keeping a simulation on the constraint manifold.

    `jmbs.simulate` calls these methods and nothing else, so a new scheme is a
    new member, not an edit of `simulate`. `None` (no stabilization) is accepted
    wherever a stabilization is.
    """

    def terms(self, formulation, model: Model, q: Array, v: Array, t: Array) -> DynamicsTerms:
        """The terms `formulation` (a prepared one) solves with at `(q, v, t)`: its own,
        without `Phi` unless the formulation needs it (a scheme with position feedback
        asks for `Phi` and adds the feedback to `Gamma`)."""
        return formulation.terms(model, q, v, t, with_phi=False)

    @abc.abstractmethod
    def wrap_solver(self, solver: diffrax.AbstractSolver) -> diffrax.AbstractSolver:
        """The diffrax solver to integrate with (e.g. one that projects every step)."""

    @abc.abstractmethod
    def project_saved(self, model: Model, qs: Array, vs: Array, ts: Array) -> tuple[Array, Array]:
        """The saved states `(T, nq)`, `(T, nv)` as reported (e.g. projected)."""

    def project_final(self, model: Model, qs: Array, vs: Array, ts: Array) -> tuple[Array, Array]:
        """The run's last state (a step's end, not an interpolated point), `(1, nq)`,
        `(1, nv)`, as reported: `project_saved`'s unless the steps already end where it
        would put them."""
        return self.project_saved(model, qs, vs, ts)

    @abc.abstractmethod
    def check_adjoint(self, adjoint: diffrax.AbstractAdjoint) -> None:
        """Host-side: raise `ValueError` for an adjoint that cannot differentiate this scheme."""


class Unstabilized(AbstractStabilization):
    """No stabilization (what `stabilization=None` means): the drift of the
    constraints is left to the integrator's accuracy."""

    def wrap_solver(self, solver):
        return solver

    def project_saved(self, model, qs, vs, ts):
        return qs, vs

    def check_adjoint(self, adjoint):
        pass
