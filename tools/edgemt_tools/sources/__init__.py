"""Checkpoint sources: one module per kind of checkpoint, each turning it into
a family-neutral ModelSpec (model_spec.py; the type of its config, a config
dataclass of families/, names the model family) that the one writer
(writer.py) validates, stores in fp32, fp16 or int8 and packs.

A source module exposes `read(inputs: SourceInputs) -> (ModelSpec, notes)`
and `FAMILIES`, the names of the families it writes (families/), and is
registered in SOURCES under the name `edgemt-convert --from` takes.
Adding a source is a new module here plus one line in SOURCES
(docs/ARCHITECTURE.md, "Add a checkpoint source").

Checkpoints are untrusted input: a source reads torch.save files only
through torch_zip.load (never torch.load or pickle: it runs nothing the
file names, whichever torch is installed), .safetensors through
safetensors_file.load, and YAML with yaml.safe_load (or BaseLoader).
"""

from dataclasses import dataclass
from typing import Optional

from . import hf_marian, marian, opennmt
from . import torch as torch_source
from . import torch_rnn


@dataclass(frozen=True)
class SourceInputs:
    """What `edgemt-convert` was given, for the source to read. Paths a
    source does not use are None."""
    checkpoint: str
    config: Optional[str]
    spm: Optional[str]
    src_lang: Optional[str]
    tgt_lang: Optional[str]
    converter_version: str
    created_utc: str
    src_spm: Optional[str] = None
    tgt_spm: Optional[str] = None
    # --max-positions (torch-rnn: the longest source or target the file
    # accepts; None: the source's default).
    max_positions: Optional[int] = None
    # --allow-missing-pieces (marian, hf-marian): pieces of a SentencePiece
    # model missing from the vocabulary are a note, not an error.
    allow_missing_pieces: bool = False


# `--from` name -> module with read(SourceInputs).
SOURCES = {
    "torch": torch_source,
    "torch-rnn": torch_rnn,
    "opennmt": opennmt,
    "marian": marian,
    "hf-marian": hf_marian,
}
