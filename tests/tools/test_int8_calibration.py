"""int8_calibration.py (what `edgemt-convert --dtype int8` does to
Transformer models): synthetic calibration sentences are seeded and drawn
from the source pieces; the plan covers every projection but a tied output
projection and lowers the product error; and on a model whose LayerNorms
grew outlier channels (made from the OpenNMT-py fixture by a change that
keeps its fp32 function exactly), the calibrated int8 file keeps the
translations that a plainly rounded one loses.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools import int8_calibration, writer
from edgemt_tools.model_file import read_model, write_model
from edgemt_tools.model_spec import QUANTIZATION_INT8_SMOOTHED, expected_tensors
from edgemt_tools.numpy_transformer import NumpyTransformer
from edgemt_tools.sources import SOURCES, SourceInputs

OPENNMT = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "opennmt")
SOURCE = os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en")
LINES = 200


def opennmt_spec():
    """The OpenNMT-py fixture's model A (pre-norm, untied output)."""
    spec, _ = SOURCES["opennmt"].read(SourceInputs(
        checkpoint=os.path.join(OPENNMT, "A.pt"), config=None, spm=None, src_lang="en",
        tgt_lang="de", converter_version="test", created_utc="2026-01-01T00:00:00Z",
        src_spm=os.path.join(OPENNMT, "A.src.spm"), tgt_spm=os.path.join(OPENNMT, "A.tgt.spm"),
        max_positions=None, allow_missing_pieces=False))
    return spec


def with_outlier_channels(spec, channels=(3, 17, 40), factor=25.0):
    """The same function with outlier channels: in a pre-norm model a
    LayerNorm's output feeds only the projection after it, so scaling the
    norm's weight and bias of a channel by `factor` and dividing that column
    of the projection(s) by it leaves every product as it was (up to float
    rounding), while the projection's input gets a channel `factor` times
    larger than the rest, as trained models grow them."""
    cfg = spec.config
    assert cfg.norm_placement == "pre"
    w = {name: np.array(array, np.float32) for name, array in spec.weights.items()}

    def bump(norm, consumers):
        for j in channels:
            w[norm + ".weight"][j] *= factor
            w[norm + ".bias"][j] *= factor
            for matrix in consumers:
                w[matrix + ".weight"][:, j] /= factor
    for stack, layers in (("encoder", cfg.encoder_layers), ("decoder", cfg.decoder_layers)):
        for i in range(layers):
            p = f"{stack}.layers.{i}."
            bump(p + "self_attn_norm", [p + "self_attn.qkv"])
            bump(p + "ffn_norm", [p + "ffn.in"])
            if stack == "decoder":
                bump(p + "cross_attn_norm", [p + "cross_attn.q"])
    bump("encoder.final_norm", [f"decoder.layers.{i}.cross_attn.kv"
                                for i in range(cfg.decoder_layers)])
    bump("decoder.final_norm", ["output"])
    spec.weights = w
    return spec


class SyntheticSentencesTest(unittest.TestCase):
    def test_seeded_and_made_of_the_models_pieces(self):
        spm = opennmt_spec().tokenizer_model
        first = int8_calibration.synthetic_sentences(spm, 20)
        self.assertEqual(first, int8_calibration.synthetic_sentences(spm, 20))
        self.assertNotEqual(first, int8_calibration.synthetic_sentences(spm, 20, seed=7))
        self.assertEqual(len(first), 20)
        import sentencepiece
        sp = sentencepiece.SentencePieceProcessor(model_proto=spm)
        for text in first:
            pieces = sp.encode(text)
            self.assertTrue(3 <= len(pieces) <= 60, text)
            self.assertNotIn(sp.unk_id(), pieces, text)


class CalibrationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.spec = opennmt_spec()
        cls.plan = int8_calibration.calibrate(cls.spec, sentences=24)

    def test_plan_covers_every_projection_and_lowers_the_error(self):
        specs = expected_tensors(self.spec.config, "fp32")
        projections = [n for n, s in specs.items() if s.projection and s.alias_of is None]
        self.assertEqual(sorted(self.plan.codes), sorted(projections))
        self.assertEqual(sorted(self.plan.multipliers), sorted(projections))
        for name in projections:
            codes, scale = self.plan.codes[name]
            self.assertEqual(codes.shape, specs[name].shape)
            self.assertEqual(codes.dtype, np.int8)
            self.assertGreaterEqual(int(codes.min()), -127)
            m = self.plan.multipliers[name]
            self.assertEqual(m.shape, (specs[name].shape[1],))
            self.assertTrue(np.all(m > 0) and np.all(np.isfinite(m)), name)
        self.assertLess(self.plan.error_after, 0.9 * self.plan.error_before)
        self.assertEqual(self.plan.sentences, 24)
        self.assertRegex(self.plan.summary(), r"^int8 calibration on 24 synthetic sentences")

    def test_a_tied_output_projection_is_left_to_nearest_rounding(self):
        spec, _ = SOURCES["marian"].read(SourceInputs(
            checkpoint=os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "npz"),
            config=None, spm=None, src_lang="en", tgt_lang="de", converter_version="test",
            created_utc="2026-01-01T00:00:00Z", src_spm=None, tgt_spm=None, max_positions=None,
            allow_missing_pieces=False))
        self.assertTrue(spec.config.tied_output)
        plan = int8_calibration.calibrate(spec, ["A dog runs on the grass.", "Two men talk."])
        self.assertNotIn("output.weight", plan.codes)
        self.assertFalse(plan.synthetic)
        header, tensors, _ = writer.pack(spec, "int8", plan)
        self.assertEqual(header.quantization, QUANTIZATION_INT8_SMOOTHED)
        self.assertNotIn("output.weight_smooth", tensors)
        self.assertIn("decoder.layers.1.ffn.out.weight_smooth", tensors)

    def test_sampled_rows_are_a_draw_over_all_rows(self):
        """recorded_inputs keeps only the drawn rows while recording: they
        must be the rows drawing from every recorded row gives (the file's
        bytes depend on them)."""
        spec = self.spec
        model = NumpyTransformer(
            spec.config, int8_calibration.resolved_weights(spec.config, spec.weights), np.float64)
        sp = int8_calibration._processor(spec.tokenizer_model)
        texts = int8_calibration.synthetic_sentences(spec.tokenizer_model, 6)
        sources = [int8_calibration.source_ids(spec, sp, text) for text in texts]
        pairs = [(src, [spec.special_tokens.decoder_start] + src[:5]) for src in sources]
        every = int8_calibration.recorded_inputs(model, pairs)
        self.assertEqual(len(every["encoder.layers.0.self_attn.qkv"]), sum(map(len, sources)))
        sampled = int8_calibration.recorded_inputs(model, pairs, 25, seed=3)
        self.assertEqual(list(sampled), list(every))
        rng = np.random.default_rng(3)
        for name, rows in every.items():
            if len(rows) > 25:
                rows = rows[np.sort(rng.choice(len(rows), 25, replace=False))]
            np.testing.assert_array_equal(sampled[name], rows, name)
        self.assertEqual(len(sampled["decoder.layers.0.ffn.out"]), 25)

    def test_calibration_is_deterministic(self):
        again = int8_calibration.calibrate(self.spec, sentences=24)
        for name, (codes, scale) in self.plan.codes.items():
            np.testing.assert_array_equal(again.codes[name][0], codes, name)
            np.testing.assert_array_equal(again.multipliers[name], self.plan.multipliers[name])


# Run in a child process, whose numpy and BLAS pick their kernels at import
# from the environment: prints a digest of a float32 product and exponential
# (which those kernels round differently) and a digest of the int8 plan of
# model A calibrated on 24 sentences.
PLAN_DIGEST = """
import hashlib, sys
import numpy as np
sys.path[:0] = sys.argv[1:3]
import test_int8_calibration as t
from edgemt_tools import int8_calibration
rng = np.random.default_rng(0)
a = rng.standard_normal((64, 300), dtype=np.float32)
b = rng.standard_normal((300, 50), dtype=np.float32)
print(hashlib.sha256((a @ b).tobytes() + np.exp(a).tobytes()).hexdigest())
plan = int8_calibration.calibrate(t.opennmt_spec(), sentences=24)
digest = hashlib.sha256()
for name in sorted(plan.codes):
    codes, scale = plan.codes[name]
    for array in (codes, scale, plan.multipliers[name]):
        digest.update(np.ascontiguousarray(array).tobytes())
print(digest.hexdigest())
"""


