#include "support/model_builder.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "format/crc32.h"
#include "format/integrity.h"
#include "kernels/crc32c.h"
#include "models/transformer/tensor_layout.h"
#include "support/sentencepiece_builder.h"
#include "kernels/fp16.h"
#include "schema/edgemt_generated.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt::testing {
namespace {

namespace fb = ::edgemt::format;

constexpr uint64_t kAlignment = 64;
// Tensors whose shape implies more than this are written with only the
// bytes of their values (a deliberately absurd shape must not allocate GBs).
constexpr uint64_t kMaxNaturalBytes = uint64_t{64} << 20;

uint64_t align64(uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

// splitmix64: small, fast, and the same on every platform.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), exactly representable (24 random bits).
  float uniform() {
    return static_cast<float>(static_cast<int32_t>(next() >> 40) - (1 << 23)) /
           static_cast<float>(1 << 23);
  }

 private:
  uint64_t state_;
};

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

bool ends_with(const std::string& text, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return text.size() >= n && text.compare(text.size() - n, n, suffix) == 0;
}

uint64_t element_count(const std::vector<uint32_t>& shape, bool* overflow) {
  uint64_t count = 1;
  *overflow = false;
  for (uint32_t dim : shape) *overflow |= __builtin_mul_overflow(count, uint64_t{dim}, &count);
  return count;
}

size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kI8: return 1;
  }
  return 4;
}

// Bytes of a tensor as laid out (before any `size` override).
uint64_t natural_bytes(const BuilderTensor& tensor) {
  bool overflow = false;
  const uint64_t count = element_count(tensor.shape, &overflow);
  const uint64_t bytes = count * size_of(tensor.dtype);
  if (overflow || count > kMaxNaturalBytes || bytes > kMaxNaturalBytes) {
    return tensor.values.size() * size_of(tensor.dtype);
  }
  return bytes;
}

void encode(const BuilderTensor& tensor, uint64_t bytes, uint8_t* out) {
  const size_t element = size_of(tensor.dtype);
  const size_t count = std::min<uint64_t>(tensor.values.size(), bytes / element);
  for (size_t i = 0; i < count; ++i) {
    const float value = tensor.values[i];
    switch (tensor.dtype) {
      case DType::kF32:
        std::memcpy(out + i * 4, &value, 4);
        break;
      case DType::kF16: {
        const uint16_t half = kernels::f32_to_f16(value);
        std::memcpy(out + i * 2, &half, 2);
        break;
      }
      case DType::kI8: {
        // The quantized values when regenerate_tensors made them; otherwise
        // (hand-made tensors) the value itself, rounded and clamped.
        const float q = i < tensor.int8_values.size()
                            ? static_cast<float>(tensor.int8_values[i])
                            : std::round(std::max(-127.0f, std::min(127.0f, value)));
        out[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
        break;
      }
    }
  }
}

const std::vector<float>& empty_values() {
  static const std::vector<float>* const empty = new std::vector<float>();
  return *empty;
}

}  // namespace

TransformerConfig tiny_config() {
  TransformerConfig config;
  config.encoder_layers = 1;
  config.decoder_layers = 1;
  config.d_model = 8;
  config.heads = 2;
  config.ffn_dim = 16;
  config.vocab_size = 32;
  config.max_positions = 16;
  return config;
}

void round_to_f16(std::vector<float>* values) {
  for (float& value : *values) value = kernels::f16_to_f32(kernels::f32_to_f16(value));
}

ModelBuilder::ModelBuilder(const TransformerConfig& config_in, DType weight_dtype_in,
                           uint32_t seed_in)
    : config(config_in), weight_dtype(weight_dtype_in), seed(seed_in) {
  special_tokens.pad = 0;
  special_tokens.unk = 1;
  special_tokens.bos = 2;
  special_tokens.eos = 3;
  special_tokens.decoder_start = 2;
  // Pieces up to the vocabulary (a vocabulary of 4 or fewer gets 5: such
  // files fail the verifier for the tokenizer, as they should).
  tokenizer_model = tiny_sentencepiece_model(config.vocab_size > 5 ? config.vocab_size : 5);
  regenerate_tensors();
}

