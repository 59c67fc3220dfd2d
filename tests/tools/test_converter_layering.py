"""The converter's layering (issue 40), read from the code of
tools/edgemt_tools/ (generated/ aside):

- no import cycle among its modules, counting imports inside functions and
  the package a module's import runs first (importing families.checks runs
  families/__init__.py, which imports every family module);
- no module imports another module's private (_name) helper;
- the shared modules, what a conversion of any family goes through (every
  module convert.py reaches without entering families/ or sources/, and
  what the sources share, sources/common.py and sources/detect.py), reach a
  family only through the registry: they import no family module and their
  code names nothing of one family. The names are each registered family's
  config type, its config fields that not every family has (but a few that
  are also plain words of neutral code: GENERIC_FIELDS), the constants its
  module defines beyond the record every family module has (limits, enum
  value lists), its table's macro, and its name as a string. Code, not
  prose: edgemt-convert's help text describes each family's files in words.
  The other modules are one family's own (numpy_transformer.py, the
  Transformer's forward pass, reached through its record; torch_reference.py
  and the tools around it, the PyTorch reference of the torch source) or
  no family's (bleu.py, search.py).
"""

import ast
import dataclasses
import os
import unittest
from typing import Dict, List, Optional, Set

import helpers
from edgemt_tools import families

PACKAGE = "edgemt_tools"
ROOT = os.path.join(helpers.TOOLS_DIR, PACKAGE)
SKIPPED = ("generated",)

# Config fields of one family that are also ordinary words of neutral code
# (an output file, a search's layers); the other fields of a family name it.
GENERIC_FIELDS = {"layers", "cell", "score", "query", "output", "activation"}
# What every family module defines (families/__init__.py's docstring).
EVERY_FAMILY_MODULE = {"FAMILY", "SYNTAX", "TENSOR_TABLE", "CONFIG_TABLE"}
# The modules the issue names as shared: the walk must find them.
NAMED_SHARED = {"model_spec", "model_file", "validate", "convert", "writer", "limits", "fbs",
                "int8_calibration", "sources.common", "sources.detect"}


def module_files() -> Dict[str, str]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                parts = [PACKAGE] + os.path.relpath(path, ROOT)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts.pop()
                modules[".".join(parts)] = path
    return modules


MODULES = module_files()
TREES = {}


def tree(module: str) -> ast.Module:
    if module not in TREES:
        with open(MODULES[module], encoding="utf-8") as handle:
            TREES[module] = ast.parse(handle.read(), MODULES[module])
    return TREES[module]


def is_package(module: str) -> bool:
    return MODULES[module].endswith("__init__.py")


def imported(module: str, node: ast.AST) -> List[str]:
    """The package's modules an import statement of `module` names (a
    `from X import name` names module X.name when there is one, else X)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in MODULES]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package(module) else module.split(".")[:-1]
        package = package[:len(package) - node.level + 1]
        base = ".".join(package + ([node.module] if node.module else []))
    if base not in MODULES:
        return []
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
            for alias in node.names]


def imports(module: str) -> Set[str]:
    """Every module `module` makes Python run: what it imports anywhere in
    the file, and the packages of those, which run first (but its own)."""
    found = set()
    for node in ast.walk(tree(module)):
        for target in imported(module, node):
            parts = target.split(".")
            for end in range(2, len(parts) + 1):
                name = ".".join(parts[:end])
                if name != module and not module.startswith(name + "."):
                    found.add(name)
    return found


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One import cycle of `graph` as [a, b, ..., a], or None."""
    state = {}  # module -> "open" while on the path, "done" after
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = "open"
        while stack:
            following = next(stack[-1], None)
            if following is None:
                state[path.pop()] = "done"
                stack.pop()
            elif state.get(following) == "open":
                return path[path.index(following):] + [following]
            elif following not in state:
                state[following] = "open"
                path.append(following)
                stack.append(iter(sorted(graph.get(following, ()))))
    return None


def shared_modules() -> Set[str]:
    """What convert.py reaches without entering families/ or sources/,
    with the sources' shared modules."""
    outside = (f"{PACKAGE}.families", f"{PACKAGE}.sources")
    seen, todo = set(), [f"{PACKAGE}.convert"]
    while todo:
        module = todo.pop()
        if module in seen or module.startswith(outside):
            continue
        seen.add(module)
        todo.extend(imports(module))
    return seen | {f"{PACKAGE}.sources.common", f"{PACKAGE}.sources.detect"}


