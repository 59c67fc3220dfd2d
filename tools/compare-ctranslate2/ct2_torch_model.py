"""Builds a CTranslate2 model directory from edgemt's own nn.Transformer layout
(DIR/model.pt state_dict, DIR/config.json, DIR/spm.model; see the model
folder's README.md), with CTranslate2's public Python spec API.

The mapping (post-norm torch.nn.Transformer -> ctranslate2.specs.TransformerSpec):

  embed.weight                         encoder/decoder embeddings and decoder.projection.weight
  generator.bias                       decoder.projection.bias
  (not in the state dict)              position_encodings.encodings = interleaved sinusoids,
                                       PE[p,2i] = sin(p/10000^(2i/d)), PE[p,2i+1] = cos(...)
  scale_embeddings = True              embeddings times sqrt(d) (= config embedding_scale)
  *.self_attn.in_proj_{weight,bias}    self-attention linear[0] (Q|K|V fused, as stored)
  decoder *.multihead_attn.in_proj_*   cross-attention linear[0] = Q rows [0:d],
                                       linear[1] = K|V rows [d:3d]
  *.{self_attn,multihead_attn}.out_proj  linear[-1]
  encoder layer norm1 / norm2          self_attention.layer_norm / ffn.layer_norm
  decoder layer norm1 / norm2 / norm3  self_attention.layer_norm / attention.layer_norm /
                                       ffn.layer_norm
  linear1 / linear2                    ffn.linear_0 / ffn.linear_1
  transformer.{encoder,decoder}.norm   {encoder,decoder}.layer_norm (see below)

TransformerSpec declares the stack-final `layer_norm` only for pre-norm models,
but CTranslate2's runtime applies `<scope>/layer_norm` whenever the model has
one (an optional layer, after the last layer), whatever `<scope>/pre_norm`
says. Specs are frozen (no attribute can be added after construction), so we
build the spec with pre_norm=True, which declares both final norms, and then
set encoder.pre_norm = decoder.pre_norm = False: post-norm layers followed by
the final norms, as nn.Transformer computes.

usage (also imported by compare.py):
  python ct2_torch_model.py MODEL_DIR OUTPUT_DIR [--quantization int8]
"""

import argparse
import json
import math
import os
import shutil

import numpy as np


def interleaved_positions(rows: int, d: int) -> np.ndarray:
    position = np.arange(rows, dtype=np.float64)[:, None]
    i2 = np.arange(0, d, 2, dtype=np.float64)[None, :]
    angle = position / np.power(10000.0, i2 / d)
    table = np.zeros((rows, d), dtype=np.float64)
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle)
    return table.astype(np.float32)


def spm_pieces(spm_path: str) -> list:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=spm_path)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def _load_state_dict(path: str) -> dict:
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # an older torch without weights_only
        state = torch.load(path, map_location="cpu")
    if isinstance(state, dict) and "state_dict" in state and "embed.weight" not in state:
        state = state["state_dict"]
    return {k: v.detach().float().numpy().copy() for k, v in state.items()}


