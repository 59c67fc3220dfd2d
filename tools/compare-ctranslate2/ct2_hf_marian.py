"""Converts a Hugging Face MarianMT folder for CTranslate2 with its own
converter (ctranslate2.converters.TransformersConverter), adapted to the
pinned transformers 4.40.2 in two ways that change nothing in the weights:

* ctranslate2 4.8.x calls `from_pretrained(..., dtype=...)`, the keyword of
  newer transformers; 4.40.2 calls it `torch_dtype` (and passes an unknown
  `dtype` on to the model's constructor, which fails). `load_model` renames it.
* transformers 4.40.2 refuses a model.safetensors written without the
  {"format": "pt"} metadata (tools/fixtures/opus_mt_base/make_model.py writes
  none). Such a folder is staged first: every file linked, the safetensors
  rewritten with the metadata and the same tensors; the stage is deleted
  after the conversion.

usage: python ct2_hf_marian.py HF_DIR OUTPUT_DIR [--quantization int8]
"""

import argparse
import os
import shutil


def _safetensors_metadata(path: str):
    from safetensors import safe_open

    with safe_open(path, framework="numpy") as f:
        return f.metadata()


def _stage(hf_dir: str, stage_dir: str) -> str:
    """hf_dir itself when transformers can read it, else a staged copy."""
    weights = os.path.join(hf_dir, "model.safetensors")
    if not os.path.exists(weights):
        return hf_dir
    metadata = _safetensors_metadata(weights)
    if metadata and metadata.get("format") in ("pt", "tf", "flax", "np"):
        return hf_dir
    from safetensors.numpy import load_file, save_file

    if os.path.exists(stage_dir):
        shutil.rmtree(stage_dir)
    os.makedirs(stage_dir)
    for name in os.listdir(hf_dir):
        if name != "model.safetensors":
            os.symlink(os.path.abspath(os.path.join(hf_dir, name)), os.path.join(stage_dir, name))
    save_file(load_file(weights), os.path.join(stage_dir, "model.safetensors"),
              metadata={"format": "pt"})
    return stage_dir


def convert(hf_dir: str, output_dir: str, quantization=None) -> str:
    import ctranslate2

    class Converter(ctranslate2.converters.TransformersConverter):
        def load_model(self, model_class, model_name_or_path, **kwargs):
            if "dtype" in kwargs:
                kwargs["torch_dtype"] = kwargs.pop("dtype")
            return model_class.from_pretrained(model_name_or_path, **kwargs)

    stage_dir = output_dir.rstrip("/") + ".stage"
    source = _stage(hf_dir, stage_dir)
    try:
        return Converter(source).convert(output_dir, quantization=quantization, force=True)
    finally:
        if source != hf_dir:
            shutil.rmtree(stage_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hf_dir")
    parser.add_argument("output_dir")
    parser.add_argument("--quantization", default=None, choices=["int8", "float32"])
    args = parser.parse_args()
    print(convert(args.hf_dir, args.output_dir, args.quantization))


if __name__ == "__main__":
    main()