def family_words() -> Set[str]:
    """The names only a family's own code says (the module docstring)."""
    configs = [family.config_type for family in families.FAMILIES.values()]
    fields = [{item.name for item in dataclasses.fields(config)} for config in configs]
    common = set.intersection(*fields)
    words = set()
    for family, own in zip(families.FAMILIES.values(), fields):
        module = __import__(f"{PACKAGE}.families.{family.name}", fromlist=["FAMILY"])
        words |= {family.config_type.__name__, family.config_table.name,
                  family.tensors.syntax.macro}
        words |= own - common - GENERIC_FIELDS
        words |= {name for name in vars(module)
                  if name.isupper() and not name.startswith("_")} - EVERY_FAMILY_MODULE
    return words


def family_mentions(module: str, words: Set[str]) -> List[str]:
    """Where `module`'s code names a family: an import of a family module, a
    name or attribute in `words`, a string that is one of them or a family's
    name. "line: what" each."""
    family_modules = {f"{PACKAGE}.families.{name}" for name in families.FAMILIES}
    strings = words | set(families.FAMILIES)
    found = []
    for node in ast.walk(tree(module)):
        names = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.keyword) and node.arg:
            names = [node.arg]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.alias):
            names = [node.name.split(".")[-1], node.asname or ""]
        found += [f"{getattr(node, 'lineno', '?')}: {name}" for name in names if name in words]
        if isinstance(node, ast.Constant) and node.value in strings:
            found.append(f"{node.lineno}: {node.value!r}")
        found += [f"{node.lineno}: imports {target}" for target in imported(module, node)
                  if target in family_modules]
    return found


class ConverterLayeringTest(unittest.TestCase):
    def test_no_import_cycle(self):
        graph = {module: imports(module) for module in MODULES}
        cycle = find_cycle(graph)
        self.assertIsNone(cycle, " -> ".join(cycle or []))

    def test_no_module_imports_a_private_helper(self):
        found = []
        for module in MODULES:
            for node in ast.walk(tree(module)):
                if isinstance(node, ast.ImportFrom) and imported(module, node):
                    found += [f"{module}:{node.lineno}: {alias.name}" for alias in node.names
                              if alias.name.startswith("_") and not alias.name.startswith("__")]
        self.assertEqual(found, [])

    def test_shared_modules_reach_families_only_through_the_registry(self):
        shared = shared_modules()
        self.assertLessEqual({f"{PACKAGE}.{name}" for name in NAMED_SHARED}, shared)
        words = family_words()
        found = [f"{module}:{place}" for module in sorted(shared)
                 for place in family_mentions(module, words)]
        self.assertEqual(found, [])


class TheChecksCanFailTest(unittest.TestCase):
    """The checks above, on what they must refuse."""

    def test_a_cycle_is_found(self):
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}))

    def test_importing_a_family_submodule_runs_the_registry(self):
        self.assertIn(f"{PACKAGE}.families", imports(f"{PACKAGE}.model_spec"))
        self.assertNotIn(f"{PACKAGE}.families", imports(f"{PACKAGE}.families.transformer"))

    def test_the_words_name_each_family(self):
        words = family_words()
        for word in ("TransformerConfig", "RnnConfig", "d_model", "ffn_dim", "heads", "hidden",
                     "bidirectional_encoder", "MAX_D_MODEL", "RNN_CELLS", "RNN_TENSOR"):
            self.assertIn(word, words)
        self.assertFalse(GENERIC_FIELDS & words)

    def test_family_code_is_found(self):
        code = ("from .families.transformer import TransformerConfig\n"
                "def width(cfg, hidden=0):\n"
                "    return cfg.d_model if families.find('transformer') else hidden\n")
        module = f"{PACKAGE}.model_spec"
        TREES[module], saved = ast.parse(code), tree(module)
        try:
            found = family_mentions(module, family_words())
        finally:
            TREES[module] = saved
        self.assertEqual(sorted(found), sorted([
            f"1: imports {PACKAGE}.families.transformer", "1: TransformerConfig", "2: hidden",
            "3: d_model", "3: 'transformer'", "3: hidden"]))


if __name__ == "__main__":
    unittest.main()
