"""Andrews' squeezing mechanism to t = 0.03 s: jmbs against SciPy's Radau on the test
set's own minimal formulation, at matched accuracy, in one run.

    .venv/bin/python benchmarks/bench_andrews.py [--rounds 5] [--json PATH]

1. **SciPy**: the test set's equations (REFERENCES.md: M(y), f(y, y'), g(y), G(y) from
   `andrews.f`) in the seven relative angles, reduced to index 1 as an ODE in
   `(y, y')`: every right-hand side solves `[[M, G^T], [G, 0]] [y''; lambda] = [f;
   -(d/dt G) y']` with NumPy (the acceleration term from the closed form of each
   trigonometric term), integrated by `scipy.integrate.solve_ivp(method="Radau")` (the
   test set's reference is an implicit Runge-Kutta method too) and, for comparison,
   `"DOP853"`.
2. **jmbs**: `jmbs.examples.andrews_squeezer()` (7 bodies in absolute coordinates, 10
   revolute joints, a spring-damper, a torque; 21 coordinates, 20 constraints) by
   `jmbs.simulate` with `Projection` and `NullSpaceProjection` + diffrax's `Tsit5`, or
   `Elimination` + `Dopri8` (the cheapest setting that meets the bar).
3. **Exudyn** (PyPI, when installed: `pip install -e ".[benchmarks]"`): the same seven
   bodies from jmbs's parameters (`NodeRigidBody2D` + `ObjectRigidBody2D`, ten
   `ObjectJointRevolute2D`, an `ObjectConnectorSpringDamper`, a `LoadTorqueVector`),
   integrated with fixed steps by its implicit index-3 generalized-alpha (spectral radius
   1) and its index-2 trapezoidal rule, dense linear solver, Newton to 1e-12. Exudyn's
   explicit solvers take no joints. A ladder of step counts up to the bar;
   `SolveDynamic` alone is timed (building and `Assemble` apart).

For each method and tolerance (rtol = atol) the table gives the largest relative error of
the seven angles and of their rates against the reference at t = 0.03 s, the median
wall time of `--rounds` repeated calls [the minimum] (jmbs: compiled; its first call
with compilation is reported apart), and the number of right-hand-side evaluations
(SciPy) or steps (jmbs). The ratio compares, per accuracy class (8 significant digits
in the angles and 6 in the rates, the issue's bar; and 5 and 3, engineering accuracy),
the fastest setting of each that reaches it.
"""

import argparse
import json
import statistics
import time

import diffrax
import numpy as np
from scipy.integrate import solve_ivp

import jmbs
from jmbs.examples.andrews import ANDREWS, ANDREWS_Y0, BODIES, andrews_squeezer, minimal_angles
from jmbs.reproduce import papers

P = ANDREWS
REF_ANGLES, REF_RATES = np.asarray(papers.ANDREWS_ANGLES), np.asarray(papers.ANDREWS_RATES)
T = papers.ANDREWS_T_END

# g(y) as sums of terms `coef * trig(sum of angles)`, row by row (andrews.f, REFERENCES.md);
# constant terms (-xb, ...) drop out of G and of the acceleration term.
# Angles: 0 beta, 1 Theta, 2 gamma, 3 Phi, 4 delta, 5 Omega, 6 epsilon.
_LINK = [(P["rr"], np.cos, (0,)), (-P["d"], np.cos, (0, 1))]
_LINK_Y = [(P["rr"], np.sin, (0,)), (-P["d"], np.sin, (0, 1))]
G_TERMS = [
    _LINK + [(-P["ss"], np.sin, (2,))],
    _LINK_Y + [(P["ss"], np.cos, (2,))],
    _LINK + [(-P["e"], np.sin, (3, 4)), (-P["zt"], np.cos, (4,))],
    _LINK_Y + [(P["e"], np.cos, (3, 4)), (-P["zt"], np.sin, (4,))],
    _LINK + [(-P["zf"], np.cos, (5, 6)), (-P["u"], np.sin, (6,))],
    _LINK_Y + [(-P["zf"], np.sin, (5, 6)), (P["u"], np.cos, (6,))],
]


def constraint_jacobian_and_bias(y, yd):
    """`G(y)` (6 x 7) and `(d/dt G) y'` (6,): for `a cos(s)`, `s` a sum of angles, the
    row gets `-a sin(s)` in the columns of `s` and the bias `-a cos(s) s'^2` (and for
    `a sin(s)`: `a cos(s)`, `-a sin(s) s'^2`)."""
    G, bias = np.zeros((6, 7)), np.zeros(6)
    for i, row in enumerate(G_TERMS):
        for a, trig, idx in row:
            s, sd = sum(y[k] for k in idx), sum(yd[k] for k in idx)
            d = -a * np.sin(s) if trig is np.cos else a * np.cos(s)
            for k in idx:
                G[i, k] += d
            bias[i] += -a * trig(s) * sd * sd
    return G, bias


