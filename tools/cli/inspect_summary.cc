#include "cli/inspect_summary.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cli/inspect_lines.h"
#include "edgemt/edgemt.h"

namespace edgemt::cli {
namespace {

// Enough of a sha256 to tell files apart at a glance (--all prints it whole).
constexpr size_t kShortHash = 16;

std::string or_unknown(const char* text) {
  return text != nullptr && text[0] != '\0' ? text : "(not recorded)";
}

// `items` joined by spaces; abridged, as many as fit one summary line, then
// "... (N in all)".
std::string item_list(const std::vector<std::string>& items, bool unabridged,
                      const std::string& suffix) {
  const size_t room = kInspectWidth - kValueColumn;
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string more = text_printf(" ... (%zu in all; --all lists them)", items.size());
    const size_t after = i + 1 < items.size() ? more.size() : 0;
    if (!unabridged && text.size() + 1 + items[i].size() + after + suffix.size() > room) {
      return text + more + suffix;
    }
    if (!text.empty()) text += ' ';
    text += items[i];
  }
  return text + suffix;
}

// The source vocabulary's target-language tokens (>>xx<<), for
// --target-prefix: only multi-target models have them.
std::vector<std::string> target_language_tokens(const Model& model) {
  std::vector<std::string> tokens;
  const size_t pieces = model.vocabulary_size(TextSide::kSource);
  for (size_t id = 0; id < pieces; ++id) {
    size_t length = 0;
    const char* piece = model.vocabulary_piece(TextSide::kSource, id, &length);
    if (length > 4 && std::strncmp(piece, ">>", 2) == 0 &&
        std::strncmp(piece + length - 2, "<<", 2) == 0) {
      tokens.emplace_back(piece, length);
    }
  }
  return tokens;
}

std::string vocabulary_text(const Model& model, TextSide side) {
  const size_t pieces = model.vocabulary_size(side);
  if (pieces == 0) {
    return text_printf("SentencePiece ids (%u ids)",
                       side == TextSide::kSource ? model.source_vocab_size() : model.vocab_size());
  }
  return text_printf("%zu pieces, looked up by string (unk %d, eos %d)", pieces, model.unk_id(side),
                     model.eos_id(side));
}

}  // namespace

void print_file_facts(const std::string& path, const Model& model, const TensorSummary& tensors,
                      bool unabridged) {
  print_field(0, "file", text_printf("%s (%" PRIu64 " bytes)", path.c_str(), model.file_size()));
  // And who read it: the version `edgemt --version`, edgemt.version() and
  // the Python package report (all CMake's project() version).
  print_field(0, "format version",
              text_printf("%u (edgemt %d.%d.%d reads %u to %u)", model.format_version(),
                          EDGEMT_VERSION_MAJOR, EDGEMT_VERSION_MINOR, EDGEMT_VERSION_PATCH,
                          static_cast<unsigned>(kOldestFormatVersion),
                          static_cast<unsigned>(kFormatVersion)));
  const FileChecksum& checksum = model.checksum();
  print_field(0, "checksum",
              checksum.present
                  ? text_printf("CRC-32C header %08x, weights %08x: %s", checksum.header_crc32c,
                                checksum.weights_crc32c,
                                checksum.verified ? "verified at load" : "not computed")
                  : std::string("none (files before format version 4 have none)"));
  print_field(0, "languages",
              text_printf("%s -> %s", model.source_language(), model.target_language()));
  const std::vector<std::string> targets = target_language_tokens(model);
  if (!targets.empty()) {
    print_field(2, "target languages", item_list(targets, unabridged, "  (--target-prefix)"));
  }
  std::string precision = text_printf("%s, ", dtype_name(model.weight_dtype()));
  if (model.quantization() == QuantizationScheme::kInt8PerRowDynamic) {
    precision += text_printf("%s (per-row scales; activations quantized at run time)",
                             quantization_scheme_name(model.quantization()));
  } else if (model.quantization() == QuantizationScheme::kInt8SmoothedPerRowDynamic) {
    // One line: the scheme says per-row scales and run-time activations.
    precision += text_printf("%s (%zu of %zu projections smoothed)",
                             quantization_scheme_name(model.quantization()),
                             tensors.smoothed_projections, tensors.smoothing_vectors);
  } else if (model.quantization() == QuantizationScheme::kInt8PerTensorDynamic) {
    precision += text_printf("%s (Marian's intgemm8 arithmetic: one activation range per "
                             "product; embeddings f32)",
                             quantization_scheme_name(model.quantization()));
  } else if (model.quantization() == QuantizationScheme::kInt8PerTensorStatic) {
    precision += text_printf("%s (browsermt Marian's arithmetic with alphas: %zu fixed "
                             "activation ranges; embeddings f32)",
                             quantization_scheme_name(model.quantization()), tensors.input_scales);
  } else {
    precision += "no quantization";
  }
  const bool per_row = model.quantization() == QuantizationScheme::kInt8PerRowDynamic ||
                       model.quantization() == QuantizationScheme::kInt8SmoothedPerRowDynamic;
  if (per_row && model.table_dtype() != DType::kI8) {
    precision += model.table_dtype() == DType::kF16 ? "; embeddings f16" : "; embeddings f32";
  }
  print_field(0, "precision", precision);
  std::string parameters = grouped_number(tensors.parameters);
  if (tensors.scale_elements > 0) {
    parameters += " + " + grouped_number(tensors.scale_elements) + " int8 row scales";
  }
  if (tensors.smoothing_elements > 0) {
    parameters += " + " + grouped_number(tensors.smoothing_elements) + " smoothing values";
  }
  if (tensors.residual_bytes > 0) {
    parameters += " + " + human_bytes(tensors.residual_bytes) + " of residual codes";
  }
  print_field(0, "parameters",
              parameters + text_printf("; weights %s of the file's %s",
                                       human_bytes(tensors.stored_bytes).c_str(),
                                       human_bytes(model.file_size()).c_str()));
  const Provenance& p = model.provenance();
  std::string hash = or_unknown(p.source_sha256);
  if (!unabridged && hash.size() > kShortHash + 3) hash = hash.substr(0, kShortHash) + "...";
  print_field(0, "converted from",
              text_printf("%s checkpoint '%s', sha256 %s", or_unknown(p.source_format).c_str(),
                          p.source_checkpoint, hash.c_str()));
  print_field(0, "converter",
              text_printf("edgemt-convert %s, created %s", or_unknown(p.converter_version).c_str(),
                          or_unknown(p.created_utc).c_str()));
}

