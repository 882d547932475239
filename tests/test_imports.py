"""The package's modules import one another without a cycle: each concept sits above the
plumbing it uses, never beside it. Read from the source (every import, at module level or
inside a function), so a cycle hidden behind a late import counts too; only an import under
``if TYPE_CHECKING:``, which never runs, is left out (it names a type for the reader)."""

from __future__ import annotations

import ast
from pathlib import Path

import accessbench

ROOT = Path(accessbench.__file__).parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports: ``from .x import y`` is module ``x.y``
    when that is a module, else ``x``."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in _run_time_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "accessbench"}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            if base.split(".")[0] == "accessbench":
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
    resolved = set()
    for one in found:
        while one not in modules and "." in one:
            one = one.rsplit(".", 1)[0]
        resolved.add(one)
    return resolved - {name}


def _run_time_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            yield from (n for branch in child.orelse for n in [branch, *_run_time_nodes(branch)])
            continue
        yield child
        yield from _run_time_nodes(child)


def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in ROOT.rglob("*.py")}
    return {name: imports(path, name, set(paths)) for name, path in paths.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_relative_absolute_and_late_imports():
    edges = graph()
    assert "accessbench.runner.executor" in edges["accessbench.runner.run"]      # from .executor import …
    assert "accessbench.worker_process" in edges["accessbench.runner.executor"]  # from ..worker_process import …
    assert "accessbench.cluster.dask" in edges["accessbench.runner.run"]         # inside a function
    assert "accessbench.suite.model" not in edges["accessbench.suite.limits"]    # only under TYPE_CHECKING


def test_no_module_of_the_package_imports_itself_through_others():
    assert cycles(graph()) == []


LONGEST = 60  # lines: a longer function does several things, and reads better as its steps


def long_functions(tree: ast.AST, where: str) -> list[str]:
    return [f"{where}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > LONGEST]


def test_no_function_of_the_package_is_longer_than_sixty_lines():
    found = [line for path in sorted(ROOT.rglob("*.py"))
             for line in long_functions(ast.parse(path.read_text()), str(path.relative_to(ROOT.parent)))]
    assert not found, "\n".join(found)


def test_the_length_rule_sees_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(LONGEST))
    assert long_functions(ast.parse(f"def f():\n{body}\n"), "m.py") == ["m.py:1 f (61 lines)"]
    assert long_functions(ast.parse("def g():\n    return 1\n"), "m.py") == []
