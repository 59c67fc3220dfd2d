"""argmax_study.py (edgemt-argmax-study): the bound around the int8 pre-pass's
logits holds for float32 sums in several orders, it is what keeps the true
arg-max when the int8 ranking is wrong, and the study runs end to end on a tiny
random checkpoint (no ../shared needed)."""

import os
import shutil
import tempfile
import unittest

import numpy as np

import helpers
from research import argmax_study as study
from edgemt_tools.testing import tiny_torch_config, write_tiny_checkpoint

EN = ["A man in an orange hat is looking at something.",
      "A dog is running on green grass.",
      "Two girls are sitting on a bench and talking."]


def sequential_f32(weight, bias, x):
    """b + Σ_k x[k]·w[n, k] in float32, one rounded product and add per k."""
    acc = bias.astype(np.float32).copy()
    for k in range(x.size):
        acc = (acc + (np.float32(x[k]) * weight[:, k]).astype(np.float32)).astype(np.float32)
    return acc


class BoundTest(unittest.TestCase):
    def test_every_logit_lies_within_its_bound(self):
        rng = np.random.default_rng(3)
        weight = (rng.standard_normal((300, 64)) * 0.1).astype(np.float32)
        weight[5, 7] = 2.5  # one large weight: a coarse row scale
        bias = (rng.standard_normal(300) * 0.5).astype(np.float32)
        shadow = study.make_shadow(weight, bias)
        for trial in range(40):
            x = (rng.standard_normal(64) * (0.01 + trial)).astype(np.float32)
            if trial % 3 == 0:
                x[trial % 64] *= 50  # an outlier: a coarse activation scale
            approx, bound = study.bounded_logits(shadow, x)
            self.assertTrue(np.all(bound > 0))
            exact = bias.astype(np.float64) + weight.astype(np.float64) @ x.astype(np.float64)
            for logits in (exact, (weight @ x + bias).astype(np.float32),
                           sequential_f32(weight, bias, x)):
                self.assertTrue(np.all(np.abs(logits.astype(np.float64) - approx) <= bound),
                                f"trial {trial}")

    def test_float32_rounding_is_covered_where_quantization_loses_nothing(self):
        # Codes times 0.1 and x in steps of 1/8: the int8 pass is (nearly)
        # exact, so the float32 sum's own rounding (a large bias, 512 adds)
        # is what the bound must cover; it is ~18x the quantization term.
        rng = np.random.default_rng(11)
        codes = rng.integers(-127, 128, size=(64, 512))
        codes[:, 0] = 127
        weight = (codes * np.float32(0.1)).astype(np.float32)
        x_codes = rng.integers(-127, 128, size=512)
        x_codes[0] = 127
        x = (x_codes * np.float32(0.125)).astype(np.float32)
        bias = np.full(64, 3e4, np.float32)
        shadow = study.make_shadow(weight, bias)
        self.assertTrue(np.array_equal(shadow.codes, codes))
        approx, bound = study.bounded_logits(shadow, x)
        self.assertTrue(np.all(np.abs(sequential_f32(weight, bias, x) - approx) <= bound))

    def test_the_bound_keeps_the_arg_max_the_int8_ranking_misses(self):
        # Row 0 is truly larger (1.0039 vs 1.002), but its 0.0039 rounds to
        # code 0 (0.0039 * 127 = 0.495): the int8 pass ranks row 1 first.
        weight = np.array([[1.0, 0.0039], [1.0, 0.0]], dtype=np.float32)
        bias = np.array([0.0, 0.002], dtype=np.float32)
        shadow = study.make_shadow(weight, bias)
        x = np.array([1.0, 1.0], dtype=np.float32)
        approx, bound = study.bounded_logits(shadow, x)
        self.assertGreater(approx[1], approx[0])
        self.assertEqual(study.exact_argmax(weight @ x + bias), 0)
        self.assertEqual(study.candidates(approx, bound).tolist(), [0, 1])
        self.assertEqual(study.candidates(approx, 0 * bound).tolist(), [1])  # without it: wrong

    def test_a_clear_winner_is_the_only_candidate(self):
        rng = np.random.default_rng(5)
        weight = (rng.standard_normal((500, 32)) * 0.2).astype(np.float32)
        shadow = study.make_shadow(weight)
        approx, bound = study.bounded_logits(shadow, 10 * weight[123])
        self.assertEqual(study.candidates(approx, bound).tolist(), [123])

    def test_banned_ids_are_never_candidates(self):
        weight = np.array([[3.0, 0.0], [1.0, 0.0], [0.9, 0.0]], dtype=np.float32)
        shadow = study.make_shadow(weight)
        x = np.array([1.0, 0.0], dtype=np.float32)
        approx, bound = study.bounded_logits(shadow, x)
        self.assertEqual(study.candidates(approx, bound).tolist(), [0])
        self.assertEqual(study.candidates(approx, bound, banned=[0]).tolist(), [1])
        self.assertEqual(study.exact_argmax(weight @ x, banned=[0]), 1)

    def test_ties_go_to_the_lower_id_and_both_stay_candidates(self):
        weight = np.array([[0.5, 0.25], [0.5, 0.25]], dtype=np.float32)
        shadow = study.make_shadow(weight)
        x = np.array([1.0, 2.0], dtype=np.float32)
        approx, bound = study.bounded_logits(shadow, x)
        self.assertEqual(study.candidates(approx, bound).tolist(), [0, 1])
        self.assertEqual(study.exact_argmax(weight @ x), 0)

    def test_non_finite_hidden_state_is_refused(self):
        shadow = study.make_shadow(np.ones((4, 3), np.float32))
        for bad in (np.nan, np.inf):
            with self.assertRaisesRegex(ValueError, "NaN or infinite"):
                study.bounded_logits(shadow, np.array([1.0, bad, 0.0], np.float32))


class StudyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp, tiny_torch_config(max_len=64), seed=7)
        cls.source = os.path.join(cls.tmp, "source.en")
        with open(cls.source, "w", encoding="utf-8") as handle:
            handle.write("\n".join(EN) + "\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_step_is_checked_and_counted(self):
        result = study.run_study(self.paths["checkpoint"], self.paths["config"],
                                 self.paths["spm"], EN)
        self.assertGreater(result.steps, len(EN))  # at least one token and EOS each
        self.assertEqual(result.counts.size, result.steps)
        self.assertTrue(np.all(result.counts >= 1))
        self.assertEqual((result.vocab, result.depth), (96, 16))
        self.assertIn("true arg-max among the candidates at every step", result.report())

    def test_command_line(self):
        args = ["--checkpoint", self.paths["checkpoint"], "--config", self.paths["config"],
                "--spm", self.paths["spm"], "--source", self.source]
        ok = helpers.run_tool(os.path.join("research", "edgemt-argmax-study"), *args)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("candidates per step: mean", ok.stdout)
        bad = helpers.run_tool(os.path.join("research", "edgemt-argmax-study"), *args,
                               "--sentences", "0")
        self.assertEqual(bad.returncode, 1)
        self.assertIn("edgemt-argmax-study: error: --sentences must be >= 1", bad.stderr)
        missing = helpers.run_tool(os.path.join("research", "edgemt-argmax-study"),
                                   *args[:-1], os.path.join(self.tmp, "absent.en"))
        self.assertEqual(missing.returncode, 1)
        self.assertIn("source file not found", missing.stderr)
        usage = helpers.run_tool(os.path.join("research", "edgemt-argmax-study"), "--help")
        self.assertEqual(usage.returncode, 0)
        self.assertIn("int8 pre-pass", usage.stdout)


if __name__ == "__main__":
    unittest.main()
