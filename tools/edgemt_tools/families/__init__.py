"""Model families: one module per family, as runtime/models/<family>/.

The registry below lists every family's record (`Family`, family.py); the
writer, the reader, the validator and the command line reach a family only
through it: `of(config)` for a config's family, `find(name)` by name. What
every family shares lives beside it, each in a module of its own so that a
family module imports it without importing the registry back:

  family.py        the `Family` record a family fills in
  tensor_table.py  the reader of schema/<family>_tensors.def and its walk
  checks.py        the value checks a family's config check is made of
  config_table.py  a config dataclass as its FlatBuffers table, written and read
"""

from typing import Callable, Dict

from . import rnn, transformer
from .family import Family

# The registry: one line per family.
FAMILIES: Dict[str, Family] = {family.name: family for family in (
    transformer.FAMILY,
    rnn.FAMILY,
)}


def find(name: str) -> Family:
    """The family called `name`; KeyError naming the known ones otherwise."""
    if name not in FAMILIES:
        raise KeyError(f"no model family {name!r} (known: {', '.join(FAMILIES)})")
    return FAMILIES[name]


def of(config) -> Family:
    """The family whose config type `config` is; TypeError for anything else."""
    for family in FAMILIES.values():
        if type(config) is family.config_type:
            return family
    raise TypeError(f"not a family config: {type(config).__name__}")


def titles(which: Callable[[Family], bool]) -> str:
    """The titles of the families `which` picks, as a message names them
    ("Transformer", "Transformer and RNN")."""
    return " and ".join(family.title for family in FAMILIES.values() if which(family))
