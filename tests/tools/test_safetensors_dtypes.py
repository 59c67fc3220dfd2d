"""hf-marian reads model.safetensors in every float dtype (issue 38, defect
8: bf16 and f8 files failed with numpy's "data type 'bfloat16' not
understood", while bf16 in a .pt converted):

- bf16 (written by the `safetensors` package from torch bf16 tensors)
  converts to the same weights as the same bf16 values in
  pytorch_model.bin, and as their float32 values (torch's own widening)
  in an F32 file;
- F8_E4M3 and F8_E5M2 convert too: every float8 value is a float32, so
  widening loses nothing (a quantized F8 checkpoint's scale tensors are
  refused as tensors the converter does not understand, never dropped
  silently). The weights equal the F32 file of the values PyTorch 2.5.1
  gives the same codes (tests/fixtures/untrusted/valid_state_dict.npz);
- a dtype edgemt does not read, and a malformed header, are refused with
  one line; nothing is written.
"""

import json
import os
import shutil
import unittest

import numpy as np

import framework_fixtures as ff
from edgemt_tools.model_file import read_model

HF = os.path.join(ff.FIXTURES_DIR, "marian", "hf")
TORCH_TWO_VALUES = os.path.join(ff.FIXTURES_DIR, "untrusted", "valid_state_dict.npz")
# float8 codes that are NaN or infinite (the converter refuses non-finite weights).
NON_FINITE = {"F8_E4M3": {0x7F, 0xFF}, "F8_E5M2": set(range(0x7C, 0x80)) | set(range(0xFC, 0x100))}


def write_safetensors(path, tensors):
    """A .safetensors file (the format's README) of name -> (dtype name,
    shape, raw little-endian bytes): for dtypes numpy cannot write."""
    header, offset = {}, 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    with open(path, "wb") as handle:
        handle.write(len(text).to_bytes(8, "little") + text)
        for _, _, raw in tensors.values():
            handle.write(raw)


def fixture_tensors():
    from safetensors.numpy import load_file
    return load_file(os.path.join(HF, "model.safetensors"))


class SafetensorsDtypeTest(unittest.TestCase):
    def setUp(self):
        self.workspace = ff.Workspace(self)

    def folder(self, name, weights_file):
        """A copy of the HF fixture without its weights; returns (folder,
        path of `weights_file` in it)."""
        folder = self.workspace.path(name)
        shutil.copytree(HF, folder, ignore=shutil.ignore_patterns("model.safetensors",
                                                                  "pytorch_model.bin"))
        return folder, os.path.join(folder, weights_file)

    def convert(self, folder):
        output = ff.convert(self, self.workspace.path(os.path.basename(folder) + ".emt"),
                            "--from", "hf-marian", "--checkpoint", folder, "--dtype", "fp32")
        return read_model(output)

    def assert_same_weights(self, got, want):
        self.assertEqual(sorted(got.entries), sorted(want.entries))
        for name in want.entries:
            self.assertEqual(got.array(name).tobytes(), want.array(name).tobytes(), name)

    def test_bf16_converts_like_bf16_in_a_pt_and_its_float32_values(self):
        import torch
        from safetensors.numpy import save_file as save_numpy
        from safetensors.torch import save_file as save_torch
        bf16 = {name: torch.from_numpy(array).to(torch.bfloat16)
                for name, array in fixture_tensors().items()}
        safetensors_folder, path = self.folder("bf16-safetensors", "model.safetensors")
        save_torch(bf16, path, metadata={"format": "pt"})
        pt_folder, path = self.folder("bf16-pt", "pytorch_model.bin")
        torch.save(bf16, path)
        f32_folder, path = self.folder("f32", "model.safetensors")
        save_numpy({name: tensor.to(torch.float32).numpy() for name, tensor in bf16.items()},
                   path, metadata={"format": "pt"})
        got = self.convert(safetensors_folder)
        self.assert_same_weights(got, self.convert(pt_folder))
        self.assert_same_weights(got, self.convert(f32_folder))

    def test_float8_converts_to_the_values_pytorch_gives_its_codes(self):
        with np.load(TORCH_TWO_VALUES, allow_pickle=False) as torch_values:
            values = {"F8_E4M3": torch_values["float8_e4m3fn_all_codes"],
                      "F8_E5M2": torch_values["float8_e5m2_all_codes"]}
        rng = np.random.default_rng(38)
        float8, float32 = {}, {}
        for i, (name, array) in enumerate(sorted(fixture_tensors().items())):
            dtype = ("F8_E4M3", "F8_E5M2")[i % 2]
            finite = np.array(sorted(set(range(256)) - NON_FINITE[dtype]), dtype=np.uint8)
            codes = rng.choice(finite, size=array.shape)
            float8[name] = (dtype, array.shape, codes.tobytes())
            float32[name] = ("F32", array.shape, values[dtype][codes].astype("<f4").tobytes())
        f8_folder, path = self.folder("f8", "model.safetensors")
        write_safetensors(path, float8)
        f32_folder, path = self.folder("f32", "model.safetensors")
        write_safetensors(path, float32)
        self.assert_same_weights(self.convert(f8_folder), self.convert(f32_folder))

    def refuse(self, tensors, fragment):
        folder, path = self.folder("refused", "model.safetensors")
        write_safetensors(path, tensors)
        ff.refused(self, self.workspace.path("refused.emt"), fragment, "--from", "hf-marian",
                   "--checkpoint", folder, "--dtype", "fp32")
        shutil.rmtree(folder)

    def test_an_unknown_dtype_is_refused_in_one_line(self):
        tensors = {name: ("F32", array.shape, array.astype("<f4").tobytes())
                   for name, array in fixture_tensors().items()}
        name = "model.encoder.layers.0.fc1.bias"
        tensors[name] = ("F8_E8M0", tensors[name][1], bytes(len(tensors[name][2]) // 4))
        self.refuse(tensors, f"tensor {name} has dtype F8_E8M0, which edgemt does not read")

    def test_malformed_headers_are_refused_in_one_line(self):
        name = "model.encoder.layers.0.fc1.bias"
        array = fixture_tensors()[name]
        good = array.astype("<f4").tobytes()
        self.refuse({name: ("F32", array.shape, good[:-4])}, "do not fit its size or the file")
        self.refuse({name: ("F32", (-1,), good)}, "malformed header entry")
        folder, path = self.folder("long-header", "model.safetensors")
        with open(path, "wb") as handle:
            handle.write((1 << 40).to_bytes(8, "little") + b"{}")
        ff.refused(self, self.workspace.path("refused.emt"), "header length", "--from",
                   "hf-marian", "--checkpoint", folder, "--dtype", "fp32")


if __name__ == "__main__":
    unittest.main()
