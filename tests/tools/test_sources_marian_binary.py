"""--from marian with Marian's binary model (.bin), sources/marian_binary.py.

Files made by Marian's own converter (the SSRU fixture's model.bin and
model.intgemm8.bin) read as their .npz, or are refused in one line.

The committed Marian fixture's model.npz is written here as a .bin the way
marian-conv writes one (docs/marian-formats.md, section 1: items sorted by
name, special:model.yml last, shapes as int32, padding so that the data
starts at a multiple of 256, each data block padded to 256): its
conversion must hold exactly the tensors of the .npz's, and translate
alike. Hostile and unsupported files get one line each.
"""

import os
import shutil
import struct
import unittest

import numpy as np

import framework_fixtures as ff
import helpers
from edgemt_tools.model_file import read_model
from edgemt_tools import int8_calibration, writer
from edgemt_tools.sources import SOURCES, SourceInputs
from edgemt_tools.sources.detect import detect
from edgemt_tools.sources.marian_binary import load_marian_binary

NPZ_FOLDER = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "npz")
SOURCE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "reference", "source.en")
LANGS = ("--src-lang", "en", "--tgt-lang", "de")
FLOAT32, INT8, INTGEMM8_BMT = 0x404, 0x101, 0x4101


def padded(data: bytes, unit: int = 256) -> bytes:
    return data + b"\0" * (-len(data) % unit)


