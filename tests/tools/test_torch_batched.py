"""The batched PyTorch beam search (throughput baseline) decodes like the
per-sentence reference search on a tiny random model."""

import shutil
import tempfile
import unittest

import torch

import helpers  # noqa: F401  (puts tools/ on sys.path)
from edgemt_tools.testing import write_tiny_checkpoint
from edgemt_tools.torch_batched import _top_candidates, beam_search_batch
from edgemt_tools.torch_reference import TorchReference


class BatchedBeamTest(unittest.TestCase):
    def test_matches_per_sentence_beam_search(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        paths = write_tiny_checkpoint(tmp)
        reference = TorchReference(paths["checkpoint"], paths["config"], paths["spm"])
        texts = ["A man in an orange hat.", "Two girls are sitting on a bench and talking.",
                 "A dog.", "Children play football."]
        sources = [reference.encode_text(t) for t in texts]
        for beam in (2, 4):
            expected = [reference.beam_search(s, beam=beam) for s in sources]
            self.assertEqual(beam_search_batch(reference, sources, beam), expected)

    def test_top_candidates_equal_the_full_stable_sort(self):
        """Ranks 0..k-1 as a stable descending sort gives them, on scores with
        many ties (also across the k-th place) and -inf entries."""
        generator = torch.Generator().manual_seed(7)
        for trial in range(200):
            n = int(torch.randint(1, 300, (1,), generator=generator))
            scores = torch.randint(-6, 1, (n,), generator=generator).float() / 2
            scores[torch.rand(n, generator=generator) < 0.2] = -float("inf")
            k = int(torch.randint(1, 12, (1,), generator=generator))
            full_scores, full_index = torch.sort(scores, descending=True, stable=True)
            top_scores, top_index = _top_candidates(scores, k)
            m = min(k, n)
            self.assertGreaterEqual(len(top_index), m)
            self.assertEqual(top_index[:m].tolist(), full_index[:m].tolist(), f"trial {trial}")
            self.assertEqual(top_scores[:m].tolist(), full_scores[:m].tolist())

    def test_refuses_the_int8_reference(self):
        """It calls the layers directly, outside the int8 activation quantization."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        paths = write_tiny_checkpoint(tmp)
        reference = TorchReference(paths["checkpoint"], paths["config"], paths["spm"], "int8")
        with self.assertRaisesRegex(ValueError, "int8"):
            beam_search_batch(reference, [reference.encode_text("A dog.")], 2)


if __name__ == "__main__":
    unittest.main()
