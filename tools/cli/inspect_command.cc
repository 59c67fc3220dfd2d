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
  size_t spm_size = 0;
  (void)model.tokenizer_model(&spm_size);
  std::printf("  tokenizer        SentencePiece, %zu bytes%s\n", spm_size,
              model.append_eos_to_source() ? ", EOS appended to the source" : "");
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
