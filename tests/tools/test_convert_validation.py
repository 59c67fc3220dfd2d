"""The converter never writes a file the runtime refuses (issue 13, defect 7).

Before: a LayerNorm epsilon of 0 or -1, a NaN embedding scale or a max_len of
70,000 were written and only refused when the file was loaded; an empty .pt
gave an IndexError traceback; a config with 10^9 layers ran for minutes.
Now every input and every value written is validated first, the error is
one line naming the key or tensor, and nothing is written.

Conversions run in this process (edgemt_tools.convert.main) so that torch
is imported once; test_convert.py runs the command itself.
"""

import contextlib
import io
import json
import os
import shutil
import tempfile
import time
import unittest

import numpy as np
import torch

import helpers
from edgemt_tools import convert, limits
from edgemt_tools.errors import UserError
from edgemt_tools.model_file import read_model, write_model
from edgemt_tools.testing import tiny_spm_model, tiny_state_dict, tiny_torch_config, \
    write_tiny_checkpoint
from edgemt_tools.sources.torch import build, read_config
from edgemt_tools.writer import pack


class ConverterValidationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp)
        cls.config = tiny_torch_config()
        cls.state = tiny_state_dict(cls.config)
        cls.out_dir = os.path.join(cls.tmp, "out")
        os.makedirs(cls.out_dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def convert(self, dtype="fp32", **paths):
        """Runs edgemt-convert in-process; returns (exit status, stderr)."""
        paths = dict(self.paths, **paths)
        output = os.path.join(self.out_dir, "model.emt")
        argv = ["--from", "torch", "--checkpoint", paths["checkpoint"], "--config",
                paths["config"], "--spm", paths["spm"], "--dtype", dtype, "-o", output]
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            code = convert.main(argv)
        return code, stderr.getvalue()

    def assert_refused(self, code, stderr, *fragments):
        self.assertEqual(code, 1, stderr)
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertTrue(lines[0].startswith("edgemt-convert: error: "), stderr)
        self.assertNotIn("Traceback", stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertEqual(os.listdir(self.out_dir), [], "nothing may be written")

    def config_file(self, **changes):
        config = dict(self.config, **changes)
        path = os.path.join(self.tmp, "config-changed.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        return path

    def checkpoint_file(self, state, name="changed.pt"):
        path = os.path.join(self.tmp, name)
        torch.save(state, path)
        return path

    # -- config.json ----------------------------------------------------------------
    def test_the_configs_of_the_issue_are_refused_naming_the_key(self):
        cases = [({"layer_norm_eps": 0}, "layer_norm_eps = 0 must be finite and greater than 0"),
                 ({"layer_norm_eps": -1}, "layer_norm_eps = -1 must be finite and greater than 0"),
                 ({"layer_norm_eps": "1e-5"}, "layer_norm_eps = '1e-5' is not a number"),
                 ({"embedding_scale": 0.0}, "embedding_scale = 0.0 must be finite"),
                 ({"embedding_scale": -4.0}, "embedding_scale = -4.0 must be finite"),
                 ({"max_len": 70000}, "max_len = 70000 is out of range (1 to 65536)"),
                 ({"encoder_layers": 65}, "encoder_layers = 65 is out of range (1 to 64)"),
                 ({"d_model": 16, "heads": 32}, "heads = 32 is out of range (1 to 16)"),
                 ({"vocab_size": (1 << 24) + 1}, "vocab_size = 16777217 is out of range"),
                 ({"ffn_dim": 0}, "ffn_dim = 0 is out of range")]
        for changes, message in cases:
            with self.subTest(changes=changes):
                self.assert_refused(*self.convert(config=self.config_file(**changes)), message)

    def test_nan_and_infinity_literals_are_not_json(self):
        for literal in ("NaN", "Infinity", "-Infinity"):
            with self.subTest(literal=literal):
                path = os.path.join(self.tmp, "literal.json")
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(json.dumps(self.config).replace('"embedding_scale": 4.0',
                                                                 f'"embedding_scale": {literal}'))
                self.assert_refused(*self.convert(config=path),
                                    f"{literal} is not a valid JSON number")

    def test_a_billion_layers_fail_at_once(self):
        """It used to enumerate 10^9 layers' tensors for minutes."""
        start = time.monotonic()
        self.assert_refused(*self.convert(config=self.config_file(decoder_layers=10 ** 9)),
                            "decoder_layers = 1000000000 is out of range (1 to 64)")
        self.assertLess(time.monotonic() - start, 30.0)

    # -- the checkpoint --------------------------------------------------------------
    def test_broken_checkpoints_give_one_line_not_a_traceback(self):
        empty = os.path.join(self.tmp, "empty.pt")
        open(empty, "wb").close()
        truncated = os.path.join(self.tmp, "truncated.pt")
        with open(self.paths["checkpoint"], "rb") as source, open(truncated, "wb") as target:
            target.write(source.read()[:1000])
        cases = [(empty, "cannot load checkpoint", "the file is empty"),
                 (truncated, "cannot load checkpoint"),
                 (self.tmp, "is not a regular file"),
                 (self.checkpoint_file([1, 2, 3], "list.pt"), "expected a state_dict"),
                 (self.checkpoint_file({"embed.weight": 3}, "scalar.pt"), "expected a state_dict"),
                 (self.paths["config"], "cannot load checkpoint")]
        for path, *fragments in cases:
            with self.subTest(path=os.path.basename(path)):
                self.assert_refused(*self.convert(checkpoint=path), *fragments)

    # -- acceptance 5: every NaN/Inf placement, every dtype ------------------------------
    def test_every_non_finite_placement_is_refused_in_every_dtype(self):
        placements = ["embed.weight",                                   # the embedding
                      "transformer.encoder.layers.0.linear1.weight",    # a linear
                      "transformer.decoder.layers.1.linear2.bias",      # a bias
                      "transformer.encoder.layers.0.norm1.weight",      # a norm
                      "transformer.decoder.norm.bias",                  # the final norm
                      "generator.weight",                               # the output projection
                      "generator.bias"]
        for key in placements:
            for value in (float("nan"), float("inf"), float("-inf")):
                state = {k: v.clone() for k, v in self.state.items()}
                state[key].view(-1)[3] = value
                path = self.checkpoint_file(state)
                for dtype in ("fp32", "fp16", "int8"):
                    with self.subTest(key=key, value=value, dtype=dtype):
                        self.assert_refused(*self.convert(dtype, checkpoint=path), key,
                                            "non-finite")

    def test_fp16_overflow_is_refused(self):
        state = {k: v.clone() for k, v in self.state.items()}
        state["transformer.encoder.layers.0.linear1.weight"][0, 0] = 70000.0
        path = self.checkpoint_file(state)
        self.assert_refused(*self.convert("fp16", checkpoint=path),
                            "encoder.layers.0.ffn.in.weight", "beyond the fp16 range")
        code, stderr = self.convert("fp32", checkpoint=path)
        self.assertEqual(code, 0, stderr)
        os.remove(os.path.join(self.out_dir, "model.emt"))


class WriterValidationTest(unittest.TestCase):
    """write_model itself, as any future checkpoint source would call it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp)
        cls.config = read_config(cls.paths["config"])
        with open(cls.paths["spm"], "rb") as handle:
            cls.spm = handle.read()
        spec = build(cls.paths["checkpoint"], cls.config, cls.spm, "en", "de", "test",
                     "2026-01-01T00:00:00Z")
        cls.built = {dtype: pack(spec, dtype) for dtype in ("fp32", "fp16", "int8")}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def write(self, dtype, change):
        """Applies change(header, tensors, aliases) -> header to a valid model
        and writes it; returns the UserError message (or None when written)."""
        header, tensors, aliases = self.built[dtype]
        tensors = {name: np.array(array) for name, array in tensors.items()}
        aliases = dict(aliases)
        header = change(header, tensors, aliases) or header
        folder = tempfile.mkdtemp(dir=self.tmp)
        path = os.path.join(folder, "model.emt")
        try:
            write_model(path, header, tensors, aliases)
        except UserError as err:
            self.assertEqual(os.listdir(folder), [], "nothing may be written")
            return str(err)
        read_model(path).check_against_config()
        return None

    def assert_refused(self, dtype, change, *fragments):
        message = self.write(dtype, change)
        self.assertIsNotNone(message, "write_model accepted it")
        self.assertNotIn("\n", message)
        for fragment in fragments:
            self.assertIn(fragment, message)

    def test_valid_models_are_written_in_every_dtype(self):
        for dtype in self.built:
            with self.subTest(dtype=dtype):
                self.assertIsNone(self.write(dtype, lambda h, t, a: None))

    def test_non_finite_values_in_any_stored_tensor(self):
        for dtype, name in (("fp32", "decoder.layers.0.ffn_norm.weight"),
                            ("fp32", "output.bias"),
                            ("fp16", "encoder.layers.1.self_attn.qkv.weight"),
                            ("int8", "embedding.source_scale"),
                            ("int8", "position.table")):
            for value in (np.nan, np.inf, -np.inf):
                def poison(header, tensors, aliases, name=name, value=value):
                    tensors[name].reshape(-1)[5] = value
                with self.subTest(dtype=dtype, name=name, value=value):
                    self.assert_refused(dtype, poison, f"tensor {name}", "non-finite")

    def test_int8_codes_and_scales(self):
        def code(header, tensors, aliases):
            tensors["decoder.layers.0.cross_attn.kv.weight"][2, 3] = -128
        self.assert_refused("int8", code, "decoder.layers.0.cross_attn.kv.weight",
                            "int8 code -128 at [2, 3]")

        def scale(header, tensors, aliases):
            tensors["encoder.layers.0.ffn.out.weight_scale"][1] = -0.25
        self.assert_refused("int8", scale, "encoder.layers.0.ffn.out.weight_scale", "negative")

    def test_tensor_table_must_be_what_the_config_implies(self):
        def shape(header, tensors, aliases):
            tensors["encoder.layers.0.ffn.in.weight"] = tensors["encoder.layers.0.ffn.in.weight"][:, :8]
        self.assert_refused("fp32", shape, "encoder.layers.0.ffn.in.weight has shape [32, 8]")

        def missing(header, tensors, aliases):
            del tensors["decoder.layers.1.ffn_norm.bias"]
        self.assert_refused("fp32", missing, "decoder.layers.1.ffn_norm.bias is missing")

        def extra(header, tensors, aliases):
            tensors["decoder.layers.9.ffn_norm.bias"] = np.zeros(16, np.float32)
        self.assert_refused("fp32", extra, "decoder.layers.9.ffn_norm.bias is not implied")

        def dtype(header, tensors, aliases):
            tensors["output.bias"] = tensors["output.bias"].astype(np.float16)
        self.assert_refused("fp16", dtype, "output.bias has dtype float16, expected float32")

        def untied(header, tensors, aliases):
            del aliases["embedding.target"]
            tensors["embedding.target"] = tensors["embedding.source"].copy()
        self.assert_refused("fp32", untied, "embedding.target", "share its bytes")

    def test_header_values(self):
        from dataclasses import replace

        def config(**changes):
            return lambda h, t, a: replace(h, config=replace(h.config, **changes))
        self.assert_refused("fp32", config(layer_norm_eps=0.0), "config layer_norm_eps = 0.0")
        self.assert_refused("fp32", config(embedding_scale=float("nan")),
                            "config embedding_scale = nan")
        self.assert_refused("fp32", config(max_positions=limits.MAX_POSITIONS + 1),
                            "config max_positions = 65537 is out of range")
        self.assert_refused("fp32", config(activation="tanh"), "config activation 'tanh'")
        self.assert_refused("fp32", lambda h, t, a: replace(
            h, special_tokens=replace(h.special_tokens, eos=96)),
            "special token eos = 96 is out of range (0 to 95)")
        self.assert_refused("fp32", lambda h, t, a: replace(h, source_language=""),
                            "source_language")
        self.assert_refused("fp32", lambda h, t, a: replace(h, tokenizer_model=b""),
                            "SentencePiece model is empty")
        self.assert_refused("fp32", lambda h, t, a: replace(h, tokenizer_model=b"\x0a\x03abc"),
                            "cannot load the SentencePiece model")
        self.assert_refused("fp32", lambda h, t, a: replace(h, tokenizer_model=tiny_spm_model(120)),
                            "120 pieces, more than the vocabulary's 96")


if __name__ == "__main__":
    unittest.main()