std::vector<float> ModelBuilder::generate(const std::string& name,
                                          const std::vector<uint32_t>& shape,
                                          DType dtype) const {
  bool overflow = false;
  uint64_t count = element_count(shape, &overflow);
  if (overflow || count > kMaxNaturalBytes) count = 0;
  // Magnitudes like a trained model's: unit-ish norm weights, small biases,
  // matrices scaled by 1/sqrt(fan_in) so activations stay O(1).
  float scale = 1.0f;
  float center = 0.0f;
  if (ends_with(name, "norm.weight")) {
    center = 1.0f;
    scale = 0.1f;
  } else if (ends_with(name, ".bias")) {
    scale = 0.1f;
  } else if (name == "position.table") {
    scale = 0.5f;
  } else if (ends_with(name, ".weight") && shape.size() == 2 && shape[1] > 0) {
    scale = 1.0f / std::sqrt(static_cast<float>(shape[1]));
  }
  Random random(fnv1a(name) ^ (uint64_t{seed} * 0x9e3779b97f4a7c15ull));
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = center + scale * random.uniform();
  if (dtype == DType::kF16) round_to_f16(&values);
  return values;
}

static void quantize_int8_rows(BuilderTensor* tensor, std::vector<float>* scales) {
  const size_t rows = tensor->shape.empty() ? 0 : tensor->shape[0];
  const size_t cols = rows == 0 ? 0 : tensor->values.size() / rows;
  scales->assign(rows, 0.0f);
  tensor->int8_values.assign(tensor->values.size(), 0);
  for (size_t r = 0; r < rows; ++r) {
    float max_abs = 0.0f;
    for (size_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(tensor->values[r * cols + c]));
    const float scale = max_abs / 127.0f;
    (*scales)[r] = scale;
    for (size_t c = 0; c < cols; ++c) {
      float& value = tensor->values[r * cols + c];
      const int8_t q = scale == 0.0f ? 0 : static_cast<int8_t>(std::nearbyint(value / scale));
      tensor->int8_values[r * cols + c] = q;
      value = static_cast<float>(q) * scale;  // what the file means
    }
  }
}

void ModelBuilder::regenerate_tensors() {
  tensors.clear();
  std::vector<float> scales;  // of the I8 matrix just generated
  std::string smooth_after;   // a smoothed projection: its vector follows its scales
  uint32_t smooth_size = 0;
  std::string range_after;    // a fixed-range projection: its multiplier follows its scales
  const WeightTypes types = weight_types(
      weight_dtype, fixed_range  ? QuantizationScheme::kInt8PerTensorStatic
                    : per_tensor ? QuantizationScheme::kInt8PerTensorDynamic
                    : smoothed   ? QuantizationScheme::kInt8SmoothedPerRowDynamic
                                 : QuantizationScheme::kInt8PerRowDynamic,
      f32_tables, f16_tables, residual_tables);
  for_each_expected_tensor(config, types, [&](const ExpectedTensor& expected) {
    BuilderTensor tensor;
    tensor.name = expected.name;
    tensor.shape.assign(expected.shape, expected.shape + expected.rank);
    tensor.dtype = expected.dtype;
    if (expected.alias_of != nullptr) {
      tensor.alias_of = expected.alias_of;
    } else if (expected.role == TensorRole::kResidual) {
      // Residual codes: two per byte, each in [-7, 7] (low half first).
      const std::vector<float> v = generate(tensor.name, tensor.shape, DType::kF32);
      tensor.values.assign(v.size(), 0.0f);
      tensor.int8_values.resize(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        const long n = std::lround(std::fabs(v[i]) * 1000.0f);
        const int low = static_cast<int>(n % 15) - 7, high = static_cast<int>((n / 15) % 15) - 7;
        const uint8_t byte = static_cast<uint8_t>((low & 0x0F) | ((high & 0x0F) << 4));
        tensor.int8_values[i] = static_cast<int8_t>(byte);
      }
    } else if (ends_with(tensor.name, "_residual_scale")) {
      // A residual step of 1/14 of the table's code step: the codes then
      // cover half a step either way, as the converter's do.
      tensor.values = scales;
      for (float& value : tensor.values) value /= 14.0f;
    } else if (tensor.dtype == DType::kI8) {
      tensor.values = generate(tensor.name, tensor.shape, DType::kF32);
      quantize_int8_rows(&tensor, &scales);
      if (smoothed && expected.projection) {
        smooth_after = tensor.name + "_scale";
        smooth_size = expected.shape[1];
      }
      if (fixed_range && expected.projection) range_after = tensor.name + "_scale";
    } else if (ends_with(tensor.name, "_scale") && weight_dtype == DType::kI8) {
      tensor.values = scales;  // follows its matrix in the enumeration
    } else {
      tensor.values = generate(tensor.name, tensor.shape, tensor.dtype);
    }
    const bool smooth_next = !smooth_after.empty() && tensor.name == smooth_after;
    const bool range_next = !range_after.empty() && tensor.name == range_after;
    tensors.push_back(std::move(tensor));
    if (range_next) {
      BuilderTensor multiplier;
      multiplier.name = range_after.substr(0, range_after.size() - 6) + "_input_scale";
      multiplier.shape = {1};
      multiplier.dtype = DType::kF32;
      multiplier.values = {20.0f};
      tensors.push_back(std::move(multiplier));
      range_after.clear();
    }
    if (smooth_next) {
      // The matrix stands for w / m; m spreads over [1/2.7, 2.7], so that a
      // runtime ignoring it would compute something else.
      BuilderTensor vector;
      vector.name = smooth_after.substr(0, smooth_after.size() - 6) + "_smooth";
      vector.shape = {smooth_size};
      vector.dtype = DType::kF32;
      vector.values = generate(vector.name, vector.shape, DType::kF32);
      for (float& value : vector.values) value = std::exp(value);
      tensors.push_back(std::move(vector));
      smooth_after.clear();
    }
    return true;
  });
  if (fixed_range) make_ranges_consistent();
}

