"""`edgemt translate --attention DIR`: the SVG heat map of one sentence, read
as XML and rendered to PNG with rsvg-convert (Debian package librsvg2-bin).

For "A man is riding a bike." the SVG written (tools/cli/attention_svg.cc)
must hold:
- the sentence as the document's <title> and as the heading, the
  translation the CLI printed under it;
- one label per source piece (the model's own SentencePiece pieces and
  "</s>") across the top and one per target piece down the side, in order,
  each spelling its piece;
- rows x columns cells whose weights (their tooltips) make each row a
  distribution, and whose fill darkens as the weight grows;
- a colour scale from 0 to 1;
and the PNG must be a valid PNG of the SVG's size in which each cell shows
its colour and the heading is drawn.

Run for an RNN fixture model and for the bundled Transformer. Needs the
built CLI (EDGEMT_CLI) and rsvg-convert (platforms/debian12/install-deps.sh).
"""

import glob
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib

import helpers
from edgemt_tools.model_file import read_model

SENTENCE = "A man is riding a bike."
RNN_MODEL = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "torch_rnn",
                         "bahdanau-lstm.int8.emt")
SVG_NS = "{http://www.w3.org/2000/svg}"
WEIGHT = re.compile(r": (-?\d+\.\d{3}|NaN)$")


def luminance(colour: str) -> float:
    """Relative lightness of "#rrggbb" (Rec. 709 weights on the sRGB values)."""
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def classed(root, name):
    """Elements whose class attribute is `name`, in document order."""
    return [e for e in root.iter() if e.get("class") == name]


def title_of(element) -> str:
    title = element.find(SVG_NS + "title")
    return title.text if title is not None and title.text else ""


