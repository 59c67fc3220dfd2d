"""fp32 translations that must not change while the runtime is reshaped (issue 14).

The fp32 file converted from the checkpoint in ../shared translates all 1,000
lines of test_2016_flickr exactly as PyTorch does, greedy and beam 4
(models/reference/torch_fp32_greedy.de and torch_fp32_beam4.de, committed
before the refactor; docs/converting.md, "Quality"), so those files are the fp32 outputs
the refactor must keep. The int8 counterpart is test_outputs_unchanged.py.

Needs ../shared (label checkpoint) and the built binary (EDGEMT_CLI).
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import helpers

CLI = helpers.CLI
SOURCES = os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en")



class CheckpointOutputsUnchangedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.model = None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def fp32_model(self):
        paths = helpers.require_checkpoint(self)
        self.assertTrue(os.path.isfile(CLI), f"not built: {CLI}")
        if type(self).model is None:
            model = os.path.join(self.tmp, "fp32.emt")
            result = helpers.run_tool("edgemt-convert", "--from", "torch", "--checkpoint",
                                      paths["checkpoint"], "--config", paths["config"], "--spm",
                                      paths["spm"], "--src-lang", "en", "--tgt-lang", "de",
                                      "--dtype", "fp32", "-o", model)
            self.assertEqual(result.returncode, 0, result.stderr)
            type(self).model = model
        return type(self).model

    def assert_translates_as(self, want_file, *flags):
        result = subprocess.run([CLI, "translate", "-m", self.fp32_model(), "-i", SOURCES, *flags],
                                capture_output=True, check=False, timeout=1800)
        self.assertEqual(result.returncode, 0, result.stderr.decode("utf-8", "replace"))
        got = result.stdout.decode("utf-8").splitlines()
        want = helpers.reference_lines(want_file)
        self.assertEqual(len(want), 1000)
        helpers.assert_same_lines(self, got, want, want_file)

    def test_fp32_greedy_is_unchanged(self):
        self.assert_translates_as("torch_fp32_greedy.de")

    def test_fp32_beam4_is_unchanged(self):
        self.assert_translates_as("torch_fp32_beam4.de", "--beam", "4")


if __name__ == "__main__":
    unittest.main()
