"""research/residual_tables.py (edgemt-int8-quality --residual-bits): on the
committed Marian fixture converted with `--fp32-embeddings lookup`, the
rewritten table is the output projection's int8 copy plus a residue of N
bits, within half a residual step of the float table per weight, and the
file still loads and translates."""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools.model_file import read_model
from edgemt_tools.model_spec import scale_name, smooth_name
from research import residual_tables

MARIAN = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "npz")


class ResidualTablesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.lookup = os.path.join(cls.tmp, "lookup.emt")
        result = helpers.run_tool("edgemt-convert", "--from", "marian", "--checkpoint", MARIAN,
                                  "--src-lang", "en", "--tgt-lang", "de", "--dtype", "int8",
                                  "--fp32-embeddings", "lookup", "-o", cls.lookup)
        assert result.returncode == 0, result.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def rewritten(self, bits: int):
        path = os.path.join(self.tmp, f"residual{bits}.emt")
        shutil.copyfile(self.lookup, path)
        lines = residual_tables.rewrite(path, bits)
        return read_model(path), lines

    def test_table_is_the_output_codes_plus_a_residue(self):
        before = read_model(self.lookup)
        table = np.asarray(before.array("embedding.source"), np.float64)
        codes = np.asarray(before.array("output.weight"), np.float64)
        first = codes * np.asarray(before.array(scale_name("output.weight")), np.float64)[:, None]
        first *= np.asarray(before.array(smooth_name("output.weight")), np.float64)[None, :]
        for bits in (4, 8):
            with self.subTest(bits=bits):
                after, lines = self.rewritten(bits)
                self.assertEqual(lines[0].split(",")[0],
                                 "embedding.source: first codes of output.weight")
                new = np.asarray(after.array("embedding.source"), np.float64)
                residue = table - first
                step = np.abs(residue).max(axis=1) / (2 ** (bits - 1) - 1)  # [V]
                # half a residual step, plus float32's rounding of the sum
                bound = step / 2 + 1e-6 * np.abs(table).max(axis=1)
                self.assertTrue((np.abs(new - table) <= bound[:, None]).all())
                # what is left of the residue is what N bits cannot hold
                steps = np.where(step > 0, step, 1.0)[:, None]
                q2 = (new - first) / steps
                # float32's rounding of the sum, in residual steps
                slack = 1e-6 * np.abs(table).max(axis=1)[:, None] / steps
                self.assertTrue((np.abs(q2 - np.rint(q2)) <= slack + 1e-9).all())
                self.assertLessEqual(np.abs(np.rint(q2)).max(), 2 ** (bits - 1) - 1)
                np.testing.assert_array_equal(after.array("output.weight"),
                                              before.array("output.weight"))

    def test_more_bits_keep_the_table_closer(self):
        table = np.asarray(read_model(self.lookup).array("embedding.source"), np.float64)
        errors = [np.abs(np.asarray(self.rewritten(bits)[0].array("embedding.source"))
                         - table).mean() for bits in (2, 4, 8)]
        self.assertGreater(errors[0], 3 * errors[1])
        self.assertGreater(errors[1], 8 * errors[2])

    def test_rewritten_file_translates(self):
        path = os.path.join(self.tmp, "residual4.emt")
        self.rewritten(4)
        result = subprocess.run([helpers.CLI, "translate", "-m", path], input="A dog runs.\n",
                                capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.strip())

    def test_refuses_int8_tables(self):
        path = os.path.join(self.tmp, "plain.emt")
        result = helpers.run_tool("edgemt-convert", "--from", "marian", "--checkpoint", MARIAN,
                                  "--src-lang", "en", "--tgt-lang", "de", "--dtype", "int8",
                                  "--no-calibration", "-o", path)
        self.assertEqual(result.returncode, 0, result.stderr)
        with self.assertRaisesRegex(ValueError, "not float32"):
            residual_tables.rewrite(path, 4)


if __name__ == "__main__":
    unittest.main()
