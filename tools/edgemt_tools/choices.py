"""What edgemt-convert's command line offers, in a module that imports
nothing, so that `--help`, `--version` and argument errors need no numpy
(model_spec.py and int8_calibration.py take these from here)."""

# Storage types of the embedding and projection matrices (--dtype).
WEIGHT_DTYPES = ("fp32", "fp16", "int8")

# int8 calibration: sentences sampled from the source SentencePiece model
# without --calibrate, and lines of --calibrate FILE by default.
DEFAULT_CALIBRATION_SENTENCES = 128
