"""The model-file limits the runtime enforces: runtime/include/edgemt/limits.h
(every family) and runtime/models/transformer/config.h (the Transformer's).

The converter refuses to write a file outside them, so that it never writes a
file the runtime would reject. tests/tools/test_limits.py reads the C++
headers and holds these values equal to it.
"""

MAX_LAYERS_PER_STACK = 64          # kMaxLayersPerStack: encoder and decoder layers, each
MAX_D_MODEL = 16384                # kMaxDModel
MAX_FFN_DIM = 262144               # kMaxFfnDim
MAX_VOCAB_SIZE = 1 << 24           # kMaxVocabSize
MAX_POSITIONS = 65536              # kMaxPositions
MAX_MODEL_BYTES = 64 << 30         # kMaxModelBytes: the whole file
MAX_TENSORS = 8192                 # kMaxTensors: entries of the tensor table
MAX_TOKENIZER_BYTES = 64 << 20     # kMaxTokenizerBytes: the embedded SentencePiece model

# C++ name -> Python value, for the test that compares them.
BY_CPP_NAME = {
    "kMaxLayersPerStack": MAX_LAYERS_PER_STACK,
    "kMaxDModel": MAX_D_MODEL,
    "kMaxFfnDim": MAX_FFN_DIM,
    "kMaxVocabSize": MAX_VOCAB_SIZE,
    "kMaxPositions": MAX_POSITIONS,
    "kMaxModelBytes": MAX_MODEL_BYTES,
    "kMaxTensors": MAX_TENSORS,
    "kMaxTokenizerBytes": MAX_TOKENIZER_BYTES,
}
