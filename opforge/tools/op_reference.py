"""The operator reference (``docs/operators.md``), generated from the registries.

For every built-in primitive: its formula (the first paragraph of its docstring), its attributes
(``__init__``'s arguments, with types and defaults), the dtypes of its kernels per backend and
whether a bprop is registered. ``tests/test_docs.py`` checks that the page in the repository is what
this module renders, so the page cannot drift from the registry.

    python -m opforge.tools.op_reference --write docs/operators.md
"""

from __future__ import annotations

import argparse
import inspect
import pathlib
import sys

from opforge.bprop import bprop_getters
from opforge.kernels import registry
from opforge.primitives import primitive_classes

__all__ = ["describe_kernels", "builtin_primitives", "render", "main"]

BACKENDS = ("CPU", "GPU")


def describe_kernels(entries) -> tuple:
    """(pattern, dtypes) of one operator's kernels on one backend: ``("(T, T) -> T", "Float16, Float32")``
    when every kernel has one dtype throughout, else each kernel's signature (pairs summarised)."""
    attrs = [e.attr for e in entries]
    if all(len(set(a.inputs + a.outputs)) == 1 for a in attrs):
        a = attrs[0]
        pattern = "(" + ", ".join(["T"] * len(a.inputs)) + (", ..." if a.all_same else "") + ") -> "
        pattern += ", ".join(["T"] * len(a.outputs))
        return pattern, ", ".join(str((x.inputs + x.outputs)[0]) for x in attrs)
    sigs = [x.short() for x in attrs]
    if len(sigs) > 8:  # Cast has every pair of dtypes: summarise
        sources = sorted({str((x.inputs + x.outputs)[0]) for x in attrs}, key=str)
        return "any pair", f"{len(sigs)} pairs of: " + ", ".join(sources)
    return "per kernel", "\n".join(sigs)


def builtin_primitives() -> dict:
    """opforge's own primitive classes by name (not users' or tests')."""
    return {
        name: cls
        for name, cls in sorted(primitive_classes().items())
        if cls.__module__.startswith("opforge.primitives.") and name == cls.__name__
    }


def _formula(cls) -> str:
    doc = inspect.getdoc(cls) or ""
    return " ".join(doc.split("\n\n")[0].split()) or "(no description)"


def _attributes(cls) -> list:
    """(name, type, default) of each constructor argument."""
    rows = []
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            rows.append((p.name, "", "required"))
            continue
        kind = type(p.default).__name__ if p.default is not None else "optional"
        rows.append((p.name, kind, repr(p.default)))
    return rows


def _builtin_kernels(op: str, backend: str) -> list:
    return [
        e
        for e in registry.kernels_for(op, backend, include_disabled=True)
        if e.source == "builtin" or e.source.startswith(("cuda:", "python:opforge."))
    ]


def _section(name: str, cls) -> list:
    lines = [f"### {name}", "", _formula(cls), ""]
    attrs = _attributes(cls)
    if attrs:
        lines += ["| attribute | type | default |", "| --- | --- | --- |"]
        lines += [f"| `{a}` | {t} | `{d}` |" if d != "required" else f"| `{a}` | | required |" for a, t, d in attrs]
        lines.append("")
    lines += ["| backend | signature | dtypes |", "| --- | --- | --- |"]
    for backend in BACKENDS:
        entries = _builtin_kernels(name, backend)
        if entries:
            pattern, dtypes = describe_kernels(entries)
            lines.append(f"| {backend} | {pattern} | {dtypes.replace(chr(10), '<br>')} |")
        else:
            lines.append(f"| {backend} | no kernel | |")
    lines += ["", f"bprop: {'yes' if name in bprop_getters else 'no'}", ""]
    return lines


def render() -> str:
    """The whole page, as Markdown."""
    prims = builtin_primitives()
    with_bprop = sum(name in bprop_getters for name in prims)
    lines = [
        "# Operator reference",
        "",
        "Generated from the registries by `python -m opforge.tools.op_reference --write docs/operators.md`;",
        "`tests/test_docs.py` checks that this page matches them. Each operator: its formula, its attributes",
        "(constructor arguments), the dtypes of its kernels per backend and whether it has a bprop.",
        "",
        f"{len(prims)} primitives, {with_bprop} with a bprop.",
        "",
        "| operator | CPU kernels | GPU kernels | bprop |",
        "| --- | --- | --- | --- |",
    ]
    for name in prims:
        counts = [len(_builtin_kernels(name, b)) for b in BACKENDS]
        lines.append(
            f"| [{name}](#{name.lower()}) | {counts[0]} | {counts[1]} | {'yes' if name in bprop_getters else 'no'} |"
        )
    lines += ["", "## Operators", ""]
    for name, cls in prims.items():
        lines += _section(name, cls)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", metavar="FILE", help="write the page to FILE (default: print it)")
    args = parser.parse_args(argv)
    page = render()
    if args.write:
        pathlib.Path(args.write).write_text(page)
        print(f"wrote {args.write} ({page.count(chr(10))} lines)")
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
