"""tools/fixtures/marian_ssru/alphas.py, the script that made the SSRU
fixture's model.intgemm8.alphas.bin (Firefox's layout with alphas), run
again: it must write the committed file byte for byte.

Its activation maxima come from a numpy pass over the first 200 lines of
Multi30k val.en ($EDGEMT_SHARED_DIR/data/multi30k); without them the test
prints "SKIPPED:" and skips (ctest reports it as skipped)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import helpers

FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian_ssru")
SCRIPT = os.path.join(helpers.REPO_ROOT, "tools", "fixtures", "marian_ssru", "alphas.py")
VAL = os.path.join(helpers.DATA_DIR, "val.en.gz")


class FixtureAlphasTest(unittest.TestCase):
    def test_alphas_py_remakes_the_committed_file(self):
        if not os.path.isfile(VAL):
            message = f"SKIPPED: Multi30k {VAL} is not there"
            print(message, file=sys.stderr)
            raise unittest.SkipTest(message)
        with tempfile.TemporaryDirectory(prefix="edgemt-alphas-") as folder:
            for name in ("model.npz", "model.intgemm8.bin", "vocab.spm"):
                shutil.copyfile(os.path.join(FIXTURE, name), os.path.join(folder, name))
            result = subprocess.run(["/usr/bin/python3", SCRIPT, folder], capture_output=True,
                                    text=True, check=False)
            self.assertEqual(result.returncode, 0, result.stderr[-2000:])
            with open(os.path.join(folder, "model.intgemm8.alphas.bin"), "rb") as made, \
                    open(os.path.join(FIXTURE, "model.intgemm8.alphas.bin"), "rb") as committed:
                self.assertTrue(made.read() == committed.read(), "the remade alphas file differs")


if __name__ == "__main__":
    unittest.main()
