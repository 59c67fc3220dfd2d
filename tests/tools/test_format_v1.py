"""Files of format version 1 still load and translate as before
(tests/fixtures/format_v1/, written by the last version-1 converter).

- `edgemt inspect` reads each and reports version 1;
- the int8 file translates exactly as it did when it was written (greedy and
  beam 4), on any CPU;
- every file translates exactly as its weights rewritten in the current
  format do, and the Python reader reads both to the same header and tensors.

Needs the built binary (EDGEMT_CLI).
"""

import os
import subprocess
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools import fbs
from edgemt_tools.model_file import read_model, write_model
from edgemt_tools.model_spec import expected_tensors, resolve_alias

CLI = helpers.CLI
FIXTURES = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "format_v1")
SOURCE = os.path.join(FIXTURES, "source.en")
DTYPES = ("fp32", "fp16", "int8")


def fixture(dtype):
    return os.path.join(FIXTURES, f"tiny.{dtype}.emt")


def rewrite_in_current_format(source_path, path):
    """The same header and tensors written by today's writer."""
    model = read_model(source_path)
    specs = expected_tensors(model.header.config, model.header.weight_dtype)
    tensors, aliases = {}, {}
    for name, spec in specs.items():
        if spec.alias_of is not None:
            aliases[name] = resolve_alias(specs, name)
        else:
            tensors[name] = np.array(model.array(name))
    write_model(path, model.header, tensors, aliases)


class FormatV1Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        helpers.require_cli()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.rewritten = {}
        for dtype in DTYPES:
            cls.rewritten[dtype] = os.path.join(cls.tmp.name, f"tiny.{dtype}.v{fbs.FORMAT_VERSION}.emt")
            rewrite_in_current_format(fixture(dtype), cls.rewritten[dtype])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_cli(self, *args):
        result = subprocess.run([CLI, *args], capture_output=True, check=False, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr.decode("utf-8", "replace"))
        return result.stdout.decode("utf-8")

    def translate(self, model, *flags):
        return self.run_cli("translate", "-m", model, "-i", SOURCE, *flags).splitlines()

    def test_the_fixtures_are_version_1_and_the_writer_is_newer(self):
        self.assertGreater(fbs.FORMAT_VERSION, 1)
        for dtype in DTYPES:
            with self.subTest(dtype=dtype):
                self.assertEqual(read_model(fixture(dtype)).format_version, 1)
                self.assertIn("format version     1 (edgemt ", self.run_cli("inspect", fixture(dtype)))
                self.assertEqual(read_model(self.rewritten[dtype]).format_version,
                                 fbs.FORMAT_VERSION)
                self.assertIn(f"format version     {fbs.FORMAT_VERSION} (edgemt ",
                              self.run_cli("inspect", self.rewritten[dtype]))

    def test_int8_translates_as_when_it_was_written(self):
        for flags, name in (((), "tiny.int8.greedy.out"), (("--beam", "4"), "tiny.int8.beam4.out")):
            with self.subTest(output=name):
                with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
                    want = handle.read().splitlines()
                self.assertEqual(len(want), 40)
                self.assertGreater(len(set(want)), 20, "the reference should vary with the input")
                self.assertEqual(self.translate(fixture("int8"), *flags), want)

    def test_each_file_translates_as_its_rewrite_in_the_current_format(self):
        for dtype in DTYPES:
            for flags in ((), ("--beam", "4")):
                with self.subTest(dtype=dtype, flags=flags):
                    old = self.translate(fixture(dtype), *flags)
                    self.assertEqual(len(old), 40)
                    self.assertEqual(old, self.translate(self.rewritten[dtype], *flags))

    def test_the_python_reader_reads_both_alike(self):
        for dtype in DTYPES:
            with self.subTest(dtype=dtype):
                old, new = read_model(fixture(dtype)), read_model(self.rewritten[dtype])
                self.assertEqual(old.header, new.header)
                self.assertEqual(sorted(old.entries), sorted(new.entries))
                for name in old.entries:
                    np.testing.assert_array_equal(old.array(name), new.array(name))


if __name__ == "__main__":
    unittest.main()
