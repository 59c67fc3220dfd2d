"""The runtime's layers point down: what a folder includes, followed
through every include it reaches, never gets to a model family's own
headers (runtime/models/<family>/) from the file layer, the search or the
layers and kernels below them, and the search does not reach the public
Translator it serves (edgemt/translator.h). The registry they use instead,
runtime/models/families.h, holds a family's config as bytes (issue 40)."""

import os
import re
import unittest

import helpers

RUNTIME = os.path.join(helpers.REPO_ROOT, "runtime")
FAMILIES = ("models/rnn/", "models/transformer/")
# folder -> headers (relative to runtime/) nothing in it may reach.
RULES = {
    "format": FAMILIES,
    "search": FAMILIES + ("include/edgemt/translator.h",),
    "core": FAMILIES,
    "kernels": FAMILIES,
    "layers": FAMILIES,
    "text": FAMILIES,
    "capi": FAMILIES,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def resolve(name):
    """runtime/-relative path of a quoted include, or None (a system or a
    generated header)."""
    for base in (RUNTIME, os.path.join(RUNTIME, "include")):
        path = os.path.join(base, name)
        if os.path.isfile(path):
            return os.path.relpath(path, RUNTIME)
    return None


def direct_includes(rel):
    with open(os.path.join(RUNTIME, rel), encoding="utf-8") as handle:
        names = [m.group(1) for m in map(INCLUDE.match, handle) if m]
    return [r for r in map(resolve, names) if r is not None]


def reached(rel):
    """Every runtime header `rel` includes, directly or through others, each
    with the chain that gets there."""
    chains = {}
    stack = [(rel, [rel])]
    while stack:
        current, chain = stack.pop()
        for header in direct_includes(current):
            if header not in chains:
                chains[header] = chain + [header]
                stack.append((header, chains[header]))
    return chains


def sources(folder):
    for dirpath, _, files in os.walk(os.path.join(RUNTIME, folder)):
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                yield os.path.relpath(os.path.join(dirpath, name), RUNTIME)


class LayeringTest(unittest.TestCase):
    def test_no_folder_reaches_what_is_above_it(self):
        for folder, forbidden in RULES.items():
            for rel in sources(folder):
                for header, chain in reached(rel).items():
                    with self.subTest(file=rel):
                        self.assertFalse(header.startswith(forbidden),
                                         "runtime/" + " -> ".join(chain))

    def test_the_walk_finds_real_chains(self):
        # The Transformer's own files do reach its config; if this failed,
        # the rule above would pass for want of resolving anything.
        chains = reached("models/transformer/transformer.cc")
        self.assertIn("models/transformer/config.h", chains)
        self.assertIn("models/families.h", chains)


if __name__ == "__main__":
    unittest.main()
