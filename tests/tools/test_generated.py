"""The committed flatc Python code must equal a fresh `flatc --python` run."""

import filecmp
import os
import shutil
import subprocess
import tempfile
import unittest

import helpers

GENERATED = os.path.join(helpers.TOOLS_DIR, "edgemt_tools", "generated")
SCHEMA = os.path.join(helpers.REPO_ROOT, "schema", "edgemt.fbs")


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, names in os.walk(root) for f in names
                  if not f.endswith(".pyc") and "__pycache__" not in d)


class GeneratedCodeTest(unittest.TestCase):
    def test_generated_code_is_current(self):
        flatc = shutil.which("flatc")
        if flatc is None:
            self.skipTest("flatc not installed")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([flatc, "--python", "-o", tmp, SCHEMA], check=True)
            self.assertEqual(_files(tmp), _files(GENERATED),
                             "file list differs: regenerate with "
                             "`flatc --python -o tools/edgemt_tools/generated schema/edgemt.fbs`")
            for name in _files(tmp):
                self.assertTrue(filecmp.cmp(os.path.join(tmp, name),
                                            os.path.join(GENERATED, name), shallow=False),
                                f"{name} is stale: regenerate with flatc --python")


if __name__ == "__main__":
    unittest.main()
