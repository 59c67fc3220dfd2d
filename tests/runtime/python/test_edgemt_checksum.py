"""The model file's checksums through `import edgemt` (issue 38, item 10).

A version-4 file whose weight segment lost one bit (the value stays finite)
must be refused with edgemt.Error "invalid-model" naming the CRC-32C, from a
path and from bytes; verify_checksum=False (a file verified elsewhere) loads
it; a non-bool verify_checksum is refused.

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 PYTHONPATH=runtime/python \
      /usr/bin/python3 -m unittest tests/runtime/python/test_edgemt_checksum.py -v
"""

import os
import shutil
import tempfile
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODEL = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")
TRAILER_BYTES = 12


class Checksum(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(MODEL, "rb") as handle:
            data = bytearray(handle.read())
        assert data[-TRAILER_BYTES:-8] == b"EMTC"
        data[-TRAILER_BYTES - 1] ^= 0x01  # the last weight byte
        cls.damaged = bytes(data)
        cls.tmp = tempfile.mkdtemp()
        cls.path = os.path.join(cls.tmp, "damaged.emt")
        with open(cls.path, "wb") as handle:
            handle.write(cls.damaged)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_damaged_file_is_refused(self):
        for open_model in (lambda: edgemt.Model(self.path),
                           lambda: edgemt.Model.from_bytes(self.damaged)):
            with self.assertRaises(edgemt.Error) as caught:
                open_model()
            self.assertEqual(caught.exception.code, "invalid-model")
            self.assertIn("CRC-32C", str(caught.exception))

    def test_verify_checksum_false_loads_it(self):
        for model in (edgemt.Model(self.path, verify_checksum=False),
                      edgemt.Model.from_bytes(self.damaged, verify_checksum=False)):
            self.assertEqual(model.format_version, 11)  # residual codes for the lookups
            model.close()

    def test_verify_checksum_must_be_a_bool(self):
        with self.assertRaises(TypeError):
            edgemt.Model(MODEL, verify_checksum=0)


if __name__ == "__main__":
    unittest.main()
