"""--from torch-rnn (sources/torch_rnn.py) end to end: tiny RnnSeq2Seq models of
the PyTorch trainer (../shared/training/train_rnn_attention.py, or
$EDGEMT_SHARED_DIR/training), every attention variant with both cells,
converted to fp32, fp16 and int8 files that are read back and compared,
tensor by tensor, with the state dict; and the converter's errors.

The trainer's class is imported from its file; without it the tests print
"SKIPPED:" and skip (ctest reports them as skipped)."""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools import convert, fbs
from edgemt_tools.errors import UserError
from edgemt_tools.model_file import read_model
from edgemt_tools.families.rnn import RnnConfig
from edgemt_tools.model_spec import MATRIX, expected_tensors
from edgemt_tools.quantize import quantize_rows
from edgemt_tools.sources import torch_rnn
from edgemt_tools.testing import tiny_spm_model

TRAINING_DIR = os.path.join(helpers.SHARED_DIR, "training")
TRAINER = os.path.join(TRAINING_DIR, "train_rnn_attention.py")
SKIP_MESSAGE = f"SKIPPED: the RNN trainer {TRAINER} is not there"

ATTENTIONS = ("luong-dot", "luong-general", "luong-concat", "bahdanau")
CELLS = ("lstm", "gru")
DTYPES = ("fp32", "fp16", "int8")
V, E, H, LAYERS = 96, 8, 16, 2


def trainer_class():
    """RnnSeq2Seq from the trainer's file, or None when it is absent."""
    if not os.path.isfile(TRAINER):
        return None
    if TRAINING_DIR not in sys.path:
        sys.path.insert(0, TRAINING_DIR)
    import train_rnn_attention  # noqa: E402 - from ../shared/training
    return train_rnn_attention.RnnSeq2Seq


def require_trainer():
    cls = trainer_class()
    if cls is None:
        print(SKIP_MESSAGE, file=sys.stderr)
        raise unittest.SkipTest(SKIP_MESSAGE)
    return cls


def trainer_config(attention, cell, layers=LAYERS):
    return dict(family="rnn_attention", attention=attention, cell=cell, vocab_size=V,
                emb_dim=E, hidden=H, layers=layers, pad_id=0, bos_id=2, eos_id=3,
                src_lang="en", tgt_lang="de")


def make_state(model_class, config, seed):
    """A seeded RnnSeq2Seq's state dict (name -> float32 numpy). Weights are
    scaled by distinct factors so that no two tensors are alike."""
    import torch
    torch.manual_seed(seed)
    model = model_class(config)
    with torch.no_grad():
        for i, (_, param) in enumerate(model.named_parameters()):
            param.mul_(1.0 + 0.25 * (i % 5))
    return model, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def expected_mapping(config, state):
    """edgemt name -> the float32 array it must hold, written out here from
    the README's table (independently of the converter's key plan)."""
    att, h = config["attention"], config["hidden"]
    want = {"embedding.source": state["src_embed.weight"],
            "embedding.target": state["tgt_embed.weight"],
            "output.weight": state["out.weight"], "output.bias": state["out.bias"]}
    if att == "luong-general":
        want["attention.key"] = state["W.weight"]
    if att == "luong-concat":
        want["attention.query"] = state["Wa.weight"][:, :h]
        want["attention.key"] = state["Wa.weight"][:, h:]
        want["attention.v"] = state["va.weight"][0]
    if att == "bahdanau":
        want["attention.query"] = state["W1.weight"]
        want["attention.key"] = state["W2.weight"]
        want["attention.v"] = state["v.weight"][0]
    else:
        want["attention.combine"] = state["Wc.weight"]
    for stack in ("encoder", "decoder"):
        for k in range(config["layers"]):
            suffixes = ["", "_reverse"] if stack == "encoder" and att == "bahdanau" else [""]
            for suffix in suffixes:
                for part in ("ih", "hh"):
                    base = f"{stack}.layers.{k}.{part}{suffix}"
                    want[base + ".weight"] = state[f"{stack}.weight_{part}_l{k}{suffix}"]
                    want[base + ".bias"] = state[f"{stack}.bias_{part}_l{k}{suffix}"]
    return want


