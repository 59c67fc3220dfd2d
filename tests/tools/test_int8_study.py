"""int8_study.py (edgemt-int8-study): its quantizers against the converter's
and the runtime's reference, smoothing leaves the float product unchanged,
and the study end to end on the committed Marian fixture (the numpy pass
must pick exactly the runtime's tokens, or its figures mean nothing)."""

import io
import os
import shutil
import subprocess
import tempfile
import unittest
from contextlib import redirect_stdout

import numpy as np

import helpers
from edgemt_tools.quantize import fake_quantize_activation_rows
from research import int8_study

MARIAN = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "npz")


class QuantizerTest(unittest.TestCase):
    def test_full_codes_are_the_reference_quantizer(self):
        rng = np.random.default_rng(3)
        x = (rng.standard_normal((50, 96)) * rng.uniform(0.01, 30, (50, 1))).astype(np.float32)
        x[3] = 0
        np.testing.assert_array_equal(int8_study.fake_quantize_rows(x, 127),
                                      fake_quantize_activation_rows(x))

    def test_full_codes_halve_the_error(self):
        rng = np.random.default_rng(4)
        x = rng.standard_normal((200, 64)).astype(np.float32)
        narrow = np.abs(int8_study.fake_quantize_rows(x, 64) - x).mean()
        full = np.abs(int8_study.fake_quantize_rows(x, 127) - x).mean()
        self.assertLess(full, 0.6 * narrow)

    def test_smoothing_keeps_the_float_product(self):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((30, 16)).astype(np.float32)
        x[:, 7] *= 50  # an outlier channel
        w = rng.standard_normal((8, 16)).astype(np.float32)
        s = int8_study.smoothing(x, w)
        self.assertGreater(s[7], 4 * np.median(s))
        np.testing.assert_allclose((x / s) @ (w * s).T, x @ w.T, rtol=1e-4, atol=1e-4)


class StudyTest(unittest.TestCase):
    def test_marian_fixture_end_to_end(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        model = os.path.join(tmp, "marian.fp32.emt")
        result = helpers.run_tool("edgemt-convert", "--from", "marian", "--checkpoint", MARIAN,
                                  "--src-lang", "en", "--tgt-lang", "de", "--dtype", "fp32",
                                  "-o", model)
        self.assertEqual(result.returncode, 0, result.stderr)
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(int8_study.main([model, "--sentences", "4", "--sensitivity"]), 0)
        text = out.getvalue()
        print(text)
        self.assertIn("numpy fp32 arg-max = runtime's at 100.00% of positions", text)
        for line in ("encoder.layers.1.ffn.out", "decoder.layers.1.cross_attn.kv", "output "):
            self.assertIn(line, text)
        for scheme in int8_study.SCHEMES:
            self.assertRegex(text, rf"\n  {scheme} +[0-9.]+% of positions")

    def test_a_model_it_cannot_read_is_one_error_line(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        garbage = os.path.join(tmp, "garbage.emt")
        with open(garbage, "wb") as handle:
            handle.write(b"not a model")
        for path in (garbage, os.path.join(tmp, "missing.emt")):
            result = subprocess.run([os.path.join(helpers.REPO_ROOT, "tools", "research",
                                                  "edgemt-int8-study"), path],
                                    capture_output=True, text=True, check=False)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
            self.assertIn(f"edgemt-int8-study: error: cannot read {path}", result.stderr)


if __name__ == "__main__":
    unittest.main()