void ModelBuilder::make_ranges_consistent() {
  // The inputs come in as codes round(x · a) (a = 20), so a matrix that
  // stands for w has row scales s / a; the sums are Marian's shifted ones,
  // so the bias drops 127 · Σ_k q[n, k] · scale[n] again.
  for (const BuilderTensor& multiplier : std::vector<BuilderTensor>(tensors)) {
    const std::string suffix = "_input_scale";
    if (!ends_with(multiplier.name, suffix.c_str())) continue;
    const std::string weight = multiplier.name.substr(0, multiplier.name.size() - suffix.size());
    BuilderTensor* matrix = find(weight);
    BuilderTensor* scale = find(weight + "_scale");
    BuilderTensor* bias = find(weight.substr(0, weight.size() - 6) + "bias");  // "x.weight" -> "x.bias"
    const float a = multiplier.values[0];
    const size_t rows = scale->values.size();
    const size_t cols = matrix->int8_values.size() / rows;
    for (size_t r = 0; r < rows; ++r) {
      scale->values[r] /= a;
      float sum = 0.0f;
      for (size_t c = 0; c < cols; ++c) {
        matrix->values[r * cols + c] /= a;
        sum += static_cast<float>(matrix->int8_values[r * cols + c]);
      }
      if (bias != nullptr) bias->values[r] -= 127.0f * sum * scale->values[r];
    }
  }
}

BuilderTensor* ModelBuilder::find(const std::string& name) {
  for (BuilderTensor& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

const BuilderTensor* ModelBuilder::find(const std::string& name) const {
  return const_cast<ModelBuilder*>(this)->find(name);
}

bool ModelBuilder::remove_tensor(const std::string& name) {
  const size_t before = tensors.size();
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                               [&](const BuilderTensor& t) { return t.name == name; }),
                tensors.end());
  return tensors.size() != before;
}

BuilderTensor& ModelBuilder::add_tensor(const std::string& name,
                                        const std::vector<uint32_t>& shape, DType dtype) {
  BuilderTensor tensor;
  tensor.name = name;
  tensor.shape = shape;
  tensor.dtype = dtype;
  tensor.values = generate(name, shape, dtype);
  tensors.push_back(std::move(tensor));
  return tensors.back();
}