def mass_and_forces(y, yd):
    """The test set's `M(y)` and `f(y, y')` (andrews.f)."""
    b, th, ga, ph, de, om, ep = y
    bd, thd, _, phd, ded, omd, epd = yd
    ee, zf = P["e"] - P["ea"], P["zf"] - P["fa"]
    M = np.zeros((7, 7))
    M[0, 0] = (P["m1"] * P["ra"] ** 2 + P["m2"] * (P["rr"] ** 2 - 2 * P["da"] * P["rr"] * np.cos(th)
               + P["da"] ** 2) + P["i1"] + P["i2"])
    M[1, 0] = M[0, 1] = P["m2"] * (P["da"] ** 2 - P["da"] * P["rr"] * np.cos(th)) + P["i2"]
    M[1, 1] = P["m2"] * P["da"] ** 2 + P["i2"]
    M[2, 2] = P["m3"] * (P["sa"] ** 2 + P["sb"] ** 2) + P["i3"]
    M[3, 3] = P["m4"] * ee**2 + P["i4"]
    M[4, 3] = M[3, 4] = P["m4"] * (ee**2 + P["zt"] * ee * np.sin(ph)) + P["i4"]
    M[4, 4] = (P["m4"] * (P["zt"] ** 2 + 2 * P["zt"] * ee * np.sin(ph) + ee**2)
               + P["m5"] * (P["ta"] ** 2 + P["tb"] ** 2) + P["i4"] + P["i5"])
    M[5, 5] = P["m6"] * zf**2 + P["i6"]
    M[6, 5] = M[5, 6] = P["m6"] * (zf**2 - P["u"] * zf * np.sin(om)) + P["i6"]
    M[6, 6] = (P["m6"] * (zf**2 - 2 * P["u"] * zf * np.sin(om) + P["u"] ** 2)
               + P["m7"] * (P["ua"] ** 2 + P["ub"] ** 2) + P["i6"] + P["i7"])
    xd = P["sd"] * np.cos(ga) + P["sc"] * np.sin(ga) + P["xb"]
    yd_ = P["sd"] * np.sin(ga) - P["sc"] * np.cos(ga) + P["yb"]
    L = np.hypot(xd - P["xc"], yd_ - P["yc"])
    F = -P["c0"] * (L - P["l0"]) / L
    fx, fy = F * (xd - P["xc"]), F * (yd_ - P["yc"])
    mdr = P["m2"] * P["da"] * P["rr"]
    m4z, m6u = P["m4"] * P["zt"] * ee, P["m6"] * P["u"] * zf
    f = np.array([
        P["mom"] - mdr * thd * (thd + 2 * bd) * np.sin(th),
        mdr * bd**2 * np.sin(th),
        fx * (P["sc"] * np.cos(ga) - P["sd"] * np.sin(ga))
        + fy * (P["sd"] * np.cos(ga) + P["sc"] * np.sin(ga)),
        m4z * ded**2 * np.cos(ph),
        -m4z * phd * (phd + 2 * ded) * np.cos(ph),
        -m6u * epd**2 * np.cos(om),
        m6u * omd * (omd + 2 * epd) * np.cos(om),
    ])
    return M, f


def accelerations(y, yd):
    """`(y'', lambda)` of the index-1 system."""
    M, f = mass_and_forces(y, yd)
    G, bias = constraint_jacobian_and_bias(y, yd)
    K = np.block([[M, G.T], [G, np.zeros((6, 6))]])
    x = np.linalg.solve(K, np.concatenate([f, -bias]))
    return x[:7], x[7:]


def rhs(t, z):
    return np.concatenate([z[7:], accelerations(z[:7], z[7:])[0]])


def scipy_reference(rtol: float, atol: float, method: str = "Radau"):
    """`(angles and rates at T (14,), seconds, right-hand-side evaluations)`."""
    z0 = np.concatenate([np.asarray(ANDREWS_Y0, float), np.zeros(7)])
    start = time.perf_counter()
    out = solve_ivp(rhs, (0.0, T), z0, method=method, rtol=rtol, atol=atol, t_eval=[T])
    return out.y[:, -1], time.perf_counter() - start, out.nfev


def errors(z):
    return (float(np.max(np.abs(z[:7] - REF_ANGLES) / np.abs(REF_ANGLES))),
            float(np.max(np.abs(z[7:] - REF_RATES) / np.abs(REF_RATES))))


# jmbs settings: (label, simulate keyword arguments). Elimination + Dopri8 is the
# cheapest that meets the bar (86 steps at 1e-8; 3x cheaper per step than the null space).
JMBS_SETTINGS = (
    ("jmbs Tsit5", dict(solver=diffrax.Tsit5())),
    ("jmbs Elim Dopri8", dict(formulation=jmbs.Elimination(), solver=diffrax.Dopri8())),
)


