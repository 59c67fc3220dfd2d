"""Cross-attention weights of the Transformer family through `import edgemt`
(Limits::attention, Translation::attention), against PyTorch's own
nn.MultiheadAttention weights (need_weights=True; average_attn_weights for
the mean over heads) for the same model and the same target prefix.

For each model: edgemt translates (greedy and beam 4) with the weights of a
chosen decoder layer and head (default: the last layer, the mean over its
heads); PyTorch then runs the decoder teacher-forced on [bos] + the tokens
edgemt returned, with the chosen layer's cross-attention recording its
weights; row t of edgemt's weights (the step that chose token t, and the
step that chose EOS) must equal PyTorch's query row t within 1e-4. Every
row sums to 1 within 1e-5, and asking for the weights changes no
translation or score.

Models:
  Tiny*        random tiny models (post-norm and pre-norm, 2 layers, 2
               heads) made here with edgemt_tools.testing; always run.
  Checkpoint*  the trained en->de checkpoint of ../shared (fp32), on 24
               test_2016 sentences; prints "SKIPPED:" when ../shared is absent.

Run by ctest (runtime.python.transformer_attention and
runtime.python.transformer_attention_checkpoint).
"""

import os
import subprocess
import sys
import tempfile
import unittest

import json
import math

import numpy as np
import torch
from torch import nn

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

SHARED = os.environ.get("EDGEMT_SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))
CHECKPOINT = os.path.join(SHARED, "models", "multi30k-en-de")
SOURCES = os.path.join(ROOT, "models", "reference", "test_2016_flickr.en")
TOLERANCE = 1e-4
ROW_SUM_TOLERANCE = 1e-5


def convert(paths, output):
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "edgemt-convert"), "--from",
                    "torch", "--checkpoint", paths["checkpoint"], "--config", paths["config"],
                    "--spm", paths["spm"], "--dtype", "fp32", "-o", output],
                   check=True, capture_output=True)


class Reference(nn.Module):
    """The checkpoint's model as ../shared/models/multi30k-en-de/README.md
    gives it (embed, transformer, generator; interleaved sinusoidal
    positions; tied output), written here so that this test does not share
    code with the converter it checks."""

    def __init__(self, config):
        super().__init__()
        assert config["positional_encoding"] == "sinusoidal_interleaved", config
        d = config["d_model"]
        self.embed = nn.Embedding(config["vocab_size"], d)
        self.transformer = nn.Transformer(
            d_model=d, nhead=config["heads"], num_encoder_layers=config["encoder_layers"],
            num_decoder_layers=config["decoder_layers"], dim_feedforward=config["ffn_dim"],
            dropout=0.0, activation=config["activation"], batch_first=True,
            norm_first=config["norm_first"])
        self.generator = nn.Linear(d, config["vocab_size"])
        self.generator.weight = self.embed.weight
        self.scale = float(config["embedding_scale"])
        positions = torch.arange(config["max_len"], dtype=torch.float64)[:, None]
        rates = 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
        table = torch.zeros(config["max_len"], d, dtype=torch.float64)
        table[:, 0::2] = torch.sin(positions / rates)
        table[:, 1::2] = torch.cos(positions / rates)
        self.register_buffer("positions", table.float(), persistent=False)

    def embed_tokens(self, ids):
        return self.embed(ids) * self.scale + self.positions[: ids.shape[1]]

    def encode(self, src):
        return self.transformer.encoder(self.embed_tokens(src))

    def next_logits(self, tgt, memory):
        t = tgt.shape[1]
        causal = torch.triu(torch.full((t, t), -math.inf), diagonal=1)
        h = self.transformer.decoder(self.embed_tokens(tgt), memory, tgt_mask=causal)
        return self.generator(h[:, -1])


def load_torch_model(paths):
    with open(paths["config"], encoding="utf-8") as f:
        config = json.load(f)
    model = Reference(config)
    model.load_state_dict(torch.load(paths["checkpoint"], map_location="cpu"), strict=True)
    model.eval()
    return model, config


