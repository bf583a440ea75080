"""Docs that cannot rot: every Python block of README.md and docs/*.md runs here, the
blocks of one page in order in one namespace (a page's blocks continue each other),
and where a block is followed by an output block (a fence without a language), what
it prints must be that text (trailing spaces aside). A block that cannot run (a
fragment, a file it needs, minutes of work) is marked on the line above it with
`<!-- docs-test: skip (reason) -->`; the reason is required."""

import contextlib
import io
import os
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]*\S[^)]*)\)\s*-->")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")


def blocks(path: Path) -> list[dict]:
    """The fenced blocks of a page: language, code, the skip reason above it, and the
    untyped block right after it (its printed output), if any."""
    lines = path.read_text().splitlines()
    out, i, previous = [], 0, ""
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        skip = SKIP.search(previous)
        out.append({"lang": m["lang"], "code": "\n".join(lines[i + 1:j]), "line": i + 1,
                    "skip": skip["reason"] if skip else None})
        previous, i = "", j + 1
    for a, b in zip(out, out[1:]):
        if a["lang"] == "python" and b["lang"] == "" and _adjacent(lines, a, b):
            a["output"] = b["code"]
    return out


def _adjacent(lines, a, b) -> bool:
    end = a["line"] + a["code"].count("\n") + 1  # the closing fence of a (0-based index)
    return all(not lines[k].strip() for k in range(end + 1, b["line"] - 1))


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _readme_numbers(namespace: dict) -> None:
    """The first model of the README: `C` is 9 x 9 and the driven crank's angle is 2 t."""
    assert namespace["C"].shape == (9, 9)
    assert abs(float(namespace["sol"].q[-1, 2]) - 6.0) < 1e-10  # 2 t at t = 3


# Checks of a page's numbers after its blocks ran, on the names they left.
CHECKS = {"README.md": _readme_numbers}


def _matches(printed: str, shown: str) -> bool:
    """`printed` is what the page `shows`, where a line `...` stands for any lines
    (rounding-level numbers, long tables)."""
    parts = [re.escape(part) for part in _normal(shown).split("\n...\n")]
    return re.fullmatch(r"\n(?:.*\n)*?".join(parts), _normal(printed)) is not None


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_page_runs_as_printed(page, tmp_path, monkeypatch):
    python = [b for b in blocks(page) if b["lang"] == "python"]
    if not python:
        pytest.skip("no Python block")
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__docs__"}
    for block in python:
        if block["skip"] is not None:
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            try:
                exec(compile(textwrap.dedent(block["code"]), f"{page.name}:{block['line']}", "exec"),
                     namespace)
            except Exception as e:  # noqa: BLE001
                raise AssertionError(f"{page.name}, block at line {block['line']}: {e!r}") from e
        if "output" in block:
            assert _matches(printed.getvalue(), block["output"]), (
                f"{page.name}, block at line {block['line']} prints something else than the page "
                f"shows:\n{printed.getvalue()}")
    if page.name in CHECKS:
        CHECKS[page.name](namespace)


def test_every_skipped_block_says_why():
    for page in PAGES:
        text = page.read_text()
        for m in re.finditer(r"<!--\s*docs-test:[^>]*-->", text):
            assert SKIP.fullmatch(m.group(0)), f"{page.name}: malformed marker {m.group(0)!r}"
