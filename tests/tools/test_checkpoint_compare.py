"""Smoke test of tools/edgemt-compare --quick (needs ../shared and the built CLI in EDGEMT_CLI).

Checks only that the table prints and the exit status is 0; timings are not asserted.
"""
import os
import tempfile
import unittest

import helpers

CLI = helpers.CLI


class CompareSmokeTest(unittest.TestCase):
    def test_quick_run_prints_table(self):
        helpers.require_checkpoint(self)
        result = helpers.run_tool("edgemt-compare", "--quick", "--threads", "1",
                                  "--edgemt", CLI, "--shared", helpers.SHARED_DIR)
        self.assertEqual(result.returncode, 0, result.stderr)
        for expected in ("machine:", "command:", "threads 1", "PyTorch eager fp32",
                         "PyTorch dynamic int8", "edgemt fp32", "edgemt fp16", "edgemt int8",
                         "edgemt int8 vs edgemt fp32:", "p50 ms", "sent/s"):
            self.assertIn(expected, result.stdout)
        # platforms/debian12/install-deps.sh installs OpenBLAS for PyTorch.
        self.assertRegex(result.stdout, r"PyTorch \S+ on OpenBLAS \(/")

    def test_missing_edgemt_executable_is_refused_before_measuring(self):
        helpers.require_checkpoint(self)
        with tempfile.TemporaryDirectory() as tmp:
            result = helpers.run_tool("edgemt-compare", "--edgemt", os.path.join(tmp, "edgemt"),
                                      "--shared", helpers.SHARED_DIR)
        self.assertEqual(result.returncode, 2)
        self.assertIn("no edgemt executable", result.stderr)
        self.assertNotIn("threads 1", result.stdout)


if __name__ == "__main__":
    unittest.main()