def write_tiny_checkpoint(folder, norm_first):
    """A random tiny model (edgemt_tools.testing: d 16, 2 heads, 2+2 layers,
    the README's layout) and its sources, written by a separate process (its
    `edgemt` flatbuffers package is not this `edgemt` module)."""
    script = ("import json, sys; from edgemt_tools import testing; "
              "config = testing.tiny_torch_config(norm_first=sys.argv[2] == '1'); "
              "testing.write_tiny_checkpoint(sys.argv[1], config, seed=7); "
              "print(json.dumps(testing._TINY_CORPUS.strip().split('\\n')))")
    done = subprocess.run(["/usr/bin/python3", "-c", script, folder, "1" if norm_first else "0"],
                          check=True, capture_output=True, text=True,
                          cwd=os.path.join(ROOT, "tools"))
    paths = {"checkpoint": os.path.join(folder, "model.pt"),
             "config": os.path.join(folder, "config.json"),
             "spm": os.path.join(folder, "spm.model")}
    return paths, json.loads(done.stdout)


def pytorch_cross_attention(model, source, prefix, layer, head):
    """Decoder layer `layer`'s cross-attention weights for every query of
    `prefix` ([bos, y1, ...]) over `source`: [len(prefix), len(source)],
    head `head` or (head -1) the mean over heads, as nn.MultiheadAttention
    returns them with need_weights=True."""
    attention = model.transformer.decoder.layers[layer].multihead_attn
    original = attention.forward
    recorded = []

    def recording_forward(query, key, value, **kwargs):
        kwargs["need_weights"] = True
        kwargs["average_attn_weights"] = head < 0
        output, weights = original(query, key, value, **kwargs)
        recorded.append(weights)
        return output, weights

    attention.forward = recording_forward
    try:
        with torch.no_grad():
            memory = model.encode(torch.tensor([source]))
            model.next_logits(torch.tensor([prefix]), memory)
    finally:
        del attention.forward  # the class's forward again
    weights = recorded[0][0]  # [t, S] (mean) or [heads, t, S]
    return (weights if head < 0 else weights[head]).numpy()


class AttentionCheck:
    """Checks shared by the tiny models and the checkpoint (mixin)."""

    model_path = None
    torch_model = None
    config = None
    sources = None

    def translate(self, beam, layer=-1, head=-1, attention=True):
        translator = edgemt.Translator(self.edgemt_model, max_batch=8, max_beam=4,
                                       attention=True, attention_layer=layer,
                                       attention_head=head)
        results = []
        for first in range(0, len(self.sources), 8):
            results += translator.translate_ids(self.sources[first:first + 8], beam_size=beam,
                                                attention=attention)
        return results

    def check_against_pytorch(self, beam, layer, head):
        results = self.translate(beam, layer, head)
        torch_layer = layer if layer >= 0 else self.config["decoder_layers"] - 1
        worst = 0.0
        for source, result in zip(self.sources, results):
            rows = np.array(result.attention, dtype=np.float64)
            tokens = list(result.tokens)
            self.assertIn(len(rows), (len(tokens), len(tokens) + 1))
            self.assertEqual(rows.shape[1], len(source))
            np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=ROW_SUM_TOLERANCE)
            prefix = [self.config["bos_id"]] + tokens
            expected = pytorch_cross_attention(self.torch_model, source, prefix[:len(rows)],
                                               torch_layer, head)
            worst = max(worst, float(np.abs(rows - expected).max()))
        print(f"beam {beam}, layer {layer}, head {head}: largest difference {worst:.2e} "
              f"over {len(results)} sentences")
        self.assertLess(worst, TOLERANCE)

    def test_default_is_last_layer_mean_of_heads_greedy_and_beam(self):
        for beam in (1, 4):
            self.check_against_pytorch(beam, -1, -1)

    def test_chosen_layer_and_head(self):
        layers = self.config["decoder_layers"]
        heads = self.config["heads"]
        for layer, head in ((0, -1), (0, 0), (layers - 1, heads - 1), (-1, 1)):
            self.check_against_pytorch(1, layer, head)
        self.check_against_pytorch(4, 0, heads - 1)

    def test_asking_for_weights_changes_nothing(self):
        plain = edgemt.Translator(self.edgemt_model, max_batch=8, max_beam=4)
        for beam in (1, 4):
            expected = []
            for first in range(0, len(self.sources), 8):
                expected += plain.translate_ids(self.sources[first:first + 8], beam_size=beam)
            with_weights = self.translate(beam)
            without = self.translate(beam, attention=False)
            for a, b, c in zip(expected, with_weights, without):
                self.assertEqual(list(a.tokens), list(b.tokens))
                self.assertEqual(list(a.tokens), list(c.tokens))
                self.assertEqual(a.score, b.score)
                self.assertIsNone(c.attention)

    def test_choices_outside_the_model_are_refused(self):
        layers = self.config["decoder_layers"]
        heads = self.config["heads"]
        for layer, head in ((layers, -1), (-1, heads), (-2, -1), (0, -5)):
            with self.assertRaises(edgemt.Error) as caught:
                edgemt.Translator(self.edgemt_model, max_batch=2, attention=True,
                                  attention_layer=layer, attention_head=head)
            self.assertEqual(caught.exception.code, "invalid-argument")
            self.assertIn(f"layers 0..{layers - 1} and heads 0..{heads - 1}", str(caught.exception))