def marian_binary(items, version=1):
    """The bytes of a Marian .bin holding `items` [(name, type, shape, data)]."""
    headers = b"".join(struct.pack("<4Q", len(name) + 1, kind, len(shape), len(padded(data)))
                       for name, kind, shape, data in items)
    names = b"".join(name.encode() + b"\0" for name, _, _, _ in items)
    shapes = b"".join(struct.pack(f"<{len(shape)}i", *shape) for _, _, shape, _ in items)
    head = struct.pack("<2Q", version, len(items)) + headers + names + shapes
    position = len(head)
    padding = ((position + 8) // 256 + 1) * 256 - position - 8
    body = b"".join(padded(data) for _, _, _, data in items)
    return head + struct.pack("<Q", padding) + b"\0" * padding + body


def npz_items(path):
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    config = arrays.pop("special:model.yml")
    items = [(name, FLOAT32, list(arrays[name].shape),
              np.ascontiguousarray(arrays[name], dtype="<f4").tobytes()) for name in sorted(arrays)]
    items.append(("special:model.yml", INT8, list(config.shape), config.astype(np.int8).tobytes()))
    return items


SSRU_FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian_ssru")


class MarianMadeBinaryTest(unittest.TestCase):
    """The .bin files Marian's own converter made (tests/fixtures/marian_ssru,
    marian-conv of pymarian 1.12.42)."""

    def test_marian_conv_float32_bin_reads_as_its_npz(self):
        from_bin = load_marian_binary(os.path.join(SSRU_FIXTURE, "model.bin"))
        with np.load(os.path.join(SSRU_FIXTURE, "model.npz")) as archive:
            from_npz = {name: archive[name] for name in archive.files}
        self.assertEqual(sorted(from_bin), sorted(from_npz))
        for name, array in from_npz.items():
            if name != "special:model.yml":  # marian-conv writes the YAML again
                self.assertEqual(from_bin[name].dtype, np.float32, name)
                np.testing.assert_array_equal(from_bin[name], array, name)
        self.assertIn(b"dec-cell: ssru", from_bin["special:model.yml"].astype(np.uint8).tobytes())

    def folder(self, model: str) -> str:
        """A Marian folder of the fixture's `model` (as model.bin) and vocabulary."""
        workspace = ff.Workspace(self)
        for name in ("vocab.spm",):
            shutil.copyfile(os.path.join(SSRU_FIXTURE, name), workspace.path(name))
        shutil.copyfile(os.path.join(SSRU_FIXTURE, model), workspace.path("model.bin"))
        with open(workspace.path("decoder.yml"), "w", encoding="utf-8") as handle:
            handle.write("models:\n  - model.bin\nvocabs:\n  - vocab.spm\n  - vocab.spm\n")
        return workspace.root

    def test_marian_conv_intgemm8_bin_reads_as_its_codes_weights(self):
        """marian-conv --gemm-type intgemm8: every *_W* matrix as int8 codes
        of Wᵀ and a quantMult; read back, each weight is within half a
        quantization step of the float model's."""
        path = os.path.join(SSRU_FIXTURE, "model.intgemm8.bin")
        quantized = load_marian_binary(path)
        with np.load(os.path.join(SSRU_FIXTURE, "model.npz")) as archive:
            floats = {name: archive[name] for name in archive.files}
        int8_items = 0
        for name, array in floats.items():
            if name == "special:model.yml":
                continue
            got = quantized[name]
            self.assertEqual(got.shape, array.shape, name)
            step = np.abs(array).max() / 127
            if not np.array_equal(got, array):
                int8_items += 1
                self.assertLessEqual(np.abs(got - array).max(), 0.5001 * step, name)
        self.assertEqual(int8_items, 28)  # as the fixture's README counts them
        folder = self.folder("model.intgemm8.bin")
        ff.convert(self, os.path.join(folder, "out.emt"), "--checkpoint", folder, *LANGS)

    def test_fp32_embeddings_of_an_intgemm8_model(self):
        """Marian's int8 arithmetic keeps its embeddings in float32 already:
        --fp32-embeddings says so and changes no byte; with
        --per-row-activations it gives a per-row file with fp32 tables."""
        folder = self.folder("model.intgemm8.bin")
        os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
        self.addCleanup(os.environ.pop, "SOURCE_DATE_EPOCH")
        outputs = {}
        for label, flags in (("plain", ()), ("fp32", ("--fp32-embeddings",)),
                             ("fp16", ("--fp16-embeddings",)),
                             ("per-row", ("--per-row-activations", "--fp32-embeddings"))):
            outputs[label] = os.path.join(folder, f"{label}.emt")
            result = helpers.run_tool("edgemt-convert", "--checkpoint", folder, *LANGS,
                                      "--dtype", "int8", *flags, "-o", outputs[label])
            self.assertEqual(result.returncode, 0, result.stderr)
            noted = f"{flags[0] if flags else ''} changes nothing here" in result.stderr
            self.assertEqual(noted, label in ("fp32", "fp16"), result.stderr)
        for label in ("fp32", "fp16"):
            with open(outputs["plain"], "rb") as plain, open(outputs[label], "rb") as other:
                self.assertEqual(plain.read(), other.read(), label)
        per_row = read_model(outputs["per-row"])
        self.assertTrue(per_row.header.f32_tables)
        self.assertEqual(per_row.entries["embedding.source"].dtype, "f32")

    def test_rnn_decoder_cells_other_than_ssru_are_refused_in_one_line(self):
        items = npz_items(os.path.join(SSRU_FIXTURE, "model.npz"))
        config = items[-1][3].split(b"\0")[0].replace(b"dec-cell: ssru", b"dec-cell: lstm")
        items[-1] = ("special:model.yml", INT8, [len(config) + 1], config + b"\0")
        folder = self.folder("model.bin")
        with open(os.path.join(folder, "model.bin"), "wb") as handle:
            handle.write(marian_binary(items))
        ff.refused(self, os.path.join(folder, "out.emt"), "dec-cell: 'lstm'",
                   "--checkpoint", folder, *LANGS)


class MarianBinaryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.items = npz_items(os.path.join(NPZ_FOLDER, "model.npz"))

    def setUp(self):
        self.workspace = ff.Workspace(self)

    def folder_with(self, data: bytes, name: str = "model.bin") -> str:
        """The fixture's folder with `data` as its model instead of model.npz."""
        folder = self.workspace.path("bin-" + str(len(os.listdir(self.workspace.root))))
        shutil.copytree(NPZ_FOLDER, folder)
        os.remove(os.path.join(folder, "model.npz"))
        with open(os.path.join(folder, "decoder.yml"), encoding="utf-8") as handle:
            decoder = handle.read().replace("model.npz", name)
        with open(os.path.join(folder, "decoder.yml"), "w", encoding="utf-8") as handle:
            handle.write(decoder)
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(data)
        return folder

    def refused(self, data: bytes, fragment: str):
        folder = self.folder_with(data)
        ff.refused(self, self.workspace.path("refused.emt"), fragment, "--from", "marian",
                   "--checkpoint", folder, *LANGS)

    def test_a_bin_converts_to_the_npz_s_tensors_and_translations(self):
        from_npz = ff.convert(self, self.workspace.path("npz.emt"), "--from", "marian",
                              "--checkpoint", NPZ_FOLDER, *LANGS, "--dtype", "fp32")
        folder = self.folder_with(marian_binary(self.items))
        self.assertEqual(detect(folder), "marian")
        # --from left out: told from the folder's .bin.
        from_bin = ff.convert(self, self.workspace.path("bin.emt"), "--checkpoint", folder,
                              *LANGS, "--dtype", "fp32")
        npz_model, bin_model = read_model(from_npz), read_model(from_bin)
        self.assertEqual(npz_model.table_order, bin_model.table_order)
        for name in npz_model.table_order:
            np.testing.assert_array_equal(npz_model.array(name), bin_model.array(name), name)
        self.assertEqual(ff.translate(self, from_bin, SOURCE), ff.translate(self, from_npz, SOURCE))

    def test_train_position_embeddings_is_ignored_as_marian_ignores_it(self):
        """Marian's Transformer reads transformer-train-positions, not the
        training option transformer-train-position-embeddings that model.yml
        records: with the latter true it still adds sinusoids (and has no
        Wpos), so the file converts exactly as without it."""
        config = self.items[-1][3].split(b"\0")[0].decode()
        self.assertIn("transformer-train-position-embeddings: false\n", config)
        changed = config.replace("transformer-train-position-embeddings: false",
                                 "transformer-train-position-embeddings: true").encode()
        items = self.items[:-1] + [("special:model.yml", INT8, [len(changed) + 1], changed + b"\0")]
        plain = ff.convert(self, self.workspace.path("plain.emt"), "--from", "marian",
                           "--checkpoint", self.folder_with(marian_binary(self.items)), *LANGS)
        flagged = ff.convert(self, self.workspace.path("flagged.emt"), "--from", "marian",
                             "--checkpoint", self.folder_with(marian_binary(items)), *LANGS)
        plain_model, flagged_model = read_model(plain), read_model(flagged)
        self.assertEqual(plain_model.table_order, flagged_model.table_order)
        for name in plain_model.table_order:
            np.testing.assert_array_equal(plain_model.array(name), flagged_model.array(name), name)
        self.assertEqual(plain_model.header.config.embedding_scale,
                         flagged_model.header.config.embedding_scale)

    def test_float16_items_read_as_float32(self):
        items = [(name, 0x402, shape, np.frombuffer(data, "<f4").astype("<f2").tobytes())
                 if kind == FLOAT32 else (name, kind, shape, data)
                 for name, kind, shape, data in self.items]
        folder = self.folder_with(marian_binary(items))
        ff.convert(self, self.workspace.path("f16.emt"), "--from", "marian", "--checkpoint",
                   folder, *LANGS, "--dtype", "fp16")

    def test_int8_items_of_either_fork_and_their_checks(self):
        index = [item[0] for item in self.items].index("encoder_l1_ffn_W1")
        name, _, shape, data = self.items[index]  # a [R, C] float matrix
        rest = self.items[:index] + self.items[index + 1:]
        weights = np.frombuffer(data, "<f4").reshape(shape)
        quant_mult = np.float32(127) / np.abs(weights).max()
        codes = np.clip(np.rint(weights.T * quant_mult), -127, 127).astype(np.int8)  # Wᵀ
        block = codes.tobytes() + struct.pack("<f", quant_mult)
        for kind in (INTGEMM8_BMT, 0x10001):
            folder = self.folder_with(marian_binary([(name, kind, shape, block)] + rest))
            ff.convert(self, self.workspace.path(f"int8-{kind}.emt"), "--from", "marian",
                       "--checkpoint", folder, *LANGS)
        read = load_marian_binary(os.path.join(folder, "model.bin"))[name]
        np.testing.assert_array_equal(read, codes.T.astype(np.float32) * (np.float32(1) / quant_mult))
        bad = codes.tobytes() + struct.pack("<f", 0.0)
        self.refused(marian_binary([(name, INTGEMM8_BMT, shape, bad)] + rest),
                     f"int8 item {name} has quantMult 0.0")
        self.refused(marian_binary([(name, INTGEMM8_BMT, shape, codes.tobytes())] + rest),
                     f"int8 item {name} of shape")

    def intgemm8_item(self, name: str):
        """The fixture's float item `name` as an intgemm8 item of browsermt's
        converter: (item, codes as stored, quantMult); Wᵀ, except Wemb."""
        _, _, shape, data = next(item for item in self.items if item[0] == name)
        weights = np.frombuffer(data, "<f4").reshape(shape)
        quant_mult = np.float32(127) / np.abs(weights).max()
        stored = weights if "Wemb" in name else weights.T
        codes = np.clip(np.rint(stored * quant_mult), -127, 127).astype(np.int8)
        block = codes.tobytes() + struct.pack("<f", quant_mult)
        return (name, INTGEMM8_BMT, shape, block), codes, quant_mult

    def test_an_int8_file_keeps_the_intgemm8_codes_wemb_included(self):
        """browsermt quantizes Wemb too ([V, d], not transposed): with it and
        one *_W* matrix as intgemm8 items, the per-row int8 file keeps both
        codes with 1/quantMult on every row (the tied output shares the
        table's); Marian's arithmetic keeps tables in float32 (the values of
        Wemb's codes); calibration leaves the matrix out (in a smoothed file
        its smoothing vector is ones). A code -128 is refused."""
        kept = {"Wemb": "embedding.source", "encoder_l1_ffn_W1": "encoder.layers.0.ffn.in.weight"}
        made = {name: self.intgemm8_item(name) for name in kept}
        items = [made[item[0]][0] if item[0] in made else item for item in self.items]
        folder = self.folder_with(marian_binary(items))
        output = self.workspace.path("kept.emt")
        result = helpers.run_tool("edgemt-convert", folder, *LANGS, "--dtype", "int8",
                                  "--no-calibration", "--per-row-activations", "-o", output)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("note: 2 of 23 int8 matrices keep the checkpoint's int8 codes",
                      result.stderr)
        model = read_model(output)
        for marian, name in kept.items():
            _, codes, quant_mult = made[marian]
            np.testing.assert_array_equal(model.array(name), codes, name)
            np.testing.assert_array_equal(model.array(name + "_scale"),
                                          np.full(len(codes), np.float32(1) / quant_mult), name)
        np.testing.assert_array_equal(model.array("output.weight"), made["Wemb"][1])
        # Marian's arithmetic (the default): the table in float32, the
        # values of its codes; the other matrix keeps its codes.
        output = ff.convert(self, self.workspace.path("kept-marian.emt"), folder, *LANGS,
                            "--dtype", "int8")
        model = read_model(output)
        _, codes, quant_mult = made["Wemb"]
        want = codes.astype(np.float32) * (np.float32(1) / quant_mult)
        np.testing.assert_array_equal(model.array("embedding.source"), want)
        np.testing.assert_array_equal(model.array(kept["encoder_l1_ffn_W1"]),
                                      made["encoder_l1_ffn_W1"][1])

        spec, _ = SOURCES["marian"].read(SourceInputs(
            checkpoint=folder, config=None, spm=None, src_lang="en", tgt_lang="de",
            converter_version="test", created_utc="2026-01-01T00:00:00Z"))
        self.assertEqual(sorted(spec.int8_codes), sorted(kept.values()))
        self.assertNotIn(kept["encoder_l1_ffn_W1"], int8_calibration.projections_to_calibrate(spec))
        _, tensors, _ = writer.pack(spec, "int8", int8_calibration.Int8Plan())
        name = kept["encoder_l1_ffn_W1"]
        np.testing.assert_array_equal(tensors[name], made["encoder_l1_ffn_W1"][1])
        self.assertTrue((tensors[name + "_smooth"] == 1).all())

        (name, kind, shape, block), _, _ = made["encoder_l1_ffn_W1"]
        low = struct.pack("b", -128) + block[1:]
        self.refused(marian_binary([(name, kind, shape, low) if item[0] == name else item
                                    for item in self.items]),
                     f"int8 item {name} holds the code -128")

    def test_cpu_specific_items_are_refused(self):
        name, _, shape, data = self.items[0]
        self.refused(marian_binary([(name, 0x11001, shape, data)] + self.items[1:]),
                     "intgemm8avx2, a CPU-specific packed layout")

    def test_hostile_headers(self):
        good = marian_binary(self.items)
        self.refused(marian_binary(self.items, version=2), "version 2 (encrypted")
        self.refused(good[:len(good) // 2], "truncated Marian binary model")
        self.refused(struct.pack("<2Q", 1, 1 << 60) + good[16:], "items in a")
        # A name without its NUL.
        first_name_at = 16 + 32 * len(self.items)
        name_length = struct.unpack("<Q", good[16:24])[0]
        broken = bytearray(good)
        broken[first_name_at + name_length - 1] = ord("x")
        self.refused(bytes(broken), "not one NUL-terminated string")
        # A shape that claims more elements than the data holds.
        name, kind, shape, data = self.items[0]
        self.refused(marian_binary([(name, kind, [s * 1000 for s in shape], data)]
                                   + self.items[1:]), f"item {name} of shape")


if __name__ == "__main__":
    unittest.main()