bool ModelBuilder::reshape(const std::string& name, const std::vector<uint32_t>& shape) {
  BuilderTensor* tensor = find(name);
  if (tensor == nullptr) return false;
  tensor->shape = shape;
  tensor->alias_of.clear();
  tensor->values = generate(name, shape, tensor->dtype);
  return true;
}

bool ModelBuilder::set_dtype(const std::string& name, DType dtype) {
  BuilderTensor* tensor = find(name);
  if (tensor == nullptr) return false;
  tensor->dtype = dtype;
  if (dtype == DType::kF16) round_to_f16(&tensor->values);
  return true;
}

const std::vector<float>& ModelBuilder::values(const std::string& name) const {
  const BuilderTensor* tensor = find(name);
  // Follow alias chains (output.weight -> embedding.target -> embedding.source).
  for (size_t hops = 0; tensor != nullptr && !tensor->alias_of.empty() && hops < tensors.size();
       ++hops) {
    tensor = find(tensor->alias_of);
  }
  return tensor != nullptr ? tensor->values : empty_values();
}

std::map<std::string, std::vector<float>> ModelBuilder::all_values() const {
  std::map<std::string, std::vector<float>> result;
  for (const BuilderTensor& tensor : tensors) result[tensor.name] = values(tensor.name);
  return result;
}