def encode_lines(spm_path, lines, eos):
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=spm_path)
    return [sp.encode(line) + [eos] for line in lines]


class TinyModels:
    """A random tiny Transformer written, converted and loaded in setUpClass."""

    norm_first = False

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="edgemt-transformer-attention-")
        paths, lines = write_tiny_checkpoint(cls.tmp.name, cls.norm_first)
        cls.model_path = os.path.join(cls.tmp.name, "tiny.emt")
        convert(paths, cls.model_path)
        cls.edgemt_model = edgemt.Model(cls.model_path)
        cls.torch_model, cls.config = load_torch_model(paths)
        # The tiny models have 40 positions.
        cls.sources = [ids for ids in encode_lines(paths["spm"], lines, cls.config["eos_id"])
                       if len(ids) <= 30]

    @classmethod
    def tearDownClass(cls):
        cls.edgemt_model = None
        cls.tmp.cleanup()


class TinyPostNorm(TinyModels, AttentionCheck, unittest.TestCase):
    norm_first = False


class TinyPreNorm(TinyModels, AttentionCheck, unittest.TestCase):
    norm_first = True


class CheckpointModel(AttentionCheck, unittest.TestCase):
    """The trained en->de checkpoint of ../shared, fp32."""

    @classmethod
    def setUpClass(cls):
        paths = {"checkpoint": os.path.join(CHECKPOINT, "model.pt"),
                 "config": os.path.join(CHECKPOINT, "config.json"),
                 "spm": os.path.join(CHECKPOINT, "spm.model")}
        if not all(os.path.isfile(p) for p in paths.values()):
            print("SKIPPED: ../shared checkpoint not found", file=sys.stderr)
            raise unittest.SkipTest("../shared checkpoint not found")
        cls.tmp = tempfile.TemporaryDirectory(prefix="edgemt-transformer-attention-")
        cls.model_path = os.path.join(cls.tmp.name, "fp32.emt")
        convert(paths, cls.model_path)
        cls.edgemt_model = edgemt.Model(cls.model_path)
        cls.torch_model, cls.config = load_torch_model(paths)
        with open(SOURCES, encoding="utf-8") as f:
            lines = f.read().split("\n")[:24]
        cls.sources = encode_lines(paths["spm"], lines, cls.config["eos_id"])

    @classmethod
    def tearDownClass(cls):
        cls.edgemt_model = None
        cls.tmp.cleanup()


if __name__ == "__main__":
    unittest.main()
