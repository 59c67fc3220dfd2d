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
  python3-requests python3-tqdm python3-filelock python3-packaging python3-fsspec
                                             # huggingface_hub's dependencies from Debian (below)
  clang-14 libclang-rt-14-dev llvm-14        # sanitizer builds and libFuzzer (asan-ubsan preset);
                                             # llvm-symbolizer names the frames of a report
  python3-venv                               # pip install . into a fresh venv (tests/tools/test_pip_package.py)
  python3-pip python3-regex python3-tabulate python3-colorama python3-portalocker python3-lxml
                                             # pip, and sacrebleu's dependencies from Debian
  librsvg2-bin                               # rsvg-convert: tests render the attention heat maps (SVG) to PNG
  libopenblas0-openmp                        # an optimized BLAS for PyTorch: Debian's torch links
                                             # libblas.so.3, the reference BLAS unless this is
                                             # installed (~5x slower; edgemt-compare needs it)
  emscripten nodejs chromium                 # the WebAssembly build, its tests under Node.js and
                                             # the demo page in headless Chromium (ctest label wasm)
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

# Python packages Debian 12 lacks come from PyPI, pinned and installed
# without dependencies (Debian's, above, serve them) into /usr/local, where
# /usr/bin/python3 finds them: pip touches nothing apt owns.
pypi_pinned() {  # pypi_pinned PACKAGE VERSION
  local installed
  installed=$(/usr/bin/python3 -c 'import sys, importlib.metadata as m; print(m.version(sys.argv[1]))' "$1" 2>/dev/null || true)
  if [ "$installed" != "$2" ]; then
    echo "install-deps: installing $1 $2 from PyPI"
    /usr/bin/python3 -m pip install -q --no-deps --break-system-packages --root-user-action=ignore "$1==$2"
  else
    echo "install-deps: $1 $2 present"
  fi
}

# BLEU comes from sacrebleu.
pypi_pinned sacrebleu 2.4.3  # tools/edgemt_tools/bleu.py: SACREBLEU_VERSION

# edgemt-convert takes Hugging Face Hub model ids through huggingface_hub,
# pinned to the last release built on requests (1.0 moved to httpx); the pip
# package declares it for PyPI.
pypi_pinned huggingface_hub 0.36.2

# The model file's CRC-32C checksums (format version 4) are computed with
# Google's `google-crc32c` (hardware CRC through its C extension).
pypi_pinned google-crc32c 1.5.0

# Tests and fixture scripts write Hugging Face model.safetensors files with
# the `safetensors` package (the converter reads them with its own reader,
# sources/safetensors_file.py).
pypi_pinned safetensors 0.4.5