def read_png(path):
    """(width, height, rows of (r, g, b) pixels) of an 8-bit RGB or RGBA PNG,
    checking the signature and every chunk's CRC on the way."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path}: not a PNG signature")
    at, header, idat = 8, None, b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        if zlib.crc32(kind + body) != crc:
            raise AssertionError(f"{path}: bad CRC in chunk {kind!r}")
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
        if kind == b"IEND":
            break
    if header is None or not idat:
        raise AssertionError(f"{path}: no IHDR or no IDAT")
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise AssertionError(f"{path}: unexpected PNG format {header}")
    channels = 3 if colour_type == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    if len(raw) != height * (stride + 1):
        raise AssertionError(f"{path}: {len(raw)} bytes of pixels for {width}x{height}")
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):  # undo the PNG filter of this line
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            up_left = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 0xFF
            elif kind != 0:
                raise AssertionError(f"{path}: unknown filter {kind}")
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


class AttentionSvgCase:
    """The checks, for the model of a subclass (a mixin: not collected alone)."""

    MODEL = None

    @classmethod
    def setUpClass(cls):
        helpers.require_cli()
        cls.tmp = tempfile.mkdtemp()
        cls.directory = os.path.join(cls.tmp, "attention")
        cls.result = subprocess.run(
            [helpers.CLI, "translate", "-m", cls.MODEL, "--attention", cls.directory],
            input=SENTENCE + "\n", capture_output=True, text=True, timeout=300, check=False)
        header = read_model(cls.MODEL).header
        import sentencepiece  # the converter's dependency: installed wherever it runs
        cls.spm = sentencepiece.SentencePieceProcessor(model_proto=bytes(header.tokenizer_model))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        result = self.result
        self.assertEqual(result.returncode, 0, f"edgemt translate --attention failed: {result.stderr}")
        self.translation = result.stdout.splitlines()[0]
        svgs = sorted(glob.glob(os.path.join(self.directory, "*.svg")))
        self.assertEqual(len(svgs), 1, f"one sentence, one SVG; {self.directory} holds "
                                       f"{os.listdir(self.directory)}")
        self.svg_path = svgs[0]
        self.root = ET.parse(self.svg_path).getroot()  # fails on malformed XML
        self.assertEqual(self.root.tag, SVG_NS + "svg")
        self.width, self.height = int(self.root.get("width")), int(self.root.get("height"))

    # -- pieces ------------------------------------------------------------------
    def labels(self, group_class):
        """(piece from the tooltip, text drawn) of each label of a group, in order;
        the tooltips number the labels, which must count 0, 1, 2, ..."""
        (group,) = classed(self.root, group_class)
        labels = []
        for i, piece in enumerate(e for e in group if e.get("class") == "piece"):
            prefix = ("source " if group_class == "source-pieces" else "target ") + f"{i}: "
            self.assertTrue(title_of(piece).startswith(prefix), title_of(piece))
            text = piece.find(SVG_NS + "text")
            labels.append((title_of(piece)[len(prefix):], "".join(text.itertext())))
        return labels

    def test_title_and_heading(self):
        self.assertEqual(title_of(self.root), SENTENCE)
        self.assertEqual(" ".join(e.text for e in classed(self.root, "source-text")), SENTENCE)
        shown = " ".join(e.text for e in classed(self.root, "translation"))
        self.assertEqual(shown.lstrip("\u2192 "), self.translation)

    def test_source_labels_are_the_models_pieces_in_order(self):
        labels = self.labels("source-pieces")
        expected = self.spm.encode(SENTENCE, out_type=str) + ["</s>"]
        self.assertEqual([piece for piece, _ in labels], expected)
        self.assertEqual([drawn for _, drawn in labels], expected)  # all short: drawn whole

    def test_target_labels_spell_the_translation(self):
        labels = self.labels("target-pieces")
        pieces = [piece for piece, _ in labels]
        self.assertEqual([drawn for _, drawn in labels], pieces)
        words = pieces[:-1] if pieces and pieces[-1] == "</s>" else pieces
        self.assertTrue(words, "no target pieces")
        for piece in words:
            self.assertNotEqual(self.spm.piece_to_id(piece), self.spm.unk_id(),
                                f"{piece!r} is not a piece of the model's vocabulary")
        self.assertEqual(self.spm.decode_pieces(words), self.translation)

    # -- cells -------------------------------------------------------------------
    def cells(self):
        """[(x, y, fill, weight)] in document order."""
        cells = []
        for rect in classed(self.root, "cell"):
            match = WEIGHT.search(title_of(rect))
            self.assertIsNotNone(match, title_of(rect))
            self.assertNotEqual(match.group(1), "NaN")
            cells.append((int(rect.get("x")), int(rect.get("y")), rect.get("fill"),
                          float(match.group(1))))
        return cells

    def test_cells_form_the_grid_row_by_row(self):
        rows, columns = len(self.labels("target-pieces")), len(self.labels("source-pieces"))
        cells = self.cells()
        self.assertEqual(len(cells), rows * columns)
        xs = sorted({x for x, _, _, _ in cells})
        ys = sorted({y for _, y, _, _ in cells})
        self.assertEqual((len(xs), len(ys)), (columns, rows))
        self.assertEqual([(x, y) for x, y, _, _ in cells], [(x, y) for y in ys for x in xs])
        for x, y, _, _ in cells:
            self.assertTrue(0 <= x < self.width and 0 <= y < self.height, (x, y))
        for row in range(rows):
            weights = [w for _, _, _, w in cells[row * columns:(row + 1) * columns]]
            self.assertTrue(all(0.0 <= w <= 1.0 for w in weights), weights)
            # Three decimals each: the sum of a distribution within rounding.
            self.assertAlmostEqual(sum(weights), 1.0, delta=0.0005 * columns + 1e-6)

    def test_fill_darkens_with_weight(self):
        by_weight = sorted((w, luminance(fill)) for _, _, fill, w in self.cells())
        for (w0, l0), (w1, l1) in zip(by_weight, by_weight[1:]):
            if w1 > w0:
                self.assertLessEqual(l1, l0, f"weight {w1} is drawn lighter than {w0}")
        self.assertGreater(by_weight[-1][0], by_weight[0][0], "every weight equal")
        self.assertLess(by_weight[-1][1], by_weight[0][1], "the fill does not vary")

    def test_colour_scale(self):
        gradients = {g.get("id"): g for g in self.root.iter(SVG_NS + "linearGradient")}
        users = [e for e in self.root.iter() if (e.get("fill") or "").startswith("url(#")]
        self.assertEqual(len(users), 1, "one colour scale")
        gradient = gradients[users[0].get("fill")[len("url(#"):-1]]
        stops = [s.get("stop-color") for s in gradient.iter(SVG_NS + "stop")]
        self.assertGreaterEqual(len(stops), 2)
        self.assertEqual(stops[0], "#ffffff")  # weight 0: white
        self.assertLess(luminance(stops[-1]), 80)  # weight 1: dark
        ticks = [e.text for e in classed(self.root, "tick")]
        self.assertIn("0", ticks)
        self.assertIn("1", ticks)

    # -- rendering ---------------------------------------------------------------
    def test_renders_to_a_png_of_its_size(self):
        rsvg = shutil.which("rsvg-convert")
        self.assertIsNotNone(rsvg, "rsvg-convert not found: install librsvg2-bin "
                                   "(platforms/debian12/install-deps.sh)")
        png = os.path.join(self.tmp, "attention.png")
        result = subprocess.run([rsvg, "-o", png, self.svg_path], capture_output=True, text=True,
                                timeout=120, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "", "rsvg-convert warned")
        width, height, pixels = read_png(png)
        self.assertEqual((width, height), (self.width, self.height))
        # Each cell shows its colour (the centre pixel; antialiasing only at edges).
        for x, y, fill, _ in self.cells():
            want = tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5))
            got = pixels[y + 11][x + 11]
            self.assertTrue(all(abs(a - b) <= 2 for a, b in zip(got, want)),
                            f"cell at {x},{y}: drawn {got}, fill {fill}")
        # The heading is drawn: dark pixels just above its baseline.
        (heading,) = classed(self.root, "source-text")[:1]
        baseline = int(heading.get("y"))
        dark = [p for row in pixels[baseline - 8:baseline] for p in row if sum(p) < 200]
        self.assertGreater(len(dark), 20, "no text drawn where the heading is")


class RnnAttentionSvgTest(AttentionSvgCase, unittest.TestCase):
    MODEL = RNN_MODEL


class TransformerAttentionSvgTest(AttentionSvgCase, unittest.TestCase):
    MODEL = helpers.BUNDLED_MODEL


if __name__ == "__main__":
    unittest.main()
