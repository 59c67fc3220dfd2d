"""tools/fixtures/marian_ssru/alphas.py, the script that made the SSRU
fixture's model.intgemm8.alphas.bin (Firefox's layout with alphas), run
again: it must write the committed file, byte for byte but for the alphas.

The alphas are 127 / (mean + 1.1 std) of activation maxima that numpy's
float32 products give, and numpy's BLAS picks its kernels by CPU: on an AMD
EPYC of cpu family 26 one alpha of 30 came out one float32 step from the
committed file's (made on family 25). So each `<weight>_QuantMultA` value may
differ by a relative 1e-5 (a wrong recipe, such as other sentences or 1.0 std,
moves them by 1e-3 and more); every other byte must be equal.

Its activation maxima come from a numpy pass over the first 200 lines of
Multi30k val.en ($EDGEMT_SHARED_DIR/data/multi30k); without them the test
prints "SKIPPED:" and skips (ctest reports it as skipped)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import helpers

FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian_ssru")
SCRIPT = os.path.join(helpers.REPO_ROOT, "tools", "fixtures", "marian_ssru", "alphas.py")
VAL = os.path.join(helpers.DATA_DIR, "val.en.gz")
sys.path.insert(0, os.path.dirname(SCRIPT))
from fixture import read_bin  # noqa: E402

ALPHA_TOLERANCE = 1e-5  # relative


def items_of(path):
    """[(name, type code, shape, data bytes)] of a Marian .bin, in file order."""
    _, items, raw = read_bin(path)
    return [(i["name"], i["type_code"], i["shape"],
             raw[i["data_offset"]:i["data_offset"] + i["data_bytes"]]) for i in items]


def alpha_value(kind, data):
    """(code bytes, float) of an alpha item: float32 [1, 1], or browsermt's intgemm8
    [1, 1] (one int8 code, then its float32 quantMult: 127 / alpha)."""
    if kind == 0x404:
        return b"", float(np.frombuffer(data[:4], np.float32)[0])
    return data[:1], float(np.frombuffer(data[1:5], np.float32)[0])


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
            made = items_of(os.path.join(folder, "model.intgemm8.alphas.bin"))
            committed = items_of(os.path.join(FIXTURE, "model.intgemm8.alphas.bin"))
        self.assertEqual([i[:3] for i in made], [i[:3] for i in committed])
        alphas = 0
        for (name, kind, _, data), (_, _, _, want) in zip(made, committed):
            if not name.endswith("_QuantMultA"):
                self.assertTrue(data == want, f"item {name} differs")
                continue
            alphas += 1
            (code, value), (want_code, want_value) = alpha_value(kind, data), alpha_value(kind, want)
            self.assertEqual(code, want_code, name)
            self.assertLessEqual(abs(value - want_value), ALPHA_TOLERANCE * abs(want_value),
                                 f"{name}: {value} against the committed {want_value}")
        self.assertEqual(alphas, 30)


if __name__ == "__main__":
    unittest.main()
