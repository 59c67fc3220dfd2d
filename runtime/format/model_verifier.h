// Model verifier: every check a model file goes through before the runtime
// reads any of it, run once at load.
//
// Order (each step only reads bytes the previous steps proved are there;
// step 5's bounds are checked right after step 3, for step 3b):
//   1. container   file ≥ 12 bytes; identifier "EMT1" at bytes [8, 12)
//                  (checked before the size, so that a file of another
//                  kind is named as such, not as "truncated"); uint32 size
//                  prefix S with 8 ≤ S < 2 GiB and 4 + S ≤ file size
//   2. version     format_version (kOldestFormatVersion..kFormatVersion),
//                  read through a bounds-checked look at the
//                  root table only, so that a file of another version is
//                  reported as such (kUnsupportedVersion) even if its layout
//                  changed beyond what this runtime can verify
//   3. FlatBuffer  flatbuffers::Verifier over [0, 4 + S) (size prefixed;
//                  bounded depth and table count)
//   3b. checksum   format version 4 and later: the integrity trailer after
//                  the weight segment (format/integrity.h) is there, and the
//                  CRC-32C of everything before the segment is the one it
//                  records (unless VerifyOptions::verify_checksum is off)
//   4. header      family and config (version 1: `family` and `config`;
//                  2 and 3: the `family_config` union), config ranges,
//                  weight dtype, special token ids inside the vocabulary;
//                  each side's embedded SentencePiece model: its CRC-32
//                  when the file records one (format/crc32.h), then walked
//                  and checked wherever SentencePiece trusts it
//                  (format/sentencepiece_verifier.h); each side's piece
//                  vocabulary (as many pieces as that side's ids, none
//                  empty or holding a NUL) and unk/eos ids; the decoding
//                  defaults (known rules, beam 1..kMaxBeam, finite
//                  penalties and length rule, banned ids in the vocabulary);
//                  the lexical shortlist if any (offsets from 0 rising to
//                  the target count, at most one list per source id, each
//                  list's ids strictly ascending and in the vocabulary)
//   5. segment     the weight segment starts at align64(4 + S) and its
//                  weights_size bytes lie inside the file (trailing bytes
//                  after it are allowed: flash images are often padded)
//   6. tensors     each entry: non-empty NUL-free name, rank 1..4, known
//                  dtype, 64-aligned offset, bytes inside the segment
//                  (overflow-safe), size == element count × dtype size; the
//                  table sorted by name with no duplicates (find_tensor binary
//                  searches it)
//   7. layout      every tensor the config implies (the family's table: models/tensor_table.h)
//                  is present with exactly that shape and dtype, aliases share
//                  bytes, and no other tensor is present
//
//   8. values      every stored tensor once (aliases share bytes): f32 and
//                  f16 values finite, int8 codes in [-127, 127], int8 row
//                  scales >= 0 (format/weight_values.h), in file order and
//                  in pieces of 256 KiB, each first fed to the weights'
//                  CRC-32C (version 4 and later), compared with the
//                  trailer's at the end. This reads the whole weight
//                  segment once, at memory speed.
//
// Sizes are bounded by edgemt/limits.h: the file (kMaxModelBytes), the
// tensor count (kMaxTensors), every config dimension.
//
// On unexpected tensors (step 7) we reject rather than ignore. Format
// versions are the compatibility mechanism (schema/edgemt.fbs: readers reject
// versions they do not know), so a version-1 file with a tensor version 1
// does not define is a converter bug or a file meant for a different model;
// silently ignoring, say, an extra bias would produce wrong translations
// without a word. The converter writes exactly the tensors
// tools/edgemt_tools/model_spec.py's expected_tensors() lists, checked by
// validate.py before anything is written, so this step never refuses a file
// the converter made; files made by other means are held to the same list.
//
// This header is internal to runtime/format/ (and its tests); it does not
// include the generated FlatBuffers code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "edgemt/limits.h"
#include "edgemt/model.h"
#include "edgemt/status.h"
#include "models/families.h"

