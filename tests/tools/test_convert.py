"""edgemt-convert end to end on a tiny random checkpoint (no ../shared needed)."""

import os
import shutil
import tempfile
import unittest

import numpy as np
import torch

import helpers
from edgemt_tools import __version__
from edgemt_tools.model_file import read_model
from edgemt_tools.model_spec import (MATRIX, QUANTIZATION_INT8, QUANTIZATION_INT8_SMOOTHED,
                                     expected_tensors)
from edgemt_tools.quantize import dequantize_table_rows, quantize_rows
from edgemt_tools.testing import tiny_state_dict, tiny_torch_config, write_tiny_checkpoint
from edgemt_tools.sources.torch import sha256_file

CALIBRATION_TEXT = ["A dog runs on the grass.", "", "Two girls sit on a bench.", "   ",
                    "A man in an orange hat.", "Children play football in the park."]


class ConvertTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def convert(self, *extra, output=None, **overrides):
        paths = dict(self.paths, **overrides)
        output = output or os.path.join(self.tmp, "out", "model.emt")
        os.makedirs(os.path.dirname(output), exist_ok=True)
        args = ["--from", "torch", "--checkpoint", paths["checkpoint"], "--config",
                paths["config"], "--spm", paths["spm"], "--src-lang", "en", "--tgt-lang", "de",
                "-o", output, *extra]
        if "--dtype" not in extra:
            args += ["--dtype", "fp32"]
        return helpers.run_tool("edgemt-convert", *args), output

    def assert_user_error(self, result, pattern, code=1):
        self.assertEqual(result.returncode, code, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertRegex(lines[0], r"^edgemt-convert: error: ")
        self.assertRegex(lines[0], pattern)
        self.assertNotIn("Traceback", result.stderr)

    def assert_nothing_written(self, output):
        folder = os.path.dirname(output)
        self.assertEqual(os.listdir(folder) if os.path.isdir(folder) else [], [])

    # -- success
    def test_fp32_round_trip(self):
        result, output = self.convert(output=os.path.join(self.tmp, "ok32", "m.emt"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("wrote", result.stdout)
        self.assertEqual(os.listdir(os.path.dirname(output)), ["m.emt"])  # no temp left
        model = read_model(output)
        model.check_against_config()
        state = torch.load(self.paths["checkpoint"])
        np.testing.assert_array_equal(model.array("embedding.source"), state["embed.weight"])
        np.testing.assert_array_equal(model.array("output.weight"), state["generator.weight"])
        np.testing.assert_array_equal(
            model.array("decoder.layers.1.self_attn.qkv.bias"),
            state["transformer.decoder.layers.1.self_attn.in_proj_bias"])
        header = model.header
        self.assertEqual(header.weight_dtype, "fp32")
        self.assertEqual((header.source_language, header.target_language), ("en", "de"))
        self.assertEqual(header.special_tokens.decoder_start, 2)
        self.assertEqual(header.config.embedding_scale, 4.0)
        self.assertEqual(header.config.max_positions, 40)
        with open(self.paths["spm"], "rb") as handle:
            self.assertEqual(header.tokenizer_model, handle.read())
        prov = header.provenance
        self.assertEqual(prov.source_format, "torch")
        self.assertEqual(prov.source_checkpoint, "model.pt")
        self.assertEqual(prov.source_sha256, sha256_file(self.paths["checkpoint"]))
        self.assertEqual(prov.converter_version, __version__)
        self.assertRegex(prov.created_utc, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_fp16(self):
        result, output = self.convert("--dtype", "fp16",
                                      output=os.path.join(self.tmp, "ok16", "m.emt"))
        self.assertEqual(result.returncode, 0, result.stderr)
        model = read_model(output)
        model.check_against_config()
        self.assertEqual(model.header.weight_dtype, "fp16")
        state = torch.load(self.paths["checkpoint"])
        np.testing.assert_array_equal(
            model.array("encoder.layers.0.ffn.in.weight"),
            state["transformer.encoder.layers.0.linear1.weight"].half().numpy())
        self.assertEqual(model.array("encoder.layers.0.ffn.in.bias").dtype, np.float32)

    def test_int8_without_calibration_rounds_to_nearest(self):
        result, output = self.convert("--dtype", "int8", "--no-calibration",
                                      output=os.path.join(self.tmp, "ok8", "m.emt"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"^wrote .* weights int8 \(Int8PerRowDynamic, embeddings "
                                        r"int8 \+ 4-bit residual\)\n$")
        model = read_model(output)
        model.check_against_config()
        self.assertEqual(model.header.weight_dtype, "int8")
        self.assertEqual(model.header.quantization, QUANTIZATION_INT8)
        state = torch.load(self.paths["checkpoint"])
        codes, scale = quantize_rows(state["transformer.encoder.layers.0.linear1.weight"].numpy())
        np.testing.assert_array_equal(model.array("encoder.layers.0.ffn.in.weight"), codes)
        np.testing.assert_array_equal(model.array("encoder.layers.0.ffn.in.weight_scale"), scale)
        self.assertEqual(model.array("encoder.layers.0.ffn.in.bias").dtype, np.float32)
        self.assertEqual(model.entries["output.weight_scale"].offset,
                         model.entries["embedding.source_scale"].offset)
        self.assertFalse([name for name in model.entries if name.endswith("_smooth")])

    def test_int8_is_calibrated_by_default(self):
        """A smoothed file: every projection's codes keep their scales (the
        nearest ones of the stored matrix w / m), a smoothing vector per
        projection that owns its bytes, none for the tied output or the
        embeddings; the embedding table with nearest rounding's scales, codes
        rounded for the tied output projection, and residual codes that
        bring its lookups within half a residual step of the float table."""
        result, output = self.convert("--dtype", "int8",
                                      output=os.path.join(self.tmp, "cal8", "m.emt"))
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 2, result.stdout)
        self.assertRegex(lines[0], r"^int8 calibration on 128 synthetic sentences sampled from the "
                                   r"source SentencePiece model: \d+ of 22 projections smoothed, "
                                   r"rounding error-compensated; mean relative product error "
                                   r"[0-9.]+ -> [0-9.]+$")
        self.assertRegex(lines[1], r"^wrote .* weights int8 \(Int8SmoothedPerRowDynamic, "
                                   r"embeddings int8 \+ 4-bit residual\)$")
        model = read_model(output)
        model.check_against_config()
        self.assertEqual(model.header.quantization, QUANTIZATION_INT8_SMOOTHED)
        self.assertEqual(model.format_version, 11)
        state = {k: v.numpy() for k, v in torch.load(self.paths["checkpoint"]).items()}
        w = state["transformer.encoder.layers.0.linear1.weight"]
        m = np.array(model.array("encoder.layers.0.ffn.in.weight_smooth"))
        self.assertTrue(np.all(m > 0))
        _, scale = quantize_rows((w / m[None, :]).astype(np.float32))
        np.testing.assert_array_equal(model.array("encoder.layers.0.ffn.in.weight_scale"), scale)
        smoothing = sorted(n for n in model.entries if n.endswith("_smooth"))
        self.assertEqual(len(smoothing), 22)  # 2 + 2 layers: 4 + 7 projections each
        self.assertNotIn("output.weight_smooth", smoothing)  # tied to the embedding
        codes, scale = quantize_rows(state["embed.weight"])
        np.testing.assert_array_equal(model.array("embedding.source_scale"), scale)
        self.assertGreater(np.mean(model.array("embedding.source") != codes), 0.01)
        residual, step = (model.array("embedding.source_residual"),
                          model.array("embedding.source_residual_scale"))
        lookup = dequantize_table_rows(model.array("embedding.source"), scale, residual, step)
        error = np.abs(lookup.astype(np.float64) - state["embed.weight"])
        self.assertTrue((error <= step[:, None] * 0.5 + 1e-6).all())

    def test_int8_matrices_take_a_quarter_of_fp32(self):
        sizes = {}
        for dtype in ("fp32", "int8"):
            result, output = self.convert("--dtype", dtype,
                                          output=os.path.join(self.tmp, "size" + dtype, "m.emt"))
            self.assertEqual(result.returncode, 0, result.stderr)
            sizes[dtype] = read_model(output)
        fp32, int8 = sizes["fp32"], sizes["int8"]
        specs = expected_tensors(fp32.header.config)
        matrices = [n for n, spec in specs.items() if spec.kind == MATRIX and not spec.alias_of]
        self.assertGreater(len(matrices), 10)
        for name in matrices:
            elements = int(np.prod(fp32.entries[name].shape))
            self.assertEqual(fp32.entries[name].size, 4 * elements, name)
            self.assertEqual(int8.entries[name].size, elements, name)          # 1 byte each
            self.assertEqual(int8.entries[name + "_scale"].size, 4 * fp32.entries[name].shape[0])
        for name, spec in specs.items():  # vectors unchanged
            if spec.kind != MATRIX:
                self.assertEqual(int8.entries[name].size, fp32.entries[name].size, name)

    def write_calibration_text(self, name, lines):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))
        return path

    def test_calibrate_uses_the_texts_first_lines_and_stores_none_of_it(self):
        text = self.write_calibration_text("calib.en", CALIBRATION_TEXT)
        other = self.write_calibration_text("calib2.en", CALIBRATION_TEXT[:5] + ["Something else."])
        outputs = {}
        os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
        try:
            for label, path in (("text", text), ("same first lines", other)):
                result, outputs[label] = self.convert(
                    "--dtype", "int8", "--calibrate", path, "--calibrate-lines", "3",
                    output=os.path.join(self.tmp, "cal", label + ".emt"))
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertTrue(result.stdout.startswith(
                    "int8 calibration on 3 lines of the calibration text: "), result.stdout)
            result, outputs["synthetic"] = self.convert(
                "--dtype", "int8", output=os.path.join(self.tmp, "cal", "synthetic.emt"))
        finally:
            del os.environ["SOURCE_DATE_EPOCH"]
        read = {}
        for label, path in outputs.items():
            with open(path, "rb") as handle:
                read[label] = handle.read()
        # The first 3 non-blank lines decide the file (the 4th differs).
        self.assertTrue(read["text"] == read["same first lines"])
        self.assertFalse(read["text"] == read["synthetic"])
        for line in CALIBRATION_TEXT:
            if line.strip():
                self.assertNotIn(line.encode("utf-8"), read["text"])

    def test_no_calibration_usage_errors(self):
        text = self.write_calibration_text("c5.en", CALIBRATION_TEXT)
        for extra, pattern in ((("--dtype", "fp32", "--no-calibration"),
                                "--no-calibration needs --dtype int8 \\(got --dtype fp32\\)"),
                               (("--dtype", "fp16", "--fp32-embeddings"),
                                "--fp32-embeddings needs --dtype int8 \\(got --dtype fp16\\)"),
                               (("--dtype", "int8", "--fp32-embeddings", "tables"),
                                "argument --fp32-embeddings: invalid choice: 'tables'"),
                               (("--dtype", "fp16", "--fp32-embeddings", "lookup"),
                                "--fp32-embeddings needs --dtype int8 \\(got --dtype fp16\\)"),
                               (("--dtype", "fp32", "--fp16-embeddings"),
                                "--fp16-embeddings needs --dtype int8 \\(got --dtype fp32\\)"),
                               (("--dtype", "int8", "--fp16-embeddings", "--fp32-embeddings"),
                                "give --fp32-embeddings or --fp16-embeddings, not both"),
                               (("--dtype", "int8", "--no-calibration", "--calibrate", text),
                                "give --calibrate FILE or --no-calibration, not both")):
            with self.subTest(extra=extra):
                result, output = self.convert(*extra, output=os.path.join(self.tmp, "c5", "m.emt"))
                self.assert_user_error(result, pattern, code=2)
                self.assert_nothing_written(output)

    def test_reproducible_with_source_date_epoch(self):
        outputs = []
        for name in ("a", "b"):
            os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
            try:
                result, output = self.convert(output=os.path.join(self.tmp, "rep", name + ".emt"))
            finally:
                del os.environ["SOURCE_DATE_EPOCH"]
            self.assertEqual(result.returncode, 0, result.stderr)
            outputs.append(output)
        with open(outputs[0], "rb") as a, open(outputs[1], "rb") as b:
            self.assertEqual(a.read(), b.read())
        self.assertEqual(read_model(outputs[0]).header.provenance.created_utc,
                         "2023-11-14T22:13:20Z")

    def test_help_lists_every_option(self):
        result = helpers.run_tool("edgemt-convert", "--help")
        self.assertEqual(result.returncode, 0)
        for option in ("--from", "--checkpoint", "--config", "--spm", "--src-lang",
                       "--tgt-lang", "--dtype", "--output", "--calibrate", "--calibrate-lines",
                       "--no-calibration", "int8", "Int8PerRowDynamic", "Int8SmoothedPerRowDynamic"):
            self.assertIn(option, result.stdout)
        from edgemt_tools.int8_calibration import DEFAULT_SENTENCES
        self.assertIn(f"{DEFAULT_SENTENCES} sentences sampled",
                      " ".join(result.stdout.split()))  # the help says what the code does

    # -- user errors: one line on stderr, non-zero exit, nothing written
    def test_unknown_option(self):
        result, output = self.convert("--quantize", output=os.path.join(self.tmp, "e1", "m.emt"))
        self.assert_user_error(result, "unrecognized arguments: --quantize", code=2)
        self.assert_nothing_written(output)

    def test_bad_dtype(self):
        result, output = self.convert("--dtype", "int4",
                                      output=os.path.join(self.tmp, "e2", "m.emt"))
        self.assert_user_error(result, "argument --dtype: invalid choice: 'int4'", code=2)
        self.assert_nothing_written(output)

    def test_calibrate_missing_file(self):
        result, output = self.convert("--dtype", "int8", "--calibrate",
                                      os.path.join(self.tmp, "no-such.en"),
                                      output=os.path.join(self.tmp, "c1", "m.emt"))
        self.assert_user_error(result, "calibration file not found: .*no-such.en")
        self.assert_nothing_written(output)

    def test_calibrate_not_text(self):
        folder = os.path.join(self.tmp, "c2in")
        os.makedirs(folder)
        for name, blob, pattern in (("latin1.en", "A café.\n".encode("latin-1"),
                                     r"latin1.en is not UTF-8 text \(line 1"),
                                    ("nul.en", b"A dog.\n\0\1\2\n", r"nul.en is not text"),
                                    ("blank.en", b"\n  \n\n", "has no non-blank line")):
            with self.subTest(name=name):
                path = os.path.join(folder, name)
                with open(path, "wb") as handle:
                    handle.write(blob)
                result, output = self.convert("--dtype", "int8", "--calibrate", path,
                                              output=os.path.join(self.tmp, "c2" + name, "m.emt"))
                self.assert_user_error(result, pattern)
                self.assert_nothing_written(output)

    def test_calibrate_needs_int8(self):
        text = self.write_calibration_text("c3.en", CALIBRATION_TEXT)
        for dtype in ("fp32", "fp16"):
            with self.subTest(dtype=dtype):
                result, output = self.convert("--dtype", dtype, "--calibrate", text,
                                              output=os.path.join(self.tmp, "c3" + dtype, "m.emt"))
                self.assert_user_error(result, f"--calibrate needs --dtype int8 "
                                               f"\\(got --dtype {dtype}\\)", code=2)
                self.assert_nothing_written(output)

    def test_calibrate_lines_usage_errors(self):
        text = self.write_calibration_text("c4.en", CALIBRATION_TEXT)
        for extra, pattern in ((("--calibrate", text, "--calibrate-lines", "0"),
                                "argument --calibrate-lines: must be at least 1"),
                               (("--calibrate", text, "--calibrate-lines", "x"),
                                "argument --calibrate-lines: invalid positive integer"),
                               (("--calibrate-lines", "5"), "--calibrate-lines needs --calibrate")):
            with self.subTest(extra=extra):
                result, output = self.convert("--dtype", "int8", *extra,
                                              output=os.path.join(self.tmp, "c4", "m.emt"))
                self.assert_user_error(result, pattern, code=2)
                self.assert_nothing_written(output)

    def test_missing_files(self):
        for key, pattern in (("checkpoint", "checkpoint not found"),
                             ("config", "config file not found"),
                             ("spm", "SentencePiece model not found")):
            with self.subTest(key=key):
                result, output = self.convert(output=os.path.join(self.tmp, "e3" + key, "m.emt"),
                                              **{key: os.path.join(self.tmp, "nope")})
                self.assert_user_error(result, pattern)
                self.assert_nothing_written(output)

    def test_missing_output_folder(self):
        result = helpers.run_tool(
            "edgemt-convert", "--from", "torch", "--checkpoint", self.paths["checkpoint"],
            "--config", self.paths["config"], "--spm", self.paths["spm"], "--dtype", "fp32",
            "-o", os.path.join(self.tmp, "no", "such", "dir", "m.emt"))
        self.assert_user_error(result, "output folder does not exist")

    def _bad_checkpoint(self, name, state):
        folder = os.path.join(self.tmp, "bad_" + name)
        os.makedirs(folder)
        path = os.path.join(folder, "model.pt")
        torch.save(state, path)
        return path

    def test_missing_key(self):
        state = tiny_state_dict(tiny_torch_config())
        del state["transformer.encoder.layers.1.linear2.bias"]
        ckpt = self._bad_checkpoint("missing", state)
        result, output = self.convert(checkpoint=ckpt, output=os.path.join(self.tmp, "e4", "m.emt"))
        self.assert_user_error(result, "missing 1 key.*encoder.layers.1.linear2.bias")
        self.assert_nothing_written(output)

    def test_shape_mismatch(self):
        state = tiny_state_dict(tiny_torch_config())
        state["transformer.decoder.layers.0.multihead_attn.in_proj_weight"] = torch.zeros(40, 16)
        ckpt = self._bad_checkpoint("shape", state)
        result, output = self.convert(checkpoint=ckpt, output=os.path.join(self.tmp, "e5", "m.emt"))
        self.assert_user_error(result, r"shape mismatch: .*multihead_attn.in_proj_weight is "
                                       r"\[40, 16\], config implies \[48, 16\]")
        self.assert_nothing_written(output)

    def test_non_finite_weight(self):
        state = tiny_state_dict(tiny_torch_config())
        state["transformer.encoder.layers.0.linear1.bias"][5] = float("inf")
        ckpt = self._bad_checkpoint("inf", state)
        result, output = self.convert(checkpoint=ckpt, output=os.path.join(self.tmp, "e9", "m.emt"))
        self.assert_user_error(result, "encoder.layers.0.linear1.bias contains non-finite")
        self.assert_nothing_written(output)

    def test_not_a_state_dict(self):
        ckpt = self._bad_checkpoint("notdict", [torch.zeros(3)])
        result, output = self.convert(checkpoint=ckpt, output=os.path.join(self.tmp, "e6", "m.emt"))
        self.assert_user_error(result, "expected a state_dict")
        self.assert_nothing_written(output)

    def test_garbage_checkpoint(self):
        folder = os.path.join(self.tmp, "bad_garbage")
        os.makedirs(folder)
        ckpt = os.path.join(folder, "model.pt")
        with open(ckpt, "wb") as handle:
            handle.write(b"not a checkpoint at all")
        result, output = self.convert(checkpoint=ckpt, output=os.path.join(self.tmp, "e7", "m.emt"))
        self.assert_user_error(result, "cannot load checkpoint")
        self.assert_nothing_written(output)

    def test_vocab_mismatch_with_spm(self):
        folder = os.path.join(self.tmp, "bad_vocab")
        os.makedirs(folder)
        other = write_tiny_checkpoint(folder, tiny_torch_config(vocab_size=80))
        result, output = self.convert(spm=other["spm"],
                                      output=os.path.join(self.tmp, "e8", "m.emt"))
        self.assert_user_error(result, "SentencePiece model has 80 pieces, config vocab_size "
                                       "is 96")
        self.assert_nothing_written(output)

    def test_failed_conversion_keeps_existing_output(self):
        output = os.path.join(self.tmp, "keep", "m.emt")
        os.makedirs(os.path.dirname(output))
        with open(output, "wb") as handle:
            handle.write(b"previous")
        result, _ = self.convert(output=output, checkpoint=os.path.join(self.tmp, "nope"))
        self.assertEqual(result.returncode, 1)
        with open(output, "rb") as handle:
            self.assertEqual(handle.read(), b"previous")
        self.assertEqual(os.listdir(os.path.dirname(output)), ["m.emt"])


if __name__ == "__main__":
    unittest.main()