def jmbs_run(model, tol, **kw):
    controller = diffrax.PIDController(rtol=tol, atol=tol)

    def run():
        sol = jmbs.simulate(model, T, saveat=np.array([T]), reactions=False,
                            stepsize_controller=controller, max_steps=500_000, **kw)
        sol.q.block_until_ready()
        return sol

    return run


# Exudyn: the joints as (body i, body j), None the ground (as in andrews_squeezer()).
JOINTS = {"O": (None, "crank"), "F": ("crank", "link2"), "B": (None, "triangle"),
          "A5": (None, "lever5"), "A7": (None, "lever7"), "G": ("lever5", "link4"),
          "H": ("lever7", "link6"), "E3": ("link2", "triangle"), "E4": ("link2", "link4"),
          "E6": ("link2", "link6")}
EXUDYN_STEPS = (1_000, 3_000, 10_000, 30_000, 100_000, 150_000, 200_000)


def exudyn_build(model):
    """The squeezer in Exudyn from jmbs's parameters: (system container, mbs)."""
    import exudyn as exu
    from exudyn.itemInterface import (
        LoadTorqueVector,
        MarkerBodyPosition,
        MarkerBodyRigid,
        NodeRigidBody2D,
        ObjectConnectorSpringDamper,
        ObjectGround,
        ObjectJointRevolute2D,
        ObjectRigidBody2D,
    )

    p = model.params()
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    objects = {}
    for name in BODIES:
        x, a = np.asarray(p[f"{name}.position"]), float(p[f"{name}.angle"])
        node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[x[0], x[1], a],
                                           initialVelocities=[0.0, 0.0, 0.0]))
        objects[name] = mbs.AddObject(ObjectRigidBody2D(mass=float(p[f"{name}.mass"]),
                                                        inertia=float(p[f"{name}.inertia"]),
                                                        nodeNumber=node))

    def marker(body, point, rigid=False):
        point = np.asarray(point, float)
        if body is None:
            return mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[*point, 0.0]))
        x, a = np.asarray(p[f"{body}.position"]), float(p[f"{body}.angle"])
        local = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]) @ (point - x)
        kind = MarkerBodyRigid if rigid else MarkerBodyPosition
        return mbs.AddMarker(kind(bodyNumber=objects[body], localPosition=[*local, 0.0]))

    for name, (body_i, body_j) in JOINTS.items():
        point = p[f"{name}.point"]
        mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[marker(body_i, point), marker(body_j, point)]))
    mbs.AddObject(ObjectConnectorSpringDamper(
        markerNumbers=[marker(None, p["spring.point_i"]), marker("triangle", p["spring.point_j"])],
        stiffness=float(p["spring.stiffness"]), damping=float(p["spring.damping"]),
        referenceLength=float(p["spring.rest_length"])))
    mbs.AddLoad(LoadTorqueVector(markerNumber=marker("crank", p["crank.position"], rigid=True),
                                 loadVector=[0.0, 0.0, float(p["mom.torque"])]))
    mbs.Assemble()
    return SC, mbs


def exudyn_run(model, steps: int, solver: str):
    """`(angles and rates at T (14,), SolveDynamic seconds, build seconds, ok)`."""
    import exudyn as exu

    start = time.perf_counter()
    SC, mbs = exudyn_build(model)  # SC owns mbs: keep it alive
    build = time.perf_counter() - start
    ss = exu.SimulationSettings()
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = T
    ti = ss.timeIntegration
    ti.numberOfSteps, ti.endTime, ti.verboseMode = int(steps), T, 0
    ti.generalizedAlpha.spectralRadius = 1.0
    ti.generalizedAlpha.computeInitialAccelerations = True
    ti.newton.relativeTolerance, ti.newton.absoluteTolerance = 1e-12, 1e-14
    ss.linearSolver.solverType = exu.LinearSolverType.EigenDense
    start = time.perf_counter()
    try:
        ok = mbs.SolveDynamic(ss, solverType=getattr(exu.DynamicSolverType, solver))
    except exu.SolverError:  # Newton did not converge in a step: no result
        ok = False
    solve = time.perf_counter() - start
    data = mbs.systemData
    q = (np.asarray(data.GetODE2Coordinates())
         + np.asarray(data.GetODE2Coordinates(configuration=exu.ConfigurationType.Reference)))
    a, r = minimal_angles(model, q, np.asarray(data.GetODE2Coordinates_t()))
    return np.concatenate([a, r]), solve, build, bool(ok)