namespace edgemt {

// Limits of a sane file are in edgemt/limits.h. They keep every size
// computation far from overflow (V·d·4 < 2^41) and reject nonsense early
// with a readable message. Upper bound on FlatBuffer tables the verifier
// visits: kMaxTensors tensors plus a handful of other tables.
inline constexpr uint32_t kMaxFlatBufferTables = 2 * kMaxTensors;
inline constexpr uint32_t kMaxFlatBufferDepth = 16;

// Alignment of the weight segment and of each tensor in it.
inline constexpr uint64_t kWeightAlignment = 64;
inline constexpr uint64_t align_to_weight_alignment(uint64_t value) {
  return (value + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
}

// One side's tokenizer, as verified.
struct VerifiedTokenizer {
  const uint8_t* model = nullptr;  // serialized SentencePiece ModelProto
  size_t model_size = 0;
  const void* pieces = nullptr;    // the FlatBuffers vector of piece strings, or null
  uint32_t piece_count = 0;        // 0: SentencePiece ids are the model's ids
  int32_t unk = 0;
  int32_t eos = 0;
};

// Piece `id` of a side's vocabulary (id < piece_count), *length bytes.
const char* vocabulary_piece(const VerifiedTokenizer& tokenizer, size_t id, size_t* length);

// Everything a Model exposes, as verified. Strings and tensor data point into
// the verified buffer (strings are never null: absent ones are "").
struct VerifiedModel {
  uint32_t format_version = 0;
  FamilyConfig family;  // the family and its config
  SpecialTokens special_tokens;
  DType weight_dtype = DType::kF32;
  QuantizationScheme quantization = QuantizationScheme::kNone;
  bool f32_tables = false;  // a per-row I8 file's tables are F32 (version 9)
  bool f16_tables = false;  // a per-row I8 file's tables are F16 (version 10)
  bool residual_tables = false;  // its I8 tables have residual codes (version 11)
  const char* source_language = "";
  const char* target_language = "";
  Provenance provenance;
  VerifiedTokenizer tokenizers[2];  // by TextSide
  bool append_eos_to_source = true;
  DecodingDefaults decoding;  // banned_tokens point into the file or default_banned
  int32_t default_banned[2] = {0, 0};
  LexicalShortlist shortlist;  // points into the file
  bool has_shortlist = false;
  uint64_t weights_offset = 0;  // start of the weight segment in the buffer
  uint64_t weights_size = 0;
  std::unique_ptr<TensorView[]> tensors;  // sorted by name (strcmp order)
  size_t tensor_count = 0;
  FileChecksum checksum;
};

// `checked` (optional) is told of each stored tensor once its values are
// checked (step 8), e.g. to drop its pages of a mapped file right away, so
// that verifying never keeps the whole file resident.
using TensorChecked = void (*)(const void* context, const TensorView& tensor);

struct VerifyOptions {
  // Off: the CRC-32C pass is skipped (the file was verified elsewhere); the
  // trailer must still be there, and every other check runs.
  bool verify_checksum = true;
  TensorChecked checked = nullptr;
  const void* context = nullptr;
};

// Runs steps 1–8 on `data` [0, size). `data` must stay valid while *out is
// used; it should be 64-byte aligned (then TensorView::data is too), which
// this function does not require. On success *out is filled; on error *out is
// left in an unspecified but destructible state.
// Errors: kInvalidModel, kUnsupportedVersion, kUnsupported (family,
// activation, norm placement, tokenizer kind, int8 or unknown weight dtype),
// kOutOfMemory (the TensorView array), kInvalidArgument (null pointers).
[[nodiscard]] Status verify_model(const uint8_t* data, size_t size, VerifiedModel* out,
                                  const VerifyOptions& options = VerifyOptions());

// Binary search in a name-sorted TensorView array; nullptr when absent.
const TensorView* find_tensor_view(const TensorView* tensors, size_t count, const char* name);

// Writes "[a, b, ...]" into `buffer` (always NUL-terminated).
void format_shape(char* buffer, size_t size, const uint32_t* shape, uint32_t rank);

}  // namespace edgemt
