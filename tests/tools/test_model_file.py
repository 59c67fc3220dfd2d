"""model_file.py: container layout, round trip, alignment, aliases, reader checks."""

import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools.model_file import ModelFileError, read_model
from edgemt_tools.model_spec import expected_tensors, TransformerConfig
from edgemt_tools.testing import write_unchecked

SCHEMA = os.path.join(helpers.REPO_ROOT, "schema", "edgemt.fbs")

TINY = dict(encoder_layers=1, decoder_layers=1, d_model=8, heads=2, ffn_dim=12, vocab_size=10,
            max_positions=6, encoder_final_norm=True, decoder_final_norm=True,
            embedding_scale=2.0, tied_output=True, output_bias=True, shared_embeddings=True)


def tiny_tensors(config, dtype=np.float32, seed=0):
    """Random tensors exactly as `config` implies; aliases per the spec."""
    rng = np.random.default_rng(seed)
    tensors, aliases = {}, {}
    for name, spec in expected_tensors(TransformerConfig(**config)).items():
        if spec.alias_of:
            aliases[name] = aliases.get(spec.alias_of, spec.alias_of)
            continue
        array = rng.standard_normal(spec.shape).astype(np.float32)
        tensors[name] = array.astype(dtype) if spec.kind == "matrix" else array
    return tensors, aliases


class RoundTripTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.path = os.path.join(self.tmp, "tiny.emt")

    def test_round_trip_fp32(self):
        tensors, aliases = tiny_tensors(TINY)
        size = write_unchecked(self.path, TINY, tensors, aliases, tokenizer_model=b"spm-bytes")
        self.assertEqual(size, os.path.getsize(self.path))
        model = read_model(self.path)
        model.check_against_config()
        self.assertEqual(model.format_version, 1)
        self.assertEqual(model.header.config, TransformerConfig(**TINY))
        self.assertEqual(model.header.tokenizer_model, b"spm-bytes")
        self.assertEqual(model.header.special_tokens.decoder_start, 2)
        self.assertTrue(model.header.append_eos_to_source)
        for name, array in tensors.items():
            np.testing.assert_array_equal(model.array(name), array)
        np.testing.assert_array_equal(model.array("output.weight"), tensors["embedding.source"])

    def test_fp16_matrices_and_f32_vectors(self):
        tensors, aliases = tiny_tensors(TINY, np.float16)
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="fp16")
        model = read_model(self.path)
        model.check_against_config()
        self.assertEqual(model.entries["encoder.layers.0.ffn.in.weight"].dtype, "f16")
        self.assertEqual(model.entries["encoder.layers.0.ffn.in.bias"].dtype, "f32")
        self.assertEqual(model.entries["position.table"].dtype, "f32")
        np.testing.assert_array_equal(model.array("embedding.source"), tensors["embedding.source"])

    def test_layout(self):
        tensors, aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases)
        with open(self.path, "rb") as handle:
            data = handle.read()
        (fb_size,) = struct.unpack_from("<I", data, 0)
        self.assertEqual(data[8:12], b"EMT1")  # identifier after size prefix + root offset
        model = read_model(self.path)
        self.assertEqual(model.segment_start % 64, 0)
        self.assertEqual(model.segment_start, (4 + fb_size + 63) // 64 * 64)
        self.assertEqual(len(data), model.segment_start + model.weights_size)
        self.assertEqual(model.weights_size % 64, 0)
        for entry in model.entries.values():
            self.assertEqual(entry.offset % 64, 0, entry.name)
        names = [n.encode() for n in model.table_order]
        self.assertEqual(names, sorted(names))
        src, tgt, out = (model.entries[n] for n in
                         ("embedding.source", "embedding.target", "output.weight"))
        self.assertEqual((src.offset, src.size), (tgt.offset, tgt.size))
        self.assertEqual((src.offset, src.size), (out.offset, out.size))
        # Stored tensors do not overlap: distinct offsets for distinct owners.
        owners = {(e.offset, e.size) for e in model.entries.values()}
        self.assertEqual(len(owners), len(tensors))

    def test_flatc_reads_the_header(self):
        """flatc (the C++ library, with its verifier) decodes our FlatBuffer."""
        flatc = shutil.which("flatc")
        if flatc is None:
            self.skipTest("flatc not installed")
        tensors, aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases, tokenizer_model=b"\x01\x02")
        model = read_model(self.path)
        with open(self.path, "rb") as handle:
            fb = handle.read(model.segment_start)
        fb_path = os.path.join(self.tmp, "header.bin")
        with open(fb_path, "wb") as handle:
            handle.write(fb)
        subprocess.run([flatc, "--json", "--strict-json", "--size-prefixed", "--raw-binary",
                        "-o", self.tmp, SCHEMA, "--", fb_path], check=True,
                       capture_output=True)
        with open(os.path.join(self.tmp, "header.json"), encoding="utf-8") as handle:
            doc = json.load(handle)
        self.assertEqual(doc["format_version"], 1)
        self.assertEqual(doc["config"]["d_model"], 8)
        self.assertEqual(doc["weights_size"], model.weights_size)
        self.assertEqual(len(doc["tensors"]), len(model.entries))

    def test_reader_rejects_bad_files(self):
        tensors, aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases)
        with open(self.path, "rb") as handle:
            data = bytearray(handle.read())
        bad_id = bytearray(data)
        bad_id[8:12] = b"XXXX"
        truncated = data[:-64]
        for label, blob in (("identifier", bad_id), ("truncated", truncated)):
            path = os.path.join(self.tmp, label + ".emt")
            with open(path, "wb") as handle:
                handle.write(blob)
            with self.assertRaises(ModelFileError, msg=label):
                read_model(path)

    def test_unchecked_writer_allows_inconsistent_files(self):
        """For the runtime's bad-input tests: a shape that disagrees with the config."""
        tensors, aliases = tiny_tensors(TINY)
        tensors["decoder.layers.0.cross_attn.kv.weight"] = np.zeros((3, 8), np.float32)
        write_unchecked(self.path, TINY, tensors, aliases)
        model = read_model(self.path)  # structurally valid...
        with self.assertRaisesRegex(ModelFileError, "cross_attn.kv.weight"):
            model.check_against_config()  # ...but not what the config implies

    def test_writer_rejects_bad_alias(self):
        tensors, _ = tiny_tensors(TINY)
        with self.assertRaises(ValueError):
            write_unchecked(self.path, TINY, tensors, {"output.weight": "nope"})
        self.assertEqual(os.listdir(self.tmp), [])


if __name__ == "__main__":
    unittest.main()
