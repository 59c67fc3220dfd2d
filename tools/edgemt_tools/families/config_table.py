"""A family's config dataclass and its FlatBuffers table (schema/edgemt.fbs),
written and read field by field through the flatc-generated code (fbs.py):
the field `decoder_input` is written by `AddDecoderInput` and read by
`DecoderInput()`. An enum field holds the name of its value in the config
(a family's own spelling) and the number in the file."""

import dataclasses
from dataclasses import dataclass
from typing import Dict, Mapping, Tuple

import flatbuffers

from .. import fbs
from ..errors import ModelFileError


def camel(field_name: str) -> str:
    """A config field's name in the generated code (`decoder_input` -> `DecoderInput`)."""
    return "".join(part.capitalize() for part in field_name.split("_"))


def generated_class(name: str) -> type:
    """The generated class of the schema's table or enum `name`."""
    return getattr(fbs.generated(name), name)


def enum_values(name: str) -> Dict[str, int]:
    """The schema enum `name`, by the names of its values."""
    return {key: value for key, value in vars(generated_class(name)).items()
            if not key.startswith("_")}


@dataclass(frozen=True)
class ConfigTable:
    """How one family's config is stored: the schema's table `name` (also
    its member of the FamilyConfig union) holds every field of
    `config_type`, added in `order` (the bytes of the file depend on it: a
    family keeps the order its files were first written in), with the
    enum fields translated by `enums` (field -> value name -> number)."""
    name: str
    config_type: type
    enums: Mapping[str, Mapping[str, int]]
    order: Tuple[str, ...]

    def __post_init__(self):
        fields = sorted(item.name for item in dataclasses.fields(self.config_type))
        if sorted(self.order) != fields:
            raise ValueError(f"{self.name}: the order must name each field once: {fields}")

    @property
    def union_type(self) -> int:
        """Its member of the FamilyConfig union (Model.family_config_type)."""
        return getattr(fbs.FamilyConfig, self.name)

    def build(self, b: flatbuffers.Builder, cfg) -> int:
        """Write `cfg` as the table; ValueError for an enum value the schema
        does not have (unvalidated test files reach here)."""
        table = fbs.generated(self.name)
        table.Start(b)
        for field_name in self.order:
            value = getattr(cfg, field_name)
            if field_name in self.enums:
                known = self.enums[field_name]
                if not isinstance(value, str) or value not in known:
                    raise ValueError(f"{self.name} {field_name}: unknown value {value!r}")
                value = known[value]
            getattr(table, "Add" + camel(field_name))(b, value)
        return table.End(b)

    def read(self, table: flatbuffers.table.Table):
        """The config in `table` (the union's member, or a version-1 file's
        `config`); ModelFileError for an enum number this converter does
        not know."""
        view = generated_class(self.name)()
        view.Init(table.Bytes, table.Pos)
        values = {}
        for item in dataclasses.fields(self.config_type):
            value = getattr(view, camel(item.name))()
            if item.name in self.enums:
                names = {number: name for name, number in self.enums[item.name].items()}
                if value not in names:
                    raise ModelFileError(f"{self.name} {item.name}: unknown value {value}")
                value = names[value]
            values[item.name] = value
        return self.config_type(**values)