std::vector<uint8_t> ModelBuilder::build(BuiltLayout* layout) const {
  // 1. Lay the weight segment out: owners first, in list order, each on a
  //    64-byte boundary; aliases then take their owner's place.
  const size_t n = tensors.size();
  std::vector<uint64_t> offsets(n, 0);
  std::vector<uint64_t> bytes(n, 0);
  std::vector<bool> placed(n, false);
  uint64_t end = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!tensors[i].alias_of.empty()) continue;
    bytes[i] = natural_bytes(tensors[i]);
    offsets[i] = end;
    placed[i] = true;
    end = align64(end + bytes[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (tensors[i].alias_of.empty()) continue;
    // Follow the chain (output.weight -> embedding.target -> embedding.source)
    // to the tensor that owns the bytes.
    std::string owner = tensors[i].alias_of;
    for (size_t hops = 0; hops < n; ++hops) {
      const BuilderTensor* next = find(owner);
      if (next == nullptr || next->alias_of.empty()) break;
      owner = next->alias_of;
    }
    for (size_t j = 0; j < n; ++j) {
      if (placed[j] && tensors[j].name == owner) {
        offsets[i] = offsets[j];
        bytes[i] = bytes[j];
        break;
      }
    }
  }
  const uint64_t segment_size = end;
  std::vector<uint8_t> segment(static_cast<size_t>(segment_size), 0);
  for (size_t i = 0; i < n; ++i) {
    if (placed[i]) encode(tensors[i], bytes[i], segment.data() + offsets[i]);
  }

  // 2. The FlatBuffer.
  flatbuffers::FlatBufferBuilder fbb(4096);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (sort_tensors) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::strcmp(tensors[a].name.c_str(), tensors[b].name.c_str()) < 0;
    });
  }
  std::vector<flatbuffers::Offset<fb::Tensor>> tensor_offsets;
  std::map<std::string, uint64_t> written_offsets;
  for (size_t i : order) {
    const BuilderTensor& tensor = tensors[i];
    const auto name = fbb.CreateString(tensor.name);
    const auto shape = fbb.CreateVector(tensor.shape);
    const int8_t dtype = tensor.raw_dtype ? *tensor.raw_dtype : static_cast<int8_t>(tensor.dtype);
    const uint64_t offset = tensor.offset ? *tensor.offset : offsets[i];
    const uint64_t size = tensor.size ? *tensor.size : bytes[i];
    written_offsets[tensor.name] = offset;
    tensor_offsets.push_back(
        fb::CreateTensor(fbb, name, shape, static_cast<fb::DType>(dtype), offset, size));
  }
  const auto tensor_vector = fbb.CreateVector(tensor_offsets);

  flatbuffers::Offset<fb::TransformerConfig> config_table = 0;
  if (include_config) {
    const int8_t activation =
        raw_activation ? *raw_activation : static_cast<int8_t>(config.activation);
    config_table = fb::CreateTransformerConfig(
        fbb, config.encoder_layers, config.decoder_layers, config.d_model, config.heads,
        config.ffn_dim, static_cast<fb::Activation>(activation),
        static_cast<fb::NormPlacement>(config.norm_placement), config.layer_norm_eps,
        config.encoder_final_norm, config.decoder_final_norm, config.embedding_scale,
        config.tied_output, config.output_bias, config.shared_embeddings, config.vocab_size,
        config.max_positions, config.source_vocab_size, config.zero_decoder_start,
        config.raw_decoder_self_memory,
        static_cast<fb::DecoderAutoregression>(config.decoder_autoregression));
  }
  flatbuffers::Offset<fb::SpecialTokens> special_table = 0;
  if (include_special_tokens) {
    special_table = fb::CreateSpecialTokens(fbb, special_tokens.pad, special_tokens.unk,
                                            special_tokens.bos, special_tokens.eos,
                                            special_tokens.decoder_start);
  }
  flatbuffers::Offset<fb::Tokenizer> tokenizer_table = 0;
  if (include_tokenizer) {
    const auto model_bytes = fbb.CreateVector(
        reinterpret_cast<const uint8_t*>(tokenizer_model.data()), tokenizer_model.size());
    const int8_t kind = raw_tokenizer_kind ? *raw_tokenizer_kind : 0;
    const int64_t crc = tokenizer_crc32 ? *tokenizer_crc32
                                        : int64_t{crc32(tokenizer_model.data(), tokenizer_model.size())};
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> pieces = 0;
    if (source_pieces) pieces = fbb.CreateVectorOfStrings(*source_pieces);
    tokenizer_table = fb::CreateTokenizer(fbb, static_cast<fb::TokenizerKind>(kind), model_bytes,
                                          append_eos_to_source, crc, pieces, source_unk_id,
                                          source_eos_id);
  }
  flatbuffers::Offset<fb::Tokenizer> target_tokenizer_table = 0;
  if (target_tokenizer_model || target_pieces) {
    const std::string& target_bytes =
        target_tokenizer_model ? *target_tokenizer_model : tokenizer_model;
    const auto model_bytes =
        fbb.CreateVector(reinterpret_cast<const uint8_t*>(target_bytes.data()), target_bytes.size());
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> pieces = 0;
    if (target_pieces) pieces = fbb.CreateVectorOfStrings(*target_pieces);
    target_tokenizer_table = fb::CreateTokenizer(fbb, fb::TokenizerKind::SentencePiece,
                                                 model_bytes, true,
                                                 int64_t{crc32(target_bytes.data(), target_bytes.size())},
                                                 pieces);
  }
  flatbuffers::Offset<fb::Provenance> provenance_table = 0;
  if (include_provenance) {
    provenance_table = fb::CreateProvenanceDirect(
        fbb, source_format.c_str(), source_checkpoint.c_str(), source_sha256.c_str(),
        converter_version.c_str(), created_utc.c_str());
  }
  flatbuffers::Offset<fb::Decoding> decoding_table = 0;
  if (decoding) {
    const auto banned = fbb.CreateVector(decoding->banned_tokens);
    const int8_t rules =
        decoding->raw_rules ? *decoding->raw_rules : static_cast<int8_t>(decoding->rules);
    decoding_table = fb::CreateDecoding(fbb, static_cast<fb::SearchRules>(rules),
                                        decoding->beam_size, decoding->length_penalty,
                                        decoding->word_penalty, decoding->max_len_a,
                                        decoding->max_len_b, banned);
  }
  const auto source = fbb.CreateString(source_language);
  const auto target = fbb.CreateString(target_language);
  flatbuffers::Offset<fb::Shortlist> shortlist_table = 0;
  if (shortlist) {
    const auto list_offsets = fbb.CreateVector(shortlist->offsets);
    const auto list_targets = fbb.CreateVector(shortlist->targets);
    shortlist_table = fb::CreateShortlist(fbb, shortlist->first, shortlist->best,
                                          shortlist->add_source_ids, list_offsets, list_targets);
  }
  const int8_t family = raw_family ? *raw_family : 0;
  const int8_t wdtype = raw_weight_dtype ? *raw_weight_dtype : static_cast<int8_t>(weight_dtype);
  const uint64_t weights_size_field = weights_size ? *weights_size : segment_size;
  // Version 1 names the family in `family` and holds the config in `config`;
  // later versions put it in the family_config union (whose type, for the
  // family raw_family would name, is raw_family + 1: 0 is NONE).
  const bool v1 = format_version == 1;
  const bool legacy = v1 || legacy_fields;
  const auto root = fb::CreateModel(
      fbb, format_version, static_cast<fb::ModelFamily>(legacy ? family : 0),
      legacy ? config_table : 0, special_table, source, target,
      static_cast<fb::DType>(wdtype), tokenizer_table, provenance_table, weights_size_field,
      tensor_vector,
      static_cast<fb::QuantizationScheme>(
          raw_quantization ? *raw_quantization
                           : (weight_dtype == DType::kI8
                                  ? (smoothed ? 2 : fixed_range ? 4 : per_tensor ? 3 : 1)
                                  : 0)),
      v1 || !include_config ? fb::FamilyConfig::NONE : static_cast<fb::FamilyConfig>(family + 1),
      v1 ? 0 : config_table.Union(), target_tokenizer_table, decoding_table, shortlist_table,
      f32_tables, f16_tables, residual_tables);
  char id[5] = {'\0', '\0', '\0', '\0', '\0'};
  std::memcpy(id, identifier.data(), std::min<size_t>(4, identifier.size()));
  fbb.FinishSizePrefixed(root, id);

  // 3. The file: FlatBuffer, zero padding to 64, the segment, the integrity
  // trailer (version 4 and later), trailing bytes.
  const size_t fb_total = fbb.GetSize();  // includes the 4-byte size prefix
  const size_t weights_offset = static_cast<size_t>(align64(fb_total));
  const bool trailer = format_version >= kFirstChecksummedFormatVersion && checksum_trailer;
  const size_t trailer_offset = weights_offset + segment.size();
  std::vector<uint8_t> file(
      trailer_offset + (trailer ? kIntegrityTrailerBytes : 0) + trailing_bytes, 0);
  std::memcpy(file.data(), fbb.GetBufferPointer(), fb_total);
  if (!segment.empty()) std::memcpy(file.data() + weights_offset, segment.data(), segment.size());
  if (trailer) {
    const uint32_t crcs[2] = {kernels::crc32c(file.data(), weights_offset),
                              kernels::crc32c(file.data() + weights_offset, segment.size())};
    std::memcpy(file.data() + trailer_offset, kIntegrityTrailerMagic, 4);
    std::memcpy(file.data() + trailer_offset + 4, crcs, sizeof(crcs));  // little-endian hosts
  }

  if (layout != nullptr) {
    layout->flatbuffer_size = fb_total - 4;
    layout->weights_offset = weights_offset;
    layout->weights_size = weights_size_field;
    layout->file_size = file.size();
    layout->trailer_offset = trailer ? trailer_offset : 0;
    layout->tensor_offsets = std::move(written_offsets);
  }
  return file;
}

TempFile::TempFile(const std::vector<uint8_t>& bytes, const char* tag) {
  const char* dir = std::getenv("TMPDIR");
  if (dir == nullptr || dir[0] == '\0') dir = "/tmp";
  std::string pattern = std::string(dir) + "/edgemt_" + tag + "_XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return;
  path_ = name.data();
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  ok_ = written == bytes.size();
  ::close(fd);
}

TempFile::~TempFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

AlignedBuffer::AlignedBuffer(const std::vector<uint8_t>& bytes) : size_(bytes.size()) {
  // Round up: aligned_alloc wants a multiple of the alignment.
  const size_t capacity = std::max<size_t>(64, (bytes.size() + 63) / 64 * 64);
  data_ = static_cast<uint8_t*>(std::aligned_alloc(64, capacity));
  if (data_ != nullptr && !bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

}  // namespace edgemt::testing
