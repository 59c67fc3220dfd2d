"""Careless arguments to `import edgemt` (issue 38, defect 6 and its kin).

ctypes keeps the low bits of a Python int (2**32 + 9 became id 9, 2**40 the
attention layer 0, True the count 1), 0 silently meant "the default", and
None or a str where a list belongs ended in AttributeError. Each case here
must raise a one-line error that names the argument: ValueError or
TypeError, both also edgemt.Error (code "invalid-argument").

Run by ctest (runtime.python.edgemt_arguments); by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 PYTHONPATH=runtime/python \
      /usr/bin/python3 -m unittest tests/runtime/python/test_edgemt_arguments.py -v
"""

import os
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODEL = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")
SOURCE_IDS = [9, 21, 6, 29, 165, 95, 6492, 45, 267, 4, 3]  # test_2016 line 1, with EOS


class CarelessArguments(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = edgemt.Model(MODEL)
        cls.translator = edgemt.Translator(cls.model)

    def refused(self, kind, call, *words):
        """call() raises `kind` (ValueError or TypeError) that is also an
        edgemt.Error, in one line that contains each of `words`."""
        with self.assertRaises(kind) as caught:
            call()
        error = caught.exception
        self.assertIsInstance(error, edgemt.Error)
        self.assertEqual(error.code, "invalid-argument")
        self.assertNotIn("\n", str(error))
        for word in words:
            self.assertIn(word, str(error))
        return error

    # ---- integers that used to wrap or mean "default" -----------------------

    def test_token_ids_outside_int32_or_the_vocabulary(self):
        t = self.translator
        self.refused(ValueError, lambda: t.translate_ids([[2 ** 32 + 9, 3]]), "sources[0][0]",
                     str(2 ** 32 + 9), "7999")
        self.refused(ValueError, lambda: t.translate_ids([SOURCE_IDS, [5, -1, 3]]),
                     "sources[1][1]", "-1")
        self.refused(ValueError, lambda: t.translate_ids([[self.model.source_vocab_size, 3]]),
                     "sources[0][0]")
        self.refused(TypeError, lambda: t.translate_ids([[True, 3]]), "sources[0][0]", "bool")
        self.refused(TypeError, lambda: t.translate_ids([[9.0, 3]]), "sources[0][0]", "float")
        self.refused(ValueError, lambda: self.model.detokenize([2 ** 32 + 5]), "ids[0]")
        self.refused(TypeError, lambda: self.model.detokenize([5, None]), "ids[1]")

    def test_translator_limits_and_counts(self):
        m = self.model
        self.refused(ValueError, lambda: edgemt.Translator(m, attention=True,
                                                           attention_layer=2 ** 40),
                     "attention_layer", str(2 ** 40))
        self.refused(ValueError, lambda: edgemt.Translator(m, attention_head=-2 ** 31 - 1),
                     "attention_head", "C int")
        # Inside a C int, the library checks them against the model.
        with self.assertRaises(edgemt.Error) as caught:
            edgemt.Translator(m, attention=True, attention_head=-2)
        self.assertIn("heads 0..3", str(caught.exception))
        for name in ("max_batch", "max_source_len", "max_beam", "max_target_len", "threads"):
            self.refused(ValueError, lambda: edgemt.Translator(m, **{name: 0}), name, "at least 1")
            self.refused(ValueError, lambda: edgemt.Translator(m, **{name: 2 ** 64 + 1}), name,
                         "size_t")
            self.refused(TypeError, lambda: edgemt.Translator(m, **{name: True}), name, "bool")
            self.refused(TypeError, lambda: edgemt.Translator(m, **{name: 2.5}), name, "float")
        # None is the default (0 no longer is).
        self.assertEqual(edgemt.Translator(m, max_target_len=None).limits.max_target_len, 256)

    def test_decoding_options(self):
        t = self.translator
        self.refused(ValueError, lambda: t.translate(["A dog."], beam_size=2 ** 64 + 1),
                     "beam_size", "max_beam")
        self.refused(ValueError, lambda: t.translate_ids([SOURCE_IDS], beam_size=0), "beam_size")
        for name in ("length_penalty", "max_len_a", "max_len_b", "word_penalty"):
            for bad in (float("nan"), float("inf"), 1e300):
                self.refused(ValueError, lambda: t.translate(["A dog."], **{name: bad}), name,
                             "finite")
            self.refused(TypeError, lambda: t.translate_ids([SOURCE_IDS], **{name: True}), name)
            self.refused(TypeError, lambda: t.translate_ids([SOURCE_IDS], **{name: "1"}), name)

    def test_flags_are_booleans(self):
        # attention="False" is a true string: it asked for weights silently.
        self.refused(TypeError, lambda: self.translator.translate_ids([SOURCE_IDS],
                                                                      attention="False"),
                     "attention")
        self.refused(TypeError, lambda: edgemt.Translator(self.model, greedy_scores=0),
                     "greedy_scores")

    # ---- other careless calls ------------------------------------------------

    def test_wrong_containers_and_elements(self):
        t = self.translator
        self.refused(TypeError, lambda: t.translate(None), "list of texts")
        self.refused(TypeError, lambda: t.translate(["A dog.", None]), "text 1", "NoneType")
        self.refused(TypeError, lambda: t.translate([b"A dog."]), "text 0", "bytes")
        # A lone surrogate (os.fsdecode of bad bytes) has no UTF-8: that text
        # fails alone, as a line that is not UTF-8 does in the CLI.
        good, bad = t.translate(["A dog.", "A \udcff cat."])
        self.assertTrue(good.ok)
        self.assertIn("not valid UTF-8", bad.error)
        self.refused(TypeError, lambda: t.translate_ids(None), "token-id sequences")
        self.refused(TypeError, lambda: t.translate_ids([SOURCE_IDS, None]), "source 1")
        self.refused(TypeError, lambda: t.translate_ids([[5, "6", 3]]), "sources[0][1]", "str")
        self.refused(TypeError, lambda: edgemt.Translator(None), "edgemt.Model")
        self.refused(TypeError, lambda: edgemt.Translator(MODEL), "edgemt.Model")

    def test_nul_inside_c_strings(self):
        # A C string stops at the NUL: "model.emt\0x" would open model.emt.
        self.refused(ValueError, lambda: edgemt.Model(MODEL + "\0.bak"), "NUL")
        self.refused(ValueError, lambda: self.translator.translate(["A dog."],
                                                                   target_prefix="de\0x"), "NUL")
        self.refused(TypeError, lambda: self.translator.translate(["A dog."], target_prefix=5),
                     "target_prefix")
        self.refused(TypeError, lambda: edgemt.Model(None), "path")
        self.refused(TypeError, lambda: edgemt.Model.from_bytes("not bytes"), "bytes-like")

    def test_empty_and_large_inputs(self):
        t = self.translator
        self.assertEqual(t.translate([]), [])
        self.assertEqual(t.translate_ids([]), [])
        with self.assertRaises(edgemt.Error) as caught:
            t.translate_ids([SOURCE_IDS, []])
        self.assertIn("source 1 is empty", str(caught.exception))
        # More sources than max_batch: sent in batches, same results as one by one.
        small = edgemt.Translator(self.model, max_batch=3)
        sources = [SOURCE_IDS[k:] for k in range(len(SOURCE_IDS) - 1)]
        self.assertEqual([r.tokens for r in small.translate_ids(sources)],
                         [small.translate_ids([s])[0].tokens for s in sources])
        self.assertEqual(self.model.detokenize([]), "")

    def test_bytes_like_model_and_read_only_limits(self):
        with open(MODEL, "rb") as f:
            data = bytearray(f.read())
        model = edgemt.Model.from_bytes(data)
        translator = edgemt.Translator(model)
        want = translator.translate_ids([SOURCE_IDS])[0].tokens
        # Changing the limits object changes nothing (the buffers follow the
        # prepared limits, not this copy).
        translator.limits.max_target_len = 1
        self.assertEqual(translator.translate_ids([SOURCE_IDS])[0].tokens, want)
        self.assertEqual(translator.limits.max_target_len, 256)


if __name__ == "__main__":
    unittest.main()
