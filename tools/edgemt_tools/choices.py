"""What edgemt-convert's command line offers, in a module that imports
nothing, so that `--help`, `--version` and argument errors need no numpy
(model_spec.py and int8_calibration.py take these from here)."""

# Storage types of the embedding and projection matrices (--dtype).
WEIGHT_DTYPES = ("fp32", "fp16", "int8")

# int8 calibration: sentences sampled from the source SentencePiece model
# without --calibrate, and lines of --calibrate FILE by default.
DEFAULT_CALIBRATION_SENTENCES = 128

# --fp32-embeddings (int8 files): "all" keeps the tables and an output
# projection tied to one in fp32; "lookup" only the tables, the tied
# projection getting an int8 copy of its own (model_spec.untie_output).
FP32_EMBEDDINGS = ("all", "lookup")
