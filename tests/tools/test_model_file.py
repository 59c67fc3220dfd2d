"""model_file.py: container layout, round trip, alignment, aliases, reader checks."""

import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib

import numpy as np

import helpers
import google_crc32c

from edgemt_tools import fbs
from edgemt_tools.families.rnn import RnnConfig
from edgemt_tools.families.transformer import TransformerConfig
from edgemt_tools.model_file import TRAILER_BYTES, ModelFileError, integrity_trailer, read_model
from edgemt_tools.model_file import write_unvalidated
from edgemt_tools.model_spec import (QUANTIZATION_INT8, QUANTIZATION_NONE, Decoding, ModelHeader,
                                     Provenance, SideTokenizer, SpecialTokens, expected_tensors)
from edgemt_tools.quantize import dequantize_rows, quantize_rows
from edgemt_tools.testing import write_unchecked
from edgemt_tools.writer import pack_tensors

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


def tiny_int8_tensors(config, seed=0):
    """Tensors of an int8 file: quantized matrices, each followed by its scales.
    Also returns the float32 matrices they were quantized from."""
    rng = np.random.default_rng(seed)
    tensors, aliases, originals = {}, {}, {}
    for name, spec in expected_tensors(TransformerConfig(**config), "int8").items():
        if spec.alias_of:
            aliases[name] = aliases.get(spec.alias_of, spec.alias_of)
        elif spec.kind == "matrix":
            originals[name] = rng.standard_normal(spec.shape).astype(np.float32)
            tensors[name], tensors[name + "_scale"] = quantize_rows(originals[name], name)
        elif name not in tensors:
            tensors[name] = rng.standard_normal(spec.shape).astype(np.float32)
    return tensors, aliases, originals


def read_model_segment_start(data) -> int:
    """W = align64(4 + S) of an .emt file's bytes."""
    (fb_size,) = struct.unpack_from("<I", data, 0)
    return (4 + fb_size + 63) // 64 * 64


class IntegrityTrailerTest(unittest.TestCase):
    """Format version 4: the reader checks the trailer's two CRC-32Cs, as the
    runtime does (tests/runtime/format/integrity_test.cc flips every byte)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.path = os.path.join(self.tmp, "m.emt")
        tensors, aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases, tokenizer_model=b"spm-bytes")
        with open(self.path, "rb") as handle:
            self.data = handle.read()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def read_with(self, data):
        with open(self.path, "wb") as handle:
            handle.write(data)
        return read_model(self.path)

    def test_a_flipped_bit_in_each_part_is_named(self):
        segment = read_model_segment_start(self.data)
        end = len(self.data) - TRAILER_BYTES
        cases = {segment - 1: "header's CRC-32C", segment + 1: "weights' CRC-32C",
                 end - 1: "weights' CRC-32C", end: "no integrity trailer",
                 end + 4: "header's CRC-32C", end + 11: "weights' CRC-32C"}
        for at, message in cases.items():
            data = bytearray(self.data)
            data[at] ^= 0x04
            with self.subTest(at=at), self.assertRaisesRegex(ModelFileError, message):
                self.read_with(bytes(data))

    def test_a_missing_or_cut_trailer_is_refused(self):
        for data in (self.data[:-TRAILER_BYTES], self.data[:-1], self.data + b"\0"):
            with self.subTest(size=len(data)), self.assertRaisesRegex(ModelFileError, "file size"):
                self.read_with(data)


class RnnConfigTest(unittest.TestCase):
    """An RnnConfig (every field off its default) is written as the
    family_config union's RnnConfig member and read back as it was."""

    def test_round_trip(self):
        from edgemt_tools import fbs
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "rnn.emt")
        config = RnnConfig(cell="Gru", layers=2, bidirectional_encoder=True,
                           source_embedding_dim=6, target_embedding_dim=5, hidden=8,
                           score="Additive", query_bias=True, query="Current",
                           decoder_input="EmbeddingInputFeed", output="LinearCombine",
                           combine_bias=True, vocab_size=10, source_vocab_size=12,
                           max_positions=7)
        rng = np.random.default_rng(0)
        tensors = {}
        for name, spec in expected_tensors(config, "fp16").items():
            array = rng.standard_normal(spec.shape).astype(np.float32)
            tensors[name] = array.astype(np.float16) if spec.kind == "matrix" else array
        header = ModelHeader(
            config=config, special_tokens=SpecialTokens(pad=0, unk=1, bos=2, eos=3,
                                                        decoder_start=2),
            source_language="en", target_language="de", weight_dtype="fp16",
            tokenizer_model=b"spm", target_tokenizer=SideTokenizer(b"tgt"),
            provenance=Provenance(source_format="test"))
        write_unvalidated(path, header, tensors)
        model = read_model(path)
        self.assertEqual(model.header.config, config)
        raw = fbs.model_fb.Model.GetRootAs(model._data, 4)
        self.assertEqual(raw.FamilyConfigType(), fbs.FamilyConfig.RnnConfig)
        model.check_against_config()
        np.testing.assert_array_equal(model.array("attention.combine"),
                                      tensors["attention.combine"])


