"""positions.py: the interleaved sinusoidal table of the README."""

import math
import unittest

import numpy as np

import helpers  # noqa: F401  (sys.path)
from edgemt_tools.positions import interleaved_sinusoidal


class PositionsTest(unittest.TestCase):
    def test_shape_dtype_and_row_zero(self):
        table = interleaved_sinusoidal(256, 256)
        self.assertEqual(table.shape, (256, 256))
        self.assertEqual(table.dtype, np.float32)
        np.testing.assert_array_equal(table[0, 0::2], 0.0)  # sin(0)
        np.testing.assert_array_equal(table[0, 1::2], 1.0)  # cos(0)

    def test_interleaved_formula(self):
        # PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same): check a few by hand.
        d = 256
        table = interleaved_sinusoidal(256, d)
        for p, i in ((1, 0), (7, 3), (100, 64), (255, 127)):
            angle = p / 10000 ** (2 * i / d)
            self.assertAlmostEqual(float(table[p, 2 * i]), math.sin(angle), delta=3e-5)
            self.assertAlmostEqual(float(table[p, 2 * i + 1]), math.cos(angle), delta=3e-5)

    def test_close_to_float64_everywhere(self):
        d, rows = 16, 40
        table = interleaved_sinusoidal(rows, d)
        p = np.arange(rows)[:, None].astype(np.float64)
        angle = p / 10000.0 ** (np.arange(0, d, 2) / d)
        self.assertLess(np.abs(table[:, 0::2] - np.sin(angle)).max(), 1e-5)
        self.assertLess(np.abs(table[:, 1::2] - np.cos(angle)).max(), 1e-5)

    def test_deterministic(self):
        np.testing.assert_array_equal(interleaved_sinusoidal(33, 16),
                                      interleaved_sinusoidal(33, 16))

    def test_odd_width_rejected(self):
        with self.assertRaises(ValueError):
            interleaved_sinusoidal(4, 15)


if __name__ == "__main__":
    unittest.main()
