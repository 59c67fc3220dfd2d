// Model: a verified, read-only view of an edgemt model file (.emt).
//
// Loading mmaps the file and checks it once, fully: the FlatBuffers Verifier,
// the file identifier and format version, then the semantics (config values in
// range, every tensor the config implies present with the right shape and
// dtype, offsets inside the weight segment and 64-byte aligned, special token
// ids inside the vocabulary). After a successful load nothing trusts the file
// blindly and nothing re-checks it.
//
// Ownership and lifetime: a Model owns its mapping (or borrows the caller's
// buffer for from_buffer) and is immutable; TensorView data pointers and all
// strings stay valid while the Model lives. A Model may be shared read-only
// by any number of threads and Translators.
//
// This header does not include the generated FlatBuffers code: the schema is
// an implementation detail of runtime/format/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "edgemt/status.h"

namespace edgemt {

struct FamilyConfig;  // runtime/models/families.h

// The model file format version this runtime writes in its tests and reads,
// and the oldest it still reads (schema/edgemt.fbs lists what changed).
inline constexpr uint32_t kFormatVersion = 11;
inline constexpr uint32_t kOldestFormatVersion = 1;

enum class DType : uint8_t { kF32 = 0, kF16 = 1, kI8 = 2 };
// How an I8 file's matrices are read (schema/edgemt.fbs): kInt8PerRowDynamic
// is symmetric int8 per output row with `<matrix>_scale` tensors, activations
// quantized per row at run time; kInt8SmoothedPerRowDynamic (format version
// 5) adds a smoothing vector `<matrix>_smooth` per projection matrix, which
// multiplies each input row before it is quantized; kInt8PerTensorDynamic
// (format version 7, Marian's intgemm8 arithmetic) quantizes a product's
// activations with one range for all its rows and keeps embedding tables
// (and an output projection tied to one) in F32; kInt8PerTensorStatic
// (format version 8, Firefox's Marian models with alphas) quantizes each
// product's activations with a fixed multiplier `<matrix>_input_scale` from
// the file. kNone for F32 and F16 files. Since format version 9 a per-row
// file may keep its embedding tables (and an output projection tied to
// one) in F32, as the per-tensor schemes do (Model::f32_tables()); since
// version 10 in F16, no projection then tied to one (Model::table_dtype());
// since version 11 its I8 tables may have a 4-bit residual code per weight
// that lookups add (Model::residual_tables()).
enum class QuantizationScheme : uint8_t {
  kNone = 0,
  kInt8PerRowDynamic = 1,
  kInt8SmoothedPerRowDynamic = 2,
  kInt8PerTensorDynamic = 3,
  kInt8PerTensorStatic = 4,
};

const char* dtype_name(DType dtype);            // "f32", "f16", "i8"
size_t dtype_size(DType dtype);                 // bytes per element
// "none", "int8-per-row-dynamic", "int8-smoothed-per-row-dynamic",
// "int8-per-tensor-dynamic", "int8-per-tensor-static"
const char* quantization_scheme_name(QuantizationScheme scheme);

struct SpecialTokens {
  int32_t pad = 0;
  int32_t unk = 0;
  int32_t bos = 0;
  int32_t eos = 0;
  int32_t decoder_start = 0;
};

// Whose beam search and length rules translations follow: the source
// framework's, so that edgemt reproduces its output
// (tools/edgemt_tools/SEARCH.md states each).
enum class SearchRules : uint8_t {
  kEdgemt = 0,       // edgemt's own (--from torch): top 2K, done once K have finished
  kOpenNMT = 1,      // OpenNMT-py: top K, done once the best hypothesis has ended
  kMarian = 2,       // Marian: the beam shrinks as hypotheses end
  kHuggingFace = 3,  // Hugging Face generate(): K best finished, EOS forced at the end
};
const char* search_rules_name(SearchRules rules);  // "edgemt", "opennmt", "marian", "huggingface"

// How the model's source framework decodes by default (format version 3;
// older files get the values below, with pad and bos banned).
struct DecodingDefaults {
  SearchRules rules = SearchRules::kEdgemt;
  uint32_t beam_size = 1;
  float length_penalty = 1.0f;
  float word_penalty = 0.0f;
  float max_len_a = 2.0f;
  float max_len_b = 10.0f;
  const int32_t* banned_tokens = nullptr;  // target ids never generated
  size_t banned_count = 0;
};

// A lexical shortlist stored in the model file (schema/edgemt.fbs
// Shortlist): per batch the output covers only the candidate target ids
// (edgemt/shortlist.h computes them).
struct LexicalShortlist {
  uint32_t first = 0;           // ids below it are always candidates
  uint32_t best = 0;            // the most ids a source id lists (as converted)
  bool add_source_ids = false;  // each source id is itself a candidate
  const uint32_t* offsets = nullptr;  // [source_ids + 1]
  size_t source_ids = 0;              // S: ids >= S list nothing
  const uint32_t* targets = nullptr;  // [offsets[S]], ascending per source id
};

// The two sides of a translation; each has its tokenizer and vocabulary.
enum class TextSide : uint8_t { kSource = 0, kTarget = 1 };

struct Provenance {
  const char* source_format = "";
  const char* source_checkpoint = "";
  const char* source_sha256 = "";
  const char* converter_version = "";
  const char* created_utc = "";
};

inline constexpr uint32_t kMaxTensorRank = 4;

// One entry of the tensor table, pointing into the mapped weight segment.
struct TensorView {
  const char* name = "";
  DType dtype = DType::kF32;
  uint32_t rank = 0;
  uint32_t shape[kMaxTensorRank] = {0, 0, 0, 0};
  uint64_t offset = 0;  // from the start of the weight segment
  uint64_t size_bytes = 0;
  const void* data = nullptr;  // 64-byte aligned
  uint64_t element_count() const;
};

// How Model::load reads a file.
enum class LoadMode : uint8_t {
  // mmap the file (default): nothing is copied, weights are read in place
  // and only the pages used are resident. The file must not be truncated or
  // rewritten in place while the Model lives: reading a page the file no
  // longer has raises SIGBUS, which kills the process unless it handles the
  // signal (edgemt translate does, with a message). Replacing the file by
  // renaming a new one over it is safe: the mapping keeps the old inode.
  kMap = 0,
  // Read the whole file into private memory: immune to anything done to the
  // file after load, at the cost of the file's size in resident memory for
  // the Model's life (weights a Translator packs are then resident twice).
  // For model files the process does not control.
  kCopy = 1,
};

struct LoadOptions {
  LoadMode mode = LoadMode::kMap;
  // Format version 4 and later files end in CRC-32C checksums of their
  // header and weights, checked at load (at memory speed, in the same pass
  // that checks the weights' values) so that a damaged download or storage
  // page is refused instead of translating into quietly wrong output. Off
  // only for a file verified elsewhere (a signed image, a download checked
  // against its hash): every other check still runs.
  bool verify_checksum = true;
};

// A model file's checksums (format version 4 and later; `present` is false
// for older files, which have none).
struct FileChecksum {
  bool present = false;
  bool verified = false;  // computed at load and equal (not when skipped)
  uint32_t header_crc32c = 0;
  uint32_t weights_crc32c = 0;
};

class Model {
 public:
  // Maps (or copies, per options) and verifies the file at `path`, which
  // must be a regular file: FIFOs, devices, sockets and directories are
  // refused without reading (a FIFO would block until a writer came). On
  // success *out holds the model.
  // Errors: kNotFound, kIoError, kInvalidModel, kUnsupportedVersion,
  // kUnsupported, kOutOfMemory (kCopy).
  [[nodiscard]] static Status load(const char* path, std::unique_ptr<Model>* out);
  [[nodiscard]] static Status load(const char* path, const LoadOptions& options,
                                   std::unique_ptr<Model>* out);

