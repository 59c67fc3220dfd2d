// edgemt inspect: what is inside a model file, as a summary that fits a
// screen (at most 100 columns, about 40 lines); flags add the long parts
// (every tensor, the arena table) and the unabridged values.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/inspect_arena.h"
#include "cli/inspect_lines.h"
#include "cli/inspect_summary.h"
#include "cli/inspect_tensors.h"
#include "edgemt/model.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace edgemt::cli {
namespace {

constexpr const char* kHelp =
    "usage: edgemt inspect [--tensors] [--arena] [--all] MODEL\n"
    "       edgemt inspect [options] -m MODEL\n"
    "\n"
    "Verifies MODEL (everything translate will trust: structure, config,\n"
    "tensor shapes, every weight value, the embedded tokenizer), loads its\n"
    "tokenizer and translator as translate would, and prints a summary that\n"
    "fits a screen: the file and its format version; languages (and the\n"
    "target-language tokens of a multi-target model); precision; parameter\n"
    "count and weight bytes against the file size; where the file came from\n"
    "(source framework, checkpoint, sha256, converter version, date); the\n"
    "family and its architecture; tokenizers, vocabularies and special\n"
    "tokens; the decoding defaults translate starts from; the tensors grouped\n"
    "by part (entries, layers, size, dtypes); whether the tokenizer loads, the\n"
    "compute path this machine would use, and the run-phase arena from one\n"
    "sentence to batch 32 x beam 4.\n"
    "\n"
    "options:\n"
    "  -m, --model MODEL   the model file (or give it as the one argument)\n"
    "  --tensors           also list every tensor (name, dtype, shape, bytes,\n"
    "                      which tensor an alias shares) and the exact totals\n"
    "                      (entries, parameters, bytes per dtype, file size)\n"
    "  --arena             also print the arena prepare() would take (MiB,\n"
    "                      shared by lifetime and unshared) for batch x beam\n"
    "                      1x1, 16x1, 16x4 and 32x4, source and target up to\n"
    "                      128 tokens (fewer if the model's max length is) and\n"
    "                      up to the max length\n"
    "  --all               all of it: the summary unabridged (the whole sha256,\n"
    "                      every target-language token and banned token),\n"
    "                      then --tensors and --arena\n"
    "  -h, --help          this help\n"
    "\n"
    "exit status: 0 ok, 1 the file is missing, invalid or cannot translate\n"
    "here, 2 bad usage\n";

struct InspectRequest {
  std::string path;
  bool tensors = false;
  bool arena = false;
  bool unabridged = false;
};

// False with *error set on bad usage.
bool parse_request(int argc, char** argv, InspectRequest* request, bool* help, std::string* error) {
  Arguments args;
  if (!args.parse(argc, argv, 2,
                  {{"help", 'h', false},
                   {"model", 'm', true},
                   {"tensors", '\0', false},
                   {"arena", '\0', false},
                   {"all", '\0', false}},
                  error)) {
    return false;
  }
  *help = args.has("help");
  if (*help) return true;
  const size_t given = args.positional().size() + (args.has("model") ? 1 : 0);
  if (given != 1) {
    *error = given == 0 ? "expected one model file"
                        : "expected one model file, got " + std::to_string(given);
    return false;
  }
  request->path = args.has("model") ? args.get("model", "") : args.positional()[0];
  request->unabridged = args.has("all");
  request->tensors = args.has("tensors") || request->unabridged;
  request->arena = args.has("arena") || request->unabridged;
  return true;
}

}  // namespace

int run_inspect(int argc, char** argv) {
  InspectRequest request;
  bool help = false;
  std::string error;
  if (!parse_request(argc, argv, &request, &help, &error)) {
    std::fprintf(stderr, "edgemt inspect: %s\n(run 'edgemt inspect --help')\n", error.c_str());
    return kExitUsage;
  }
  if (help) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  const std::string& path = request.path;
  std::unique_ptr<Model> model;
  Status status = Model::load(path.c_str(), &model);
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: cannot load model '%s': %s\n", path.c_str(), status.message());
    return kExitFailure;
  }
  const TensorSummary tensors = summarize_tensors(*model);
  print_file_facts(path, *model, tensors, request.unabridged);
  std::printf("\n");
  print_architecture(*model);
  std::printf("\n");
  print_text_handling(*model);
  std::printf("\n");
  print_decoding_defaults(*model, request.unabridged);
  std::printf("\n");
  print_tensor_groups(tensors);
  std::printf("\n");

  // What translate would do next: SentencePiece reads the tokenizer (the
  // verifier already checked its structure) and the Translator resolves the
  // weights. Either failing means the file cannot translate: exit 1.
  std::unique_ptr<Tokenizer> tokenizer;
  const Status tokenizer_status = Tokenizer::create(*model, &tokenizer);
  print_field(0, "tokenizer check",
              tokenizer_status.is_ok() ? "loads" : tokenizer_status.message());
  std::unique_ptr<Translator> translator;
  status = Translator::create(*model, TranslatorOptions(), &translator);
  print_field(0, "compute path", status.is_ok() ? translator->compute_path() : status.message());
  if (status.is_ok()) print_arena_range(*model, *translator);

  if (request.tensors) print_tensor_table(*model, tensors);
  if (request.arena && status.is_ok()) print_arena_table(*model, *translator);
  const Status& failed = !tokenizer_status.is_ok() ? tokenizer_status : status;
  if (!failed.is_ok()) {
    std::fprintf(stderr, "edgemt: model '%s' cannot translate: %s\n", path.c_str(),
                 failed.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace edgemt::cli
