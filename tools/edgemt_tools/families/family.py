"""The record one model family fills in (families/<family>.py) and the
registry lists (families/__init__.py); family-neutral code reaches a family
only through it, as the runtime's code reaches one through its `Family`
record (runtime/models/families.h)."""

from dataclasses import dataclass
from typing import Callable

from .tensor_table import TensorTable


@dataclass(frozen=True)
class Family:
    """One model family: the member of the schema's FamilyConfig union whose
    config is a `config_type`.

    Every family's config has `vocab_size`, `source_vocab_size` (0: the
    same vocabulary) and `max_positions`: the header's checks read those
    by name; everything else in it only the family's own module reads."""
    name: str           # "transformer": runtime/models/<name>/, schema/<name>_tensors.def
    title: str          # "Transformer": how messages name the family
    config_type: type   # its config dataclass; field names follow its FlatBuffers table
    tensors: TensorTable
    # check(cfg): its values inside the runtime's limits and in the
    # combinations the runtime accepts (as its config.cc checks them); a
    # UserError "key = value ..." that validate.validate_config prefixes
    # with "config ".
    check: Callable[[object], None]
