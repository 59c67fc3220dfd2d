"""quant_study.py (edgemt-quant-study): the static fake-quantization functions on
small tensors, calibration on a tiny random checkpoint, and the whole study end
to end on that checkpoint (no ../shared needed)."""

import io
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import torch
import torch.nn.functional as F

import helpers
from research import quant_study as qs
from edgemt_tools.testing import tiny_torch_config, write_tiny_checkpoint
from edgemt_tools.torch_reference import TorchReference

EN = ["A man in an orange hat is looking at something.",
      "A dog is running on green grass.",
      "Two girls are sitting on a bench and talking.",
      "A woman with a red bag walks down the street.",
      "Children play football in the park."]
DE = ["Ein Mann mit einem orangefarbenen Hut schaut etwas an.",
      "Ein Hund läuft über grünes Gras.",
      "Zwei Mädchen sitzen auf einer Bank und unterhalten sich.",
      "Eine Frau mit einer roten Tasche geht die Straße entlang.",
      "Kinder spielen Fußball im Park."]


class FakeQuantizeTest(unittest.TestCase):
    def test_static_codes_scale_and_clipping(self):
        x = np.array([[0.5, -1.0, 2.0, -4.0, 0.0]], dtype=np.float32)
        q, scale = qs.quantize_static(x, 2.0)
        self.assertEqual(q.dtype, np.int8)
        self.assertEqual(scale, np.float32(2.0) / np.float32(127))
        # 0.5 * 63.5 = 31.75 -> 32; beyond +-2 saturates at +-127 (clipped to the range)
        self.assertEqual(q.tolist(), [[32, -64, 127, -127, 0]])
        fq = qs.fake_quantize_static(x, 2.0)
        self.assertEqual(fq.dtype, np.float32)
        np.testing.assert_allclose(fq[0, 2:4], [2.0, -2.0], rtol=1e-6)
        self.assertLessEqual(np.abs(fq).max(), 2.0 + 1e-6)
        np.testing.assert_allclose(fq[0, :2], x[0, :2], atol=float(scale) / 2 + 1e-7)

    def test_static_rounds_half_to_even_and_keeps_shape(self):
        x = np.array([0.5, 1.5, 2.5, -0.5], dtype=np.float32).reshape(2, 1, 2)
        q, _ = qs.quantize_static(x, 127.0)  # scale 1: codes are rint(x)
        self.assertEqual(q.shape, (2, 1, 2))
        self.assertEqual(q.reshape(-1).tolist(), [0, 2, 2, 0])

    def test_static_zero_and_bad_ranges(self):
        x = np.array([[1.0, -2.0]], dtype=np.float32)
        q, scale = qs.quantize_static(x, 0.0)
        self.assertEqual(q.tolist(), [[0, 0]])
        self.assertEqual(scale, 0)
        self.assertEqual(qs.fake_quantize_static(x, 0.0).tolist(), [[0.0, 0.0]])
        for bad in (-1.0, float("nan"), float("inf")):
            with self.assertRaises(ValueError):
                qs.quantize_static(x, bad)

    def test_per_tensor_versus_per_row(self):
        """One scale for the tensor is the row's own scale on a single row with
        the same max (static codes in [-127, 127], XNNPACK's; the shipped
        per-row scheme's in [-64, 64]), but costs the small rows of a tensor
        their resolution."""
        rng = np.random.default_rng(0)
        row = rng.normal(size=(1, 64)).astype(np.float32)
        amax = float(np.abs(row).max())
        codes, scale = qs.quantize_static(row, amax)
        inverse = np.float32(127) / np.float32(amax)
        np.testing.assert_array_equal(codes, np.clip(np.rint(row * inverse), -127, 127))
        self.assertEqual(scale, np.float32(amax) / np.float32(127))
        x = np.concatenate([row, row * np.float32(0.01)])  # second row 100x smaller
        per_row = qs.fake_quantize_per_row(x)
        per_tensor = qs.fake_quantize_static(x, amax)
        err_row = np.abs(per_row[1] - x[1]).max()
        err_tensor = np.abs(per_tensor[1] - x[1]).max()
        self.assertLessEqual(err_row, 0.01 * amax / 64 / 2 * 1.001)
        self.assertGreater(err_tensor, 10 * err_row)
        self.assertLess(len(np.unique(per_tensor[1])), 10)  # only a few codes left

    def test_static_projection_requantizes_outputs(self):
        names = {}
        weight = torch.eye(3) * 2.0
        names[(weight.data_ptr(), (3, 3))] = "p"
        x = torch.tensor([[0.3, -0.7, 5.0]])
        f32_out = qs.StaticProjection(names, {"p": 1.0})
        got = f32_out(F.linear, x, weight)
        want = 2.0 * qs.fake_quantize_static(x.numpy(), 1.0)  # input clipped at 1.0
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        self.assertAlmostEqual(float(got[0, 2]), 2.0, places=6)
        int8_out = qs.StaticProjection(names, {"p": 1.0}, {"p": 1.5})
        got = int8_out(F.linear, x, weight).numpy()
        np.testing.assert_array_equal(got, qs.fake_quantize_static(want, 1.5))
        codes = got / np.float32(1.5 / 127)
        np.testing.assert_allclose(codes, np.rint(codes), atol=1e-4)  # multiples of the step
        self.assertAlmostEqual(float(np.abs(got).max()), 1.5, places=5)  # 2.0 clipped to 1.5
        kept = qs.StaticProjection(names, {"p": 1.0}, {"p": 1.5}, float_outputs=["p"])
        np.testing.assert_allclose(kept(F.linear, x, weight).numpy(), want, rtol=1e-6)
        with self.assertRaisesRegex(RuntimeError, "unknown weight"):
            f32_out(F.linear, x, torch.eye(3))
        with self.assertRaisesRegex(RuntimeError, "no calibrated input range"):
            qs.StaticProjection(names, {})(F.linear, x, weight)

    def test_recorder_ranges_and_percentile(self):
        rng = np.random.default_rng(1)
        weight = torch.from_numpy(rng.normal(size=(4, 8)).astype(np.float32))
        names = {(weight.data_ptr(), (4, 8)): "p"}
        recorder = qs.RangeRecorder(names, top_k=64)
        batches = [torch.from_numpy(rng.standard_t(3, size=(n, 8)).astype(np.float32))
                   for n in (30, 50, 20)]
        outputs = [recorder(F.linear, b, weight) for b in batches]
        for b, out in zip(batches, outputs):
            np.testing.assert_array_equal(out.numpy(), F.linear(b, weight).numpy())
        stats = recorder.stats["p"]
        values = np.abs(torch.cat(batches).numpy()).reshape(-1)
        ys = np.abs(torch.cat(outputs).numpy())
        self.assertEqual((stats.calls, stats.input_count), (3, values.size))
        self.assertEqual(stats.input_amax, float(values.max()))
        self.assertEqual(stats.output_amax, float(ys.max()))
        for p in (99.99, 99.9, 99.0, 95.0):
            self.assertAlmostEqual(stats.input_percentile(p), float(np.percentile(values, p)),
                                   places=5)
        with self.assertRaisesRegex(ValueError, "TOP_K"):
            stats.input_percentile(50.0)  # needs 400 values, 64 kept


class TinyStudyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.mkdtemp()
        # max_len 64: the tiny tokenizer needs up to 41 positions for these lines
        cls.paths = write_tiny_checkpoint(cls.tmp, tiny_torch_config(max_len=64), seed=7)
        cls.files = {}
        for name, lines in (("test.en", EN[:3]), ("test.de", DE[:3]), ("val.en", EN[2:]),
                            ("val.de", DE[2:])):
            cls.files[name] = os.path.join(cls.tmp, name)
            with open(cls.files[name], "w", encoding="utf-8") as handle:
                handle.writelines(line + "\n" for line in lines)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def reference(self, dtype="fp32"):
        return TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              dtype)

    def test_projection_names_cover_every_call(self):
        ref = self.reference()
        cfg = ref.config
        calibration = qs.calibrate(ref, EN + [""], DE + [""], "teacher")  # blank: skipped
        # every projection matrix of schema/TENSORS.md is seen, none twice by name
        self.assertEqual(len(calibration.stats), cfg["encoder_layers"] * 4
                         + cfg["decoder_layers"] * 7 + 1)
        self.assertIn("generator", calibration.stats)
        self.assertIn("decoder.layers.1.multihead_attn.in_proj[kv]", calibration.stats)
        self.assertIn("encoder.layers.0.self_attn.in_proj[qkv]", calibration.stats)
        self.assertTrue(all(s.calls == len(EN) for s in calibration.stats.values()))
        self.assertTrue(all(s.input_amax > 0 and s.output_amax > 0
                            for s in calibration.stats.values()))
        self.assertEqual((calibration.pairs, calibration.skipped), (len(EN), 1))
        # names are stable across models (fp32 vs int8 weights: other tensors)
        self.assertEqual(sorted(qs.projection_names(ref.model).values()),
                         sorted(qs.projection_names(self.reference("int8").model).values()))
        ffn = qs._projection_for(qs.STATIC_OUT_F32_FFN_OUT, ref.model, calibration, 99.99)
        self.assertEqual(ffn.float_outputs, {f"{side}.layers.{i}.linear2"
                                             for side in ("encoder", "decoder")
                                             for i in range(cfg["encoder_layers"])})
        # the model is left as it was
        self.assertFalse(getattr(F.linear, "_edgemt_int8", False))
        self.assertTrue(all(p.requires_grad for p in ref.model.parameters()))
        self.assertFalse(ref.model.quantize_activations)

    def test_greedy_calibration_and_teacher_mode_needs_references(self):
        ref = self.reference()
        greedy = qs.calibrate(ref, EN[:2], None, "greedy")
        self.assertEqual(greedy.mode, "greedy")
        self.assertGreater(min(s.calls for s in greedy.stats.values()), 0)
        self.assertIsNone(ref.model.projection)
        with self.assertRaisesRegex(ValueError, "reference"):
            qs.calibrate(ref, EN, None, "teacher")

    def test_static_projection_in_the_int8_model(self):
        """The scheme plugs into TorchReference's int8 model; with scales from
        calibration every projection input is a multiple of its static step."""
        ref32, ref8 = self.reference(), self.reference("int8")
        calibration = qs.calibrate(ref32, EN, DE)
        names = qs.projection_names(ref8.model)
        static = qs.StaticProjection(names, calibration.input_amax())
        seen = {}

        def spy(linear, input, weight, bias=None):  # pylint: disable=redefined-builtin
            def recording_linear(x, w, b=None):  # sees the fake-quantized input
                seen[names[(w.data_ptr(), tuple(w.shape))]] = x.detach().clone()
                return linear(x, w, b)
            return static(recording_linear, input, weight, bias)

        ref8.model.projection = spy
        src = ref8.encode_text(EN[0])
        ref8.step_logits(src, [2, 5])
        ref8.model.projection = None
        self.assertEqual(len(seen), len(calibration.stats))
        for name, x in seen.items():
            step = np.float32(calibration.stats[name].input_amax) / np.float32(127)
            codes = x.detach().numpy() / step
            np.testing.assert_allclose(codes, np.rint(codes), atol=1e-3, err_msg=name)
            self.assertLessEqual(np.abs(codes).max(), 127 + 1e-3)

    def test_study_end_to_end(self):
        out_dir = os.path.join(self.tmp, "out")
        stdout, stderr = io.StringIO(), io.StringIO()
        with redirect_stdout(stdout), redirect_stderr(stderr):
            status = qs.main(["--checkpoint", self.paths["checkpoint"],
                              "--config", self.paths["config"], "--spm", self.paths["spm"],
                              "--source", self.files["test.en"],
                              "--references", self.files["test.de"],
                              "--calibrate-source", self.files["val.en"],
                              "--calibrate-references", self.files["val.de"],
                              "--sentences", "2", "--calibrate-lines", "3",
                              "--out-dir", out_dir, "--show-scales", "3"])
        text = stdout.getvalue()
        self.assertEqual(status, 0, stderr.getvalue())
        self.assertIn("2 sentences of", text)
        self.assertIn("calibration: 3 lines", text)
        rows = {line.split()[0]: line for line in text.splitlines() if line[:1].isalpha()}
        for scheme in qs.default_schemes():
            self.assertIn(scheme, rows)
        self.assertNotIn(qs.STATIC_OUT_F32_FFN_OUT, rows)  # opt-in only
        self.assertIn("2 / 2", rows["fp32"])
        self.assertNotIn("fp32 check", text)  # --source given: no committed reference
        # the dynamic row is TorchReference("int8") itself
        ref8 = self.reference("int8")
        dynamic = [ref8.decode_ids(ref8.greedy(ref8.encode_text(line))) for line in EN[:2]]
        with open(os.path.join(out_dir, "dynamic.de"), encoding="utf-8") as handle:
            self.assertEqual(handle.read().splitlines(), dynamic)
        ref32 = self.reference()
        fp32 = [ref32.decode_ids(ref32.greedy(ref32.encode_text(line))) for line in EN[:2]]
        with open(os.path.join(out_dir, "fp32.de"), encoding="utf-8") as handle:
            self.assertEqual(handle.read().splitlines(), fp32)

    def test_study_checks_fp32_against_a_reference_file(self):
        ref32 = self.reference()
        wrong = os.path.join(self.tmp, "wrong.de")
        with open(wrong, "w", encoding="utf-8") as handle:
            handle.write(ref32.decode_ids(ref32.greedy(ref32.encode_text(EN[0]))) + "\nx\n")
        result = qs.run_study(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              EN[:2], DE[:2], EN[2:], DE[2:], ["fp32"], fp32_reference=wrong)
        self.assertEqual([r.scheme for r in result.rows], ["fp32"])
        self.assertEqual(result.fp32_check, (1, 2, wrong))
        too_long = "a b c d e f g h " * 10  # more ids than the 64 positions
        result = qs.run_study(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              [EN[0], too_long], DE[:2], EN, DE,
                              ["static", qs.STATIC_OUT_F32_FFN_OUT])
        self.assertEqual(result.too_long, 1)
        self.assertEqual([r.scheme for r in result.rows],
                         ["fp32", "static", qs.STATIC_OUT_F32_FFN_OUT])
        self.assertEqual([r.texts[1] for r in result.rows], ["", "", ""])
        self.assertEqual(result.rows[0].identical, 1)  # not decoded: never "identical"
        with self.assertRaisesRegex(Exception, "unknown scheme"):
            qs.run_study(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                         EN[:1], DE[:1], EN, DE, ["static-p50"])

    def test_command_line_errors(self):
        stderr = io.StringIO()
        with redirect_stderr(stderr), redirect_stdout(io.StringIO()):
            status = qs.main(["--shared", os.path.join(self.tmp, "missing")])
        self.assertEqual(status, 1)
        self.assertIn("not found", stderr.getvalue())
        result = helpers.run_tool(os.path.join("research", "edgemt-quant-study"), "--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("static-out", result.stdout)


if __name__ == "__main__":
    unittest.main()