def build_spec(model_dir: str):
    import ctranslate2
    from ctranslate2.specs import common_spec, transformer_spec

    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    if config.get("norm_first", False):
        raise ValueError("this mapping is for the post-norm model (norm_first false)")
    if config.get("activation", "relu") != "relu":
        raise ValueError("only relu is mapped")
    if config.get("positional_encoding", "sinusoidal_interleaved") != "sinusoidal_interleaved":
        raise ValueError("only interleaved sinusoidal positions are mapped")
    d = int(config["d_model"])
    scale = float(config.get("embedding_scale", math.sqrt(d)))
    if abs(scale - math.sqrt(d)) > 1e-6:
        raise ValueError("CTranslate2 scales embeddings by sqrt(d) only; config says %g" % scale)

    w = _load_state_dict(os.path.join(model_dir, "model.pt"))
    pieces = spm_pieces(os.path.join(model_dir, "spm.model"))
    if len(pieces) != w["embed.weight"].shape[0]:
        raise ValueError("spm has %d pieces, embed.weight %d rows"
                         % (len(pieces), w["embed.weight"].shape[0]))
    if pieces[:4] != ["<pad>", "<unk>", "<s>", "</s>"]:
        raise ValueError("expected pieces 0..3 <pad> <unk> <s> </s>, got %r" % pieces[:4])

    # pre_norm=True only so that the spec declares each stack's final
    # `layer_norm` (specs are frozen: no attribute can be added afterwards);
    # the stacks' pre_norm flags, which the runtime reads, are then set to
    # False: post-norm layers plus the final norm, as nn.Transformer.
    spec = transformer_spec.TransformerSpec.from_config(
        (int(config["encoder_layers"]), int(config["decoder_layers"])),
        int(config["heads"]),
        pre_norm=True,
        activation=common_spec.Activation.RELU,
    )
    spec.encoder.pre_norm = False
    spec.decoder.pre_norm = False
    spec.config.layer_norm_epsilon = 1e-5
    spec.config.unk_token = pieces[int(config.get("unk_id", 1))]
    spec.config.bos_token = pieces[int(config.get("bos_id", 2))]
    spec.config.eos_token = pieces[int(config.get("eos_id", 3))]
    spec.config.decoder_start_token = spec.config.bos_token

    embed = w["embed.weight"]
    positions = interleaved_positions(int(config["max_len"]), d)

    def layer_norm(s, prefix):
        s.gamma = w[prefix + ".weight"]
        s.beta = w[prefix + ".bias"]

    def linear(s, prefix):
        s.weight = w[prefix + ".weight"]
        s.bias = w[prefix + ".bias"]

    def self_attention(s, prefix):
        s.linear[0].weight = w[prefix + ".in_proj_weight"]
        s.linear[0].bias = w[prefix + ".in_proj_bias"]
        linear(s.linear[-1], prefix + ".out_proj")

    def cross_attention(s, prefix):
        qkv_w, qkv_b = w[prefix + ".in_proj_weight"], w[prefix + ".in_proj_bias"]
        s.linear[0].weight = qkv_w[:d].copy()
        s.linear[0].bias = qkv_b[:d].copy()
        s.linear[1].weight = qkv_w[d:].copy()
        s.linear[1].bias = qkv_b[d:].copy()
        linear(s.linear[-1], prefix + ".out_proj")

    for stack_name in ("encoder", "decoder"):
        stack = getattr(spec, stack_name)
        embeddings = stack.embeddings if isinstance(stack.embeddings, list) else [stack.embeddings]
        for e in embeddings:
            e.weight = embed
        stack.scale_embeddings = True
        stack.position_encodings.encodings = positions
        layer_norm(stack.layer_norm, "transformer.%s.norm" % stack_name)
        for i, layer in enumerate(stack.layer):
            p = "transformer.%s.layers.%d" % (stack_name, i)
            self_attention(layer.self_attention, p + ".self_attn")
            layer_norm(layer.self_attention.layer_norm, p + ".norm1")
            linear(layer.ffn.linear_0, p + ".linear1")
            linear(layer.ffn.linear_1, p + ".linear2")
            if stack_name == "encoder":
                layer_norm(layer.ffn.layer_norm, p + ".norm2")
            else:
                cross_attention(layer.attention, p + ".multihead_attn")
                layer_norm(layer.attention.layer_norm, p + ".norm2")
                layer_norm(layer.ffn.layer_norm, p + ".norm3")
    spec.decoder.projection.weight = embed
    spec.decoder.projection.bias = w["generator.bias"]

    spec.register_source_vocabulary(pieces)
    spec.register_target_vocabulary(pieces)
    return spec


def convert(model_dir: str, output_dir: str, quantization=None) -> str:
    """Writes the CTranslate2 model directory (replacing output_dir)."""
    spec = build_spec(model_dir)
    spec.validate()
    spec.optimize(quantization=quantization)
    if os.path.exists(output_dir):
        shutil.rmtree(output_dir)
    os.makedirs(output_dir)
    spec.save(output_dir)
    return output_dir


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("output_dir")
    parser.add_argument("--quantization", default=None, choices=["int8", "float32"])
    args = parser.parse_args()
    print(convert(args.model_dir, args.output_dir, args.quantization))


if __name__ == "__main__":
    main()
