// ModelBuilder: writes small, valid edgemt model files in memory (with the
// C++ FlatBufferBuilder), with knobs to break them on purpose.
//
//   edgemt::testing::ModelBuilder builder;               // tiny_config(), f32, seed 1
//   builder.find("encoder.layers.0.ffn.in.weight")->shape = {16, 7};
//   edgemt::testing::TempFile file(builder.build());
//   std::unique_ptr<edgemt::Model> model;
//   edgemt::Status status = edgemt::Model::load(file.path().c_str(), &model);
//
// Construction generates every tensor the config implies
// (format/tensor_layout.h, the runtime's own list) with deterministic
// pseudo-random values: each tensor's values depend only on the seed and its
// name, so removing or editing one tensor leaves the others unchanged.
// values(name) returns exactly what the file holds, as float (f16 tensors:
// the values after rounding to f16), so a naive reference implementation can
// be built from the same weights.
//
// Everything is public and written as is by build(): change the header
// fields, the config or the tensor list to make any file you need, valid or
// not. Changing `config` or `weight_dtype` does not touch the tensors; call
// regenerate_tensors() for a consistent file with the new config.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "models/transformer/config.h"

namespace edgemt::testing {

using transformer::TransformerConfig;  // the family the builder writes

// d_model 8, heads 2, ffn 16, 1 encoder + 1 decoder layer, vocab 32,
// max_positions 16, ReLU, post-norm, no final norms, untied, no output bias.
TransformerConfig tiny_config();

struct BuilderTensor {
  std::string name;
  std::vector<uint32_t> shape;  // written as is (may disagree with values)
  DType dtype = DType::kF32;
  // The values written, as float, in row-major order. For f16 tensors they
  // are already rounded to f16. When fewer than the shape implies, the rest
  // of the tensor's bytes are zero; extra values are not written.
  std::vector<float> values;
  // I8 tensors: the int8 values written (regenerate_tensors quantizes
  // matrices per row, Int8PerRowDynamic, and `values` then hold q · scale;
  // `<name>_scale` holds the scales). Empty: `values` rounded and clamped.
  std::vector<int8_t> int8_values;
  // Shares the bytes (offset and size) of this tensor instead of its own;
  // `values` then mirror the owner's. Empty: not an alias.
  std::string alias_of;
  // Overrides of what build() would write (to break files on purpose).
  std::optional<uint64_t> offset;  // from the start of the weight segment
  std::optional<uint64_t> size;    // the `size` field only; bytes stay as laid out
  std::optional<int8_t> raw_dtype; // the `dtype` field, as a raw enum value
};

// The version-3 `decoding` table as build() writes it (schema/edgemt.fbs
// Decoding). Defaults are the schema's.
struct BuilderDecoding {
  SearchRules rules = SearchRules::kEdgemt;
  uint32_t beam_size = 1;
  float length_penalty = 1.0f;
  float word_penalty = 0.0f;
  float max_len_a = 2.0f;
  float max_len_b = 10.0f;
  // Written as is; empty writes an empty list (nothing banned), which is not
  // the default of a file without the table (pad and bos banned).
  std::vector<int32_t> banned_tokens;
  // The `rules` field as a raw enum value (unknown rules).
  std::optional<int8_t> raw_rules;
};

// The lexical shortlist table as build() writes it (schema/edgemt.fbs
// Shortlist), written as is.
struct BuilderShortlist {
  uint32_t first = 0;
  uint32_t best = 0;
  bool add_source_ids = false;
  std::vector<uint32_t> offsets;  // [S + 1]
  std::vector<uint32_t> targets;
};

// Where things landed in the last build.
struct BuiltLayout {
  size_t flatbuffer_size = 0;   // the uint32 size prefix
  size_t weights_offset = 0;    // align64(4 + flatbuffer_size)
  uint64_t weights_size = 0;    // the value written in the FlatBuffer
  size_t file_size = 0;
  size_t trailer_offset = 0;    // 0: no integrity trailer
  std::map<std::string, uint64_t> tensor_offsets;  // as written
};

class ModelBuilder {
 public:
  explicit ModelBuilder(const TransformerConfig& config = tiny_config(),
                        DType weight_dtype = DType::kF32, uint32_t seed = 1);