void print_architecture(const Model& model) {
  print_field(0, "family", model.family());
  // The family's own lines: what its config holds is its business
  // (Model::describe_config), so a new family shows up without a change here.
  char config[2048];
  model.describe_config(config, sizeof(config));
  const char* line = config;
  while (*line != '\0') {
    const char* end = std::strchr(line, '\n');
    const size_t length = end != nullptr ? static_cast<size_t>(end - line) : std::strlen(line);
    print_wrapped_line(std::string(line, length));
    line += length + (end != nullptr ? 1 : 0);
  }
  print_field(2, "max length",
              text_printf("%u tokens (longest source or target, counting EOS)",
                          model.max_sequence_length()));
}

void print_text_handling(const Model& model) {
  size_t source_bytes = 0;
  size_t target_bytes = 0;
  const uint8_t* source = model.tokenizer_model(TextSide::kSource, &source_bytes);
  const uint8_t* target = model.tokenizer_model(TextSide::kTarget, &target_bytes);
  if (source == target) {
    print_field(0, "tokenizer", text_printf("SentencePiece, %zu bytes", source_bytes));
  } else {
    print_field(0, "tokenizers",
                text_printf("SentencePiece: source %zu bytes, target %zu bytes", source_bytes,
                            target_bytes));
  }
  const std::string source_vocab = vocabulary_text(model, TextSide::kSource);
  const std::string target_vocab = vocabulary_text(model, TextSide::kTarget);
  if (model.vocabulary_size(TextSide::kSource) == 0 &&
      model.vocabulary_size(TextSide::kTarget) == 0) {
    print_field(2, "vocab",
                text_printf("SentencePiece ids (%u source, %u target)", model.source_vocab_size(),
                            model.vocab_size()));
  } else if (source_vocab == target_vocab) {
    print_field(2, "vocab", "each side " + source_vocab);
  } else {
    print_field(2, "source vocab", source_vocab);
    print_field(2, "target vocab", target_vocab);
  }
  const SpecialTokens& t = model.special_tokens();
  print_field(2, "special tokens",
              text_printf("pad %d, unk %d, bos %d, eos %d%s, decoder start %d", t.pad, t.unk, t.bos,
                          t.eos, model.append_eos_to_source() ? " (appended to the source)" : "",
                          t.decoder_start));
}

void print_decoding_defaults(const Model& model, bool unabridged) {
  const DecodingDefaults& d = model.decoding();
  std::string search =
      text_printf("beam %u, length penalty %g", d.beam_size, static_cast<double>(d.length_penalty));
  if (d.rules == SearchRules::kMarian) {
    search += text_printf(", word penalty %g", static_cast<double>(d.word_penalty));
  }
  search += text_printf(", %s search rules", search_rules_name(d.rules));
  print_field(0, "decoding defaults", search);
  print_field(2, "max length",
              d.max_len_a == 0.0f
                  ? text_printf("%g tokens, whatever the source length",
                                std::floor(static_cast<double>(d.max_len_b)))
                  : text_printf("%s(%g * source tokens + %g)",
                                d.rules == SearchRules::kMarian ? "ceil" : "floor",
                                static_cast<double>(d.max_len_a), static_cast<double>(d.max_len_b)));
  std::vector<std::string> banned;
  for (size_t i = 0; i < d.banned_count; ++i) banned.push_back(std::to_string(d.banned_tokens[i]));
  print_field(2, "banned tokens", banned.empty() ? "none" : item_list(banned, unabridged, ""));
  const LexicalShortlist* list = model.shortlist();
  if (list == nullptr) return;  // every id is a candidate
  const size_t entries = list->offsets[list->source_ids];
  print_field(2, "shortlist",
              text_printf("ids below %u, then up to %u per source id (%zu source ids, %zu "
                          "entries)%s; 'translate --no-shortlist' ignores it",
                          list->first, list->best, list->source_ids, entries,
                          list->add_source_ids ? ", and the source ids themselves" : ""));
}

}  // namespace edgemt::cli
