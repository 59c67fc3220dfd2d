"""Helpers for tests (Python and runtime): tiny checkpoints and unchecked files.

`reseal` gives a model file edited by hand fresh checksums (format version 4
and later end in CRC-32Cs, which any edit breaks), as a hostile file would
have: tests of the checks behind the checksum (non-finite weights, a
damaged tokenizer, an unknown version) use it.

Nothing here is used by the converter. `write_unchecked` calls the container
writer without its validation (`model_file.write_unvalidated`), so tests can produce files
the runtime must reject (a tensor shape that disagrees with the config, a
missing tensor, ...). `tiny_*` build a small random torch.nn.Transformer
checkpoint in the multi30k-en-de layout, so converter and reference tests run
without the real checkpoint.
"""

import io
import json
import os
from typing import Dict, Mapping, Optional

import numpy as np

from .model_file import TRAILER_BYTES, TRAILER_MAGIC, integrity_trailer, write_unvalidated
from .families.transformer import TransformerConfig
from .model_spec import ModelHeader, Provenance, SpecialTokens

# Text for training the tiny SentencePiece model (no files needed).
_TINY_CORPUS = """A man in an orange hat is looking at something.
A dog is running on green grass in front of a white fence.
Two girls are sitting on a bench and talking.
A woman with a red bag walks down the street.
Children play football in the park, while their parents watch.
The old man sells fruit at the market; it is 10.5 degrees.
People are waiting for the bus near the station.
Ein Mann mit einem orangefarbenen Hut schaut etwas an.
Ein Hund läuft über grünes Gras vor einem weißen Zaun.
Zwei Mädchen sitzen auf einer Bank und unterhalten sich.
Eine Frau mit einer roten Tasche geht die Straße entlang.
Kinder spielen Fußball im Park, während ihre Eltern zusehen.
"""


def tiny_spm_model(vocab_size: int = 96) -> bytes:
    """Serialized SentencePiece unigram model, pad 0 / unk 1 / bos 2 / eos 3."""
    import sentencepiece as spm
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_TINY_CORPUS.splitlines() * 4), model_writer=out,
        vocab_size=vocab_size, model_type="unigram", pad_id=0, unk_id=1, bos_id=2, eos_id=3,
        character_coverage=1.0, normalization_rule_name="identity", minloglevel=2,
        num_threads=1, hard_vocab_limit=True)
    return out.getvalue()


def tiny_torch_config(vocab_size: int = 96, **overrides) -> dict:
    """config.json contents for a tiny model (d=16, 2 heads, ffn 32, 2+2 layers)."""
    config = {
        "d_model": 16, "heads": 2, "encoder_layers": 2, "decoder_layers": 2, "ffn_dim": 32,
        "dropout": 0.0, "activation": "relu", "norm_first": False, "vocab_size": vocab_size,
        "max_len": 40, "pad_id": 0, "unk_id": 1, "bos_id": 2, "eos_id": 3,
        "src_lang": "en", "tgt_lang": "de", "positional_encoding": "sinusoidal_interleaved",
        "embedding_scale": 4.0, "tied_embeddings": True,
    }
    config.update(overrides)
    return config


def tiny_state_dict(config: Mapping, seed: int = 0):
    """Random (seeded) state_dict of the README wrapper for `config`.

    Projection weights are 4x torch's init and biases/norm parameters are
    randomized, so that the tiny model's outputs vary with the input and no
    parameter is a trivial 0 or 1 (which would hide mapping mistakes)."""
    import torch
    from .torch_reference import Seq2SeqTransformer
    torch.manual_seed(seed)
    model = Seq2SeqTransformer(dict(config))
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "norm" in name:
                param.uniform_(0.8, 1.2) if name.endswith("weight") else param.normal_(0, 0.1)
            elif name.endswith("bias"):
                param.normal_(0.0, 0.1)
            elif name != "embed.weight":
                param.mul_(4.0)
        model.embed.weight.normal_(0.0, 0.5)
    return model.state_dict()


def write_tiny_checkpoint(folder: str, config: Optional[dict] = None, seed: int = 0,
                          state=None) -> Dict[str, str]:
    """Write model.pt, config.json and spm.model into `folder`; returns their paths."""
    import torch
    config = dict(config or tiny_torch_config())
    paths = {"checkpoint": os.path.join(folder, "model.pt"),
             "config": os.path.join(folder, "config.json"),
             "spm": os.path.join(folder, "spm.model")}
    torch.save(state if state is not None else tiny_state_dict(config, seed),
               paths["checkpoint"])
    with open(paths["config"], "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=1)
    with open(paths["spm"], "wb") as handle:
        handle.write(tiny_spm_model(config["vocab_size"]))
    return paths


def write_unchecked(path: str, config: Mapping, tensors: Mapping[str, np.ndarray],
                    aliases: Optional[Mapping[str, str]] = None, weight_dtype: str = "fp32",
                    special_tokens: Optional[Mapping[str, int]] = None,
                    tokenizer_model: bytes = b"", source_language: str = "en",
                    target_language: str = "de", quantization: Optional[str] = None,
                    f32_tables: bool = False, f16_tables: bool = False,
                    residual_tables: bool = False) -> int:
    """Write an .emt file from an edgemt config dict (TransformerConfig field names)
    and name -> array tensors, WITHOUT checking that they agree. For bad-input tests.
    `quantization` (model_spec.QUANTIZATION_*) overrides the scheme weight_dtype
    implies, to write a file whose header contradicts itself; `f32_tables`,
    `f16_tables` and `residual_tables` set the header flags of format
    versions 9, 10 and 11."""
    tokens = {"pad": 0, "unk": 1, "bos": 2, "eos": 3, "decoder_start": 2}
    tokens.update(special_tokens or {})
    header = ModelHeader(config=TransformerConfig(**config),
                         special_tokens=SpecialTokens(**tokens),
                         source_language=source_language, target_language=target_language,
                         weight_dtype=weight_dtype, tokenizer_model=tokenizer_model,
                         provenance=Provenance(source_format="test",
                                               converter_version="testing"),
                         quantization=quantization, f32_tables=f32_tables,
                         f16_tables=f16_tables, residual_tables=residual_tables)
    return write_unvalidated(path, header, tensors, aliases)


def reseal(data) -> bytes:
    """The bytes of a version-4 .emt file with its integrity trailer
    recomputed over its current contents (files without a trailer are
    returned as they are)."""
    import struct
    import google_crc32c
    data = bytes(data)
    if len(data) < TRAILER_BYTES or data[-TRAILER_BYTES:-8] != TRAILER_MAGIC:
        return data
    (fb_size,) = struct.unpack_from("<I", data, 0)
    segment = (4 + fb_size + 63) // 64 * 64
    end = len(data) - TRAILER_BYTES
    return data[:end] + integrity_trailer(google_crc32c.value(data[:segment]),
                                          google_crc32c.value(data[segment:end]))
