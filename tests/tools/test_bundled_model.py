"""models/multi30k-en-de.int8.emt (the default) and .fp16.emt: the bundled models
are complete and valid (needs only the repository)."""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools import __version__
from edgemt_tools.model_file import read_model

SCHEMA = os.path.join(helpers.REPO_ROOT, "schema", "edgemt.fbs")


class BundledModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = read_model(helpers.BUNDLED_MODEL)
        cls.fp16 = read_model(helpers.BUNDLED_FP16_MODEL)

    def test_only_emt_in_models(self):
        emts = sorted(n for n in os.listdir(helpers.MODELS_DIR) if n.endswith(".emt"))
        self.assertEqual(emts, ["multi30k-en-de.fp16.emt", "multi30k-en-de.int8.emt"])

    def test_int8_is_the_fp16_model_quantized(self):
        """Same header (but dtype and scheme) and tokenizer; int8 matrices a quarter of f32;
        the table's residual codes half a byte per weight."""
        self.assertEqual(self.model.header.weight_dtype, "int8")
        self.assertEqual(self.model.header.quantization, "Int8SmoothedPerRowDynamic")
        self.assertEqual(self.fp16.header.weight_dtype, "fp16")
        self.assertEqual(self.model.header.config, self.fp16.header.config)
        self.assertEqual(self.model.header.tokenizer_model, self.fp16.header.tokenizer_model)
        self.fp16.check_against_config()
        for name, entry in self.fp16.entries.items():
            if entry.dtype == "f16":
                self.assertEqual(self.model.entries[name].dtype, "i8", name)
                self.assertEqual(self.model.entries[name].size * 2, entry.size, name)
        table = self.model.entries["embedding.source"]
        residual = self.model.entries["embedding.source_residual"]
        self.assertEqual(residual.size, table.shape[0] * ((table.shape[1] + 1) // 2))
        self.assertLessEqual(os.path.getsize(helpers.BUNDLED_MODEL) - residual.size,
                             0.30 * 2 * os.path.getsize(helpers.BUNDLED_FP16_MODEL))

    def test_tensors_agree_with_config(self):
        self.model.check_against_config()
        cfg = self.model.header.config
        self.assertEqual((cfg.encoder_layers, cfg.decoder_layers, cfg.d_model, cfg.heads,
                          cfg.ffn_dim, cfg.vocab_size, cfg.max_positions),
                         (3, 3, 256, 4, 1024, 8000, 256))
        self.assertEqual((cfg.activation, cfg.norm_placement), ("relu", "post"))
        self.assertTrue(cfg.encoder_final_norm and cfg.decoder_final_norm)
        self.assertTrue(cfg.tied_output and cfg.shared_embeddings and cfg.output_bias)
        self.assertEqual(cfg.embedding_scale, 16.0)
        self.assertAlmostEqual(cfg.layer_norm_eps, 1e-5)
        self.assertEqual(self.model.header.weight_dtype, "int8")
        for name in self.model.entries:
            self.assertTrue(np.isfinite(self.model.array(name)).all(), name)

    def test_header_fields(self):
        header = self.model.header
        self.assertEqual((header.source_language, header.target_language), ("en", "de"))
        tokens = header.special_tokens
        self.assertEqual((tokens.pad, tokens.unk, tokens.bos, tokens.eos, tokens.decoder_start),
                         (0, 1, 2, 3, 2))
        self.assertTrue(header.append_eos_to_source)
        prov = header.provenance
        self.assertEqual((prov.source_format, prov.source_checkpoint, prov.converter_version),
                         ("torch", "model.pt", __version__))  # a fresh conversion's
        self.assertRegex(prov.source_sha256, "^[0-9a-f]{64}$")
        import sentencepiece
        sp = sentencepiece.SentencePieceProcessor(model_proto=header.tokenizer_model)
        self.assertEqual(sp.get_piece_size(), 8000)

    def test_flatc_verifies_header(self):
        flatc = shutil.which("flatc")
        if flatc is None:
            self.skipTest("flatc not installed")
        with tempfile.TemporaryDirectory() as tmp:
            with open(helpers.BUNDLED_MODEL, "rb") as handle:
                header = handle.read(self.model.segment_start)
            path = os.path.join(tmp, "header.bin")
            with open(path, "wb") as handle:
                handle.write(header)
            subprocess.run([flatc, "--json", "--size-prefixed", "--raw-binary", "-o", tmp,
                            SCHEMA, "--", path], check=True, capture_output=True)
            self.assertTrue(os.path.getsize(os.path.join(tmp, "header.json")) > 0)


if __name__ == "__main__":
    unittest.main()
