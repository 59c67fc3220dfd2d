// TranslateEngine: what `edgemt translate` loads and prepares before it
// reads a line: the model, its tokenizer, a translator prepared for the
// settings' limits (with attention weights planned only when a flag asks
// for them), the target-prefix id and, when the output needs pieces, a
// PieceSpeller.
#pragma once

#include <cstdint>
#include <memory>

#include "cli/translate_pieces.h"
#include "cli/translate_settings.h"
#include "edgemt/model.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace edgemt::cli {

struct TranslateEngine {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Translator> translator;
  std::unique_ptr<PieceSpeller> pieces;  // with --json or an attention flag; else null
  DecodeOptions decode;
  bool has_target_prefix = false;
  int32_t target_prefix = 0;  // the --target-prefix token's source id
};

// Loads and prepares. On failure prints why on stderr and returns the exit
// status: kExitFailure (model, memory, a family without attention weights),
// kExitUsage (a --target-prefix, --attention-layer or --attention-head the
// model does not have); kExitOk on success.
int load_translate_engine(const TranslateSettings& settings, TranslateEngine* engine);

}  // namespace edgemt::cli