def expected_config(attention, cell, max_positions=256):
    variant = {
        "luong-dot": dict(score="Dot", query="Current", decoder_input="Embedding",
                          output="TanhCombine", bidirectional_encoder=False),
        "luong-general": dict(score="General", query="Current", decoder_input="Embedding",
                              output="TanhCombine", bidirectional_encoder=False),
        "luong-concat": dict(score="Additive", query="Current", decoder_input="Embedding",
                             output="TanhCombine", bidirectional_encoder=False),
        "bahdanau": dict(score="Additive", query="Previous", decoder_input="EmbeddingContext",
                         output="StateContext", bidirectional_encoder=True),
    }[attention]
    return RnnConfig(cell={"lstm": "Lstm", "gru": "Gru"}[cell], layers=LAYERS,
                     source_embedding_dim=E, target_embedding_dim=E, hidden=H, vocab_size=V,
                     source_vocab_size=0, max_positions=max_positions, query_bias=False,
                     combine_bias=False, **variant)


def run_convert(*args):
    """edgemt-convert in-process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = convert.main(list(args))
        except SystemExit as exit_:  # argparse usage errors
            status = exit_.code
    return status, out.getvalue(), err.getvalue()


class RoundTripTest(unittest.TestCase):
    """4 attentions x 2 cells x 3 dtypes: every tensor read back equals the
    state dict's (fp32 exactly, fp16 as numpy rounds it, int8 the codes and
    scales of quantize.py), in the table's order and shapes."""

    @classmethod
    def setUpClass(cls):
        cls.model_class = require_trainer()
        cls.tmp = tempfile.mkdtemp()
        cls.spm = os.path.join(cls.tmp, "spm.model")
        with open(cls.spm, "wb") as handle:
            handle.write(tiny_spm_model(V))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def write_checkpoint(self, attention, cell, seed=0, layers=LAYERS):
        import torch
        folder = os.path.join(self.tmp, f"{attention}-{cell}-{layers}")
        os.makedirs(folder, exist_ok=True)
        config = trainer_config(attention, cell, layers)
        model, state = make_state(self.model_class, config, seed)
        torch.save(model.state_dict(), os.path.join(folder, "model.pt"))
        with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        return folder, config, state

    def convert(self, folder, dtype, *extra):
        output = os.path.join(folder, f"model.{dtype}.emt")
        status, out, err = run_convert(
            "--from", "torch-rnn", "--checkpoint", os.path.join(folder, "model.pt"),
            "--config", os.path.join(folder, "config.json"), "--spm", self.spm,
            "--dtype", dtype, "-o", output, *extra)
        self.assertEqual(status, 0, err)
        self.assertIn("wrote", out)
        return output

    def check_file(self, path, dtype, config, state, want_config):
        model = read_model(path)
        model.check_against_config()
        header = model.header
        self.assertEqual(model.format_version, fbs.FORMAT_VERSION)
        raw = fbs.model_fb.Model.GetRootAs(model._data, 4)
        self.assertEqual(raw.FamilyConfigType(), fbs.FamilyConfig.RnnConfig)
        self.assertEqual(header.config, want_config)
        self.assertEqual(header.weight_dtype, dtype)
        self.assertEqual(header.quantization,
                         "Int8PerRowDynamic" if dtype == "int8" else "None")
        self.assertEqual((header.special_tokens.pad, header.special_tokens.unk,
                          header.special_tokens.bos, header.special_tokens.eos,
                          header.special_tokens.decoder_start), (0, 1, 2, 3, 2))
        self.assertEqual((header.source_language, header.target_language), ("en", "de"))
        with open(self.spm, "rb") as handle:
            self.assertEqual(header.tokenizer_model, handle.read())
        self.assertTrue(header.append_eos_to_source)
        self.assertIsNone(header.target_tokenizer)
        self.assertIsNone(header.source_pieces)
        decoding = header.decoding
        self.assertEqual((decoding.rules, decoding.beam_size, decoding.length_penalty,
                          decoding.max_len_a, decoding.max_len_b, decoding.banned_tokens),
                         ("edgemt", 1, 1.0, 0.0, 60.0, (0, 2)))
        self.assertEqual(header.provenance.source_format, "torch-rnn")
        self.assertEqual(header.provenance.source_checkpoint, "model.pt")
        self.assertEqual(len(header.provenance.source_sha256), 64)

        # Names, order (the weight segment follows the table) and shapes.
        specs = expected_tensors(want_config, dtype)
        by_offset = sorted(model.entries, key=lambda n: model.entries[n].offset)
        self.assertEqual(by_offset, list(specs))
        for name, spec in specs.items():
            self.assertEqual(model.entries[name].shape, spec.shape, name)

        # Values, against the state dict.
        want = expected_mapping(config, state)
        self.assertEqual(sorted(want), sorted(n for n in specs if not n.endswith("_scale")))
        for name, array in want.items():
            array = np.asarray(array, dtype=np.float32)
            got = model.array(name)
            self.assertEqual(got.shape, array.shape, name)
            if specs[name].kind != MATRIX or dtype == "fp32":
                self.assertEqual(got.dtype, np.float32, name)
                np.testing.assert_array_equal(got, array, name)
            elif dtype == "fp16":
                self.assertEqual(got.dtype, np.float16, name)
                np.testing.assert_array_equal(got, array.astype(np.float16), name)
            else:
                codes, scale = quantize_rows(array)
                self.assertEqual(got.dtype, np.int8, name)
                np.testing.assert_array_equal(got, codes, name)
                np.testing.assert_array_equal(model.array(name + "_scale"), scale, name)
                np.testing.assert_allclose(got * scale[:, None], array, rtol=0,
                                           atol=float(scale.max()) / 2 + 1e-7)

    def test_every_variant_and_dtype(self):
        for attention in ATTENTIONS:
            for cell in CELLS:
                folder, config, state = self.write_checkpoint(attention, cell,
                                                              seed=ATTENTIONS.index(attention))
                for dtype in DTYPES:
                    with self.subTest(attention=attention, cell=cell, dtype=dtype):
                        path = self.convert(folder, dtype)
                        self.check_file(path, dtype, config, state,
                                        expected_config(attention, cell))

    def test_shapes_follow_the_trainer(self):
        """The README's shapes, spelled out: gates x units, the bahdanau
        decoder's [emb; context] input and its [V, 2H] output."""
        folder, _, _ = self.write_checkpoint("bahdanau", "lstm")
        model = read_model(self.convert(folder, "fp32"))
        shapes = {n: e.shape for n, e in model.entries.items()}
        self.assertEqual(shapes["encoder.layers.0.ih.weight"], (4 * H // 2, E))
        self.assertEqual(shapes["encoder.layers.0.hh_reverse.weight"], (4 * H // 2, H // 2))
        self.assertEqual(shapes["encoder.layers.1.ih_reverse.weight"], (4 * H // 2, H))
        self.assertEqual(shapes["decoder.layers.0.ih.weight"], (4 * H, E + H))
        self.assertEqual(shapes["decoder.layers.1.ih.weight"], (4 * H, H))
        self.assertEqual(shapes["output.weight"], (V, 2 * H))
        self.assertEqual(shapes["attention.v"], (H,))
        self.assertNotIn("attention.combine", shapes)
        folder, _, _ = self.write_checkpoint("luong-concat", "gru")
        model = read_model(self.convert(folder, "fp32"))
        shapes = {n: e.shape for n, e in model.entries.items()}
        self.assertEqual(shapes["encoder.layers.0.ih.weight"], (3 * H, E))
        self.assertEqual(shapes["decoder.layers.0.ih.weight"], (3 * H, E))
        self.assertEqual(shapes["attention.combine"], (H, 2 * H))
        self.assertEqual(shapes["attention.query"], (H, H))
        self.assertNotIn("encoder.layers.0.ih_reverse.weight", shapes)

    def test_one_layer_and_max_positions(self):
        folder, config, state = self.write_checkpoint("luong-general", "lstm", layers=1)
        path = self.convert(folder, "fp32", "--max-positions", "512")
        cfg = read_model(path).header.config
        self.assertEqual((cfg.layers, cfg.max_positions), (1, 512))
        self.check_file(path, "fp32", config, state,
                        RnnConfig(**dict(expected_config("luong-general", "lstm", 512).__dict__,
                                         layers=1)))

    def test_command_line_tool(self):
        """The installed script, as a user runs it (one subprocess)."""
        folder, _, _ = self.write_checkpoint("luong-dot", "lstm")
        output = os.path.join(folder, "cli.emt")
        result = helpers.run_tool(
            "edgemt-convert", "--from", "torch-rnn", "--checkpoint",
            os.path.join(folder, "model.pt"), "--config", os.path.join(folder, "config.json"),
            "--spm", self.spm, "--dtype", "int8", "-o", output)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Int8PerRowDynamic", result.stdout)
        self.assertEqual(read_model(output).header.provenance.source_format, "torch-rnn")


class ErrorTest(unittest.TestCase):
    """Bad configs and checkpoints: UserError, one line, exit 1, nothing written."""

    @classmethod
    def setUpClass(cls):
        cls.model_class = require_trainer()
        cls.tmp = tempfile.mkdtemp()
        cls.spm = os.path.join(cls.tmp, "spm.model")
        with open(cls.spm, "wb") as handle:
            handle.write(tiny_spm_model(V))
        cls.config = trainer_config("luong-concat", "gru")
        cls.model, cls.state = make_state(cls.model_class, cls.config, 7)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def files(self, name, config=None, state=None):
        """Write config.json and model.pt (a state dict) into a new folder."""
        import torch
        folder = os.path.join(self.tmp, name)
        os.makedirs(folder)
        with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as handle:
            json.dump(config if config is not None else self.config, handle)
        state = state if state is not None else self.state
        torch.save({k: torch.from_numpy(np.asarray(v)) for k, v in state.items()},
                   os.path.join(folder, "model.pt"))
        return folder

    def assert_cli_error(self, folder, pattern, *extra, source="torch-rnn", code=1):
        output = os.path.join(folder, "out", "m.emt")
        os.makedirs(os.path.dirname(output))
        status, _, err = run_convert(
            "--from", source, "--checkpoint", os.path.join(folder, "model.pt"),
            "--config", os.path.join(folder, "config.json"), "--spm", self.spm,
            "--dtype", "fp32", "-o", output, *extra)
        self.assertEqual(status, code, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertRegex(lines[0], r"^edgemt-convert: error: ")
        self.assertRegex(lines[0], pattern)
        self.assertEqual(os.listdir(os.path.dirname(output)), [])

    def test_unknown_attention(self):
        config = dict(self.config, attention="luong-location")
        with self.assertRaisesRegex(UserError, "attention 'luong-location' unknown"):
            torch_rnn.check_config(config)
        folder = self.files("attention", config=config)
        self.assert_cli_error(folder, r"config .*config.json: attention 'luong-location' "
                                      r"unknown \(known: luong-dot, luong-general, "
                                      r"luong-concat, bahdanau\)")

    def test_unknown_cell(self):
        self.assert_cli_error(self.files("cell", config=dict(self.config, cell="rnn_tanh")),
                              "cell 'rnn_tanh' unknown")

    def test_missing_config_key(self):
        config = dict(self.config)
        del config["hidden"]
        self.assert_cli_error(self.files("nohidden", config=config), "missing key 'hidden'")

    def test_missing_state_key(self):
        state = dict(self.state)
        del state["Wa.weight"]
        with self.assertRaisesRegex(UserError, r"missing 1 key\(s\).*: Wa.weight"):
            torch_rnn.convert_state_dict(state, self.config)
        self.assert_cli_error(self.files("missing", state=state),
                              r"checkpoint is missing 1 key\(s\) that attention 'luong-concat' "
                              r"with 2 layer\(s\) needs: Wa.weight")

    def test_missing_layer(self):
        state = {k: v for k, v in self.state.items() if not k.endswith("_l1")}
        self.assert_cli_error(self.files("layer", state=state),
                              r"missing 8 key\(s\).*encoder.weight_ih_l1")

    def test_unexpected_key(self):
        state = dict(self.state, **{"W.weight": np.zeros((H, H), np.float32)})
        self.assert_cli_error(self.files("unexpected", state=state),
                              r"1 unexpected key\(s\) for attention 'luong-concat'.*W.weight")

    def test_config_disagrees_with_checkpoint(self):
        self.assert_cli_error(self.files("hidden", config=dict(self.config, hidden=32)),
                              r"shape mismatch: Wa.weight is \[16, 32\], the config implies "
                              r"\[32, 64\]")

    def test_non_finite(self):
        state = dict(self.state)
        bad = state["va.weight"].copy()
        bad[0, 3] = np.inf
        state["va.weight"] = bad
        self.assert_cli_error(self.files("inf", state=state), "va.weight contains non-finite")

    def test_odd_hidden_for_bahdanau(self):
        config = dict(trainer_config("bahdanau", "lstm"), hidden=15)
        self.assert_cli_error(self.files("odd", config=config), "hidden 15 must be even")

    def test_wrong_source_is_named(self):
        folder = self.files("wrong")
        self.assert_cli_error(folder, "use --from torch-rnn", source="torch")

    def test_max_positions_only_for_torch_rnn(self):
        folder = self.files("maxpos")
        self.assert_cli_error(folder, "--max-positions is for --from torch-rnn",
                              "--max-positions", "64", source="torch", code=2)

    def test_max_positions_beyond_the_limit(self):
        folder = self.files("maxpos2")
        self.assert_cli_error(folder, r"--max-positions = 70000 is out of range",
                              "--max-positions", "70000")

    def test_exit_status_of_the_script(self):
        folder = self.files("script", config=dict(self.config, attention="nope"))
        result = helpers.run_tool(
            "edgemt-convert", "--from", "torch-rnn", "--checkpoint",
            os.path.join(folder, "model.pt"), "--config", os.path.join(folder, "config.json"),
            "--spm", self.spm, "--dtype", "fp32", "-o", os.path.join(folder, "m.emt"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("attention 'nope' unknown", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(folder, "m.emt")))


if __name__ == "__main__":
    unittest.main()
