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

SOURCES imports a source's module when it is first asked for, so that
`edgemt-convert --help` and its argument errors import none (no numpy, no
torch). A source that reads a Hugging Face Hub model folder has HUB_FILES
(hub.HubFiles: the files it reads) and is listed in HUB_SOURCES:
edgemt-convert then takes a Hub model id for it (hub.py).
"""

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional


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
    # What the file's provenance calls the checkpoint (a Hub model id: the
    # repository's name, as a clone's folder is called); None: the path's
    # last part.
    checkpoint_name: Optional[str] = None
    # --shortlist FILE (None: none given; a Marian folder's own is then
    # suggested in a note, never taken unasked).
    shortlist: Optional[str] = None


class _Sources(Mapping):
    """`--from` name -> the source's module, imported on first use."""

    def __init__(self, modules):
        self._modules = dict(modules)

    def __getitem__(self, name: str):
        return importlib.import_module(f"{__name__}.{self._modules[name]}")

    def __iter__(self):
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


# `--from` name -> module (of this package) with read(SourceInputs).
SOURCES = _Sources({
    "torch": "torch",
    "torch-rnn": "torch_rnn",
    "opennmt": "opennmt",
    "marian": "marian",
    "hf-marian": "hf_marian",
})

# The sources whose module has HUB_FILES: they take a Hugging Face Hub model id.
HUB_SOURCES = ("hf-marian",)
