"""Shared helpers for the Python tool tests (imported first by every test module).

Puts tools/ on sys.path, locates the repository and ../shared, and runs the
command-line tools as subprocesses with /usr/bin/python3.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS_DIR = os.path.join(REPO_ROOT, "tools")
if TOOLS_DIR not in sys.path:
    sys.path.insert(0, TOOLS_DIR)

SHARED_DIR = os.environ.get("EDGEMT_SHARED_DIR",
                            os.path.join(os.path.dirname(REPO_ROOT), "shared"))
CHECKPOINT_DIR = os.path.join(SHARED_DIR, "models", "multi30k-en-de")
DATA_DIR = os.path.join(SHARED_DIR, "data", "multi30k")
MODELS_DIR = os.path.join(REPO_ROOT, "models")
REFERENCE_DIR = os.path.join(MODELS_DIR, "reference")
# The bundled default model (int8) and its fp16 sibling (models/MODEL_CARD.md).
BUNDLED_MODEL = os.path.join(MODELS_DIR, "multi30k-en-de.int8.emt")
BUNDLED_FP16_MODEL = os.path.join(MODELS_DIR, "multi30k-en-de.fp16.emt")
SKIP_MESSAGE = "SKIPPED: ../shared checkpoint not found"
# The built `edgemt` binary (ctest passes its path in EDGEMT_CLI).
CLI = os.environ.get("EDGEMT_CLI", os.path.join(REPO_ROOT, "build", "edgemt"))


def project_version() -> str:
    """"x.y.z" of CMakeLists.txt's project() line, read here on its own (the
    tests compare every tool's version with it)."""
    import re  # pylint: disable=import-outside-toplevel
    with open(os.path.join(REPO_ROOT, "CMakeLists.txt"), encoding="utf-8") as handle:
        return re.search(r"^project\(edgemt VERSION ([0-9.]+)", handle.read(), re.M).group(1)


def checkpoint_paths():
    """Paths of the real checkpoint, or None when ../shared is absent."""
    paths = {"checkpoint": os.path.join(CHECKPOINT_DIR, "model.pt"),
             "config": os.path.join(CHECKPOINT_DIR, "config.json"),
             "spm": os.path.join(CHECKPOINT_DIR, "spm.model")}
    return paths if all(os.path.isfile(p) for p in paths.values()) else None


def require_checkpoint(test_case: unittest.TestCase) -> dict:
    """Return checkpoint paths or skip the test with SKIP_MESSAGE (ctest matches it)."""
    paths = checkpoint_paths()
    if paths is None:
        print(SKIP_MESSAGE, file=sys.stderr)
        test_case.skipTest(SKIP_MESSAGE)
    return paths


def require_cli() -> None:
    """Skip the calling test class (from setUpClass) when `edgemt` is not built."""
    if not os.path.isfile(CLI):
        raise unittest.SkipTest(f"edgemt binary not built: {CLI}")


class CliTestCase(unittest.TestCase):
    """Tests that run the built `edgemt`: skipped when it is missing, with a
    scratch folder `tmp` for the class (removed after it) and path(name) in it.
    A subclass with more to set up calls super().setUpClass() first."""

    @classmethod
    def setUpClass(cls):
        require_cli()
        cls.tmp = tempfile.mkdtemp()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name)


def run_tool(name: str, *args: str, cwd: str = None) -> subprocess.CompletedProcess:
    """Run tools/<name> with /usr/bin/python3; captures text output."""
    return subprocess.run(["/usr/bin/python3", os.path.join(TOOLS_DIR, name), *args],
                          capture_output=True, text=True, cwd=cwd, check=False)


def reference_lines(name: str):
    """The lines of models/reference/<name>."""
    with open(os.path.join(REFERENCE_DIR, name), encoding="utf-8") as handle:
        return handle.read().splitlines()


def assert_same_lines(test_case: unittest.TestCase, got, want, label: str) -> None:
    """Equal line lists; on failure names the first differing (0-based) lines."""
    test_case.assertEqual(len(got), len(want), f"line count differs from {label}")
    differing = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    test_case.assertEqual(differing, [], f"lines differing from {label} (0-based): {differing[:20]}")
