"""Typed reads of a checkpoint's configuration values (config.json,
generation_config.json, decoder.yml, Marian's model.yml).

Such values came into the converter unchecked: a `length_penalty` of "abc",
null or [1] or `bad_words_ids: 5` gave a ValueError or TypeError traceback,
and `true` passed as the number 1. Each reader here returns the value with
the type the converter needs, or raises a one-line UserError naming the
file, the key and the value: booleans are not numbers, NaN and infinities
are refused, ranges are checked where the value enters.

`where` names the file (and the part of it) in every message.
"""

import math
from typing import Any, Mapping, Optional

from ..errors import UserError

REQUIRED = object()  # `default` of a key that must be present

# What yaml-cpp's as<bool>() accepts, which Marian reads its options with
# (a quoted "false" in a YAML file is a string to PyYAML, false to Marian).
_YAML_CPP_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_YAML_CPP_FALSE = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}


def _get(config: Mapping, key: str, where: str, default) -> Any:
    if key in config:
        return config[key]
    if default is REQUIRED:
        raise UserError(f"{where}: {key} is missing")
    return default


def _refuse(where: str, key: str, value, expected: str) -> None:
    raise UserError(f"{where}: {key} is {value!r}, expected {expected}")


def whole_number(config: Mapping, key: str, where: str, default=REQUIRED, low: int = 0,
                 high: Optional[int] = None, numeric_text: bool = False) -> int:
    """An integer in [low, high]. numeric_text: a string of digits counts too
    (YAML read as Marian does: yaml-cpp converts "6" to 6)."""
    value = _get(config, key, where, default)
    number = value
    if numeric_text and isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            number = None
    bounds = f"{low} to {high}" if high is not None else f">= {low}"
    if isinstance(number, bool) or not isinstance(number, int):
        _refuse(where, key, value, f"a whole number {bounds}")
    if number < low or (high is not None and number > high):
        _refuse(where, key, value, f"a whole number {bounds}")
    return number


def finite_number(config: Mapping, key: str, where: str, default=REQUIRED,
                  low: Optional[float] = None, above: Optional[float] = None,
                  numeric_text: bool = False) -> float:
    """A finite number (an int or a float, never a bool), >= low and > above
    when given. numeric_text: as for whole_number."""
    value = _get(config, key, where, default)
    number = value
    if numeric_text and isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    bounds = (f" >= {low:g}" if low is not None else "") + (
        f" > {above:g}" if above is not None else "")
    if isinstance(number, bool) or not isinstance(number, (int, float)) or \
            not math.isfinite(number):
        _refuse(where, key, value, f"a finite number{bounds}")
    if (low is not None and number < low) or (above is not None and number <= above):
        _refuse(where, key, value, f"a finite number{bounds}")
    return float(number)


def flag(config: Mapping, key: str, where: str, default: bool = False,
         yaml_cpp_text: bool = False) -> bool:
    """true or false (null: the default). yaml_cpp_text: also the strings
    yaml-cpp reads as booleans ("true", "no", ...), as Marian does."""
    value = _get(config, key, where, default)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if yaml_cpp_text and value in _YAML_CPP_TRUE:
        return True
    if yaml_cpp_text and value in _YAML_CPP_FALSE:
        return False
    _refuse(where, key, value, "true or false")
    return default  # not reached


def text(config: Mapping, key: str, where: str, default=REQUIRED) -> Optional[str]:
    """A string (null or absent: the default)."""
    value = _get(config, key, where, default)
    if value is None or value is default:
        return value
    if not isinstance(value, str):
        _refuse(where, key, value, "a string")
    return value
