// edgemt inspect: what is inside a model file.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "edgemt/model.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace edgemt::cli {
namespace {

constexpr const char* kHelp =
    "usage: edgemt inspect MODEL\n"
    "\n"
    "Verifies MODEL (everything translate will trust: structure, config,\n"
    "tensor shapes, every weight value, the embedded tokenizer) and prints its\n"
    "format version, languages, provenance, config, special tokens, the\n"
    "compute path this machine would use, the tensor table (name, dtype,\n"
    "shape, bytes) and totals.\n"
    "\n"
    "exit status: 0 ok, 1 the file is missing, invalid or cannot translate\n"
    "here, 2 bad usage\n";

std::string shape_text(const TensorView& tensor) {
  std::string text = "[";
  for (uint32_t i = 0; i < tensor.rank; ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(tensor.shape[i]);
  }
  return text + "]";
}

// The source vocabulary's target-language tokens (>>xx<<), for
// --target-prefix: only multi-target models have them.
void print_target_languages(const Model& model) {
  const size_t pieces = model.vocabulary_size(TextSide::kSource);
  size_t count = 0;
  for (size_t id = 0; id < pieces; ++id) {
    size_t length = 0;
    const char* piece = model.vocabulary_piece(TextSide::kSource, id, &length);
    if (length > 4 && std::strncmp(piece, ">>", 2) == 0 && std::strncmp(piece + length - 2, "<<", 2) == 0) {
      if (count == 0) std::printf("  target languages");
      if (count < 40) std::printf(" %.*s", static_cast<int>(length), piece);
      ++count;
    }
  }
  if (count > 40) std::printf(" ... (%zu in all)", count);
  if (count > 0) std::printf("  (--target-prefix)\n");
}

void print_config(const Model& model) {
  const SpecialTokens& t = model.special_tokens();
  const Provenance& p = model.provenance();
  std::printf("format version     %u\n", model.format_version());
  std::printf("languages          %s -> %s\n", model.source_language(), model.target_language());
  std::printf("source             %s checkpoint '%s' (sha256 %s)\n", p.source_format,
              p.source_checkpoint, p.source_sha256);
  std::printf("converter          edgemt-convert %s, created %s\n", p.converter_version,
              p.created_utc);
  std::printf("weight dtype       %s\n", dtype_name(model.weight_dtype()));
  std::printf("quantization       %s%s\n", quantization_scheme_name(model.quantization()),
              model.quantization() == QuantizationScheme::kInt8PerRowDynamic
                  ? " (int8 per output row with <matrix>_scale; activations per row at run time)"
                  : "");
  std::printf("\nconfig\n");
  std::printf("  family           %s\n", model.family());
  char family_config[1024];
  model.describe_config(family_config, sizeof(family_config));
  std::printf("%s", family_config);
  std::printf("  vocab            %u\n", model.vocab_size());
  std::printf("  max length       %u tokens (longest source or target, counting EOS)\n",
              model.max_sequence_length());
  std::printf("  special tokens   pad %d, unk %d, bos %d, eos %d, decoder start %d\n", t.pad, t.unk,
              t.bos, t.eos, t.decoder_start);
  size_t source_spm = 0;
  size_t target_spm = 0;
  const uint8_t* source_bytes = model.tokenizer_model(TextSide::kSource, &source_spm);
  const uint8_t* target_bytes = model.tokenizer_model(TextSide::kTarget, &target_spm);
  std::printf("  tokenizer        SentencePiece, %zu bytes%s%s\n", source_spm,
              source_bytes == target_bytes ? "" : " (source)",
              model.append_eos_to_source() ? ", EOS appended to the source" : "");
  if (source_bytes != target_bytes) {
    std::printf("                   SentencePiece, %zu bytes (target)\n", target_spm);
  }
  for (TextSide side : {TextSide::kSource, TextSide::kTarget}) {
    const char* name = side == TextSide::kSource ? "source" : "target";
    const size_t pieces = model.vocabulary_size(side);
    if (pieces == 0) {
      std::printf("  %s vocab     SentencePiece ids (%u ids)\n", name,
                  side == TextSide::kSource ? model.source_vocab_size() : model.vocab_size());
    } else {
      std::printf("  %s vocab     %zu pieces, looked up by string (unk %d, eos %d)\n", name,
                  pieces, model.unk_id(side), model.eos_id(side));
    }
  }
  print_target_languages(model);
}

// The decoding defaults edgemt translate starts from.
void print_decoding(const Model& model) {
  const DecodingDefaults& d = model.decoding();
  std::printf("\ndecoding defaults (edgemt translate; flags override)\n");
  std::printf("  search rules     %s\n", search_rules_name(d.rules));
  std::printf("  beam             %u\n", d.beam_size);
  std::printf("  length penalty   %g\n", static_cast<double>(d.length_penalty));
  if (d.rules == SearchRules::kMarian) {
    std::printf("  word penalty     %g\n", static_cast<double>(d.word_penalty));
  }
  std::printf("  max length       floor(%g * source tokens + %g)\n", static_cast<double>(d.max_len_a),
              static_cast<double>(d.max_len_b));
  std::printf("  banned tokens   ");
  for (size_t i = 0; i < d.banned_count && i < 16; ++i) std::printf(" %d", d.banned_tokens[i]);
  std::printf("%s\n", d.banned_count > 16 ? " ..." : (d.banned_count == 0 ? " none" : ""));
}

// The run-phase arena prepare() would take for a few limits: source and
// target both up to 128 tokens (or the model's max length if fewer) and up to
// the model's max length, with what sharing memory by lifetime saved.
void print_arenas(const Model& model, const Translator& translator) {
  const size_t longest = model.max_sequence_length();
  std::printf("\narena (run-phase memory, one prepare(); MiB; 'unshared': every buffer its own memory)\n");
  std::printf("  %6s %5s %5s %10s %10s\n", "tokens", "batch", "beam", "arena", "unshared");
  const size_t lengths[2] = {longest < 128 ? longest : 128, longest};
  const size_t shapes[4][2] = {{1, 1}, {16, 1}, {16, 4}, {32, 4}};
  for (size_t i = 0; i < 2; ++i) {
    if (i == 1 && lengths[1] == lengths[0]) break;
    for (const auto& shape : shapes) {
      Limits limits;
      limits.max_batch = shape[0];
      limits.max_beam = shape[1];
      limits.max_source_len = limits.max_target_len = lengths[i];
      ArenaPlan plan;
      const Status status = translator.arena_plan(limits, &plan);
      if (!status.is_ok()) {
        std::printf("  %6zu %5zu %5zu  %s\n", lengths[i], shape[0], shape[1], status.message());
        continue;
      }
      std::printf("  %6zu %5zu %5zu %10.1f %10.1f\n", lengths[i], shape[0], shape[1],
                  static_cast<double>(plan.bytes) / (1 << 20),
                  static_cast<double>(plan.unshared_bytes) / (1 << 20));
    }
  }
}

}  // namespace

