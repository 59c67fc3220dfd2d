"""edgemt's side of the comparisons with Marian (compare.py, shapes.py): a
Marian model converted by edgemt-convert, and `edgemt translate` run on a
file with Marian's options (1 thread, one sentence per line)."""

import os
import shutil
import subprocess
import time


def convert_marian(convert: str, model: str, vocabularies: tuple, folder: str, output: str,
                   dtype: str, *flags: str) -> str:
    """edgemt-convert (the script `convert`) of the Marian `model` with its
    (source, target) `vocabularies`, copied into `folder` with a decoder.yml
    naming them, as Marian's releases have, to `output`, with `flags` (a
    shortlist, say); int8 without calibration: an intgemm8 .bin keeps
    Marian's codes."""
    os.makedirs(folder, exist_ok=True)
    for path in {model, *vocabularies}:
        shutil.copyfile(path, os.path.join(folder, os.path.basename(path)))
    names = [os.path.basename(path) for path in (model, *vocabularies)]
    with open(os.path.join(folder, "decoder.yml"), "w", encoding="utf-8") as handle:
        handle.write("models:\n  - {}\nvocabs:\n  - {}\n  - {}\n".format(*names))
    calibration = ["--no-calibration"] if dtype == "int8" else []
    # The converter's Python (Debian's numpy and sentencepiece), not a venv's.
    subprocess.run(["/usr/bin/python3", convert, "--from", "marian", "--checkpoint", folder,
                    "--src-lang", "en", "--tgt-lang", "de", "--dtype", dtype, *calibration,
                    *flags, "-o", output], check=True, capture_output=True)
    return output


def translate(cli: str, model: str, source: str, batch: int, beam: int,
              max_length_factor: float, *flags: str):
    """(seconds of the whole `edgemt translate` process, its output lines):
    the CLI `cli` on the file `source`; max_length_factor (when not None or
    0) as Marian's: --max-len-a F --max-len-b 0; `flags` after the rest."""
    command = [cli, "translate", "-m", model, "-i", source, "--beam", str(beam), "--batch",
               str(batch), "--threads", "1", "--no-split-sentences", "--no-progress"]
    if max_length_factor:
        command += ["--max-len-a", str(max_length_factor), "--max-len-b", "0"]
    start = time.perf_counter()
    result = subprocess.run([*command, *flags], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, result.stdout.split("\n")[:-1]
