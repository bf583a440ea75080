"""Every headline number the pages quote with a `<!-- headline:ID -->` marker equals the
number in `benchmarks/headlines.json`, which `benchmarks/run_all.py` writes from the
benchmarks' own output: a rerun that changes a number fails here until the pages follow."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- headline:([\w.]+) -->\**([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def _pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_quoted_headline_numbers_match_the_data_file():
    data = json.loads((ROOT / "benchmarks" / "headlines.json").read_text())
    seen = 0
    for page in _pages():
        for hid, text in MARK.findall(page.read_text()):
            seen += 1
            assert hid in data, f"{page.name}: headline {hid} is not in benchmarks/headlines.json"
            assert float(text) == data[hid], (
                f"{page.name}: headline {hid} says {text}, benchmarks/headlines.json {data[hid]}")
    assert seen > 0  # the pages quote at least one marked number


def test_the_marker_pattern_reads_what_it_should():
    sample = ("jmbs is <!-- headline:a.b -->**1.1**x faster and <!-- headline:c -->0.45x, "
              "grows like n^<!-- headline:d -->3.06. Error <!-- headline:e -->2e-3 each")
    assert MARK.findall(sample) == [("a.b", "1.1"), ("c", "0.45"), ("d", "3.06"), ("e", "2e-3")]


def test_the_data_file_is_what_run_all_picks_from_the_saved_results():
    """`benchmarks/headlines.json` is derived, not edited: `run_all.py`'s picks applied to
    the benchmarks' saved output (`benchmarks/results/*.json`) give exactly its numbers."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", ROOT / "benchmarks" / "run_all.py")
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    data = json.loads((ROOT / "benchmarks" / "headlines.json").read_text())
    assert run_all.headlines() == data
