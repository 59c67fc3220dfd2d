"""gptq.py: error-compensating rounding of an int8 matrix keeps the format
(codes in [-127, 127], quantize_rows' scales) and lowers the product error
on the inputs it was given, against round-to-nearest."""

import unittest

import numpy as np

import helpers  # noqa: F401
from edgemt_tools.errors import UserError
from edgemt_tools.gptq import gptq_rows, hessian
from edgemt_tools.quantize import dequantize_rows, quantize_rows


def correlated_inputs(rows, depth, seed):
    """Inputs whose channels are correlated and of unequal size, as a
    LayerNorm's output is (where GPTQ has something to exploit)."""
    rng = np.random.default_rng(seed)
    mix = rng.standard_normal((depth, depth)).astype(np.float32) / np.sqrt(depth)
    scale = np.exp(rng.normal(0, 0.7, depth)).astype(np.float32)
    return (rng.standard_normal((rows, depth)).astype(np.float32) @ mix * scale).astype(np.float32)


def product_error(x, w, codes, scale):
    return float(np.linalg.norm(x @ dequantize_rows(codes, scale).T - x @ w.T) /
                 np.linalg.norm(x @ w.T))


class GptqTest(unittest.TestCase):
    def test_same_scales_and_code_range_as_nearest(self):
        rng = np.random.default_rng(1)
        w = rng.standard_normal((24, 200)).astype(np.float32)
        x = correlated_inputs(400, 200, 2)
        codes, scale = gptq_rows(w, hessian(x))
        _, nearest_scale = quantize_rows(w)
        np.testing.assert_array_equal(scale, nearest_scale)
        self.assertEqual(codes.dtype, np.int8)
        self.assertLessEqual(int(np.abs(codes.astype(np.int32)).max()), 127)

    def test_lower_product_error_than_nearest_in_and_out_of_sample(self):
        rng = np.random.default_rng(3)
        w = rng.standard_normal((64, 256)).astype(np.float32) / 16
        x = correlated_inputs(1024, 256, 4)
        held_out = correlated_inputs(512, 256, 4)[::-1] * np.float32(1.1)
        codes, scale = gptq_rows(w, hessian(x))
        nearest = quantize_rows(w)
        for rows, name in ((x, "calibration"), (held_out, "held out")):
            ours, plain = product_error(rows, w, codes, scale), product_error(rows, w, *nearest)
            self.assertLess(ours, 0.8 * plain, f"{name}: {ours:.5f} vs nearest {plain:.5f}")

    def test_zero_rows_dead_columns_and_degenerate_inputs(self):
        rng = np.random.default_rng(5)
        w = rng.standard_normal((6, 10)).astype(np.float32)
        w[2] = 0
        x = rng.standard_normal((50, 10)).astype(np.float32)
        x[:, 7] = 0  # a channel no input reaches
        codes, scale = gptq_rows(w, hessian(x))
        self.assertTrue(np.all(codes[2] == 0))
        self.assertEqual(scale[2], 0)
        # No inputs at all: every column dead, nearest rounding.
        codes, _ = gptq_rows(w, np.zeros((10, 10)))
        np.testing.assert_array_equal(codes, quantize_rows(w)[0])

    def test_non_finite_weights_are_refused_by_name(self):
        w = np.ones((2, 3), np.float32)
        w[1, 1] = np.nan
        with self.assertRaisesRegex(UserError, "tensor decoder.x.weight contains non-finite"):
            gptq_rows(w, np.eye(3), "decoder.x.weight")


if __name__ == "__main__":
    unittest.main()