def exudyn_rows(model, rounds: int, bar) -> list[dict]:
    """Each solver up the ladder of step counts until it meets the bar, each rung timed
    `rounds` times."""
    rows = []
    for solver in ("GeneralizedAlpha", "TrapezoidalIndex2"):
        for steps in EXUDYN_STEPS:
            runs = [exudyn_run(model, steps, solver) for _ in range(rounds)]
            z, _, build, ok = runs[-1]
            errs = errors(z) if ok else (float("nan"), float("nan"))
            times = [r[1] for r in runs]
            rows.append(dict(method=f"Exudyn {solver}", tol=T / steps, errors=errs, work=steps,
                             median=statistics.median(times), min=min(times), first=build + times[0]))
            print(f"  Exudyn {solver} {steps} steps: angles {errs[0]:.1e}, rates {errs[1]:.1e}, "
                  f"median {statistics.median(times):.3f} s", flush=True)
            if ok and errs[0] < bar[0] and errs[1] < bar[1]:
                break
    return rows


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-exudyn", action="store_true", help="skip Exudyn even if installed")
    args = ap.parse_args()

    y0, yd0 = np.asarray(ANDREWS_Y0, float), np.zeros(7)
    ydd, lam = accelerations(y0, yd0)
    print(f"t = 0: beta'' = {ydd[0]:.15g} (test set 14222.4439199541), Theta'' = {ydd[1]:.15g} "
          f"(-10666.8329399656), lambda1,2 = {lam[0]:.12g}, {lam[1]:.12g} (98.5668703962, "
          "-6.12268834426)")
    model = andrews_squeezer()
    bar = (0.5 * 10.0 ** (1 - papers.ANDREWS_DIGITS[0]), 0.5 * 10.0 ** (1 - papers.ANDREWS_DIGITS[1]))
    rows = []
    for method in ("Radau", "DOP853"):
        for tol in (1e-6, 1e-8, 1e-10, 1e-12):
            times = []
            for _ in range(args.rounds):
                z, sec, nfev = scipy_reference(tol, tol, method)
                times.append(sec)
            rows.append(dict(method=f"SciPy {method}", tol=tol, errors=errors(z), work=nfev,
                             median=statistics.median(times), min=min(times), first=times[0]))
    for label, kw in JMBS_SETTINGS:
        for tol in (1e-6, 1e-8, 1e-10, 1e-12):
            run = jmbs_run(model, tol, **kw)
            start = time.perf_counter()
            sol = run()
            first = time.perf_counter() - start
            times = []
            for _ in range(args.rounds):
                start = time.perf_counter()
                sol = run()
                times.append(time.perf_counter() - start)
            a, r = minimal_angles(model, sol.q[-1], sol.v[-1])
            rows.append(dict(method=label, tol=tol, errors=errors(np.concatenate([a, r])),
                             work=int(sol.stats["num_steps"]), median=statistics.median(times),
                             min=min(times), first=first))
    try:
        import exudyn  # noqa: F401
        has_exudyn = not args.no_exudyn
    except ImportError:
        has_exudyn = False
        print("Exudyn is not installed (pip install -e '.[benchmarks]'): skipped")
    if has_exudyn:
        rows += exudyn_rows(model, args.rounds, bar)
    print(f"\n{'method':26s} {'tol | h':>9s} {'angles':>8s} {'rates':>8s} {'RHS/steps':>9s} "
          f"{'median [s]':>10s} {'[min]':>8s} {'first [s]':>9s}")
    for r in rows:
        print(f"{r['method']:26s} {r['tol']:9.0e} {r['errors'][0]:8.1e} {r['errors'][1]:8.1e} "
              f"{r['work']:9d} {r['median']:10.3f} {r['min']:8.3f} {r['first']:9.2f}")

    def best(prefix, limits):
        ok = [r for r in rows if r["method"].startswith(prefix) and r["errors"][0] < limits[0]
              and r["errors"][1] < limits[1]]
        return min(ok, key=lambda r: r["median"]) if ok else None

    # The bar (8 digits in the angles, 6 in the rates), and an engineering one
    # (5 and 3 digits) where fixed-step second-order integrators such as Exudyn's work.
    summary = {}
    for label, limits in (("8/6 digits", bar), ("5/3 digits", (5e-5, 5e-3))):
        j = best("jmbs", limits)
        for other in ("SciPy Radau", "SciPy DOP853", "Exudyn GeneralizedAlpha", "Exudyn TrapezoidalIndex2"):
            s = best(other, limits)
            if s is None and any(r["method"] == other for r in rows):
                print(f"{label}: {other} does not reach it (Exudyn: within {EXUDYN_STEPS[-1]} steps)")
            if s and j:
                ratio = summary[f"{label}: {other}"] = s["median"] / j["median"]
                print(f"{label}: {other} ({s['work']} RHS | steps) {s['median']:.3f} s, {j['method']} "
                      f"(tol {j['tol']:.0e}) {j['median']:.3f} s: jmbs {ratio:.1f}x faster")
    out = {"rows": rows, "speedup": summary}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
