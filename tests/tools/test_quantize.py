"""quantize.py: int8 per-row weight quantization and run-time activation
fake-quantization (QuantizationScheme.Int8PerRowDynamic)."""

import unittest
import warnings

import numpy as np

import helpers  # noqa: F401
from edgemt_tools.errors import UserError
from edgemt_tools.quantize import (ACTIVATION_QMAX, QMAX, dequantize_rows,
                                   fake_quantize_activation_rows,
                                   quantize_activation_rows, quantize_rows)


def random_matrix(rows=12, cols=40, seed=0):
    """Rows of very different magnitudes, so one shared scale would be wrong."""
    rng = np.random.default_rng(seed)
    magnitudes = np.float32(10.0) ** rng.uniform(-4, 2, size=(rows, 1)).astype(np.float32)
    return (rng.standard_normal((rows, cols)).astype(np.float32) * magnitudes).astype(np.float32)


class QuantizeRowsTest(unittest.TestCase):
    def test_one_scale_per_row_equal_to_max_over_127(self):
        w = random_matrix()
        q, scale = quantize_rows(w)
        self.assertEqual((q.dtype, q.shape), (np.int8, w.shape))
        self.assertEqual((scale.dtype, scale.shape), (np.float32, (w.shape[0],)))
        for r in range(w.shape[0]):
            want = np.float32(np.abs(w[r]).max()) / np.float32(127)
            self.assertEqual(scale[r], want, f"row {r}")
        self.assertEqual(len(set(scale.tolist())), w.shape[0])  # each row its own scale

    def test_row_maximum_maps_to_plus_or_minus_127(self):
        w = random_matrix(seed=1)
        q, _ = quantize_rows(w)
        for r in range(w.shape[0]):
            c = int(np.argmax(np.abs(w[r])))
            self.assertEqual(int(q[r, c]), 127 if w[r, c] > 0 else -127, f"row {r}")
        self.assertLessEqual(int(np.abs(q.astype(np.int32)).max()), QMAX)

    def test_rounds_half_to_even(self):
        # scale = 127/127 = 1 exactly, so w / scale is w: ties at .5 are exact.
        w = np.array([[127.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 126.5, -126.5, 0.49999997,
                       2.5000002]], dtype=np.float32)
        q, scale = quantize_rows(w)
        self.assertEqual(scale[0], np.float32(1.0))
        self.assertEqual(q[0].tolist(), [127, 0, 2, 2, 0, -2, -2, 4, 126, -126, 0, 3])

    def test_half_way_points_with_a_non_unit_scale(self):
        # max 254 -> scale 2 (exact); w = 2k + 1 lies half-way between codes k, k+1.
        w = np.array([[254.0, 1.0, 3.0, 5.0, -1.0, -3.0, 253.0, -253.0]], dtype=np.float32)
        q, scale = quantize_rows(w)
        self.assertEqual(scale[0], np.float32(2.0))
        self.assertEqual(q[0].tolist(), [127, 0, 2, 2, 0, -2, 126, -126])

    def test_saturates_at_127_and_never_uses_minus_128(self):
        w = np.array([[-3.0, 1.0, -2.999, 3.0],       # negative max: -127, never -128
                      [-1e30, 1e30, 0.25e30, -1e-30],  # huge values stay in range
                      [-5.0, -5.0, -5.0, -5.0]], dtype=np.float32)
        q, scale = quantize_rows(w)
        self.assertGreaterEqual(int(q.min()), -127)
        self.assertEqual(q[0].tolist(), [-127, 42, -127, 127])
        self.assertEqual(q[1].tolist(), [-127, 127, 32, 0])
        self.assertEqual(q[2].tolist(), [-127] * 4)
        self.assertTrue(np.isfinite(scale).all())

    def test_all_zero_row(self):
        w = np.zeros((3, 5), np.float32)
        w[1] = [1, -2, 3, -4, 5]
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")  # no division-by-zero or invalid warnings
            q, scale = quantize_rows(w)
            deq = dequantize_rows(q, scale)
        self.assertEqual(scale[0], 0.0)
        self.assertEqual(scale[2], 0.0)
        self.assertEqual(q[0].tolist(), [0] * 5)
        self.assertEqual(q[2].tolist(), [0] * 5)
        np.testing.assert_array_equal(deq[0], np.zeros(5, np.float32))
        self.assertFalse(np.isnan(deq).any())
        self.assertEqual(q[1].tolist(), [25, -51, 76, -102, 127])

    def test_non_finite_rejected_with_the_tensor_name(self):
        for bad in (np.nan, np.inf, -np.inf):
            w = random_matrix()
            w[3, 7] = bad
            with self.subTest(value=bad):
                with self.assertRaisesRegex(UserError, "encoder.layers.0.ffn.in.weight.*"
                                                       "non-finite"):
                    quantize_rows(w, "encoder.layers.0.ffn.in.weight")

    def test_dequantization_error_at_most_half_a_step(self):
        w = random_matrix(rows=64, cols=128, seed=2)
        q, scale = quantize_rows(w)
        # Exact in float64: q (8 bits) times scale (24 bits) needs no rounding.
        exact = q.astype(np.float64) * scale.astype(np.float64)[:, None]
        error = np.abs(w.astype(np.float64) - exact)
        self.assertTrue((error <= scale.astype(np.float64)[:, None] / 2).all())
        # The float32 product the runtime uses adds at most one rounding of q * scale.
        deq = dequantize_rows(q, scale)
        self.assertEqual(deq.dtype, np.float32)
        np.testing.assert_array_equal(deq, (q.astype(np.float32) * scale[:, None]))
        ulp = np.spacing(np.abs(deq))
        self.assertTrue((np.abs(w - deq) <= scale[:, None] / 2 + ulp).all())

    def test_quantizing_split_rows_equals_splitting_quantized_rows(self):
        """The converter quantizes cross_attn.q / .kv after splitting in_proj; the
        reference quantizes in_proj whole. Per-row scales make both the same."""
        w = random_matrix(rows=48, cols=16, seed=3)
        q, scale = quantize_rows(w)
        q_top, scale_top = quantize_rows(w[:16])
        q_rest, scale_rest = quantize_rows(w[16:])
        np.testing.assert_array_equal(np.concatenate([q_top, q_rest]), q)
        np.testing.assert_array_equal(np.concatenate([scale_top, scale_rest]), scale)

    def test_dequantize_rejects_mismatched_shapes(self):
        with self.assertRaises(ValueError):
            dequantize_rows(np.zeros((3, 4), np.int8), np.ones(4, np.float32))


