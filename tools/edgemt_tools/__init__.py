"""edgemt_tools: the Python side of edgemt (converter, PyTorch reference, BLEU).

Modules (one job each):
  model_spec      header dataclasses, ModelSpec, the tensor names/shapes a config implies
  families/       one module per model family (config, checks, FlatBuffers table,
                  tensor table rules) and the registry the modules here reach them by
  model_file      write / read the .emt container (size-prefixed FlatBuffer + weights)
  atomic_file     write-to-temp, fsync, rename; never leaves a half file
  positions       the sinusoidal position table, computed as the source model does
  quantize        int8 per-row quantization maths (weights and run-time activations)
  gptq            error-compensating rounding of an int8 matrix (GPTQ)
  numpy_transformer  a numpy forward pass of the Transformer family (float32 or float64)
  int8_calibration   int8 calibration: smoothing vectors and rounding, per projection
  sources/        one module per checkpoint kind -> ModelSpec (sources/torch.py:
                  torch.nn.Transformer state_dict + config.json)
  writer          ModelSpec -> tensors in fp32 / fp16 / int8 -> model_file
  calibration     `--calibrate FILE`: the calibration text's lines, checked
  convert         the `edgemt-convert` command line
  choices         --dtype choices and calibration defaults (import-free: --help is fast)
  hub             Hugging Face Hub model ids: what a source reads, fetched into the Hub cache
  search          greedy / beam search semantics (the runtime copies SEARCH.md)
  torch_reference the PyTorch model rebuilt from the README, for reference outputs
  reference_cli   the `edgemt-reference` command line
  bleu, bleu_cli  corpus BLEU by sacreBLEU (PyPI) and the `edgemt-bleu` command
  textio          reading plain or .gz text files
  version         the project's version (CMakeLists.txt, or the installed package)
  project_files   the C++ project's files the converter reads (checkout, or the package's copy)
  testing         unchecked writer and tiny random checkpoints for tests
"""

from .version import project_version as _project_version

__version__ = _project_version()
