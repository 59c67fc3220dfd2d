"""edgemt-convert with a Hugging Face Hub model id (tools/edgemt_tools/hub.py),
offline: HF_HUB_OFFLINE=1 and HF_HUB_CACHE at a temporary folder laid out as
the Hub's cache (models--<org>--<name>/refs/main holding the commit,
snapshots/<commit>/<file> links into blobs/ or plain files) holding the
MarianMT fixture of tests/fixtures/marian/hf.

- conversion by id gives the same bytes as conversion of the folder (a
  folder named as the repository, as a clone is), with safetensors or with
  only the pickled pytorch_model.bin, at the default branch or a revision;
- offline and not cached, or cached without its weights: one line, exit 1,
  nothing written; huggingface_hub missing: one line naming the pip package;
- a path that exists is a path, even one shaped `org/name` (huggingface_hub
  is not even imported), and without --from the source is told from the
  folder, a snapshot in the cache too;
- online (with a stand-in for huggingface_hub: no test reaches the network)
  only the files the source reads are asked for, and of the weights the
  first the repository has, the .bin from the same commit; the Hub's errors
  become one line;
- --help, --version and argument errors import neither numpy nor torch.

Without huggingface_hub the tests that need it print "SKIPPED:
huggingface_hub not installed" (ctest: skipped).
"""

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

import helpers
from edgemt_tools import hub
from edgemt_tools.errors import UserError
from edgemt_tools.sources import HUB_SOURCES, SOURCES
from edgemt_tools.sources.detect import detect

FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "hf")
CONVERT = os.path.join(helpers.TOOLS_DIR, "edgemt-convert")
REPO = "Helsinki-NLP/opus-mt-en-de"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
HAS_HUB = importlib.util.find_spec("huggingface_hub") is not None
SKIP_MESSAGE = "SKIPPED: huggingface_hub not installed"
EPOCH = "1700000000"
# Runs edgemt-convert with huggingface_hub made unimportable.
WITHOUT_HUB = ("import runpy, sys; sys.modules['huggingface_hub'] = None; "
               "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def require_hub(test_case: unittest.TestCase) -> None:
    if not HAS_HUB:
        print(SKIP_MESSAGE, file=sys.stderr)
        test_case.skipTest(SKIP_MESSAGE)


def fixture_files(weights=("model.safetensors", "pytorch_model.bin")):
    """The fixture's file names, with only `weights` of its two weight files."""
    return [name for name in sorted(os.listdir(FIXTURE))
            if name not in ("model.safetensors", "pytorch_model.bin") or name in weights]


def copy_folder(folder: str, names) -> str:
    os.makedirs(folder)
    for name in names:
        shutil.copyfile(os.path.join(FIXTURE, name), os.path.join(folder, name))
    return folder


def cache_repo(cache: str, repo: str, names, commit: str = COMMIT) -> str:
    """`names` of the fixture as repository `repo` at `commit` (refs/main) in
    the Hub cache `cache`: every other file a link into blobs/ (named by its
    SHA-256, as the Hub names LFS blobs), the others plain files. Returns the
    snapshot folder."""
    root = os.path.join(cache, "models--" + repo.replace("/", "--"))
    snapshot = os.path.join(root, "snapshots", commit)
    os.makedirs(snapshot)
    os.makedirs(os.path.join(root, "blobs"), exist_ok=True)
    os.makedirs(os.path.join(root, "refs"), exist_ok=True)
    with open(os.path.join(root, "refs", "main"), "w", encoding="ascii") as handle:
        handle.write(commit)  # no newline: huggingface_hub reads it as it is
    for index, name in enumerate(names):
        source = os.path.join(FIXTURE, name)
        if index % 2:
            shutil.copyfile(source, os.path.join(snapshot, name))
            continue
        with open(source, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        shutil.copyfile(source, os.path.join(root, "blobs", digest))
        os.symlink(os.path.join("..", "..", "blobs", digest), os.path.join(snapshot, name))
    return snapshot


class ConvertByHubIdTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="edgemt_hub_")
        cls.cache = os.path.join(cls.tmp, "hub-cache")
        cls.snapshot = cache_repo(cls.cache, REPO, fixture_files())
        cache_repo(cls.cache, "Helsinki-NLP/opus-mt-bin-only",
                   fixture_files(weights=("pytorch_model.bin",)))
        cache_repo(cls.cache, "Helsinki-NLP/opus-mt-no-weights", fixture_files(weights=()))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def convert(self, *args, output: str, without_hub: bool = False, cwd: str = None):
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_CACHE=self.cache,
                   HF_HOME=os.path.join(self.tmp, "hf-home"), SOURCE_DATE_EPOCH=EPOCH,
                   HF_HUB_DISABLE_TELEMETRY="1")
        env.pop("HF_TOKEN", None)
        prefix = ["-c", WITHOUT_HUB] if without_hub else []
        return subprocess.run(["/usr/bin/python3", *prefix, CONVERT, *args, "-o", output],
                              capture_output=True, text=True, env=env, cwd=cwd, check=False)

    def output(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def assert_converted(self, result) -> None:
        self.assertEqual(result.returncode, 0, result.stderr)

    def assert_one_line_error(self, result, pattern: str, output: str) -> None:
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertRegex(lines[0], r"^edgemt-convert: error: " + pattern)
        self.assertFalse(os.path.exists(output))

    def same_bytes(self, first: str, second: str) -> None:
        with open(first, "rb") as a, open(second, "rb") as b:
            self.assertTrue(a.read() == b.read(), f"{first} and {second} differ")

    def folder_conversion(self, name: str, weights) -> str:
        """The file converted from a folder `name` holding the fixture's files."""
        folder = copy_folder(os.path.join(self.tmp, "folders", name), fixture_files(weights))
        output = self.output(f"{name}.folder.emt")
        self.assert_converted(self.convert("--from", "hf-marian", "--checkpoint", folder,
                                           output=output))
        return output

    # -- by id, the same file as from the folder
    def test_id_gives_the_folder_s_file(self):
        require_hub(self)
        expected = self.folder_conversion("opus-mt-en-de",
                                          ("model.safetensors", "pytorch_model.bin"))
        for label, args in (("positional, --from told", (REPO,)),
                            ("--from hf-marian --checkpoint", ("--from", "hf-marian",
                                                               "--checkpoint", REPO)),
                            ("@commit", (f"{REPO}@{COMMIT}",)),
                            ("--revision main", (REPO, "--revision", "main"))):
            with self.subTest(label):
                output = self.output(f"by-id-{len(label)}.emt")
                result = self.convert(*args, output=output)
                self.assert_converted(result)
                self.assertIn(self.snapshot, result.stderr)  # the note naming the folder
                self.same_bytes(output, expected)

    def test_pickled_weights_by_id(self):
        require_hub(self)
        expected = self.folder_conversion("opus-mt-bin-only", ("pytorch_model.bin",))
        output = self.output("bin-only.by-id.emt")
        self.assert_converted(self.convert("Helsinki-NLP/opus-mt-bin-only", output=output))
        self.same_bytes(output, expected)

    # -- errors: one line, exit 1, nothing written
    def test_offline_and_not_cached(self):
        require_hub(self)
        for model in ("Helsinki-NLP/opus-mt-xx-yy", f"{REPO}@v9.9"):
            with self.subTest(model):
                output = self.output("absent.emt")
                self.assert_one_line_error(
                    self.convert(model, output=output),
                    f"{model} is not a file or folder here, and as a Hugging Face Hub model id "
                    "it is not in the cache .*HF_HUB_OFFLINE is set", output)

    def test_cached_without_weights(self):
        require_hub(self)
        output = self.output("no-weights.emt")
        self.assert_one_line_error(
            self.convert("Helsinki-NLP/opus-mt-no-weights", output=output),
            "Helsinki-NLP/opus-mt-no-weights is only partly in the Hugging Face cache \\(no "
            "model.safetensors or pytorch_model.bin in ", output)

    def test_without_huggingface_hub(self):
        output = self.output("no-hub.emt")
        self.assert_one_line_error(
            self.convert(REPO, output=output, without_hub=True),
            f"{REPO} is a Hugging Face Hub model id \\(no such file or folder here\\), and "
            "downloading it needs huggingface_hub: pip install huggingface_hub$", output)

    def test_id_with_a_source_that_reads_no_hub_folder(self):
        output = self.output("torch-id.emt")
        self.assert_one_line_error(
            self.convert("--from", "marian", REPO, output=output, without_hub=True),
            f"checkpoint not found: {REPO} \\(a Hugging Face Hub model id is for --from "
            "hf-marian\\)", output)

    # -- paths
    def test_an_existing_path_is_a_path(self):
        """`Helsinki-NLP/opus-mt-en-de` in the working folder is converted as
        that folder, with huggingface_hub unimportable: never asked."""
        work = os.path.join(self.tmp, "work")
        copy_folder(os.path.join(work, REPO), fixture_files())
        output = self.output("path-wins.emt")
        self.assert_converted(self.convert(REPO, output=output, without_hub=True, cwd=work))
        expected = self.output("path-wins.expected.emt")
        self.assert_converted(self.convert("--from", "hf-marian", os.path.join(work, REPO),
                                           output=expected))
        self.same_bytes(output, expected)

    def test_source_told_from_a_snapshot_folder(self):
        self.assertEqual(detect(self.snapshot), "hf-marian")
        self.assertEqual(detect(FIXTURE), "hf-marian")
        output = self.output("snapshot-path.emt")
        self.assert_converted(self.convert(self.snapshot, output=output, without_hub=True))


class HubIdTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(hub.parse(REPO), hub.HubId(REPO, None))
        self.assertEqual(hub.parse(REPO + "@v1.0"), hub.HubId(REPO, "v1.0"))
        self.assertEqual(hub.parse(REPO + "@refs/pr/3"), hub.HubId(REPO, "refs/pr/3"))
        self.assertEqual(hub.parse(REPO).name, "opus-mt-en-de")
        for path in ("opus-mt-en-de", "./org/name", "/org/name", "org/name/", "a/b/c",
                     "org/-name", "org/na..me", "org/na--me", "org/name@", "org /name",
                     FIXTURE, os.path.relpath(FIXTURE)):
            with self.subTest(path=path):
                self.assertIsNone(hub.parse(path))

    def test_revision(self):
        self.assertEqual(hub.with_revision(hub.HubId(REPO, None), "v2"), hub.HubId(REPO, "v2"))
        self.assertEqual(hub.with_revision(hub.HubId(REPO, "v2"), "v2"), hub.HubId(REPO, "v2"))
        with self.assertRaisesRegex(Exception, "give one"):
            hub.with_revision(hub.HubId(REPO, "v1"), "v2")

    def test_the_hub_sources_are_those_with_hub_files(self):
        self.assertEqual(list(HUB_SOURCES),
                         [name for name in SOURCES if hasattr(SOURCES[name], "HUB_FILES")])


class FakeHub:
    """Stands for huggingface_hub in hub.download's tests of what it asks
    for online (no test reaches the network): snapshot_download records its
    calls and serves `repository` (file names) at COMMIT, or raises `error`."""

    class HfHubHTTPError(Exception):
        __module__ = "huggingface_hub.errors"  # an error of huggingface_hub's own

    class RepositoryNotFoundError(HfHubHTTPError):
        pass

    class GatedRepoError(RepositoryNotFoundError):
        pass

    class RevisionNotFoundError(HfHubHTTPError):
        pass

    class LocalEntryNotFoundError(Exception):
        pass

    def __init__(self, folder: str, repository=(), error: Exception = None):
        self.folder, self.repository, self.error, self.calls = folder, repository, error, []
        self.errors = self
        self.constants = types.SimpleNamespace(HF_HUB_OFFLINE=False, HF_HUB_CACHE=folder)

    def snapshot_download(self, repo_id, revision=None, allow_patterns=(), **_):
        self.calls.append((repo_id, revision, tuple(allow_patterns)))
        if self.error is not None:
            raise self.error
        snapshot = os.path.join(self.folder, COMMIT)
        os.makedirs(snapshot, exist_ok=True)
        for name in self.repository:
            if name in allow_patterns:
                open(os.path.join(snapshot, name), "wb").close()
        return snapshot

    def modules(self):
        return {"huggingface_hub": self, "huggingface_hub.errors": self,
                "huggingface_hub.constants": self.constants}


def unreachable() -> Exception:
    """What huggingface_hub raises for a model not cached when the Hub cannot be reached."""
    error = FakeHub.LocalEntryNotFoundError("An error happened while trying to locate the files")
    error.__cause__ = OSError("HTTPSConnectionPool: Failed to establish a new connection: "
                              "[Errno -2] Name or service not known\nAn error happened")
    return error


class HubDownloadTest(unittest.TestCase):
    """What hub.download asks huggingface_hub for, and its errors, online."""

    FILES = SOURCES["hf-marian"].HUB_FILES
    TEXT_FILES = ("config.json", "vocab.json", "source.spm", "target.spm",
                  "tokenizer_config.json", "generation_config.json")

    def download(self, fake: FakeHub, model: str = REPO) -> str:
        with mock.patch.dict(sys.modules, fake.modules()):
            return hub.download(hub.parse(model), self.FILES, "0.0")

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="edgemt_fake_hub_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_only_the_files_read_and_the_preferred_weights(self):
        everything = self.TEXT_FILES + ("model.safetensors", "pytorch_model.bin", "tf_model.h5",
                                        "rust_model.ot", "modeling_evil.py")
        fake = FakeHub(self.tmp, everything)
        folder = self.download(fake, REPO + "@v1")
        self.assertEqual(fake.calls, [(REPO, "v1", self.FILES.required + self.FILES.optional +
                                       ("model.safetensors",))])
        self.assertEqual(sorted(os.listdir(folder)),
                         sorted(self.TEXT_FILES + ("model.safetensors",)))

    def test_pickled_weights_when_no_safetensors_from_the_same_commit(self):
        fake = FakeHub(self.tmp, self.TEXT_FILES + ("pytorch_model.bin", "tf_model.h5"))
        folder = self.download(fake)
        self.assertEqual(fake.calls[1], (REPO, COMMIT, ("pytorch_model.bin",)))
        self.assertIn("pytorch_model.bin", os.listdir(folder))

    def test_errors(self):
        for error, pattern in (
                (FakeHub.GatedRepoError("401"), "is a gated model: .*HF_TOKEN"),
                (FakeHub.RepositoryNotFoundError("404"),
                 "no such file or folder, and no such model on the Hugging Face Hub"),
                (FakeHub.RevisionNotFoundError("404"), "has no revision"),
                (FakeHub.LocalEntryNotFoundError("x"),
                 "not in the cache .* and the Hub cannot be reached \\(x\\)$"),
                (unreachable(), "not in the cache .* and the Hub cannot be reached "
                                "\\(Name or service not known\\)$"),
                (FakeHub.HfHubHTTPError("500 Server Error\nmore"),
                 "download from the Hugging Face Hub failed: 500 Server Error$")):
            with self.subTest(type(error).__name__):
                with self.assertRaisesRegex(UserError, pattern):
                    self.download(FakeHub(self.tmp, error=error))

    def test_a_repository_without_weights(self):
        with self.assertRaisesRegex(UserError, f"{REPO} has no model.safetensors or "
                                               "pytorch_model.bin: not a model"):
            self.download(FakeHub(self.tmp, self.TEXT_FILES))


class LightStartTest(unittest.TestCase):
    """--help, --version and argument errors import neither numpy nor torch
    (what made every run take seconds)."""

    def test_no_heavy_import(self):
        probe = ("import sys; sys.path.insert(0, sys.argv[1]); "
                 "from edgemt_tools import convert\n"
                 "for argv in (['--help'], ['--version'], ['--dtype', 'int4'], "
                 "['x/y', '--revision']):\n"
                 "    try:\n"
                 "        convert.main(argv)\n"
                 "    except SystemExit:\n"
                 "        pass\n"
                 "print(sorted(m for m in ('numpy', 'torch', 'huggingface_hub') "
                 "if m in sys.modules))")
        result = subprocess.run(["/usr/bin/python3", "-c", probe, helpers.TOOLS_DIR],
                                capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip().splitlines()[-1], "[]")


if __name__ == "__main__":
    unittest.main()