class ActivationFakeQuantTest(unittest.TestCase):
    def test_zero_row_stays_zero(self):
        x = np.zeros((2, 8), np.float32)
        x[1] = np.linspace(-1, 1, 8, dtype=np.float32)
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            out = fake_quantize_activation_rows(x)
        np.testing.assert_array_equal(out[0], np.zeros(8, np.float32))
        q, scale = quantize_activation_rows(x)
        self.assertEqual(q[0].tolist(), [0] * 8)
        self.assertEqual(scale[0, 0], 0.0)

    def test_a_row_too_small_for_127_over_its_maximum_is_a_zero_row(self):
        """As the runtime's quantize_rows: below ~3.7e-37 (subnormals too)
        127 / amax overflows, and the row is quantized as zeros, scale 0."""
        x = np.array([[0.0, 1e-39, -0.0], [-1e-45, 0.0, 0.0], [1.5e-37, 1e-38, 0.0],
                      [0.0, 4e-37, -1e-37]], np.float32)
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            q, scale = quantize_activation_rows(x)
        self.assertEqual(q[:3].tolist(), [[0] * 3] * 3)
        self.assertEqual(scale[:3, 0].tolist(), [0.0] * 3)
        self.assertEqual(q[3].tolist(), [0, 127, -32])
        self.assertEqual(scale[3, 0], np.float32(4e-37) / np.float32(127))

    def test_activation_codes_are_the_runtimes_full_ones(self):
        self.assertEqual(ACTIVATION_QMAX, 127)  # kFullCodes, runtime/kernels/int8_gemm.h

    def test_row_maximum_maps_to_127_and_back_to_itself(self):
        rng = np.random.default_rng(4)
        x = (rng.standard_normal((50, 33)) * 10 ** rng.uniform(-3, 3, (50, 1))).astype(np.float32)
        q, scale = quantize_activation_rows(x)
        out = fake_quantize_activation_rows(x)
        for r in range(x.shape[0]):
            c = int(np.argmax(np.abs(x[r])))
            self.assertEqual(int(q[r, c]), 127 if x[r, c] > 0 else -127, f"row {r}")
            amax = np.float32(np.abs(x[r]).max())
            self.assertEqual(scale[r, 0], amax / np.float32(127))
            self.assertAlmostEqual(float(np.abs(out[r]).max()), float(amax),
                                   delta=float(np.spacing(amax)) * 2)
        self.assertLessEqual(int(np.abs(q.astype(np.int32)).max()), 127)

    def test_float32_operation_order(self):
        """out = q * (amax / 127) with q = rint(x * (127 / amax)), every step float32."""
        x = np.array([[0.3, -1.7, 2.9, 0.0, -0.05, 1.2345678]], dtype=np.float32)
        amax = np.float32(2.9)
        inverse = np.float32(127) / amax
        q = np.clip(np.rint(x * inverse), -127, 127)
        want = (q * (amax / np.float32(127))).astype(np.float32)
        out = fake_quantize_activation_rows(x)
        self.assertEqual(out.dtype, np.float32)
        np.testing.assert_array_equal(out, want)

    def test_half_way_codes_round_to_even(self):
        # amax 127 -> 127 / amax == 1 exactly, so x * 1 hits the .5 ties exactly.
        x = np.array([[127.0, 0.5, 1.5, 2.5, -2.5, -3.5, 126.5]], dtype=np.float32)
        q, _ = quantize_activation_rows(x)
        self.assertEqual(q[0].tolist(), [127, 0, 2, 2, -2, -4, 126])

    def test_error_at_most_half_a_step(self):
        rng = np.random.default_rng(5)
        x = (rng.standard_normal((3, 5, 64)) * 3).astype(np.float32)  # any leading axes
        out = fake_quantize_activation_rows(x)
        self.assertEqual(out.shape, x.shape)
        step = np.abs(x).max(axis=-1, keepdims=True) / np.float32(127)
        # 127 / amax is rounded once to float32, which can move x * (127 / amax)
        # by a few units in the last place: allow that on top of half a step.
        slack = 4 * np.spacing(np.float32(127)) * step + np.spacing(np.abs(x))
        self.assertTrue((np.abs(x - out) <= step / 2 + slack).all())
        self.assertFalse(np.array_equal(x, out))  # it does quantize

    def test_rows_are_independent(self):
        rng = np.random.default_rng(6)
        x = rng.standard_normal((4, 16)).astype(np.float32)
        x[2] *= 1000
        together = fake_quantize_activation_rows(x)
        for r in range(4):
            np.testing.assert_array_equal(together[r], fake_quantize_activation_rows(x[r:r + 1])[0])


if __name__ == "__main__":
    unittest.main()
