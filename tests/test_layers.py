# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The package's layers point down, and no import cycle hides anywhere.

doc/architecture.md draws the layers; this test reads every module's imports
(with ``ast``: function-level imports count as much as top-level ones) and
fails if a module imports one in a higher layer, if the imports between our
modules form a cycle, or if a module has no layer yet (place a new module in
LAYERS and in the map of doc/architecture.md).
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "skforget"

#: Bottom to top. A module may import from its own layer or any layer below.
#: A name ending in "." stands for every module of that package.
LAYERS = (
    ("leaves", ("skforget.exceptions", "skforget._validation", "skforget._utils",
                "skforget._stack")),
    ("accounting", ("skforget.accounting", "skforget.accounting.")),
    ("kernels", ("skforget._kernels", "skforget._gd_fast", "skforget._gd_fast_avx2")),
    ("solver", ("skforget._rows", "skforget._solver", "skforget._erm")),
    ("records", ("skforget._database", "skforget._edits", "skforget._edit_blocks",
                 "skforget._marks")),
    ("cluster", ("skforget.distributed", "skforget.distributed.")),
    ("certificates", ("skforget.certify", "skforget.certify.")),
    ("estimators", ("skforget._release", "skforget._search_runs", "skforget._linear",
                    "skforget._class_warnings", "skforget._tasks", "skforget._fit_plan",
                    "skforget._noisy_gd", "skforget._noisy_gd_estimators",
                    "skforget._output_perturbation",
                    "skforget._output_perturbation_estimators")),
    ("pipelines", ("skforget._public", "skforget.pipeline", "skforget.pipeline.",
                   "skforget.preprocessing", "skforget.preprocessing.")),
    ("selection", ("skforget.model_selection", "skforget.model_selection.")),
    ("tools", ("skforget.audit", "skforget.datasets")),
    ("service", ("skforget.store", "skforget.store.")),
    ("package", ("skforget", "skforget.__main__", "skforget._legacy")),
)

#: Imports that break the order today, each with the move that removes it. The
#: test fails when one disappears, so the list only shrinks.
KNOWN_UPWARD = {}


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")} | {
        _module_name(p.with_suffix(".py")): p for p in PACKAGE.glob("*.pyx")}


MODULES = _modules()


def _imports(name, path):
    """Our modules that ``name`` imports, anywhere in its source."""
    if path.suffix != ".py":
        return set()
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            # ``from a import b``: the module a.b if there is one, else a.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES
                       else base for alias in node.names]
        else:
            continue
        found.update(target for target in targets if target in MODULES)
    found.discard(name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name):
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if name == member or (member.endswith(".") and name.startswith(member)):
                return index
    return None


def test_every_module_has_a_layer():
    assert not [name for name in MODULES if _layer(name) is None]


def test_imports_point_down():
    upward = {}
    for name, targets in GRAPH.items():
        for target in targets:
            if _layer(target) > _layer(name):
                upward[(name, target)] = (f"{LAYERS[_layer(name)][0]} imports "
                                          f"{LAYERS[_layer(target)][0]}")
    assert set(upward) - set(KNOWN_UPWARD) == set(), upward
    assert set(KNOWN_UPWARD) - set(upward) == set(), \
        "a known upward import is gone: remove it from KNOWN_UPWARD"


def test_no_import_cycle():
    # Imports of a package by its own modules (e.g. ``from skforget import
    # accounting`` inside skforget.certify) go to the package's __init__,
    # which is a cycle only if that __init__ imports the module back.
    state, cycles = {}, []

    def visit(name, stack):
        state[name] = "open"
        for target in sorted(GRAPH[name]):
            if state.get(target) == "open":
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack + [target])
        state[name] = "done"

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert not cycles, cycles


@pytest.mark.parametrize("source", [
    "from skforget.pipeline import ForgetPipeline",
    "def f():\n    from skforget.pipeline import ForgetPipeline",
    "import skforget.pipeline",
    "from skforget import pipeline",
])
def test_the_parser_sees_every_kind_of_import(source, tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert _imports("skforget._public", path) == {"skforget.pipeline"}


def test_only_validation_imports_sklearns_private_parameter_checks():
    # skforget._validation re-exports Interval and StrOptions, so a change in
    # scikit-learn's private module touches one file.
    users = set()
    for name, path in MODULES.items():
        if path.suffix != ".py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and \
                    node.module == "sklearn.utils._param_validation":
                users.add(name)
    assert users == {"skforget._validation"}


def test_the_bottom_imports_nothing_of_ours():
    # The accounting is pure mathematics of public numbers; the leaves import
    # only the exceptions. Everything else may use both.
    for name, targets in GRAPH.items():
        if name == "skforget.accounting" or name.startswith("skforget.accounting."):
            assert all(t.startswith("skforget.accounting") for t in targets), name
        if _layer(name) == 0:
            assert targets <= {"skforget.exceptions"}, name


def _architecture_map():
    text = (PACKAGE.parent / "doc" / "architecture.md").read_text()
    start = text.index("```", text.index("## Layers"))
    return text[start + 3:text.index("```", start + 3)]


def test_the_architecture_map_draws_these_layers_and_modules():
    # doc/architecture.md lists the layers top to bottom, each module in one.
    drawn = _architecture_map()
    names = [name for name, _ in LAYERS]
    order = [w for w in re.findall(r"^ ([a-z]+) +\S", drawn, re.M) if w in names]
    assert order == names[::-1]
    missing = [name for name, path in MODULES.items()
               if path.name != "__init__.py" and path.name not in drawn]
    assert not missing, "add these modules to doc/architecture.md"


def test_no_module_is_over_800_lines():
    # A module that grows past this does more than one job: split it by job.
    long = {name: n for name, path in MODULES.items() if path.suffix == ".py"
            and (n := len(path.read_text().splitlines())) > 800}
    assert not long
