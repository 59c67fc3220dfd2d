// The blocks of `edgemt inspect`'s summary, each a few "label  value" lines
// (cli/inspect_lines.h), in the order the command prints them.
//
// `unabridged` (--all) prints in full what the summary shortens to keep to
// one line: the checkpoint's sha256, the target-language tokens, the banned
// tokens.
#pragma once

#include <string>

#include "cli/inspect_tensors.h"
#include "edgemt/model.h"

namespace edgemt::cli {

// File, format version, languages (and target-language tokens), precision,
// parameters and sizes, where the file came from.
void print_file_facts(const std::string& path, const Model& model, const TensorSummary& tensors,
                      bool unabridged);

// The family and its architecture (the family's own describe_config()
// lines), and the longest sequence it accepts.
void print_architecture(const Model& model);

// Tokenizer(s), vocabularies and special tokens.
void print_text_handling(const Model& model);

// The decoding defaults edgemt translate starts from (its flags override
// them).
void print_decoding_defaults(const Model& model, bool unabridged);

}  // namespace edgemt::cli