  // Verifies a model already in memory (firmware: flash or a caller buffer).
  // The buffer is borrowed: it must outlive the Model and be 64-byte aligned.
  [[nodiscard]] static Status from_buffer(const void* data, size_t size,
                                          std::unique_ptr<Model>* out);
  // The same with options (only verify_checksum applies: the buffer is
  // used in place whatever `mode` says).
  [[nodiscard]] static Status from_buffer(const void* data, size_t size, const LoadOptions& options,
                                          std::unique_ptr<Model>* out);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  uint32_t format_version() const;
  const FileChecksum& checksum() const;
  // The model family's name: the runtime/models/ folder that runs it. Its
  // hyper-parameters are the family's business; describe_config() writes
  // them as text.
  const char* family() const;
  uint32_t vocab_size() const;  // target vocabulary: the logits' width
  // Source vocabulary: source ids are below it (vocab_size() unless the
  // source side has a vocabulary of its own).
  uint32_t source_vocab_size() const;
  // Longest source or target sequence the model accepts, in tokens counting
  // EOS (the rows of a position table, say); Limits::max_source_len and
  // max_target_len may not exceed it.
  uint32_t max_sequence_length() const;
  // The family's config as indented "  name  value" lines (what `edgemt
  // inspect` prints), NUL-terminated and truncated to `size`.
  void describe_config(char* out, size_t size) const;
  const SpecialTokens& special_tokens() const;
  DType weight_dtype() const;  // storage type of matrices and embeddings
  QuantizationScheme quantization() const;  // an int8 scheme exactly for I8 files
  // An I8 file whose embedding tables (and a tied output projection) are
  // F32: every Int8PerTensor* file, and per-row ones that say so (version 9).
  bool f32_tables() const;
  // The storage type of the embedding tables (and of an output projection
  // tied to one): weight_dtype() but in I8 files that keep them F32
  // (f32_tables()) or F16 (per-row files that say so, version 10); I8 tables
  // of version-11 files may also have residual codes (residual_tables()).
  DType table_dtype() const;
  // An I8 per-row file whose I8 tables have residual codes for lookups
  // (`<table>_residual`, `<table>_residual_scale`; version 11).
  bool residual_tables() const;
  const char* source_language() const;
  const char* target_language() const;
  const Provenance& provenance() const;

