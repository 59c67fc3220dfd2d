"""The value checks every family's config check (and the header's) is made
of: each raises a UserError of one line, "key = value ...", naming the key
as the caller spells it."""

import math

import numpy as np

from ..errors import UserError


def check_int(key: str, value, low: int, high: int) -> None:
    """UserError "key = value ..." unless value is a whole number in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise UserError(f"{key} = {value!r} is not a whole number")
    if not low <= value <= high:
        raise UserError(f"{key} = {value} is out of range ({low} to {high})")


def check_positive_float(key: str, value) -> None:
    """UserError "key = value ..." unless value is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise UserError(f"{key} = {value!r} is not a number")
    if not math.isfinite(value) or value <= 0:
        raise UserError(f"{key} = {value} must be finite and greater than 0")


def check_choice(key: str, value, known) -> None:
    """UserError "key 'value' is not one of (...)" unless value is in `known`."""
    if value not in known:
        raise UserError(f"{key} {value!r} is not one of {known}")