class VersionThreeFieldsTest(unittest.TestCase):
    """Vocabularies, a target tokenizer, source vocabulary size, zero decoder
    start and decoding defaults survive writing and reading."""

    def test_round_trip(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "v3.emt")
        config = dict(TINY, shared_embeddings=False, tied_output=False, source_vocab_size=12,
                      zero_decoder_start=True)
        tensors, aliases = tiny_tensors(config)
        # Multi-byte pieces (SentencePiece's ▁ is 3 bytes), written as UTF-8.
        source_pieces = ("▁", "é", "日本") + tuple(f"s{i}" for i in range(9))
        target = SideTokenizer(b"target-spm", tuple(f"▁t{i}" for i in range(10)), unk_id=1,
                               eos_id=3)
        decoding = Decoding(rules="marian", beam_size=6, length_penalty=0.6, word_penalty=0.5,
                            max_len_a=3.0, max_len_b=0.0, banned_tokens=(1, 7))
        header = ModelHeader(
            config=TransformerConfig(**config),
            special_tokens=SpecialTokens(pad=0, unk=1, bos=2, eos=3, decoder_start=3),
            source_language="en", target_language="de", weight_dtype="fp32",
            tokenizer_model=b"source-spm", append_eos_to_source=False,
            provenance=Provenance(source_format="test", source_checkpoint="modèle.npz"),
            source_pieces=source_pieces,
            source_unk_id=0, source_eos_id=11, target_tokenizer=target, decoding=decoding)
        write_unvalidated(path, header, tensors, aliases)
        model = read_model(path)
        model.check_against_config()
        self.assertEqual(model.format_version, fbs.FORMAT_VERSION)
        got = model.header
        self.assertEqual(got.config, TransformerConfig(**config))
        self.assertEqual(got.source_pieces, source_pieces)
        self.assertEqual(got.provenance.source_checkpoint, "modèle.npz")
        self.assertEqual((got.source_unk_id, got.source_eos_id), (0, 11))
        self.assertEqual(got.target_tokenizer, target)
        self.assertEqual(got.decoding.rules, "marian")
        self.assertEqual(got.decoding.banned_tokens, (1, 7))
        self.assertAlmostEqual(got.decoding.length_penalty, 0.6, places=6)
        self.assertFalse(got.append_eos_to_source)
        self.assertEqual(model.entries["embedding.source"].shape, (12, 8))


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
        self.assertEqual(model.format_version, fbs.FORMAT_VERSION)
        self.assertEqual(model.header.config, TransformerConfig(**TINY))
        self.assertEqual(model.header.tokenizer_model, b"spm-bytes")
        self.assertEqual(model.header.special_tokens.decoder_start, 2)
        self.assertTrue(model.header.append_eos_to_source)
        for name, array in tensors.items():
            np.testing.assert_array_equal(model.array(name), array)
        np.testing.assert_array_equal(model.array("output.weight"), tensors["embedding.source"])

    def test_tokenizer_crc32_is_recorded_and_checked(self):
        tensors, aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases, tokenizer_model=b"spm-bytes")
        with open(self.path, "rb") as handle:
            data = bytearray(handle.read())
        at = data.find(b"spm-bytes")
        self.assertGreater(at, 0)
        data[at] ^= 0x20  # "Spm-bytes": the recorded CRC-32 no longer matches
        # The file's own checksum would say so first: make it agree, so that
        # the tokenizer's CRC-32 is what finds the change.
        model_end = len(data) - TRAILER_BYTES
        segment = read_model_segment_start(data)
        data[model_end:] = integrity_trailer(google_crc32c.value(bytes(data[:segment])),
                                             google_crc32c.value(bytes(data[segment:model_end])))
        with open(self.path, "wb") as handle:
            handle.write(bytes(data))
        with self.assertRaisesRegex(ModelFileError, r"tokenizer model: CRC-32 is .* the file "
                                                    r"records %08x" % zlib.crc32(b"spm-bytes")):
            read_model(self.path)

    def test_fp16_matrices_and_f32_vectors(self):
        tensors, aliases = tiny_tensors(TINY, np.float16)
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="fp16")
        model = read_model(self.path)
        model.check_against_config()
        self.assertEqual(model.entries["encoder.layers.0.ffn.in.weight"].dtype, "f16")
        self.assertEqual(model.entries["encoder.layers.0.ffn.in.bias"].dtype, "f32")
        self.assertEqual(model.entries["position.table"].dtype, "f32")
        np.testing.assert_array_equal(model.array("embedding.source"), tensors["embedding.source"])

    def test_round_trip_int8(self):
        tensors, aliases, originals = tiny_int8_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
        model = read_model(self.path)
        model.check_against_config()
        self.assertEqual(model.header.weight_dtype, "int8")
        self.assertEqual(model.header.quantization, QUANTIZATION_INT8)
        qkv = "encoder.layers.0.self_attn.qkv.weight"
        self.assertEqual(model.entries[qkv].dtype, "i8")
        self.assertEqual(model.array(qkv).dtype, np.int8)
        self.assertEqual(model.entries[qkv + "_scale"].dtype, "f32")
        self.assertEqual(model.entries[qkv + "_scale"].shape, (24,))
        self.assertEqual(model.entries["position.table"].dtype, "f32")
        for name, array in tensors.items():
            np.testing.assert_array_equal(model.array(name), array, name)
        # One byte per weight: an I8 matrix is a quarter of its F32 size.
        for name, original in originals.items():
            self.assertEqual(model.entries[name].size, original.size, name)
            self.assertEqual(model.entries[name].size * 4, original.nbytes, name)
            self.assertEqual(model.entries[name + "_scale"].size, 4 * original.shape[0], name)
        # The scales of aliased matrices are aliased too.
        src = model.entries["embedding.source_scale"]
        for alias in ("embedding.target_scale", "output.weight_scale"):
            self.assertEqual((model.entries[alias].offset, model.entries[alias].size),
                             (src.offset, src.size), alias)
        deq = dequantize_rows(model.array("output.weight"), model.array("output.weight_scale"))
        scale = model.array("embedding.source_scale")[:, None]
        self.assertTrue((np.abs(deq - originals["embedding.source"]) <= scale * 0.51).all())

    def round_trip_float_tables(self, config, flag: str, dtype: str, version: int):
        """An int8 file of `config` whose tables are `dtype` ("f32", "f16")
        under header flag `flag`: written at `version`, the tables without
        scales and their values kept, every projection int8 with its scales;
        a float file with the flag is refused. Returns (weights, tensors,
        aliases) for the caller's own checks."""
        weights, _ = tiny_tensors(config)
        tensors, aliases = pack_tensors(TransformerConfig(**config), weights, "int8",
                                        **{flag: True})
        write_unchecked(self.path, config, tensors, aliases, weight_dtype="int8", **{flag: True})
        model = read_model(self.path)
        model.check_against_config()
        self.assertEqual(model.format_version, version)
        self.assertEqual((model.header.f32_tables, model.header.f16_tables),
                         (flag == "f32_tables", flag == "f16_tables"))
        self.assertEqual(model.header.quantization, QUANTIZATION_INT8)
        self.assertEqual(model.entries["embedding.source"].dtype, dtype)
        self.assertNotIn("embedding.source_scale", model.entries)
        stored = np.float16 if dtype == "f16" else np.float32
        np.testing.assert_array_equal(model.array("embedding.source"),
                                      weights["embedding.source"].astype(stored))
        self.assertEqual(model.entries["encoder.layers.0.ffn.in.weight"].dtype, "i8")
        self.assertIn("encoder.layers.0.ffn.in.weight_scale", model.entries)
        float_tensors, float_aliases = tiny_tensors(config)
        write_unchecked(self.path, config, float_tensors, float_aliases, **{flag: True})
        with self.assertRaisesRegex(ModelFileError, f"{flag} is set in a file of "
                                                    "quantization None"):
            read_model(self.path)
        return weights, tensors, aliases

    def test_round_trip_int8_with_f32_tables(self):
        """--fp32-embeddings: format version 9, the tables (and the tied output
        projection) f32 without scales, every projection int8 with its scales;
        a reader checks the flag against the version and the scheme."""
        weights, tensors, aliases = self.round_trip_float_tables(
            TINY, "f32_tables", "f32", fbs.F32_TABLES_FORMAT_VERSION)
        # The same tensors without the flag: the config implies int8 tables.
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
        with self.assertRaisesRegex(ModelFileError, "embedding.source_scale is missing"):
            read_model(self.path).check_against_config()
        # Nor for the per-tensor schemes (f32 tables anyway).
        with self.assertRaisesRegex(ValueError, "f32_tables is for per-row int8 files"):
            pack_tensors(TransformerConfig(**TINY), weights, "int8", per_tensor=True,
                         f32_tables=True)

    def test_round_trip_int8_with_f16_tables(self):
        """--fp16-embeddings: format version 10, the tables f16 without scales,
        the output projection untied and int8; a reader checks the flag
        against the version, the scheme and f32_tables; the writer refuses a
        tied output projection."""
        untied = dict(TINY, tied_output=False)
        _, tensors, aliases = self.round_trip_float_tables(
            untied, "f16_tables", "f16", fbs.F16_TABLES_FORMAT_VERSION)
        write_unchecked(self.path, untied, tensors, aliases, weight_dtype="int8", f16_tables=True)
        model = read_model(self.path)
        self.assertEqual(model.entries["output.weight"].dtype, "i8")
        self.assertIn("output.weight_scale", model.entries)
        write_unchecked(self.path, untied, tensors, aliases, weight_dtype="int8", f16_tables=True,
                        f32_tables=True)
        with self.assertRaisesRegex(ModelFileError, "f32_tables and f16_tables are both set"):
            read_model(self.path)
        tied, _ = tiny_tensors(TINY)
        with self.assertRaisesRegex(ValueError, "f16_tables needs every projection untied"):
            pack_tensors(TransformerConfig(**TINY), tied, "int8", f16_tables=True)

    def test_float_files_declare_no_quantization(self):
        tensors, aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases)
        self.assertEqual(read_model(self.path).header.quantization, QUANTIZATION_NONE)

    def test_flatc_reads_the_int8_header(self):
        flatc = shutil.which("flatc")
        if flatc is None:
            self.skipTest("flatc not installed")
        tensors, aliases, _ = tiny_int8_tensors(TINY)
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
        doc = self._flatc_json(flatc)
        self.assertEqual(doc["weight_dtype"], "I8")
        self.assertEqual(doc["quantization"], "Int8PerRowDynamic")
        dtypes = {t["name"]: t.get("dtype", "F32") for t in doc["tensors"]}
        self.assertEqual(dtypes["decoder.layers.0.cross_attn.kv.weight"], "I8")
        self.assertEqual(dtypes["decoder.layers.0.cross_attn.kv.weight_scale"], "F32")

    def _flatc_json(self, flatc):
        """The FlatBuffer of self.path decoded by flatc (with its verifier) as JSON."""
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
            return json.load(handle)

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
        model_end = model.segment_start + model.weights_size
        self.assertEqual(len(data), model_end + TRAILER_BYTES)
        self.assertEqual(data[model_end:model_end + 4], b"EMTC")
        self.assertEqual(struct.unpack_from("<II", data, model_end + 4),
                         (google_crc32c.value(data[:model.segment_start]),
                          google_crc32c.value(data[model.segment_start:model_end])))
        self.assertEqual(model.checksums, struct.unpack_from("<II", data, model_end + 4))
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
        doc = self._flatc_json(flatc)
        self.assertEqual(doc["format_version"], fbs.FORMAT_VERSION)
        self.assertEqual(doc["family_config_type"], "TransformerConfig")
        self.assertEqual(doc["family_config"]["d_model"], 8)
        self.assertNotIn("config", doc)
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

    def test_reader_rejects_quantization_that_contradicts_weight_dtype(self):
        int8, int8_aliases, _ = tiny_int8_tensors(TINY)
        fp32, fp32_aliases = tiny_tensors(TINY)
        fp16, fp16_aliases = tiny_tensors(TINY, np.float16)
        cases = [("int8 without scheme", int8, int8_aliases, "int8", QUANTIZATION_NONE),
                 ("fp32 with int8 scheme", fp32, fp32_aliases, "fp32", QUANTIZATION_INT8),
                 ("fp16 with int8 scheme", fp16, fp16_aliases, "fp16", QUANTIZATION_INT8)]
        for label, tensors, aliases, dtype, scheme in cases:
            with self.subTest(label):
                path = os.path.join(self.tmp, label.replace(" ", "_") + ".emt")
                write_unchecked(path, TINY, tensors, aliases, weight_dtype=dtype,
                                quantization=scheme)
                with self.assertRaisesRegex(ModelFileError,
                                            f"quantization {scheme} does not fit "
                                            f"weight_dtype {dtype}"):
                    read_model(path)

    def test_int8_file_needs_int8_matrices_and_scales(self):
        fp32, aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, fp32, aliases, weight_dtype="int8")
        with self.assertRaisesRegex(ModelFileError, "embedding.source_scale is missing"):
            read_model(self.path).check_against_config()
        tensors, aliases, _ = tiny_int8_tensors(TINY)
        tensors["encoder.layers.0.ffn.out.weight"] = np.zeros((8, 12), np.float32)
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
        with self.assertRaisesRegex(ModelFileError,
                                    "encoder.layers.0.ffn.out.weight has dtype float32, expected int8"):
            read_model(self.path).check_against_config()

    def test_fp32_file_rejects_int8_matrices(self):
        tensors, aliases = tiny_tensors(TINY)
        tensors["decoder.layers.0.ffn.in.weight"] = np.zeros((12, 8), np.int8)
        write_unchecked(self.path, TINY, tensors, aliases)
        with self.assertRaisesRegex(ModelFileError,
                                    "ffn.in.weight has dtype int8, expected float32"):
            read_model(self.path).check_against_config()

    def test_reader_rejects_minus_128(self):
        tensors, aliases, _ = tiny_int8_tensors(TINY)
        codes = tensors["decoder.layers.0.cross_attn.q.weight"].copy()
        codes[5, 2] = -128
        tensors["decoder.layers.0.cross_attn.q.weight"] = codes
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
        model = read_model(self.path)
        self.assertEqual(int(model.array("decoder.layers.0.cross_attn.q.weight")[5, 2]), -128)
        with self.assertRaisesRegex(ModelFileError,
                                    r"decoder.layers.0.cross_attn.q.weight: int8 code -128 "
                                    r"at \[5, "):
            model.check_against_config()

    def test_reader_rejects_bad_scales(self):
        for value in (-0.5, np.nan, np.inf):
            with self.subTest(value=value):
                tensors, aliases, _ = tiny_int8_tensors(TINY)
                scale = tensors["embedding.source_scale"].copy()
                scale[7] = value
                tensors["embedding.source_scale"] = scale
                write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
                expected = (r"embedding.source_scale: int8 row scale -0.5 at \[7\] is negative"
                            if value < 0 else r"embedding.source_scale: 1 non-finite value\(s\) "
                                              r"\(first (nan|inf) at \[7\]\)")
                with self.assertRaisesRegex(ModelFileError, expected):
                    read_model(self.path).check_against_config()

    def test_zero_scale_is_valid(self):
        tensors, aliases, _ = tiny_int8_tensors(TINY)
        tensors["encoder.layers.0.ffn.in.weight"][3] = 0
        tensors["encoder.layers.0.ffn.in.weight_scale"][3] = 0.0
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
        read_model(self.path).check_against_config()

    def test_writer_rejects_bad_alias(self):
        tensors, _ = tiny_tensors(TINY)
        with self.assertRaises(ValueError):
            write_unchecked(self.path, TINY, tensors, {"output.weight": "nope"})
        self.assertEqual(os.listdir(self.tmp), [])


if __name__ == "__main__":
    unittest.main()
