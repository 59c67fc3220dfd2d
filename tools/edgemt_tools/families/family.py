"""The record one model family fills in (families/<family>.py) and the
registry lists (families/__init__.py); family-neutral code reaches a family
only through it, as the runtime's code reaches one through its `Family`
record (runtime/models/families.h)."""

from dataclasses import dataclass
from typing import Callable, Mapping, Optional

import numpy as np

from .config_table import ConfigTable
from .tensor_table import TensorTable


@dataclass(frozen=True)
class Family:
    """One model family: the member of the schema's FamilyConfig union that
    its `config_table` names, and the config dataclass that table holds.

    Every family's config has `vocab_size`, `source_vocab_size` (0: the
    same vocabulary) and `max_positions`: the header's checks and int8
    calibration read those by name; the rest only the family's module reads."""
    name: str           # "transformer": runtime/models/<name>/, schema/<name>_tensors.def
    title: str          # "Transformer": how messages name the family
    config_table: ConfigTable
    tensors: TensorTable
    # check(cfg): its values inside the runtime's limits and in the
    # combinations the runtime accepts (as its config.cc checks them); a
    # UserError "key = value ..." that validate.validate_config prefixes
    # with "config ".
    check: Callable[[object], None]
    # The value of the schema's ModelFamily by which format version 1 named
    # the family (holding its config in Model.config); None: a family
    # that came with version 2 or later.
    format_v1: Optional[int] = None
    # forward_pass(config, weights, dtype): a numpy forward pass computing in
    # dtype, which int8 calibration records each projection's inputs with
    # (int8_calibration.py says what it must offer); None: the family's
    # int8 files use nearest rounding.
    forward_pass: Optional[Callable[[object, Mapping[str, np.ndarray], type], object]] = None
    # format_version(cfg): the oldest format version that holds this config
    # (0: any); the file gets the newer of it and fbs.FORMAT_VERSION, so a
    # runtime that cannot run the config refuses the file by its version.
    format_version: Callable[[object], int] = lambda cfg: 0
    # untied(cfg): the same config with its output projection no longer
    # sharing an embedding table's bytes (model_spec.untie_output gives it
    # a copy of them); None: the family never ties one.
    untied: Optional[Callable[[object], object]] = None

    @property
    def config_type(self) -> type:
        """Its config dataclass (family-neutral code never names it)."""
        return self.config_table.config_type

    @property
    def a_title(self) -> str:
        """The title after its indefinite article ("a Transformer", "an RNN"):
        "an" before a vowel sound, an acronym read letter by letter."""
        vowel_sounds = "AEFHILMNORSX" if self.title.isupper() else "AEIOU"
        return ("an " if self.title[0].upper() in vowel_sounds else "a ") + self.title
