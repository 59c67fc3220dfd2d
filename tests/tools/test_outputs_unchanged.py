"""Translations that must not change while the runtime is reshaped (issue 14).

`edgemt translate` on all 1,000 lines of test_2016_flickr with the bundled
int8 model, greedy and beam 4, must print exactly the committed outputs
(models/reference/edgemt_int8_greedy.de and edgemt_int8_beam4.de, made before
the model-family refactor, and remade once on purpose when int8 models moved
to narrow activation codes, issue 17). int8 files give the same bits on every CPU (own
integer GEMMs, portable float kernels), so this holds on any machine. The fp32
counterpart (needs the checkpoint) is test_checkpoint_outputs_unchanged.py.

Needs the built binary (EDGEMT_CLI) and the bundled model.
"""

import os
import subprocess
import unittest

import helpers

CLI = helpers.CLI
SOURCES = os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en")



class OutputsUnchangedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        helpers.require_cli()

    def translate(self, *flags):
        result = subprocess.run([CLI, "translate", "-m", helpers.BUNDLED_MODEL, "-i", SOURCES, *flags],
                                capture_output=True, check=False, timeout=1200)
        self.assertEqual(result.returncode, 0, result.stderr.decode("utf-8", "replace"))
        return result.stdout.decode("utf-8").splitlines()

    def assert_same(self, got, want_file):
        want = helpers.reference_lines(want_file)
        self.assertEqual(len(want), 1000)
        helpers.assert_same_lines(self, got, want, want_file)

    def test_int8_greedy_is_unchanged(self):
        self.assert_same(self.translate(), "edgemt_int8_greedy.de")

    def test_int8_beam4_is_unchanged(self):
        self.assert_same(self.translate("--beam", "4"), "edgemt_int8_beam4.de")


if __name__ == "__main__":
    unittest.main()
