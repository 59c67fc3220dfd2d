"""docs/ARCHITECTURE.md: every path it names exists, and it holds both recipes.

A path is any `backticked` text with a slash or a file extension that does
not contain a placeholder (`<family>`); a renamed or deleted file makes this
test name it.
"""

import os
import re
import unittest

import helpers

DOC = os.path.join(helpers.REPO_ROOT, "docs", "ARCHITECTURE.md")

_CODE = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(r"^[\w.\-/]+$")


def named_paths(text: str):
    """Backticked repository paths in `text` (placeholders and code skipped)."""
    paths = []
    for span in _CODE.findall(text):
        if "<" in span or not _PATHLIKE.match(span):
            continue
        if "/" in span or re.search(r"\.(md|py|cc|h|fbs|txt|json|sh)$", span):
            paths.append(span.rstrip("/"))
    return paths


class ArchitectureDocTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(DOC, encoding="utf-8") as handle:
            cls.text = handle.read()

    def test_every_named_path_exists(self):
        paths = named_paths(self.text)
        self.assertGreater(len(paths), 20, "the page should name the files it describes")
        missing = [p for p in paths if not os.path.exists(os.path.join(helpers.REPO_ROOT, p))]
        self.assertEqual(missing, [], "docs/ARCHITECTURE.md names paths that do not exist")

    def test_the_recipes_and_phases_are_there(self):
        for heading in ("## Add a model family", "## Add a checkpoint source"):
            self.assertIn(heading, self.text)
        for phase in ("**Load**", "**Plan**", "**Run**"):
            self.assertIn(phase, self.text)

    def test_no_family_internals_outside_runtime_models(self):
        """The translator, the search, the file layer, the CLI and the public
        headers name no family's internals (issue 14, acceptance 2; the RNN
        family's words and runtime/format since issue 40: the same pattern as
        `grep -rniE "transformer|d_model|ffn|heads|qkv|self_attn|cross_attn|k/v|layer_norm|
        norm_placement|rnn|lstm|gru|bahdanau|luong|input.feed" runtime/translator.cc
        runtime/search runtime/format runtime/include tools/cli`)."""
        pattern = re.compile(r"transformer|\bd_model|ffn|heads|qkv|self_attn|cross_attn|k/v|"
                             r"layer_norm|norm_placement|\brnn|lstm|\bgru\b|bahdanau|luong|"
                             r"input.feed", re.IGNORECASE)
        roots = ["runtime/translator.cc", "runtime/search", "runtime/format", "runtime/include",
                 "tools/cli"]
        found = []
        for root in roots:
            path = os.path.join(helpers.REPO_ROOT, root)
            files = [path] if os.path.isfile(path) else [
                os.path.join(d, f) for d, _, names in os.walk(path) for f in names]
            self.assertTrue(files, root)
            for name in files:
                with open(name, encoding="utf-8") as handle:
                    for number, line in enumerate(handle, 1):
                        if pattern.search(line):
                            found.append(f"{os.path.relpath(name, helpers.REPO_ROOT)}:{number}: "
                                         f"{line.strip()}")
        self.assertEqual(found, [])

    def test_it_is_one_page(self):
        self.assertLessEqual(len(self.text.splitlines()), 150)

    def test_the_extractor_finds_and_skips_what_it_should(self):
        text = ("`runtime/nowhere.cc`, `runtime/models/<family>/`, `encode`, "
                "`README.md`, `a b/c`, `tools/cli/`")
        self.assertEqual(named_paths(text), ["runtime/nowhere.cc", "README.md", "tools/cli"])


if __name__ == "__main__":
    unittest.main()