def numpy_simd_features():
    """The SIMD levels numpy dispatches to on this CPU (x86_64 names),
    for NPY_DISABLE_CPU_FEATURES."""
    from numpy.core._multiarray_umath import __cpu_features__ as features
    names = ("AVX", "F16C", "FMA3", "AVX2", "AVX512F", "AVX512CD", "AVX512_SKX",
             "AVX512_CLX", "AVX512_CNL", "AVX512_ICL")
    return [name for name in names if features.get(name)]


@unittest.skipUnless(os.uname().machine == "x86_64", "OpenBLAS core names are x86_64's")
class SamePlanOnEveryCpuTest(unittest.TestCase):
    def test_blas_kernels_and_numpy_simd_do_not_change_the_plan(self):
        """Calibration computes in float64, so the float32 rounding that
        differs between CPUs (OpenBLAS's kernel per core type, numpy's SIMD
        code) changes nothing it stores: the same plan under OpenBLAS's
        Haswell kernels as under its Nehalem ones with numpy's SIMD off.
        (In float32, an Intel and an AMD CPU made different files.)"""
        digests = []
        for settings in ({"OPENBLAS_CORETYPE": "Haswell"},
                         {"OPENBLAS_CORETYPE": "Nehalem",
                          "NPY_DISABLE_CPU_FEATURES": " ".join(numpy_simd_features())}):
            env = dict(os.environ, **settings)
            result = subprocess.run(
                ["/usr/bin/python3", "-c", PLAN_DIGEST, os.path.dirname(__file__),
                 helpers.TOOLS_DIR], env=env, capture_output=True, text=True, check=True)
            digests.append(result.stdout.split())
        (float32_a, plan_a), (float32_b, plan_b) = digests
        if float32_a == float32_b:
            self.skipTest("these settings do not change numpy's float32 arithmetic here")
        self.assertEqual(plan_a, plan_b)


class OutlierModelTest(unittest.TestCase):
    """Plain nearest rounding (CTranslate2's scheme, and edgemt's before)
    against calibration, on a model with outlier channels, through the
    runtime: identical lines to the model's own fp32 output."""

    def test_calibration_keeps_what_outlier_channels_cost_plain_int8(self):
        if not os.path.isfile(helpers.CLI):
            self.skipTest(f"edgemt binary not built: {helpers.CLI}")
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        source = os.path.join(tmp, "source.en")
        with open(SOURCE, encoding="utf-8") as handle, open(source, "w", encoding="utf-8") as out:
            out.writelines(handle.readlines()[:LINES])
        original = opennmt_spec()
        spec = with_outlier_channels(opennmt_spec())
        files = {}
        for name, model, dtype, plan in (
                ("original", original, "fp32", None), ("fp32", spec, "fp32", None),
                ("plain", spec, "int8", None),
                ("calibrated", spec, "int8", int8_calibration.calibrate(spec))):
            files[name] = os.path.join(tmp, name + ".emt")
            write_model(files[name], *writer.pack(model, dtype, plan))
        outputs = {}
        for name, path in files.items():
            result = subprocess.run([helpers.CLI, "translate", "-m", path, "--beam", "1",
                                     "-i", source], capture_output=True, text=True, check=False)
            self.assertEqual(result.returncode, 0, result.stderr)
            outputs[name] = result.stdout.splitlines()
        same = {name: sum(a == b for a, b in zip(outputs["fp32"], outputs[name]))
                for name in outputs}
        print(f"lines identical to the outlier model's fp32 output, of {LINES}: {same}")
        # The change keeps the fp32 function (measured 200/200).
        self.assertGreaterEqual(same["original"], 0.97 * LINES)
        # Measured: plain 88, calibrated 179 (and 176-180 without outliers).
        self.assertLess(same["plain"], 0.6 * LINES)
        self.assertGreaterEqual(same["calibrated"], 0.85 * LINES)
        smoothing = read_model(files["calibrated"])
        bumped = np.array(smoothing.array("encoder.layers.0.ffn.in.weight_smooth"))
        others = np.delete(bumped, [3, 17, 40])
        self.assertLess(float(bumped[[3, 17, 40]].max()), 0.2 * float(np.median(others)))


if __name__ == "__main__":
    unittest.main()
