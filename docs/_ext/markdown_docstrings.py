"""Griffe extension for the API reference: make jmbs's Markdown docstrings render.

jmbs's docstrings (see `jmbs.simulate`) write `**Arguments:**` directly followed by
a hyphen list, and nest lists by two spaces. Python-Markdown needs a blank line
before a list and four spaces per nesting level; without them a list renders as
one run-on paragraph. This rewrites each docstring's text before mkdocstrings
renders it; the docstrings themselves stay as they are.
"""

import re

import griffe

_ITEM = re.compile(r"^(\s*)([-*+]|\d+\.)\s")
_FENCE = re.compile(r"^\s*(```|~~~)")


def normalise(text: str) -> str:
    out: list[str] = []
    in_fence = False
    in_list = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            continue
        if in_fence:
            out.append(line)
            continue
        if not line.strip():
            in_list = False if not out or not out[-1].strip() else in_list
            out.append(line)
            continue
        item = _ITEM.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if item and indent == 0 and not in_list:
            if out and out[-1].strip():
                out.append("")  # a list must follow a blank line
            in_list = True
        elif in_list and indent == 0 and not item:
            in_list = False  # a paragraph after the list (lazy continuation otherwise)
            out.append("")
        if in_list and indent:
            line = " " * (2 * indent) + line.lstrip(" ")  # 2-space nesting -> 4-space
        out.append(line)
    return "\n".join(out)


class MarkdownDocstrings(griffe.Extension):
    """Normalise every docstring that griffe loads (modules, classes, functions, attributes)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = normalise(obj.docstring.value)