  // The source side's SentencePiece model bytes (size 0 if the file has none).
  const uint8_t* tokenizer_model(size_t* size) const;
  // Either side's (the same bytes for both unless the model has a target
  // tokenizer of its own).
  const uint8_t* tokenizer_model(TextSide side, size_t* size) const;
  bool append_eos_to_source() const;
  // The side's vocabulary of pieces: id i is piece i (not NUL-terminated:
  // *length bytes). 0 pieces: SentencePiece ids are the model's ids.
  size_t vocabulary_size(TextSide side) const;
  const char* vocabulary_piece(TextSide side, size_t id, size_t* length) const;
  // The side's unk and eos ids (special_tokens()' unless the source side
  // has a vocabulary of its own).
  int32_t unk_id(TextSide side) const;
  int32_t eos_id(TextSide side) const;
  // The source framework's decoding defaults and search rules.
  const DecodingDefaults& decoding() const;
  // The file's lexical shortlist, or nullptr when it has none.
  const LexicalShortlist* shortlist() const;

  uint64_t file_size() const;
  uint64_t weights_size() const;

  size_t tensor_count() const;
  const TensorView& tensor(size_t index) const;  // index < tensor_count()
  // Finds a tensor by name; nullptr when absent (a verified model has every
  // tensor its config implies).
  const TensorView* find_tensor(const char* name) const;

  // Tells the model that `tensor`'s bytes will not be read again (a
  // Translator packed its own copy): for a mapped file their pages leave
  // resident memory; they are read back from the file if touched later, so
  // this never changes results. No-op for copied (LoadMode::kCopy) and
  // from_buffer models. Thread-safe.
  void release_tensor_pages(const TensorView& tensor) const;

  struct Impl;

 private:
  // The family's own config, for runtime/models/ (models/families.h).
  friend const FamilyConfig& family_config(const Model& model);
  explicit Model(Impl* impl);
  // Wraps a verified Impl in a new Model (kOutOfMemory if that fails).
  [[nodiscard]] static Status adopt(std::unique_ptr<Impl> impl, std::unique_ptr<Model>* out);
  Impl* impl_;
};

}  // namespace edgemt
