"""Motions written as text: `"omega * t"`, evaluated with `jax.numpy` (traceable).

A driver's motion in a model file (and, if the user likes, in Python) is an
arithmetic expression of the time `t`, the driver's parameters and the
constants `pi` and `e`. Several lines may first name intermediate values
(`steer = 0.3 * smoothstep(t - 1)`); the last line is the value. Only
arithmetic, comparisons, `a if c else b` and the functions in `FUNCTIONS` are
allowed: a model file cannot run arbitrary code.
"""

import ast
import math
import operator

import jax.numpy as jnp


def _smoothstep(x):
    """Quintic step: 0 for x <= 0, 1 for x >= 1, continuous acceleration between."""
    x = jnp.clip(x, 0.0, 1.0)
    return x**3 * (10 - 15 * x + 6 * x**2)


FUNCTIONS = {
    "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "asin": jnp.arcsin, "acos": jnp.arccos,
    "atan": jnp.arctan, "atan2": jnp.arctan2, "sinh": jnp.sinh, "cosh": jnp.cosh,
    "tanh": jnp.tanh, "exp": jnp.exp, "log": jnp.log, "sqrt": jnp.sqrt, "abs": jnp.abs,
    "sign": jnp.sign, "min": jnp.minimum, "max": jnp.maximum, "clip": jnp.clip,
    "floor": jnp.floor, "smoothstep": _smoothstep,
}
CONSTANTS = {"pi": math.pi, "e": math.e}

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow, ast.Mod: operator.mod}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


class Expression:
    """A motion `f(t[, params])` given as text (see the module docstring).

    **Arguments:**
    - `source`: the expression, e.g. `"omega * t"`, or several lines of which
      all but the last are assignments `name = expression`.
    - `params`: the names of the parameters it may use besides `t`.

    **Raises:** `ValueError` (naming the line and the offending name or
    construct) for a syntax error, an unknown name or function, or a construct
    that is not arithmetic.

    Two expressions with the same text and parameter names are equal (and
    hash equal), so models that use them share compiled code.
    """

    def __init__(self, source: str, params=()):
        self.source = str(source).strip()
        self.params = tuple(params)
        try:
            tree = ast.parse(self.source, mode="exec")
        except SyntaxError as e:
            raise ValueError(f"expression {self.source!r}: syntax error at line {e.lineno}: "
                             f"{e.msg}") from None
        *assigns, last = tree.body or [None]
        if not isinstance(last, ast.Expr):
            raise ValueError(f"expression {self.source!r}: the last line must be the value "
                             "(an expression, not an assignment)")
        known = {"t", *self.params, *CONSTANTS}
        self._steps = []
        for node in assigns:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                raise ValueError(f"expression {self.source!r}, line {node.lineno}: only "
                                 "`name = expression` may precede the value")
            self._check(node.value, known)
            self._steps.append((node.targets[0].id, node.value))
            known.add(node.targets[0].id)
        self._check(last.value, known)
        self._value = last.value

    def _check(self, node: ast.AST, known: set) -> None:
        for sub in ast.walk(node):
            where = f"expression {self.source!r}, line {getattr(sub, 'lineno', 1)}"
            if isinstance(sub, ast.Call):
                if not isinstance(sub.func, ast.Name) or sub.func.id not in FUNCTIONS:
                    name = getattr(sub.func, "id", ast.unparse(sub.func))
                    raise ValueError(f"{where}: unknown function {name!r}; available: "
                                     f"{', '.join(FUNCTIONS)}")
                if sub.keywords:
                    raise ValueError(f"{where}: functions take positional arguments only")
            elif isinstance(sub, ast.Name):
                if sub.id not in known and sub.id not in FUNCTIONS:
                    raise ValueError(f"{where}: unknown name {sub.id!r}; known: "
                                     f"{', '.join(sorted(known))}")
            elif isinstance(sub, ast.Constant):
                if not isinstance(sub.value, int | float) or isinstance(sub.value, bool):
                    raise ValueError(f"{where}: only numbers may appear as constants, "
                                     f"got {sub.value!r}")
            elif isinstance(sub, ast.BinOp | ast.UnaryOp | ast.Compare | ast.BoolOp):
                op = sub.op if not isinstance(sub, ast.Compare) else None
                ops = sub.ops if isinstance(sub, ast.Compare) else [op]
                allowed = (_BINARY | _UNARY | _COMPARE | {ast.And: 0, ast.Or: 0})
                if any(type(o) not in allowed for o in ops):
                    raise ValueError(f"{where}: operator {type(ops[0]).__name__} is not "
                                     "allowed")
            elif not isinstance(sub, ast.IfExp | ast.Load | ast.expr_context | ast.operator
                                | ast.unaryop | ast.cmpop | ast.boolop):
                raise ValueError(f"{where}: {type(sub).__name__} is not allowed in a "
                                 "motion; use arithmetic, comparisons, `a if c else b` and "
                                 "the listed functions")

    def __call__(self, t, params=None):
        env = {**CONSTANTS, **(params or {}), "t": t}
        missing = [k for k in self.params if k not in env]
        if missing:
            raise ValueError(f"expression {self.source!r}: no value for parameter(s) "
                             f"{', '.join(missing)}")
        for name, node in self._steps:
            env[name] = self._eval(node, env)
        return jnp.asarray(self._eval(self._value, env), dtype=float)

    def _eval(self, node, env):
        ev = self._eval
        match node:
            case ast.Constant(value=v):
                return float(v)
            case ast.Name(id=name):
                return env[name]
            case ast.BinOp(left=a, op=op, right=b):
                return _BINARY[type(op)](ev(a, env), ev(b, env))
            case ast.UnaryOp(op=op, operand=a):
                return _UNARY[type(op)](ev(a, env))
            case ast.Call(func=ast.Name(id=name), args=args):
                return FUNCTIONS[name](*(ev(a, env) for a in args))
            case ast.Compare(left=a, ops=ops, comparators=rest):
                out, left = True, ev(a, env)
                for op, b in zip(ops, rest):
                    right = ev(b, env)
                    out = jnp.logical_and(out, _COMPARE[type(op)](left, right))
                    left = right
                return out
            case ast.BoolOp(op=op, values=values):
                combine = jnp.logical_and if isinstance(op, ast.And) else jnp.logical_or
                out = ev(values[0], env)
                for v in values[1:]:
                    out = combine(out, ev(v, env))
                return out
            case ast.IfExp(test=c, body=a, orelse=b):
                return jnp.where(ev(c, env), ev(a, env), ev(b, env))
        raise AssertionError(f"unchecked node {type(node).__name__}")  # _check rejects these

    def __eq__(self, other):
        return (isinstance(other, Expression) and self.source == other.source
                and self.params == other.params)

    def __hash__(self):
        return hash((Expression, self.source, self.params))

    def __repr__(self):
        return f"Expression({self.source!r})"
