"""torch_reference.py on a tiny random checkpoint, checked against an
independent numpy forward pass over the converted .emt file (so converter
mapping and reference model are tested against each other)."""

import os
import shutil
import tempfile
import unittest

import numpy as np
import torch

import helpers
from edgemt_tools import search
from edgemt_tools.model_file import read_model
from edgemt_tools.testing import tiny_torch_config, write_tiny_checkpoint
from edgemt_tools.torch_reference import TorchReference
from numpy_forward import NumpyTransformer

SENTENCES = ["A dog runs.", "Two girls sit on a bench, talking.", "Ein Mann."]


class TinyReferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp, tiny_torch_config(), seed=3)
        cls.ref = TorchReference(cls.paths["checkpoint"], cls.paths["config"], cls.paths["spm"])
        for dtype in ("fp32", "fp16"):
            result = helpers.run_tool(
                "edgemt-convert", "--from", "torch", "--checkpoint", cls.paths["checkpoint"],
                "--config", cls.paths["config"], "--spm", cls.paths["spm"], "--dtype", dtype,
                "-o", os.path.join(cls.tmp, f"tiny.{dtype}.emt"))
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
