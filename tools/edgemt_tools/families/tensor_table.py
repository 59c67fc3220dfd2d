"""A family's tensor table, schema/<family>_tensors.def: read, then walked.

The runtime compiles each table as an X-macro (runtime/models/tensor_table.h
walks it); here its lines are parsed (each file documents its columns, dims
and conditions). A family states what its table may say (`TableSyntax`) and
how a config sizes the dims and decides the conditions (`TensorTable`);
`TensorTable.float_tensors(cfg)` then lists every tensor of an fp32/fp16
file with that config, in the order the runtime's walk visits them. The
int8 scales and smoothing vectors are added after that, for every family
alike (model_spec.expected_tensors).
"""

import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

from ..project_files import project_path

MATRIX = "matrix"  # stored in the weight dtype (F32, F16 or I8)
VECTOR = "f32"     # biases, LayerNorm parameters, the position table, int8 scales: always F32
RESIDUAL = "residual"  # an int8 table's 4-bit residual codes, two per byte: always I8

SCHEMA_DIR = project_path("schema")


def table_path(family_name: str) -> str:
    """schema/<family>_tensors.def: where every family keeps its table."""
    return os.path.join(SCHEMA_DIR, f"{family_name}_tensors.def")


@dataclass(frozen=True)
class TensorSpec:
    shape: Tuple[int, ...]
    kind: str                         # MATRIX, VECTOR or RESIDUAL
    alias_of: Optional[str] = None    # same bytes as this tensor
    # A matrix used as a product's weight (a LINEAR's .weight, a PROJECTION),
    # not an embedding table: smoothed int8 files give it `X_smooth`.
    projection: bool = False


@dataclass(frozen=True)
class TableEntry:
    id: str
    group: str
    name: str
    kind: str
    rows: str
    cols: str
    condition: str


@dataclass(frozen=True)
class TableSyntax:
    """What one family's table may say: its X-macro's name and the values
    each column accepts (groups in the order the walk visits them)."""
    macro: str
    groups: Tuple[str, ...]
    kinds: Tuple[str, ...]
    dims: Tuple[str, ...]
    conditions: Tuple[str, ...]


def read_tensor_table(path: str, syntax: TableSyntax) -> Tuple[TableEntry, ...]:
    """The entries of a family tensor table, in file order; ValueError on a
    line that is neither a comment, blank, nor a well-formed entry of
    `syntax`."""
    entries = []
    line_form = re.compile(r'^' + syntax.macro + r'\((\w+),\s*(\w+),\s*"([^"]+)",\s*(\w+),'
                           r'\s*(\w+),\s*(\w+),\s*(\w+)\)\s*$')
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            text = line.strip()
            if not text or text.startswith("//"):
                continue
            match = line_form.match(text)
            if match is None:
                raise ValueError(f"{path}:{number}: not a {syntax.macro} line: {text}")
            entry = TableEntry(*match.groups())
            for value, known in ((entry.group, syntax.groups), (entry.kind, syntax.kinds),
                                 (entry.rows, syntax.dims), (entry.cols, syntax.dims),
                                 (entry.condition, syntax.conditions)):
                if value not in known:
                    raise ValueError(f"{path}:{number}: unknown value {value}")
            entries.append(entry)
    return tuple(entries)


# size(dim, cfg, layer): a dim's size (layer None outside the layer groups).
Size = Callable[[str, object, Optional[int]], int]


def own_bytes(condition: str, cfg) -> Optional[str]:
    """The owner rule of a table without aliases: every tensor owns its bytes."""
    return None


@dataclass(frozen=True)
class TensorTable:
    """One family's table with the rules that turn a config into tensors:
    `size` sizes its dims, `present(condition, cfg)` decides its
    conditions, `layers(group, cfg)` counts a layer group's repeats (None:
    a group that is not per layer), `owner(condition, cfg)` names the id of
    the entry whose bytes an alias shares (None: its own bytes).
    `smoothable`: its LINEARs are projections that smoothed int8 files give
    a smoothing vector (the runtime's walk marks them alike)."""
    entries: Tuple[TableEntry, ...]
    syntax: TableSyntax
    size: Size
    present: Callable[[str, object], bool]
    layers: Callable[[str, object], Optional[int]]
    owner: Callable[[str, object], Optional[str]] = own_bytes
    smoothable: bool = False

    def float_tensors(self, cfg) -> "OrderedDict[str, TensorSpec]":
        """The tensors of an fp32/fp16 file (no scales): the table's groups in
        order, the layer groups once per layer."""
        out: "OrderedDict[str, TensorSpec]" = OrderedDict()
        for group in self.syntax.groups:
            count = self.layers(group, cfg)
            if count is None:
                scopes = [("", None)]
            else:
                stack = "encoder" if group.startswith("ENCODER") else "decoder"
                scopes = [(f"{stack}.layers.{i}", i) for i in range(count)]
            for scope, layer in scopes:
                for entry in self.entries:
                    if entry.group == group and self.present(entry.condition, cfg):
                        self._add(entry, scope, layer, cfg, out)
        return out

    def _add(self, entry: TableEntry, scope: str, layer: Optional[int], cfg,
             out: "OrderedDict[str, TensorSpec]") -> None:
        name = f"{scope}.{entry.name}" if scope else entry.name
        rows, cols = self.size(entry.rows, cfg, layer), self.size(entry.cols, cfg, layer)
        if entry.kind in ("MATRIX", "PROJECTION"):
            owner = self.owner(entry.condition, cfg)
            alias = None
            if owner is not None:
                alias = next(e.name for e in self.entries if e.id == owner)
            out[name] = TensorSpec((rows, cols), MATRIX, alias, entry.kind == "PROJECTION")
        elif entry.kind == "TABLE":
            out[name] = TensorSpec((rows, cols), VECTOR)
        elif entry.kind == "VECTOR":
            out[name] = TensorSpec((rows,), VECTOR)
        elif entry.kind == "LINEAR":
            out[f"{name}.weight"] = TensorSpec((rows, cols), MATRIX, projection=self.smoothable)
            out[f"{name}.bias"] = TensorSpec((rows,), VECTOR)
        else:  # NORM
            out[f"{name}.weight"] = TensorSpec((rows,), VECTOR)
            out[f"{name}.bias"] = TensorSpec((rows,), VECTOR)
