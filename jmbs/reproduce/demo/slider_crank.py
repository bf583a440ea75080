"""The driven slider-crank's kinematics against the closed form (no paper)."""

import math

import jax
import jax.numpy as jnp

import jmbs

from .report import Figures, Section, check, checks_table


def section(figs: Figures, short: bool) -> Section:
    sec = Section("Driven slider-crank: kinematics against the closed form", (),
                   "slider-crank (planar, crank driven)")
    omega, theta0 = 2.0, math.pi / 6
    model = jmbs.examples.slider_crank(theta=theta0, omega=omega)
    ts = jnp.linspace(0.0, 2 * math.pi / omega, 41 if short else 201)
    sol = jmbs.kinematics(model, ts)
    k = 3 * model.body_index("slider")

    def x_of_t(t):
        return jmbs.examples.slider_crank_position(theta0 + omega * t)[0]

    exact = {"x": jax.vmap(x_of_t)(ts), "v": jax.vmap(jax.grad(x_of_t))(ts),
             "a": jax.vmap(jax.grad(jax.grad(x_of_t)))(ts)}
    got = {"x": sol.q[:, k], "v": sol.v[:, k], "a": sol.v_dot[:, k]}
    err = {n: float(jnp.max(jnp.abs(got[n] - exact[n]))) for n in exact}
    residual = float(jnp.max(sol.residual))
    tol = {"x": 1e-10, "v": 1e-9, "a": 1e-8}
    sec.text.append(
        "**Mechanism** (`jmbs.examples.slider_crank(theta=π/6, omega=2)`): crank 0.5 m, rod "
        "1.5 m, slider on the x axis, the crank driven at 2 rad/s. No paper: the reference is "
        "the closed form of the slider position (`jmbs.examples.slider_crank_position`) and "
        f"its time derivatives by `jax.grad`. jmbs solves position, velocity and acceleration "
        f"(`jmbs.kinematics`) at {len(ts)} times over one crank turn.")
    sec.text.append(checks_table(sec.add(
        *(check(f"max |{n}_slider − closed form|", f"< {tol[n]:g}", err[n], err[n] < tol[n]) for n in err),
        check("max |Φ| over the run", "< 1e-10", residual, residual < 1e-10))))

    fig = figs.plt.figure(figsize=(8, 10))
    grid = fig.add_gridspec(4, 1, height_ratios=(1.3, 1, 1, 1))
    jmbs.plotting.plot_mechanism(model, ax=fig.add_subplot(grid[0]), title="t = 0")
    for row, (n, unit) in enumerate(zip("xva", ("m", "m/s", "m/s²"))):
        ax = fig.add_subplot(grid[row + 1])
        ax.plot(ts, exact[n], "k-", lw=3, alpha=0.3, label="closed form")
        ax.plot(ts, got[n], "C0--", label="jmbs.kinematics")
        ax.set_ylabel(f"slider {n} [{unit}]")
        if row == 0:
            ax.legend()
    ax.set_xlabel("t [s]")
    sec.text.append(figs.save(fig, "slider_crank", "Slider-crank: slider position, velocity and "
                                                   "acceleration, jmbs against the closed form."))
    sec.results = {"errors": err, "max_residual": residual, "n_times": len(ts)}
    return sec
