"""Node.js on the WebAssembly build translates as the native CLI does (issue
43): `node platforms/wasm/translate.mjs` against `edgemt translate`, line for
line identical, greedy and beam 4, on the Multi30k test sources
(models/reference/test_2016_flickr.en) for

  Int8   the bundled int8 model (its own int8 GEMM gives the same bits on
         every CPU: the WebAssembly SIMD kernel must too);
  Fp16   the bundled fp16 file (computed in f32 natively on x86, as in
         WebAssembly: the f32 path);
  Fp32   a genuine fp32 file: the Marian SSRU fixture (tests/fixtures/
         marian_ssru, model.npz) converted here with its lexical shortlist,
         as tests/tools/test_sources_marian_ssru.py converts it.

Each class is its own ctest test (wasm.node_outputs.int8, .fp16, .fp32;
`-k` picks the class). The f32 path is far slower in WebAssembly than the
int8 one (no XNNPACK there: the portable kernels run it), so the fp16 and
fp32 runs take fewer lines (LINES); raise them as the kernels get faster.

Needs the module built by ctest's wasm.build: without its stamp
(EDGEMT_WASM_BUILT; no emcc or node) prints "SKIPPED: ..." and passes.
By hand, after `bash platforms/wasm/build.sh`:

    EDGEMT_CLI=build/edgemt EDGEMT_WASM_BUILT=/dev/null /usr/bin/python3 -m unittest \\
      tests/platform/wasm/test_node_outputs.py -v
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLI = os.environ.get("EDGEMT_CLI", os.path.join(ROOT, "build", "edgemt"))
BUILT = os.environ.get("EDGEMT_WASM_BUILT", "")
NODE_CLI = os.path.join(ROOT, "platforms", "wasm", "translate.mjs")
SOURCES = os.path.join(ROOT, "models", "reference", "test_2016_flickr.en")
SSRU = os.path.join(ROOT, "tests", "fixtures", "marian_ssru")

# (greedy lines, beam-4 lines) of SOURCES per model; seconds of node on
# cpu family 25 (Zen 4) when these were chosen, in the comments.
LINES = {
    "int8": (1000, 1000),  # 10 s + 27 s
    "fp16": (100, 25),     # 42 s in all on cpu family 25 (the f32 products in WebAssembly SIMD)
    "fp32": (1000, 1000),  # 16 s (a tiny model, but every product in f32)
}


def require_build():
    if not BUILT or not os.path.exists(BUILT):
        message = "SKIPPED: the WebAssembly build did not run (wasm.build: no emcc or node)"
        print(message, file=sys.stderr)
        raise unittest.SkipTest(message)


def first_lines(count):
    with open(SOURCES, encoding="utf-8") as f:
        return "".join(f.readlines()[:count])


def run(command, text):
    """stdout of `command` fed `text`, and its seconds; fails on a non-zero
    status (a line that cannot be translated is one)."""
    start = time.monotonic()
    done = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, check=False)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(command)}: status {done.returncode}\n"
                             f"{done.stderr.decode('utf-8', 'replace')}")
    return done.stdout.decode("utf-8"), seconds


class NodeMatchesNative:
    """One model's greedy and beam-4 outputs, node against native."""

    kind = ""
    model = ""

    @classmethod
    def setUpClass(cls):
        require_build()

    def check(self, beam, count):
        text = first_lines(count)
        native, native_seconds = run([CLI, "translate", "-m", self.model, "--beam", str(beam),
                                      "--threads", "1"], text)
        node, node_seconds = run(["node", NODE_CLI, "-m", self.model, "--beam", str(beam)], text)
        sources, want, got = text.splitlines(), native.splitlines(), node.splitlines()
        print(f"{self.kind} beam {beam}: {len(sources)} lines, node {node_seconds:.1f} s, "
              f"native {native_seconds:.1f} s (1 thread; both with start-up and load)")
        self.assertEqual(len(want), len(sources))
        self.assertEqual(len(got), len(sources), "node wrote another number of lines")
        differ = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
        shown = "".join(f"\n  line {i + 1}: {sources[i]}\n    native: {want[i]}\n    node:   {got[i]}"
                        for i in differ[:5])
        self.assertEqual(differ, [], f"{len(differ)} of {len(sources)} lines differ:{shown}")

    def test_greedy(self):
        self.check(1, LINES[self.kind][0])

    def test_beam4(self):
        self.check(4, LINES[self.kind][1])


class Int8(NodeMatchesNative, unittest.TestCase):
    kind = "int8"
    model = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")


class Int8Lines(unittest.TestCase):
    """Lines as bytes: one that is not UTF-8 fails alone (status 1, the line
    left empty) where the CLI fails it, not translated as U+FFFD; CRLF, an
    empty line, a byte order mark and a last line without a newline read as
    the CLI reads them."""

    @classmethod
    def setUpClass(cls):
        require_build()

    def test_lines_as_the_cli_reads_them(self):
        model = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")
        data = (b"A man.\r\n\nA \xff cat.\n\xef\xbb\xbfA dog runs.\nTwo \xc3\x28 women.\n"
                b"A girl sings.")
        outputs = []
        for command in ([CLI, "translate", "-m", model, "--threads", "1"],
                        ["node", NODE_CLI, "-m", model]):
            done = subprocess.run(command, input=data, capture_output=True, check=False)
            outputs.append((done.returncode, done.stdout))
            if command[0] == "node":
                stderr = done.stderr.decode("utf-8")
                self.assertIn("line 3: the line is not valid UTF-8; line left empty", stderr)
                self.assertIn("line 5: the line is not valid UTF-8; line left empty", stderr)
        (native_status, native), (node_status, node) = outputs
        self.assertEqual(native_status, 1)
        self.assertEqual(node_status, 1)
        self.assertEqual(node, native)
        lines = node.decode("utf-8").split("\n")
        self.assertEqual(len(lines), 7)  # six lines, each ended by a newline
        self.assertEqual([lines[2], lines[4]], ["", ""])
        self.assertNotEqual(lines[0], "")


class Fp16(NodeMatchesNative, unittest.TestCase):
    kind = "fp16"
    model = os.path.join(ROOT, "models", "multi30k-en-de.fp16.emt")


class Fp32(NodeMatchesNative, unittest.TestCase):
    kind = "fp32"

    @classmethod
    def setUpClass(cls):
        require_build()
        tmp = tempfile.mkdtemp(prefix="edgemt-wasm-fp32-")
        cls.addClassCleanup(shutil.rmtree, tmp, True)
        # A folder as Firefox downloads a model: the checkpoint and its vocabulary.
        for name in ("model.npz", "vocab.spm"):
            os.symlink(os.path.join(SSRU, name), os.path.join(tmp, name))
        cls.model = os.path.join(tmp, "ssru.fp32.emt")
        run(["/usr/bin/python3", os.path.join(ROOT, "tools", "edgemt-convert"), "--from", "marian",
             "--checkpoint", tmp, "--src-lang", "en", "--tgt-lang", "de", "--dtype", "fp32",
             "--shortlist", os.path.join(SSRU, "lex.bin"), "-o", cls.model], "")


if __name__ == "__main__":
    unittest.main()