  // ---- Header fields -------------------------------------------------------
  TransformerConfig config;
  DType weight_dtype;
  uint32_t seed;
  SpecialTokens special_tokens;  // pad 0, unk 1, bos 2, eos 3, decoder_start 2
  uint32_t format_version = kFormatVersion;
  std::string identifier = "EMT1";  // 4 characters
  std::string source_language = "en";
  std::string target_language = "de";
  // A real SentencePiece model of config.vocab_size pieces
  // (support/sentencepiece_builder.h), made by the constructor: the verifier
  // checks it. Changing the config afterwards does not remake it.
  std::string tokenizer_model;
  // Tokenizer.model_crc32 as written; unset: the CRC-32 of tokenizer_model
  // at build() (-1 writes a file without one).
  std::optional<int64_t> tokenizer_crc32;
  bool append_eos_to_source = true;
  std::string source_format = "test";
  std::string source_checkpoint = "tiny.pt";
  std::string source_sha256 = "0123456789abcdef";
  std::string converter_version = "model_builder";
  std::string created_utc = "2026-01-01T00:00:00Z";
  // Format version 3: the decoding table; unset writes none (the runtime then
  // uses edgemt's rules with pad and bos banned). config.source_vocab_size and
  // config.zero_decoder_start are written with the config.
  std::optional<BuilderDecoding> decoding;
  // Any version: the lexical shortlist; unset writes none.
  std::optional<BuilderShortlist> shortlist;
  // Format version 3: the source side's piece vocabulary (id i = piece i)
  // and its unk/eos ids (-1: special_tokens'); and a target tokenizer of
  // its own (its SentencePiece model and pieces).
  std::optional<std::vector<std::string>> source_pieces;
  int32_t source_unk_id = -1;
  int32_t source_eos_id = -1;
  std::optional<std::string> target_tokenizer_model;
  std::optional<std::vector<std::string>> target_pieces;
  // Raw enum overrides (unknown values, unsupported features).
  std::optional<int8_t> raw_family;
  std::optional<int8_t> raw_weight_dtype;
  // default: Int8PerRowDynamic for I8 (Int8SmoothedPerRowDynamic when
  // `smoothed`, Int8PerTensorDynamic when `per_tensor`, Int8PerTensorStatic
  // when `fixed_range`), else None
  std::optional<int8_t> raw_quantization;
  std::optional<int8_t> raw_activation;
  std::optional<int8_t> raw_tokenizer_kind;
  // Format version 2 and later: also write version 1's `family` and `config`
  // fields (a file the verifier must refuse).
  bool legacy_fields = false;
  // Leave whole tables out.
  bool include_config = true;
  bool include_special_tokens = true;
  bool include_tokenizer = true;
  bool include_provenance = true;
  // Tensor table in name order (as the format requires) or in list order.
  bool sort_tensors = true;
  // Value of the weights_size field (default: the segment's real size).
  std::optional<uint64_t> weights_size;
  // Format version 4 and later: the integrity trailer (format/integrity.h)
  // right after the segment, with the CRC-32Cs of the bytes as built; false
  // leaves it out (a file the verifier must refuse).
  bool checksum_trailer = true;
  // Extra bytes appended after the weight segment (and its trailer).
  size_t trailing_bytes = 0;

  // ---- Tensors ----------------------------------------------------------------
  std::vector<BuilderTensor> tensors;  // in layout order after construction
  // I8 files: regenerate_tensors() gives every projection that owns its
  // bytes a smoothing vector `<name>_smooth` (values in [1/e, e]) and the
  // file is Int8SmoothedPerRowDynamic (format version 5).
  bool smoothed = false;
  // I8 files: Int8PerTensorDynamic (format version 7): the embedding tables
  // (and a tied output projection) F32 without scales; regenerate_tensors().
  bool per_tensor = false;
  // I8 files: Int8PerTensorStatic (format version 8): tables F32 as with
  // per_tensor, and every projection that owns its bytes gets its fixed
  // activation multiplier `<name>_input_scale` [1] (20) after its scales.
  bool fixed_range = false;
  // Per-row I8 files: f32_tables (format version 9): the embedding tables
  // (and a tied output projection) F32 without scales; regenerate_tensors().
  // Written into the header as it is (set it with per_tensor for a file the
  // verifier must refuse).
  bool f32_tables = false;
  // Per-row I8 files: f16_tables (format version 10): the tables F16 without
  // scales (an untied config: a tied output would be refused); written as
  // it is, like f32_tables.
  bool f16_tables = false;
  // Per-row I8 files: residual_tables (format version 11): each I8 table
  // that owns its bytes gets residual codes and their row scales after its
  // scales; written as it is, like f32_tables.
  bool residual_tables = false;

  // Re-creates `tensors` from `config`, `weight_dtype` and `seed`.
  void regenerate_tensors();
  // fixed_range files: row scales and biases that make the file's arithmetic
  // (codes of x · 20, shifted sums) compute about x · wᵀ + b.
  void make_ranges_consistent();
  // nullptr when absent (first match).
  BuilderTensor* find(const std::string& name);
  const BuilderTensor* find(const std::string& name) const;
  // Removes every tensor called `name`; false when there was none.
  bool remove_tensor(const std::string& name);
  // Appends a tensor with pseudo-random values (extra or duplicate tensors).
  BuilderTensor& add_tensor(const std::string& name, const std::vector<uint32_t>& shape,
                            DType dtype);
  // Sets the shape of `name` and regenerates its values to match.
  bool reshape(const std::string& name, const std::vector<uint32_t>& shape);
  // Sets the dtype of `name` (values re-rounded, bytes re-sized).
  bool set_dtype(const std::string& name, DType dtype);

  // The values the file holds for tensor `name` (aliases resolved); empty
  // when absent.
  const std::vector<float>& values(const std::string& name) const;
  std::map<std::string, std::vector<float>> all_values() const;

  // ---- Output ------------------------------------------------------------------
  // The complete file. `layout` (optional) says where things went.
  std::vector<uint8_t> build(BuiltLayout* layout = nullptr) const;

 private:
  std::vector<float> generate(const std::string& name, const std::vector<uint32_t>& shape,
                              DType dtype) const;
};

// Rounds every value to f16 and back (what an f16 tensor holds).
void round_to_f16(std::vector<float>* values);

// A file with the given bytes, in $TMPDIR (or /tmp), deleted on destruction.
class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& bytes, const char* tag = "model");
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
};

// A 64-byte aligned copy of some bytes (for Model::from_buffer).
class AlignedBuffer {
 public:
  explicit AlignedBuffer(const std::vector<uint8_t>& bytes);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace edgemt::testing
