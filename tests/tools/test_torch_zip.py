"""The loader of torch.save's zip checkpoints (sources/torch_zip.py), which
every pickle-reading source uses (test_untrusted_checkpoints.py: payloads
through the converter):

- what PyTorch 2.5.1 saved (tests/fixtures/untrusted/: every element type,
  bfloat16 and both float8 with all 256 codes, views sharing a storage, a
  Parameter; OpenNMT-style options with sets and tuples) loads to exactly
  what torch 2.5.1 reads back itself;
- the loader never imports torch;
- views are bounds-checked, storages must hold what the pickle says, and
  legacy, TorchScript and non-torch files get one line saying what they are.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from collections import OrderedDict

import numpy as np

import framework_fixtures as ff
import helpers
from edgemt_tools.sources import torch_zip

UNTRUSTED = os.path.join(ff.FIXTURES_DIR, "untrusted")
OPENNMT = os.path.join(ff.FIXTURES_DIR, "opennmt")
SOURCES_DIR = os.path.join(helpers.TOOLS_DIR, "edgemt_tools", "sources")


def assert_same_values(test_case, got: np.ndarray, want: np.ndarray, name: str) -> None:
    """Same dtype, shape and bits (NaNs: same places, any payload)."""
    test_case.assertEqual((got.dtype, got.shape), (want.dtype, want.shape), name)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        keep = ~np.isnan(want)
        got, want = got[keep], want[keep]
    test_case.assertEqual(got.tobytes(), want.tobytes(), name)


class TorchTwoValidTest(unittest.TestCase):
    """What PyTorch 2.5.1 saved loads to what it reads back itself."""

    def test_every_element_type_and_view(self):
        got = torch_zip.load(os.path.join(UNTRUSTED, "valid_state_dict.pt"))
        self.assertIsInstance(got, OrderedDict)
        with np.load(os.path.join(UNTRUSTED, "valid_state_dict.npz"), allow_pickle=False) as want:
            self.assertEqual(list(got), list(want.files))
            for name in want.files:
                assert_same_values(self, got[name], want[name], name)

    def test_opennmt_options(self):
        got = torch_zip.load(os.path.join(UNTRUSTED, "valid_opennmt.pt"),
                             "an OpenNMT-py checkpoint", torch_zip.TRAINING_OPTIONS)
        with open(os.path.join(UNTRUSTED, "valid_opennmt.json"), encoding="utf-8") as handle:
            want = json.load(handle)
        options = {key: sorted(value) if isinstance(value, (set, frozenset)) else value
                   for key, value in vars(got["opt"]).items()}
        self.assertEqual(json.loads(json.dumps(options)), want["opt"])
        self.assertEqual(got["vocab"], want["vocab"])
        self.assertEqual({k: v.tolist() for k, v in got["model"].items()}, want["model"])


class LoaderTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="edgemt-untrusted-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_the_loader_never_imports_torch(self):
        """torch_zip and what it imports, alone in a fresh interpreter (the
        package's __init__ imports sources that use torch for other work)."""
        program = (
            "import sys, types\n"
            "package = types.ModuleType('loader'); package.__path__ = [sys.argv[1]]\n"
            "sys.modules['loader'] = package\n"
            "from loader import torch_zip\n"
            "torch_zip.load(sys.argv[2])\n"
            "torch_zip.load(sys.argv[3], 'x', torch_zip.TRAINING_OPTIONS)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))\n")
        result = subprocess.run(
            [sys.executable, "-c", program, SOURCES_DIR,
             os.path.join(UNTRUSTED, "valid_state_dict.pt"), os.path.join(OPENNMT, "A.pt")],
            capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "[]")

    def test_no_other_source_module_unpickles(self):
        """Pickles are read by torch_zip only; YAML only by the safe loaders."""
        import re
        unsafe = re.compile(r"torch\.load\(|torch\.jit\.load\(|\bimport pickle\b|\bpickle\.|"
                            r"yaml\.(unsafe_load|full_load|load_all)\(|"
                            r"yaml\.load\((?![^)]*Loader=(yaml\.)?(BaseLoader|SafeLoader|PlainLoader))")
        found = []
        for name in sorted(os.listdir(SOURCES_DIR)):
            if name.endswith(".py") and name != "torch_zip.py":
                with open(os.path.join(SOURCES_DIR, name), encoding="utf-8") as handle:
                    found += [f"{name}:{number}: {line.strip()}"
                              for number, line in enumerate(handle, start=1)
                              if unsafe.search(line)]
        self.assertEqual(found, [])
        # duplicate_keys' loaders (which refuse a key given twice) are the
        # safe ones underneath: no Python object can be constructed.
        import yaml
        from edgemt_tools.sources import duplicate_keys
        self.assertTrue(issubclass(duplicate_keys.SafeLoader, yaml.SafeLoader))
        self.assertTrue(issubclass(duplicate_keys.PlainLoader, yaml.BaseLoader))
        for loader in (duplicate_keys.SafeLoader, duplicate_keys.PlainLoader):
            self.assertFalse(issubclass(loader, (yaml.FullLoader, yaml.UnsafeLoader)))

    def refused(self, path, fragment):
        with self.assertRaises(torch_zip.CheckpointError) as caught:
            torch_zip.load(path)
        self.assertIn(fragment, str(caught.exception))
        self.assertNotIn("\n", str(caught.exception))

    def test_views_are_bounds_checked(self):
        """A storage offset past the storage, and a stride-0 view asking for
        a million copies of one value, are refused before any copy."""
        import torch
        import pickletools
        import zipfile
        path = os.path.join(self.tmp, "view.pt")
        torch.save(torch.arange(10, dtype=torch.float32)[2:5], path)
        with zipfile.ZipFile(path) as archive:
            records = {name: archive.read(name) for name in archive.namelist()}
        pickle_name = next(name for name in records if name.endswith("/data.pkl"))
        ops = list(pickletools.genops(records[pickle_name]))
        persid = next(i for i, (op, _, _) in enumerate(ops) if op.name == "BINPERSID")
        _, offset, position = ops[persid + 1]  # the storage offset follows the storage
        self.assertEqual(offset, 2)
        data = bytearray(records[pickle_name])
        data[position + 1] = 9  # offset 9 + 3 values > the storage's 10
        records[pickle_name] = bytes(data)
        with zipfile.ZipFile(path, "w") as archive:
            for name, record in records.items():
                archive.writestr(name, record)
        self.refused(path, "reaches past its 10 float32 values")
        expanded = os.path.join(self.tmp, "expanded.pt")
        torch.save(torch.zeros(1).expand(1_000_000), expanded)
        self.refused(expanded, "reaches past its 1 float32 values")

    def test_storage_records_must_hold_what_the_pickle_says(self):
        import torch
        import zipfile
        path = os.path.join(self.tmp, "short.pt")
        torch.save({"w": torch.zeros(8)}, path)
        with zipfile.ZipFile(path) as archive:
            records = {name: archive.read(name) for name in archive.namelist()}
        storage = next(name for name in records if "/data/" in name)
        records[storage] = records[storage][:12]
        with zipfile.ZipFile(path, "w") as archive:
            for name, record in records.items():
                archive.writestr(name, record)
        self.refused(path, "holds 12 bytes, the pickle says 32")

    def test_damaged_files_fail_with_one_line_and_nothing_on_stderr(self):
        """Seeded random damage to the pickle and to the whole file: the
        loader returns or raises CheckpointError (one line), and prints
        nothing (pickle's C unpickler used to print a stray SystemError
        line for a huge BYTEARRAY8 length, which it allocates first)."""
        import contextlib
        import io
        import random
        import warnings
        import zipfile
        source = os.path.join(UNTRUSTED, "valid_opennmt.pt")
        with zipfile.ZipFile(source) as archive:
            records = {name: archive.read(name) for name in archive.namelist()}
        with open(source, "rb") as handle:
            whole = handle.read()
        pickle_name = next(name for name in records if name.endswith("/data.pkl"))
        rng = random.Random(38)
        path = os.path.join(self.tmp, "damaged.pt")
        outcomes = {"loaded": 0, "refused": 0}
        for attempt in range(1000):
            damaged = bytearray(records[pickle_name] if attempt % 2 else whole)
            for _ in range(rng.randint(1, 4)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
            if attempt % 2:
                with zipfile.ZipFile(path, "w") as archive:
                    for name, record in records.items():
                        archive.writestr(name, bytes(damaged) if name == pickle_name else record)
            else:
                with open(path, "wb") as handle:
                    handle.write(damaged)
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr), warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    torch_zip.load(path, "x", torch_zip.TRAINING_OPTIONS)
                    outcomes["loaded"] += 1
                except torch_zip.CheckpointError as err:
                    self.assertNotIn("\n", str(err))
                    outcomes["refused"] += 1
            self.assertEqual(stderr.getvalue(), "", f"attempt {attempt}")
        print(f"damaged files: {outcomes}")
        self.assertGreater(outcomes["refused"], 500)

    def test_other_files_get_one_line_saying_what_they_are(self):
        import torch
        legacy = os.path.join(self.tmp, "legacy.pt")
        torch.save({"w": torch.zeros(2)}, legacy, _use_new_zipfile_serialization=False)
        self.refused(legacy, "torch's legacy format (PyTorch < 1.6, not a zip)")
        scripted = os.path.join(self.tmp, "scripted.pt")
        torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), scripted)
        self.refused(scripted, "a TorchScript archive")
        self.refused(os.path.join(OPENNMT, "A.src.spm"), "not a zip archive")
        self.refused(os.path.join(ff.FIXTURES_DIR, "marian", "npz", "model.npz"),
                     "not one torch.save wrote")


if __name__ == "__main__":
    unittest.main()
