"""edgemt_tools.limits: the converter's limits are the runtime's, read from
the C++ headers that define them (runtime/include/edgemt/limits.h, and each
family's runtime/models/<family>/config.h, read by its module in families/)."""

import os
import tempfile
import unittest

import helpers  # noqa: F401
from edgemt_tools import families, limits
from edgemt_tools.families import rnn, transformer


class LimitsTest(unittest.TestCase):
    def test_the_limits_are_the_headers_values(self):
        # The documented values (docs/reliability.md, "Limits"): a change in a header shows here.
        self.assertEqual(transformer.MAX_LAYERS_PER_STACK, 64)
        self.assertEqual(transformer.MAX_D_MODEL, 16384)
        self.assertEqual(transformer.MAX_FFN_DIM, 262144)
        self.assertEqual(limits.MAX_VOCAB_SIZE, 1 << 24)
        self.assertEqual(limits.MAX_POSITIONS, 65536)
        self.assertEqual(limits.MAX_MODEL_BYTES, 64 << 30)
        self.assertEqual(limits.MAX_TENSORS, 8192)
        self.assertEqual(limits.MAX_TOKENIZER_BYTES, 64 << 20)
        # The RNN family's: runtime/models/rnn/config.h.
        self.assertLessEqual(rnn.MAX_LAYERS, transformer.MAX_LAYERS_PER_STACK)
        self.assertGreaterEqual(rnn.MAX_HIDDEN, 1)
        self.assertGreaterEqual(rnn.MAX_EMBEDDING_DIM, 1)

    def test_the_headers_are_where_the_runtime_reads_them(self):
        for header in limits.HEADERS:
            self.assertTrue(os.path.isfile(header), header)
        for name in families.FAMILIES:
            self.assertTrue(os.path.isfile(limits.family_header(name)), name)

    def test_a_limit_defined_twice_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name in ("a.h", "b.h"):
                paths.append(os.path.join(tmp, name))
                with open(paths[-1], "w", encoding="utf-8") as handle:
                    handle.write("inline constexpr uint32_t kMaxThing = 1u << 4;\n")
            self.assertEqual(limits.read_constants(paths[:1]), {"kMaxThing": 16})
            with self.assertRaisesRegex(ValueError, "kMaxThing is defined twice"):
                limits.read_constants(paths)

    def test_the_evaluator_reads_each_form(self):
        self.assertEqual(limits.evaluate("1u << 24"), 1 << 24)
        self.assertEqual(limits.evaluate("uint64_t{64} << 30"), 64 << 30)
        self.assertEqual(limits.evaluate("16384"), 16384)
        with self.assertRaises(ValueError):
            limits.evaluate("__import__('os')")


if __name__ == "__main__":
    unittest.main()