int run_inspect(int argc, char** argv) {
  Arguments args;
  std::string error;
  if (!args.parse(argc, argv, 2, {{"help", 'h', false}}, &error)) {
    std::fprintf(stderr, "edgemt inspect: %s\n(run 'edgemt inspect --help')\n", error.c_str());
    return kExitUsage;
  }
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  if (args.positional().size() != 1) {
    std::fprintf(stderr, "edgemt inspect: expected one model file\n(run 'edgemt inspect --help')\n");
    return kExitUsage;
  }
  const std::string& path = args.positional()[0];
  std::unique_ptr<Model> model;
  Status status = Model::load(path.c_str(), &model);
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: cannot load model '%s': %s\n", path.c_str(), status.message());
    return kExitFailure;
  }
  print_config(*model);

  // What translate would do next: SentencePiece reads the tokenizer (the
  // verifier already checked its structure) and the Translator resolves the
  // weights. Either failing means the file cannot translate: exit 1.
  std::unique_ptr<Tokenizer> tokenizer;
  const Status tokenizer_status = Tokenizer::create(*model, &tokenizer);
  std::printf("  tokenizer check  %s\n", tokenizer_status.is_ok() ? "loads" : tokenizer_status.message());
  std::unique_ptr<Translator> translator;
  status = Translator::create(*model, TranslatorOptions(), &translator);
  std::printf("  compute path     %s\n",
              status.is_ok() ? translator->compute_path() : status.message());
  print_decoding(*model);

  std::printf("\ntensors\n  %-48s %-5s %-14s %12s\n", "name", "dtype", "shape", "bytes");
  uint64_t parameters = 0;
  uint64_t stored_bytes = 0;
  uint64_t bytes_by_dtype[3] = {0, 0, 0};
  for (size_t i = 0; i < model->tensor_count(); ++i) {
    const TensorView& tensor = model->tensor(i);
    bool alias = false;
    for (size_t j = 0; j < i; ++j) {
      alias |= model->tensor(j).offset == tensor.offset && model->tensor(j).size_bytes > 0;
    }
    std::printf("  %-48s %-5s %-14s %12" PRIu64 "%s\n", tensor.name, dtype_name(tensor.dtype),
                shape_text(tensor).c_str(), tensor.size_bytes, alias ? "  (alias)" : "");
    if (alias) continue;
    parameters += tensor.element_count();
    stored_bytes += tensor.size_bytes;
    bytes_by_dtype[static_cast<size_t>(tensor.dtype)] += tensor.size_bytes;
  }
  std::printf("\ntotals\n");
  std::printf("  tensors          %zu entries (aliases share bytes and count once)\n",
              model->tensor_count());
  std::printf("  parameters       %" PRIu64 "\n", parameters);
  std::printf("  weight bytes     %" PRIu64 " (f32 %" PRIu64 ", f16 %" PRIu64 ", i8 %" PRIu64 ")\n",
              stored_bytes, bytes_by_dtype[0], bytes_by_dtype[1], bytes_by_dtype[2]);
  std::printf("  file size        %" PRIu64 " bytes\n", model->file_size());
  if (status.is_ok()) print_arenas(*model, *translator);
  const Status& failed = !tokenizer_status.is_ok() ? tokenizer_status : status;
  if (!failed.is_ok()) {
    std::fprintf(stderr, "edgemt: model '%s' cannot translate: %s\n", path.c_str(), failed.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace edgemt::cli
