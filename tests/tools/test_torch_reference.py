"""torch_reference.py on a tiny random checkpoint, checked against an
independent numpy forward pass over the converted .emt file (so converter
mapping and reference model are tested against each other)."""

import os
import shutil
import tempfile
import unittest

import numpy as np
import torch
import torch.nn.functional as F

import helpers
from edgemt_tools import search
from edgemt_tools.model_file import read_model
from edgemt_tools.quantize import dequantize_rows, quantize_rows
from edgemt_tools.testing import tiny_torch_config, write_tiny_checkpoint
from edgemt_tools.torch_reference import TorchReference, int8_projections
from numpy_forward import NumpyTransformer

SENTENCES = ["A dog runs.", "Two girls sit on a bench, talking.", "Ein Mann."]


class TinyReferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp, tiny_torch_config(), seed=3)
        cls.ref = TorchReference(cls.paths["checkpoint"], cls.paths["config"], cls.paths["spm"])
        # tiny.int8.emt: nearest rounding and plain int8 lookups, what the
        # reference's own int8 mode computes from the checkpoint;
        # tiny.int8cal.emt: the converter's default (calibrated, residual
        # codes for the lookups), read through int8_file.
        for name, dtype, extra in (("fp32", "fp32", ()), ("fp16", "fp16", ()),
                                   ("int8", "int8", ("--no-calibration",
                                                     "--no-residual-embeddings")),
                                   ("int8cal", "int8", ())):
            result = helpers.run_tool(
                "edgemt-convert", "--from", "torch", "--checkpoint", cls.paths["checkpoint"],
                "--config", cls.paths["config"], "--spm", cls.paths["spm"], "--dtype", dtype,
                *extra, "-o", os.path.join(cls.tmp, f"tiny.{name}.emt"))
            assert result.returncode == 0, result.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_logits_match_numpy_forward_of_the_file(self):
        numpy_model = NumpyTransformer(read_model(os.path.join(self.tmp, "tiny.fp32.emt")))
        for text in SENTENCES:
            src = self.ref.encode_text(text)
            for prefix in ([2], [2, 7, 9], [2, 5, 6, 7, 8, 9]):
                got = self.ref.step_logits(src, prefix)
                want = numpy_model.next_logits(src, prefix)
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())

    def test_fp16_weights_mode_matches_fp16_file(self):
        ref16 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                               weights_dtype="fp16")
        numpy16 = NumpyTransformer(read_model(os.path.join(self.tmp, "tiny.fp16.emt")))
        src = ref16.encode_text(SENTENCES[1])
        got = ref16.step_logits(src, [2, 4, 5])
        want = numpy16.next_logits(src, [2, 4, 5])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        self.assertFalse(np.array_equal(got, self.ref.step_logits(src, [2, 4, 5])))

    def test_int8_weights_only_mode_matches_int8_file(self):
        """Dequantized weights (no activation quantization) == numpy forward over
        the int8 file's codes x scales: the converter and the reference agree on
        which matrices are quantized and how."""
        ref8 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              weights_dtype="int8", quantize_activations=False)
        numpy8 = NumpyTransformer(read_model(os.path.join(self.tmp, "tiny.int8.emt")))
        for text in SENTENCES[:2]:
            src = ref8.encode_text(text)
            got = ref8.step_logits(src, [2, 4, 5])
            want = numpy8.next_logits(src, [2, 4, 5])
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        self.assertFalse(np.array_equal(got, self.ref.step_logits(src, [2, 4, 5])))

    def test_int8_file_weights_only_mode_matches_the_calibrated_file(self):
        """int8_file: the calibrated file's matrices (codes x scales x smoothing
        vectors, folded without activation quantization) == numpy forward over
        that file; and not the checkpoint's nearest rounding."""
        path = os.path.join(self.tmp, "tiny.int8cal.emt")
        ref8 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              weights_dtype="int8", quantize_activations=False, int8_file=path)
        numpy8 = NumpyTransformer(read_model(path))
        nearest = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                                 weights_dtype="int8", quantize_activations=False)
        for text in SENTENCES[:2]:
            src = ref8.encode_text(text)
            got = ref8.step_logits(src, [2, 4, 5])
            want = numpy8.next_logits(src, [2, 4, 5])
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        self.assertFalse(np.array_equal(got, nearest.step_logits(src, [2, 4, 5])))

    def test_int8_file_multiplies_smoothed_inputs_before_quantizing(self):
        """With activation quantization, a smoothed projection's input is x ⊙ m
        fake-quantized: its rows are codes over 127 of their own max, and
        dividing by m gives back x only up to that rounding."""
        path = os.path.join(self.tmp, "tiny.int8cal.emt")
        ref8 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              weights_dtype="int8", int8_file=path)
        model = read_model(path)
        smoothed = [n for n in model.entries if n.endswith("_smooth")
                    and not np.all(model.array(n) == 1)]
        self.assertTrue(smoothed, "calibration smoothed nothing in the tiny model")
        inputs = []
        original = F.linear

        def recording_linear(input, weight, bias=None):  # pylint: disable=redefined-builtin
            inputs.append(input.detach().clone())
            return original(input, weight, bias)
        F.linear = recording_linear
        try:
            ref8.step_logits(ref8.encode_text(SENTENCES[1]), [2, 4, 5])
        finally:
            F.linear = original
        for x in inputs:
            rows = x.reshape(-1, x.shape[-1]).double()
            codes = rows * 127 / rows.abs().amax(dim=1, keepdim=True)
            self.assertLess(float((codes - codes.round()).abs().max()), 1e-3)
        # Against the unsmoothed reference the encoder's first qkv input differs.
        plain = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                               weights_dtype="int8")
        self.assertFalse(np.allclose(ref8.step_logits(ref8.encode_text(SENTENCES[1]), [2, 4, 5]),
                                     plain.step_logits(plain.encode_text(SENTENCES[1]), [2, 4, 5])))

    def test_int8_parameters_are_dequantized_matrices(self):
        ref8 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              weights_dtype="int8")
        state = torch.load(self.paths["checkpoint"])
        model = ref8.model
        for key, param in (("embed.weight", model.embed.weight),
                           ("transformer.decoder.layers.1.multihead_attn.in_proj_weight",
                            model.transformer.decoder.layers[1].multihead_attn.in_proj_weight),
                           ("transformer.encoder.layers.0.self_attn.out_proj.weight",
                            model.transformer.encoder.layers[0].self_attn.out_proj.weight),
                           ("transformer.encoder.layers.1.linear1.weight",
                            model.transformer.encoder.layers[1].linear1.weight)):
            want = dequantize_rows(*quantize_rows(state[key].numpy()))
            np.testing.assert_array_equal(param.detach().numpy(), want, key)
        self.assertIs(model.generator.weight, model.embed.weight)  # tied: one quantized table
        np.testing.assert_array_equal(model.generator.bias.detach().numpy(),
                                      state["generator.bias"].numpy())  # vectors stay fp32
        np.testing.assert_array_equal(model.transformer.encoder.layers[0].norm1.weight.detach()
                                      .numpy(), state["transformer.encoder.layers.0.norm1.weight"])

    def test_int8_quantizes_the_input_of_every_projection(self):
        """Every matrix product sees per-row int8 values: one call per projection
        matrix of TENSORS.md (4 per encoder layer, 7 per decoder layer, 1 for the
        generator), also in the encoder, where PyTorch's fused eval kernels would
        otherwise bypass F.linear."""
        ref8 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              weights_dtype="int8")
        cfg = ref8.config
        inputs = []
        original = F.linear

        def recording_linear(input, weight, bias=None):  # pylint: disable=redefined-builtin
            inputs.append(input.detach().clone())
            return original(input, weight, bias)

        src = ref8.encode_text(SENTENCES[1])
        F.linear = recording_linear  # what int8_projections wraps
        try:
            ref8.step_logits(src, [2, 4, 5])
        finally:
            F.linear = original
        self.assertEqual(len(inputs), cfg["encoder_layers"] * 4 + cfg["decoder_layers"] * 7 + 1)
        widths = [x.shape[-1] for x in inputs]
        self.assertEqual(widths.count(cfg["ffn_dim"]),  # the ffn.out inputs
                         cfg["encoder_layers"] + cfg["decoder_layers"])
        for x in inputs:  # every row is q * amax / 127 with integer q in [-127, 127]
            rows = x.reshape(-1, x.shape[-1]).double()
            amax = rows.abs().amax(dim=1, keepdim=True)
            codes = rows * 127 / amax
            self.assertLess(float((codes - codes.round()).abs().max()), 1e-4)
            self.assertLessEqual(float(codes.abs().max()), 127 + 1e-4)

    def test_int8_differs_from_weights_only_and_stays_near_fp32(self):
        make = lambda **kw: TorchReference(  # noqa: E731
            self.paths["checkpoint"], self.paths["config"], self.paths["spm"], **kw)
        full = make(weights_dtype="int8")
        weights_only = make(weights_dtype="int8", quantize_activations=False)
        src = full.encode_text(SENTENCES[0])
        got = full.step_logits(src, [2, 6])
        without = weights_only.step_logits(src, [2, 6])
        fp32 = self.ref.step_logits(src, [2, 6])
        self.assertFalse(np.array_equal(got, without))
        self.assertLess(np.abs(got - fp32).max(), 0.5 * np.abs(fp32).max())
        self.assertEqual(full.step_logits(src, [2, 6]).tolist(), got.tolist())  # deterministic
        self.assertFalse(getattr(F.linear, "_edgemt_int8", False))  # patch removed afterwards

    def test_int8_greedy_is_masked_argmax_of_int8_step_logits(self):
        ref8 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              weights_dtype="int8")
        src = ref8.encode_text(SENTENCES[2])
        prefix = [2]
        for _ in range(4):
            logits = ref8.step_logits(src, prefix)
            logits[[0, 2]] = -np.inf
            token = int(np.argmax(logits))
            if token == 3:
                break
            prefix.append(token)
        self.assertEqual(ref8.greedy(src, max_len=4), prefix[1:])

    def test_int8_projections_restores_and_is_not_reentrant(self):
        original = F.linear
        with self.assertRaises(ZeroDivisionError):
            with int8_projections():
                self.assertIsNot(F.linear, original)
                self.assertTrue(torch.is_grad_enabled())
                raise ZeroDivisionError
        self.assertIs(F.linear, original)
        with int8_projections():
            with self.assertRaisesRegex(RuntimeError, "already active"):
                with int8_projections():
                    pass
        self.assertIs(F.linear, original)

    def test_unknown_weights_dtype(self):
        with self.assertRaisesRegex(ValueError, "fp32, fp16, int8"):
            TorchReference(self.paths["checkpoint"], self.paths["config"], weights_dtype="int4")

    def test_source_ids_end_with_eos(self):
        src = self.ref.encode_text("A dog runs.")
        self.assertEqual(src[-1], 3)
        self.assertEqual(src[:-1], list(self.ref.spm.encode("A dog runs.")))

    def test_greedy_is_masked_argmax_of_step_logits(self):
        for text in SENTENCES:
            src = self.ref.encode_text(text)
            limit = self.ref.max_len(len(src))
            out = self.ref.greedy(src)
            self.assertLessEqual(len(out), limit)
            prefix = [2]
            for _ in range(limit):
                logits = self.ref.step_logits(src, prefix)
                logits[[0, 2]] = -np.inf
                token = int(np.argmax(logits))
                if token == 3:
                    break
                prefix.append(token)
            self.assertEqual(out, prefix[1:])
            self.assertNotIn(0, out)
            self.assertNotIn(2, out)

    def test_batched_hypotheses_equal_single_calls(self):
        """Beam search runs K prefixes as one decoder batch; rows must equal batch-1 calls."""
        src = self.ref.encode_text(SENTENCES[0])
        memory = self.ref._memory(src)  # pylint: disable=protected-access
        prefixes = torch.tensor([[2, 4, 5], [2, 6, 7], [2, 8, 8]])
        with torch.no_grad():
            batched = self.ref._logits_fn(memory)(prefixes)  # pylint: disable=protected-access
        for row, prefix in enumerate(prefixes.tolist()):
            np.testing.assert_allclose(batched[row].numpy(), self.ref.step_logits(src, prefix),
                                       rtol=1e-5, atol=1e-5)

    def test_beam_result_is_best_finished(self):
        src = self.ref.encode_text(SENTENCES[1])
        hyps = self.ref.beam_hypotheses(src, beam=3, length_penalty=1.0)
        best, finished = hyps[0], hyps[1:]
        self.assertEqual(best.normalized, max(h.normalized for h in finished))
        self.assertEqual(self.ref.beam_search(src, 3, 1.0), best.tokens)
        self.assertLessEqual(len(best.tokens), self.ref.max_len(len(src)))

    def test_too_long_source_rejected(self):
        with self.assertRaises(ValueError):
            self.ref.greedy([4] * 41 + [3])

    def test_default_search_constants(self):
        self.assertEqual((search.DEFAULT_MAX_LEN_A, search.DEFAULT_MAX_LEN_B), (2.0, 10.0))
        self.assertEqual(search.DEFAULT_LENGTH_PENALTY, 1.0)


if __name__ == "__main__":
    unittest.main()


class TinyPreNormGeluTest(unittest.TestCase):
    """norm_first=True and gelu map to PreNorm/Gelu and still match the file."""

    def test_logits_match_numpy_forward(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = tiny_torch_config(norm_first=True, activation="gelu", encoder_layers=1,
                                       decoder_layers=2, heads=4)
            paths = write_tiny_checkpoint(tmp, config, seed=11)
            output = os.path.join(tmp, "pre.emt")
            result = helpers.run_tool(
                "edgemt-convert", "--from", "torch", "--checkpoint", paths["checkpoint"],
                "--config", paths["config"], "--spm", paths["spm"], "--dtype", "fp32",
                "-o", output)
            self.assertEqual(result.returncode, 0, result.stderr)
            model = read_model(output)
            self.assertEqual((model.header.config.norm_placement,
                              model.header.config.activation), ("pre", "gelu"))
            ref = TorchReference(paths["checkpoint"], paths["config"], paths["spm"])
            src = ref.encode_text(SENTENCES[1])
            want = NumpyTransformer(model).next_logits(src, [2, 9, 10, 11])
            got = ref.step_logits(src, [2, 9, 10, 11])
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
