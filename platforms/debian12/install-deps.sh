#!/usr/bin/env bash
# Installs what edgemt needs on Debian 12 (run as root). Idempotent.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  ccache                                     # every build of the test tiers goes through it
  libxnnpack-dev libpthreadpool-dev          # GEMMs (xnnpack.h includes pthreadpool.h, which libxnnpack-dev omits)
  libflatbuffers-dev flatbuffers-compiler python3-flatbuffers
  doctest-dev libbenchmark-dev
  libsentencepiece-dev python3-sentencepiece
  python3-torch python3-numpy                # converter and PyTorch reference
  python3-yaml                               # converter: Marian's model.yml, decoder.yml, vocabularies
  clang-14 libclang-rt-14-dev llvm-14        # sanitizer builds and libFuzzer (asan-ubsan preset);
                                             # llvm-symbolizer names the frames of a report
  python3-venv                               # pip install . into a fresh venv (tests/tools/test_pip_package.py)
  python3-pip python3-regex python3-tabulate python3-colorama python3-portalocker python3-lxml
                                             # pip, and sacrebleu's dependencies from Debian
  librsvg2-bin                               # rsvg-convert: tests render the attention heat maps (SVG) to PNG
  libopenblas0-openmp                        # an optimized BLAS for PyTorch: Debian's torch links
                                             # libblas.so.3, the reference BLAS unless this is
                                             # installed (~5x slower; edgemt-compare needs it)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# BLEU comes from sacrebleu (PyPI; Debian 12 has no package), pinned and
# installed without dependencies (Debian's, above, serve it) into
# /usr/local, where /usr/bin/python3 finds it: pip touches nothing apt owns.
sacrebleu_version=2.4.3  # tools/edgemt_tools/bleu.py: SACREBLEU_VERSION
if [ "$(/usr/bin/python3 -c 'import sacrebleu; print(sacrebleu.__version__)' 2>/dev/null)" != "$sacrebleu_version" ]; then
  echo "install-deps: installing sacrebleu $sacrebleu_version from PyPI"
  /usr/bin/python3 -m pip install -q --no-deps --break-system-packages --root-user-action=ignore \
    "sacrebleu==$sacrebleu_version"
else
  echo "install-deps: sacrebleu $sacrebleu_version present"
fi

# The model file's CRC-32C checksums (format version 4) are computed with
# Google's `google-crc32c` (PyPI; hardware CRC through its C extension),
# pinned and without dependencies, into /usr/local like sacrebleu.
crc32c_version=1.5.0
if [ "$(/usr/bin/python3 -c 'import google_crc32c, importlib.metadata as m; print(m.version("google-crc32c"))' 2>/dev/null)" != "$crc32c_version" ]; then
  echo "install-deps: installing google-crc32c $crc32c_version from PyPI"
  /usr/bin/python3 -m pip install -q --no-deps --break-system-packages --root-user-action=ignore \
    "google-crc32c==$crc32c_version"
else
  echo "install-deps: google-crc32c $crc32c_version present"
fi

# Tests and fixture scripts write Hugging Face model.safetensors files with
# the `safetensors` package (PyPI; Debian 12 has none; the converter reads
# them with its own reader, sources/safetensors_file.py), pinned, without
# dependencies (numpy is Debian's), into /usr/local like sacrebleu.
safetensors_version=0.4.5
if [ "$(/usr/bin/python3 -c 'import safetensors; print(safetensors.__version__)' 2>/dev/null)" != "$safetensors_version" ]; then
  echo "install-deps: installing safetensors $safetensors_version from PyPI"
  /usr/bin/python3 -m pip install -q --no-deps --break-system-packages --root-user-action=ignore \
    "safetensors==$safetensors_version"
else
  echo "install-deps: safetensors $safetensors_version present"
fi
