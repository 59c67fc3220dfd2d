"""Model families: one module per family, as runtime/models/<family>/.

The registry below lists every family's record (`Family`, family.py); the
writer, the reader, the validator and the command line reach a family only
through it: `of(config)` for a config's family, `find(name)` by name,
`titles(...)` for messages (tests/tools/test_converter_layering.py holds
them to it). What every family shares lives beside it, each in a module of
its own so that a family module imports it without importing the registry
back (an import cycle):

  family.py        the `Family` record a family fills in
  tensor_table.py  the reader of schema/<family>_tensors.def and its walk
  checks.py        the value checks a family's config check is made of
  config_table.py  a config dataclass as its FlatBuffers table, written and read

A family module (transformer.py, rnn.py) holds the family's config
dataclass, its limits (read from runtime/models/<family>/config.h), its
config check, its ConfigTable (the schema table's name, enum maps, field
order), the rules of its tensor table (TensorTable), and FAMILY, its record
(with a forward pass for int8 calibration when it has one).

A new family touches, in the converter:
  tools/edgemt_tools/families/<family>.py       the module above
  schema/<family>_tensors.def                   its tensor table
  tools/edgemt_tools/families/__init__.py       one line in FAMILIES below
                                                (and the module's name in the
                                                import above it)
  tests/tools/test_families_<family>.py         its table, checks, config table
and what the file format and the runtime need anyway: its config table and
FamilyConfig union member in schema/edgemt.fbs (then `flatc --python -o
tools/edgemt_tools/generated schema/edgemt.fbs`), runtime/models/<family>/
with its config.h. A source writes it: a new one, or an existing one that
adds the family's name to its FAMILIES. Nothing else: model_spec.py,
model_file.py, validate.py, writer.py, convert.py, limits.py, fbs.py and
int8_calibration.py stay as they are.

A new checkpoint source touches:
  tools/edgemt_tools/sources/<source>.py        read(inputs) -> (ModelSpec,
                                                notes), and FAMILIES, the
                                                names of the families it writes
  tools/edgemt_tools/sources/__init__.py        one line in SOURCES (and its
                                                import)
  tools/edgemt_tools/convert.py                 its paragraph of --help; the
                                                option checks, when it takes
                                                --config or an option of its
                                                own
  tools/edgemt_tools/sources/detect.py          only to be named when given
                                                to another --from (KINDS and
                                                how to recognize it)
  tests/tools/test_sources_<source>.py, tests/fixtures/<framework>/ and
  tools/fixtures/<framework>/                   its tests and fixtures
and no family module, nor the writer, the reader or the validator (a
framework with search rules of its own adds a SearchRules member:
schema/edgemt.fbs, model_spec.SEARCH_RULES, model_file.py, the runtime's
search and SEARCH.md).
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
