"""The architecture's rules, checked: no import cycles, a lean `import jmbs` that changes no
environment, float64 enforced, and no private names used outside the package."""

import ast
import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jmbs"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Edges module -> jmbs module it imports, counting imports inside functions too."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                # `from pkg import sub` imports the module pkg.sub where it is one.
                subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in files]
                targets = subs or [mod]
            for t in targets:
                while t and t not in files:  # `import jmbs.x.y` of a name inside a module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_finds_a_planted_cycle():
    # The checker itself: a two-module cycle and a three-module one are found, a chain is not.
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(strongly_connected(graph)) == [["a", "b"], ["c", "d", "e"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package():
    graph = import_graph()
    assert "jmbs._assembly" in graph and graph["jmbs._assembly"], "the graph was not read"
    # Package __init__ modules re-export their members, which import siblings through the
    # package path: only cycles between modules count, not a member and its own package.
    cycles = [c for c in strongly_connected(graph)
              if not any(all(m == p or m.startswith(p + ".") for m in c) for p in c)]
    assert cycles == [], f"import cycles: {cycles}"


def unit(module: str) -> str:
    """The package or module directly under `jmbs/` that `module` belongs to."""
    return ".".join(module.split(".")[:2])


def layer_table() -> list[tuple[str, set[str]]]:
    """`docs/architecture.md`'s layer table, top row first: (layer, its units)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Layers"):text.index("## Data flow")]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "") or set(cells[0]) <= {"-"}:
            continue
        names = re.findall(r"`([\w./]+)`", cells[1])
        units = {"jmbs" if n == "__init__.py" else "jmbs." + n.rstrip("/").removesuffix(".py")
                 for n in names}
        rows.append((cells[0], units))
    return rows


def layer_violations(graph: dict[str, set[str]], table) -> list[str]:
    """Imports between units that point up the table, and units the table does not place."""
    rank = {u: -k for k, (_, units) in enumerate(table) for u in units}  # higher: further up
    out = [f"{u} has no row in the layer table" for u in sorted({unit(m) for m in graph}) if u not in rank]
    for a, targets in sorted(graph.items()):
        for b in sorted(targets):
            ua, ub = unit(a), unit(b)
            if ua != ub and ua in rank and ub in rank and rank[ua] < rank[ub]:
                out.append(f"{a} imports {b}: up the layer table")
    return out


def test_the_layer_check_finds_an_upward_import():
    table = [("top", {"jmbs.cli"}), ("bottom", {"jmbs._config", "jmbs._misc"})]
    assert layer_violations({"jmbs.cli": {"jmbs._config"}, "jmbs._misc": {"jmbs._config"}},
                            table) == []
    assert layer_violations({"jmbs._config": {"jmbs.cli"}}, table) == [
        "jmbs._config imports jmbs.cli: up the layer table"]
    assert layer_violations({"jmbs.new": set()}, table) == ["jmbs.new has no row in the layer table"]


def test_imports_follow_the_layer_table():
    table = layer_table()
    assert [name for name, _ in table][0] == "front-ends" and len(table) >= 8, table
    graph = import_graph()
    assert layer_violations(graph, table) == []
    units: dict[str, set[str]] = {}
    for a, targets in graph.items():
        units.setdefault(unit(a), set()).update(unit(b) for b in targets if unit(b) != unit(a))
    assert strongly_connected(units) == [], "import cycles between packages"


def private_imports() -> list[str]:
    """`from jmbs module import _name` where the module is another module of the package."""
    out = []
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            mod = node.module or ""
            if node.level:
                base = package.split(".")
                mod = ".".join(base[:len(base) - (node.level - 1)] + ([mod] if mod else []))
            if not mod.startswith("jmbs") or mod == name:
                continue
            out += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name} from {mod}" for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                    and f"{mod}.{a.name}" not in modules]  # a private module, not a name
    return out


def test_no_module_imports_another_modules_private_name():
    assert private_imports() == []


def _fresh(code: str, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("PJRT_NPROC", "XLA_FLAGS")} | env
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=environ)


def test_import_changes_no_environment_and_loads_no_application_code():
    out = _fresh(
        "import os, sys, json\n"
        "before = dict(os.environ)\n"
        "import jax\n"
        "x64_before = jax.config.read('jax_enable_x64')\n"
        "import jmbs\n"
        "print(json.dumps({'env_changed': sorted(k for k in set(before) | set(os.environ)\n"
        "                                        if before.get(k) != os.environ.get(k)),\n"
        "                  'x64': [x64_before, jax.config.read('jax_enable_x64')],\n"
        "                  'loaded': sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "                                   ('matplotlib', 'yaml', 'pydantic', 'tomli_w')\n"
        "                                   or m.startswith(('jmbs.reproduce', 'jmbs.examples'))),\n"
        "                  'backend': __import__('jax._src.xla_bridge').\n"
        "                      _src.xla_bridge.backends_are_initialized()}))")
    assert out.returncode == 0, out.stderr[-3000:]
    import json

    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["env_changed"] == []
    assert got["x64"] == [False, True]
    assert got["loaded"] == []
    # No array is created at import: jax.distributed.initialize may still come after it.
    assert got["backend"] is False


def test_a_float32_process_is_refused_with_a_clear_message():
    out = _fresh(
        "import jax, jmbs\n"
        "model = jmbs.examples.slider_crank()\n"
        "jax.config.update('jax_enable_x64', False)\n"
        "for call in (lambda: jmbs.constraint_matrix(model, model.q0, 0.0),\n"
        "             lambda: jmbs.solvability(model),\n"
        "             lambda: jmbs.examples.slider_crank()):\n"
        "    try:\n"
        "        call()\n"
        "    except RuntimeError as e:\n"
        "        print('refused:', e)\n"
        "    else:\n"
        "        print('computed in float32')\n")
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("refused:") for line in lines), out.stdout
    assert all("jax.config.update('jax_enable_x64', True)" in line for line in lines)


PRIVATE = re.compile(r"\bjmbs\._(?!_)\w|from jmbs(\.\w+)* import \(?_(?!_)\w")


@pytest.mark.parametrize("folder", ["tests", "experiments", "benchmarks", "docs"])
def test_no_private_names_outside_the_package(folder):
    offenders = []
    for path in (ROOT / folder).rglob("*"):
        if path.suffix not in (".py", ".md") or path == Path(__file__).resolve():
            continue
        for k, line in enumerate(path.read_text().splitlines(), 1):
            if PRIVATE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{k}: {line.strip()}")
    assert offenders == [], "private names used outside jmbs/:\n" + "\n".join(offenders)


def test_the_public_surface_is_written_out_and_old_names_keep_working():
    import jmbs

    assert len(jmbs.__all__) == len(set(jmbs.__all__))
    assert [n for n in jmbs.__all__ if not hasattr(jmbs, n)] == []
    # every name the package module re-exports is listed (a new one cannot be forgotten)
    reexported = set(re.findall(r" as (\w+)$", (PACKAGE / "__init__.py").read_text(), re.M))
    assert sorted(reexported - set(jmbs.__all__) - {"_config", "_metadata"}) == []
    moved = ("AssemblyStep", "DynamicsTerms", "FormulationState", "STRUCTURED_MIN_NV",
             "dynamics_terms", "equilibrate")
    for name in moved:  # internals: not advertised, still reachable under their old name
        assert name not in jmbs.__all__ and name in jmbs.internal.__all__
        assert getattr(jmbs, name) is getattr(jmbs.internal, name)
    assert jmbs.examples.slider_crank is not None
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        jmbs.nonexistent  # noqa: B018


def code_lines(source: str) -> dict[str, int]:
    """Lines with code of each function in `source` (`"name:line"`): not its docstring,
    comments or blank lines (the signature counts)."""
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER)
    code = {line for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type not in skip
            for line in range(tok.start[0], tok.end[0] + 1)}
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = set(range(node.lineno, node.end_lineno + 1)) & code
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                lines -= set(range(first.lineno, first.end_lineno + 1))
            out[f"{node.name}:{node.lineno}"] = len(lines)
    return out


def test_the_line_count_skips_docstrings_comments_and_blank_lines():
    example = "def f(a,\n      b):\n    '''Doc.\n\n    More.'''\n    # why\n\n    return a\n"
    assert code_lines(example) == {"f:1": 3}


def test_no_library_function_is_longer_than_80_code_lines():
    """Issue 30 item 4: entry points are thin front doors in front of helpers with one job
    each (`simulate` had 166 lines and 43 branches at cc98b70). The papers' reproductions
    (`jmbs/reproduce/`: one section of the demo report per paper) are exempt."""
    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "reproduce" in path.relative_to(PACKAGE).parts:
            continue
        for name, n in code_lines(path.read_text()).items():
            if n > 80:
                long[f"{path.relative_to(ROOT)}:{name}"] = n
    assert long == {}
    assert code_lines((PACKAGE / "cli.py").read_text())  # the walk reads the command too
