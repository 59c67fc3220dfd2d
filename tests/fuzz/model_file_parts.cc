#include "model_file_parts.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "format/crc32.h"
#include "format/integrity.h"
#include "kernels/crc32c.h"
#include "models/transformer/tensor_layout.h"
#include "schema/edgemt_generated.h"

namespace edgemt::fuzz {
namespace {

namespace fb = ::edgemt::format;

constexpr size_t kPrefix = sizeof(flatbuffers::uoffset_t);
constexpr uint64_t kAlignment = 64;
// A regenerated consistent model stays small, so that the Translator's
// packing and the fuzzer's executions stay fast.
constexpr uint64_t kMaxRegeneratedBytes = 1 << 20;

uint64_t align64(uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

std::string text(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// ---- Random values that matter --------------------------------------------

uint32_t pick(std::mt19937* rng, uint32_t below) { return below == 0 ? 0 : (*rng)() % below; }

// Sizes at the edges of every check: 0, 1, small, the limits and past them.
uint32_t interesting_u32(std::mt19937* rng, uint32_t current) {
  static const uint32_t kValues[] = {0,     1,     2,     3,     4,          7,          8,
                                     16,    63,    64,    65,    128,        255,        256,
                                     4096,  16384, 16385, 65536, 65537,      262144,     1u << 24,
                                     (1u << 24) + 1, 0x7fffffffu, 0x80000000u, 0xffffffffu};
  switch (pick(rng, 4)) {
    case 0: return current + 1;
    case 1: return current - 1;
    case 2: return (*rng)();
    default: return kValues[pick(rng, sizeof(kValues) / sizeof(kValues[0]))];
  }
}

float interesting_float(std::mt19937* rng) {
  static const float kValues[] = {0.0f,      -0.0f,   -1.0f,     1e-5f,    1e-30f,   1e30f,
                                  3.4e38f,   -3.4e38f, NAN,      INFINITY, -INFINITY, 1.0f,
                                  1e-45f,    65504.0f, 65520.0f, 0.5f};
  return kValues[pick(rng, sizeof(kValues) / sizeof(kValues[0]))];
}

int8_t interesting_enum(std::mt19937* rng) {
  static const int8_t kValues[] = {0, 1, 2, 3, 4, 127, -1, -128};
  return kValues[pick(rng, sizeof(kValues) / sizeof(kValues[0]))];
}

int32_t interesting_token(std::mt19937* rng, uint32_t vocab) {
  const int32_t v = static_cast<int32_t>(vocab);
  const int32_t kValues[] = {-1, 0, 1, 2, 3, v - 1, v, v + 1, std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min()};
  return kValues[pick(rng, sizeof(kValues) / sizeof(kValues[0]))];
}

// ---- Mutations ---------------------------------------------------------------

void mutate_config(ModelFileParts* p, std::mt19937* rng) {
  uint32_t* sizes[] = {&p->encoder_layers, &p->decoder_layers, &p->d_model, &p->heads,
                       &p->ffn_dim,        &p->vocab_size,     &p->max_positions};
  bool* flags[] = {&p->encoder_final_norm, &p->decoder_final_norm, &p->tied_output,
                   &p->output_bias, &p->shared_embeddings, &p->append_eos_to_source};
  switch (pick(rng, 5)) {
    case 0: {
      uint32_t* field = sizes[pick(rng, 7)];
      *field = interesting_u32(rng, *field);
      break;
    }
    case 1: *flags[pick(rng, 6)] ^= true; break;
    case 2: (pick(rng, 2) ? p->layer_norm_eps : p->embedding_scale) = interesting_float(rng); break;
    case 3: (pick(rng, 2) ? p->activation : p->norm_placement) = interesting_enum(rng); break;
    default: {
      int8_t* enums[] = {&p->family, &p->weight_dtype, &p->quantization, &p->tokenizer_kind};
      *enums[pick(rng, 4)] = interesting_enum(rng);
      break;
    }
  }
}

void mutate_special_tokens(ModelFileParts* p, std::mt19937* rng) {
  int32_t* ids[] = {&p->pad, &p->unk, &p->bos, &p->eos, &p->decoder_start};
  *ids[pick(rng, 5)] = interesting_token(rng, p->vocab_size);
}

void mutate_tensor_entry(ModelFileParts* p, std::mt19937* rng) {
  if (p->tensors.empty()) return;
  TensorEntry& t = p->tensors[pick(rng, static_cast<uint32_t>(p->tensors.size()))];
  switch (pick(rng, 8)) {
    case 0:
      if (!t.shape.empty()) {
        uint32_t& dim = t.shape[pick(rng, static_cast<uint32_t>(t.shape.size()))];
        dim = interesting_u32(rng, dim);
      }
      break;
    case 1:
      if (pick(rng, 2) && !t.shape.empty()) t.shape.pop_back();
      else t.shape.push_back(interesting_u32(rng, 1));
      break;
    case 2: t.dtype = interesting_enum(rng); break;
    case 3: {
      static const int64_t kDeltas[] = {1, -1, 64, -64, 4096, -4096};
      t.offset += static_cast<uint64_t>(kDeltas[pick(rng, 6)]);
      break;
    }
    case 4: t.offset = pick(rng, 2) ? p->weights_size : (uint64_t{1} << pick(rng, 64)); break;
    case 5: t.size = pick(rng, 2) ? t.size + (pick(rng, 2) ? 1 : -1) : (uint64_t{1} << pick(rng, 64)); break;
    case 6: {
      // Another tensor's name (duplicate), a cut or extended name, an empty one.
      const std::string other = p->tensors[pick(rng, static_cast<uint32_t>(p->tensors.size()))].name;
      switch (pick(rng, 4)) {
        case 0: t.name = other; break;
        case 1: t.name = t.name.substr(0, pick(rng, static_cast<uint32_t>(t.name.size() + 1))); break;
        case 2: t.name += pick(rng, 2) ? std::string(1, '\0') : std::string(200, 'x'); break;
        default: t.name.clear(); break;
      }
      break;
    }
    default: {
      // Drop, duplicate or move an entry.
      const size_t i = pick(rng, static_cast<uint32_t>(p->tensors.size()));
      const size_t j = pick(rng, static_cast<uint32_t>(p->tensors.size()));
      switch (pick(rng, 3)) {
        case 0: p->tensors.erase(p->tensors.begin() + static_cast<std::ptrdiff_t>(i)); break;
        case 1: p->tensors.push_back(p->tensors[i]); break;
        default: std::swap(p->tensors[i], p->tensors[j]); break;
      }
      break;
    }
  }
}

// A value the runtime must refuse or survive, written into a tensor's bytes.
void mutate_weight_value(ModelFileParts* p, std::mt19937* rng) {
  if (p->tensors.empty()) return;
  const TensorEntry& t = p->tensors[pick(rng, static_cast<uint32_t>(p->tensors.size()))];
  const size_t width = t.dtype == 0 ? 4 : (t.dtype == 1 ? 2 : 1);
  if (t.size < width || t.offset > p->segment.size() || t.size > p->segment.size() - t.offset) return;
  const uint64_t element = pick(rng, static_cast<uint32_t>(std::min<uint64_t>(t.size / width, 1u << 30)));
  uint8_t* at = p->segment.data() + t.offset + element * width;
  if (width == 4) {
    const float value = interesting_float(rng);
    std::memcpy(at, &value, 4);
  } else if (width == 2) {
    static const uint16_t kHalves[] = {0x7c00, 0xfc00, 0x7e00, 0x7bff, 0xfbff, 0x0001, 0x8000};
    std::memcpy(at, &kHalves[pick(rng, 7)], 2);
  } else {
    static const int8_t kCodes[] = {-128, -127, 127, 0};
    std::memcpy(at, &kCodes[pick(rng, 4)], 1);
  }
}

void mutate_tokenizer(ModelFileParts* p, std::mt19937* rng, ByteMutator mutate_bytes) {
  std::vector<uint8_t>& bytes = p->tokenizer_model;
  switch (pick(rng, 4)) {
    case 0: bytes.resize(pick(rng, static_cast<uint32_t>(bytes.size() + 1))); break;
    case 1: bytes.clear(); break;
    default: {
      const size_t max_size = bytes.size() * 2 + 64;
      bytes.resize(max_size);
      const size_t used = mutate_bytes(bytes.data(), max_size / 2 > 0 ? max_size / 2 : 1, max_size);
      bytes.resize(used);
      break;
    }
  }
  // Usually a matching checksum, so the structural checks behind it are
  // reached; sometimes none, or a stale one.
  switch (pick(rng, 8)) {
    case 0: p->tokenizer_crc32 = -1; break;
    case 1: break;
    default: p->tokenizer_crc32 = crc32(bytes.data(), bytes.size()); break;
  }
}

void mutate_segment(ModelFileParts* p, std::mt19937* rng) {
  switch (pick(rng, 4)) {
    case 0: p->segment.resize(pick(rng, static_cast<uint32_t>(p->segment.size() + 1))); break;
    case 1: p->segment.resize(p->segment.size() + pick(rng, 256)); break;
    case 2: p->weights_size = interesting_u32(rng, static_cast<uint32_t>(p->weights_size)); break;
    default: p->format_version = interesting_u32(rng, p->format_version); break;
  }
}

void mutate_strings(ModelFileParts* p, std::mt19937* rng) {
  // Empty, ordinary, invalid UTF-8, an embedded NUL, long.
  const std::string strings[] = {std::string(), "de", std::string("\xff\xfe", 2),
                                 std::string("a\0b", 3), std::string(300, 'l')};
  std::string* fields[] = {&p->source_language, &p->target_language, &p->provenance[0],
                           &p->provenance[3]};
  *fields[pick(rng, 4)] = strings[pick(rng, 5)];
  if (pick(rng, 4) == 0) {
    bool* tables[] = {&p->has_config, &p->has_special_tokens, &p->has_tokenizer, &p->has_provenance};
    *tables[pick(rng, 4)] ^= true;
  }
}

// Makes the tensor table exactly what the (possibly mutated) config implies,
// with fresh small random values, so the file gets past the verifier into
// Translator::create and translate() with new shapes. Skipped when the
// config would need more than kMaxRegeneratedBytes.
void regenerate_consistent_tensors(ModelFileParts* p, std::mt19937* rng) {
  // Small sizes first: this mutation is about valid variety, not limits.
  p->d_model = 4u << pick(rng, 3);
  p->heads = 1u << pick(rng, 3);
  p->ffn_dim = 1 + pick(rng, 40);
  p->encoder_layers = 1 + pick(rng, 3);
  p->decoder_layers = 1 + pick(rng, 3);
  p->max_positions = 1 + pick(rng, 24);
  p->weight_dtype = static_cast<int8_t>(pick(rng, 3));
  p->quantization = p->weight_dtype == 2 ? 1 : 0;
  p->encoder_final_norm = pick(rng, 2);
  p->decoder_final_norm = pick(rng, 2);
  p->output_bias = pick(rng, 2);
  p->shared_embeddings = pick(rng, 2);
  p->tied_output = pick(rng, 2);
  p->activation = static_cast<int8_t>(pick(rng, 3));
  p->norm_placement = static_cast<int8_t>(pick(rng, 2));
  transformer::TransformerConfig config;
  config.encoder_layers = p->encoder_layers;
  config.decoder_layers = p->decoder_layers;
  config.d_model = p->d_model;
  config.heads = p->heads;
  config.ffn_dim = p->ffn_dim;
  config.vocab_size = p->vocab_size;
  config.max_positions = p->max_positions;
  config.encoder_final_norm = p->encoder_final_norm;
  config.decoder_final_norm = p->decoder_final_norm;
  config.tied_output = p->tied_output;
  config.output_bias = p->output_bias;
  config.shared_embeddings = p->shared_embeddings;
  const DType dtype = static_cast<DType>(p->weight_dtype);

  std::vector<TensorEntry> entries;
  uint64_t offset = 0;
  bool fits = true;
  for_each_expected_tensor(config, dtype, [&](const ExpectedTensor& expected) {
    TensorEntry entry;
    entry.name = expected.name;
    entry.shape.assign(expected.shape, expected.shape + expected.rank);
    entry.dtype = static_cast<int8_t>(expected.dtype);
    uint64_t count = 1;
    for (uint32_t dim : entry.shape) count *= dim;
    entry.size = count * (expected.dtype == DType::kF32 ? 4 : expected.dtype == DType::kF16 ? 2 : 1);
    if (expected.alias_of != nullptr) {
      for (const TensorEntry& owner : entries) {
        if (owner.name == expected.alias_of) entry.offset = owner.offset;
      }
    } else {
      entry.offset = offset;
      offset = align64(offset + entry.size);
    }
    entries.push_back(entry);
    fits = offset <= kMaxRegeneratedBytes;
    return fits;
  });
  if (!fits) return;
  std::sort(entries.begin(), entries.end(),
            [](const TensorEntry& a, const TensorEntry& b) { return a.name < b.name; });
  std::vector<uint8_t> segment(offset);
  std::uniform_real_distribution<float> value(-0.5f, 0.5f);
  for (const TensorEntry& e : entries) {
    if (e.dtype == 0) {
      for (uint64_t i = 0; i < e.size / 4; ++i) {
        const float v = e.name.size() > 6 && e.name.compare(e.name.size() - 6, 6, "_scale") == 0
                            ? 0.01f
                            : value(*rng);
        std::memcpy(segment.data() + e.offset + 4 * i, &v, 4);
      }
    } else if (e.dtype == 1) {
      for (uint64_t i = 0; i < e.size / 2; ++i) {
        const uint16_t half = static_cast<uint16_t>(0x3000 + pick(rng, 0x800)) | (pick(rng, 2) << 15);
        std::memcpy(segment.data() + e.offset + 2 * i, &half, 2);
      }
    } else {
      for (uint64_t i = 0; i < e.size; ++i) {
        segment[e.offset + i] = static_cast<uint8_t>(static_cast<int>(pick(rng, 255)) - 127);
      }
    }
  }
  p->tensors = entries;
  p->segment = segment;
  p->weights_size = offset;
}

}  // namespace

bool decode(const uint8_t* data, size_t size, ModelFileParts* p) {
  if (size < 2 * kPrefix + 4) return false;
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifySizePrefixedModelBuffer(verifier)) return false;
  uint32_t fb_size;
  std::memcpy(&fb_size, data, sizeof(fb_size));
  const fb::Model* m = fb::GetSizePrefixedModel(data);
  *p = ModelFileParts();
  p->format_version = m->format_version();
  // Version 1: `family` and `config`; later: the family_config union, whose
  // type is the family + 1 (0 is NONE).
  const bool v1 = m->format_version() == 1;
  p->family = v1 ? static_cast<int8_t>(m->family())
                 : static_cast<int8_t>(static_cast<int>(m->family_config_type()) - 1);
  const fb::TransformerConfig* config = v1 ? m->config() : m->family_config_as_TransformerConfig();
  p->has_config = config != nullptr;
  if (const fb::TransformerConfig* c = config) {
    p->encoder_layers = c->encoder_layers();
    p->decoder_layers = c->decoder_layers();
    p->d_model = c->d_model();
    p->heads = c->heads();
    p->ffn_dim = c->ffn_dim();
    p->activation = static_cast<int8_t>(c->activation());
    p->norm_placement = static_cast<int8_t>(c->norm_placement());
    p->layer_norm_eps = c->layer_norm_eps();
    p->encoder_final_norm = c->encoder_final_norm();
    p->decoder_final_norm = c->decoder_final_norm();
    p->embedding_scale = c->embedding_scale();
    p->tied_output = c->tied_output();
    p->output_bias = c->output_bias();
    p->shared_embeddings = c->shared_embeddings();
    p->vocab_size = c->vocab_size();
    p->max_positions = c->max_positions();
  }
  p->has_special_tokens = m->special_tokens() != nullptr;
  if (const fb::SpecialTokens* s = m->special_tokens()) {
    p->pad = s->pad();
    p->unk = s->unk();
    p->bos = s->bos();
    p->eos = s->eos();
    p->decoder_start = s->decoder_start();
  }
  p->source_language = text(m->source_language());
  p->target_language = text(m->target_language());
  p->weight_dtype = static_cast<int8_t>(m->weight_dtype());
  p->quantization = static_cast<int8_t>(m->quantization());
  p->has_tokenizer = m->tokenizer() != nullptr;
  if (const fb::Tokenizer* t = m->tokenizer()) {
    p->tokenizer_kind = static_cast<int8_t>(t->kind());
    if (t->model() != nullptr) p->tokenizer_model.assign(t->model()->begin(), t->model()->end());
    p->append_eos_to_source = t->append_eos_to_source();
    p->tokenizer_crc32 = t->model_crc32();
  }
  p->has_provenance = m->provenance() != nullptr;
  if (const fb::Provenance* v = m->provenance()) {
    p->provenance[0] = text(v->source_format());
    p->provenance[1] = text(v->source_checkpoint());
    p->provenance[2] = text(v->source_sha256());
    p->provenance[3] = text(v->converter_version());
    p->provenance[4] = text(v->created_utc());
  }
  p->weights_size = m->weights_size();
  if (m->tensors() != nullptr) {
    for (const fb::Tensor* t : *m->tensors()) {
      TensorEntry entry;
      entry.name = text(t->name());
      if (t->shape() != nullptr) entry.shape.assign(t->shape()->begin(), t->shape()->end());
      entry.dtype = static_cast<int8_t>(t->dtype());
      entry.offset = t->offset();
      entry.size = t->size();
      p->tensors.push_back(entry);
    }
  }
  const uint64_t segment = align64(uint64_t{kPrefix} + fb_size);
  if (segment < size) p->segment.assign(data + segment, data + size);
  return true;
}

std::vector<uint8_t> encode(const ModelFileParts& p) {
  flatbuffers::FlatBufferBuilder b(1 << 12);
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TensorEntry& t : p.tensors) {
    const auto name = b.CreateString(t.name);
    const auto shape = b.CreateVector(t.shape);
    fb::TensorBuilder tb(b);
    tb.add_name(name);
    tb.add_shape(shape);
    tb.add_dtype(static_cast<fb::DType>(t.dtype));
    tb.add_offset(t.offset);
    tb.add_size(t.size);
    tensors.push_back(tb.Finish());
  }
  const auto tensor_vector = b.CreateVector(tensors);
  flatbuffers::Offset<fb::Tokenizer> tokenizer;
  if (p.has_tokenizer) {
    const auto bytes = b.CreateVector(p.tokenizer_model);
    fb::TokenizerBuilder tb(b);
    tb.add_kind(static_cast<fb::TokenizerKind>(p.tokenizer_kind));
    tb.add_model(bytes);
    tb.add_append_eos_to_source(p.append_eos_to_source);
    tb.add_model_crc32(p.tokenizer_crc32);
    tokenizer = tb.Finish();
  }
  flatbuffers::Offset<fb::Provenance> provenance;
  if (p.has_provenance) {
    flatbuffers::Offset<flatbuffers::String> s[5];
    for (int i = 0; i < 5; ++i) s[i] = b.CreateString(p.provenance[i]);
    provenance = fb::CreateProvenance(b, s[0], s[1], s[2], s[3], s[4]);
  }
  const auto source_language = b.CreateString(p.source_language);
  const auto target_language = b.CreateString(p.target_language);
  flatbuffers::Offset<fb::SpecialTokens> special;
  if (p.has_special_tokens) {
    special = fb::CreateSpecialTokens(b, p.pad, p.unk, p.bos, p.eos, p.decoder_start);
  }
  flatbuffers::Offset<fb::TransformerConfig> config;
  if (p.has_config) {
    config = fb::CreateTransformerConfig(
        b, p.encoder_layers, p.decoder_layers, p.d_model, p.heads, p.ffn_dim,
        static_cast<fb::Activation>(p.activation), static_cast<fb::NormPlacement>(p.norm_placement),
        p.layer_norm_eps, p.encoder_final_norm, p.decoder_final_norm, p.embedding_scale,
        p.tied_output, p.output_bias, p.shared_embeddings, p.vocab_size, p.max_positions);
  }
  fb::ModelBuilder mb(b);
  mb.add_format_version(p.format_version);
  if (p.format_version == 1) {
    mb.add_family(static_cast<fb::ModelFamily>(p.family));
    if (p.has_config) mb.add_config(config);
  } else if (p.has_config) {
    mb.add_family_config_type(static_cast<fb::FamilyConfig>(p.family + 1));
    mb.add_family_config(config.Union());
  }
  if (p.has_special_tokens) mb.add_special_tokens(special);
  mb.add_source_language(source_language);
  mb.add_target_language(target_language);
  mb.add_weight_dtype(static_cast<fb::DType>(p.weight_dtype));
  if (p.has_tokenizer) mb.add_tokenizer(tokenizer);
  if (p.has_provenance) mb.add_provenance(provenance);
  mb.add_weights_size(p.weights_size);
  mb.add_tensors(tensor_vector);
  mb.add_quantization(static_cast<fb::QuantizationScheme>(p.quantization));
  b.FinishSizePrefixed(mb.Finish(), fb::ModelIdentifier());

  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  out.resize(align64(out.size()), 0);
  const size_t segment_start = out.size();
  out.insert(out.end(), p.segment.begin(), p.segment.end());
  // Version 4 and later: a fresh integrity trailer where weights_size says
  // the segment ends (over what is there; the trailer it replaces, if any,
  // was kept in `segment`), so that a structural change is not refused for
  // its stale checksums alone.
  if (p.format_version >= kFirstChecksummedFormatVersion && p.weights_size <= p.segment.size()) {
    const size_t end = segment_start + static_cast<size_t>(p.weights_size);
    if (out.size() < end + kIntegrityTrailerBytes) out.resize(end + kIntegrityTrailerBytes, 0);
    const uint32_t crcs[2] = {kernels::crc32c(out.data(), segment_start),
                              kernels::crc32c(out.data() + segment_start, end - segment_start)};
    std::memcpy(out.data() + end, kIntegrityTrailerMagic, 4);
    std::memcpy(out.data() + end + 4, crcs, sizeof(crcs));
  }
  return out;
}

void mutate(ModelFileParts* parts, std::mt19937* rng, ByteMutator mutate_bytes) {
  switch (pick(rng, 9)) {
    case 0: mutate_config(parts, rng); break;
    case 1: mutate_special_tokens(parts, rng); break;
    case 2:
    case 3: mutate_tensor_entry(parts, rng); break;
    case 4: mutate_weight_value(parts, rng); break;
    case 5: mutate_tokenizer(parts, rng, mutate_bytes); break;
    case 6: mutate_segment(parts, rng); break;
    case 7: mutate_strings(parts, rng); break;
    default: regenerate_consistent_tensors(parts, rng); break;
  }
}

}  // namespace edgemt::fuzz
