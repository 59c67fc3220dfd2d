"""edgemt_tools.limits equals the runtime's limits: the family-neutral ones
of runtime/include/edgemt/limits.h and each family's of
runtime/models/<family>/config.h.

The converter refuses files outside the runtime's limits; the two lists are
written twice (C++ constexprs, Python constants), so this test reads the
headers and compares every model-file limit.
"""

import os
import re
import unittest

import helpers
from edgemt_tools import limits

HEADERS = [
    os.path.join(helpers.REPO_ROOT, "runtime", "include", "edgemt", "limits.h"),
    os.path.join(helpers.REPO_ROOT, "runtime", "models", "transformer", "config.h"),
]

# `inline constexpr uint32_t kMaxVocabSize = 1u << 24;` and friends.
_CONSTANT = re.compile(r"inline\s+constexpr\s+\w+\s+(k\w+)\s*=\s*([^;]+);")


def evaluate(expression: str) -> int:
    """The integer value of a limits.h initializer: literals with u suffixes,
    uint64_t{N}, shifts, products and sums."""
    text = re.sub(r"uint64_t\{(\d+)\}", r"\1", expression)
    text = re.sub(r"(\d+)[uUlL]+", r"\1", text)
    if not re.fullmatch(r"[\d\s<>()*+]+", text):
        raise ValueError(f"cannot evaluate limits.h expression {expression!r}")
    return int(eval(text, {"__builtins__": {}}))  # digits and operators only (checked above)


class LimitsTest(unittest.TestCase):
    def test_every_model_limit_equals_the_header(self):
        constants = {}
        for header in HEADERS:
            with open(header, encoding="utf-8") as handle:
                for name, value in _CONSTANT.findall(handle.read()):
                    self.assertNotIn(name, constants, f"{name} is defined twice")
                    constants[name] = evaluate(value)
        for name, value in limits.BY_CPP_NAME.items():
            with self.subTest(name=name):
                self.assertIn(name, constants, f"{name} is in none of the headers")
                self.assertEqual(constants[name], value)

    def test_the_evaluator_reads_each_form(self):
        self.assertEqual(evaluate("1u << 24"), 1 << 24)
        self.assertEqual(evaluate("uint64_t{64} << 30"), 64 << 30)
        self.assertEqual(evaluate("16384"), 16384)
        with self.assertRaises(ValueError):
            evaluate("__import__('os')")


if __name__ == "__main__":
    unittest.main()
