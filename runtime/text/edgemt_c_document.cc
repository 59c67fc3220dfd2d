// The C API's document part (edgemt/edgemt.h, "Documents"): sentence
// splitting and whole-line translation with word alignments, composed from
// the library's edgemt/sentences.h and edgemt/alignment.h exactly as `edgemt
// translate` composes them (tools/cli/translate_sources.cc,
// translate_alignment.cc). In the text library: it allocates.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "edgemt/alignment.h"
#include "edgemt/sentences.h"
#include "text/capi_text.h"

namespace {

using edgemt::Status;
using edgemt::StatusCode;
using edgemt::capi::fail;
using edgemt::capi::report;

constexpr const char* kCall = "edgemt_translate_document";

// One sentence of a line and what the translator made of it.
struct Sentence {
  edgemt::SentenceSpan span;
  std::vector<int32_t> source;      // [target prefix] pieces [EOS]
  std::vector<int32_t> tokens;      // [max_target_len]; the first `length` generated
  std::vector<float> attention;     // [max_target_len, source.size()] with align
  edgemt_result result{};           // the translator's report
  std::string translation;
};

// One line: its sentences, or why it failed before translating.
struct Line {
  std::string_view text;
  std::vector<Sentence> sentences;
  bool split = false;
  edgemt_code code = EDGEMT_OK;
  const char* error = "";
};

// A static message for a line whose text the tokenizer refused.
const char* encode_error(StatusCode code) {
  return code == StatusCode::kOutOfRange ? "a sentence is longer than the tokenizer takes (64 KiB)"
                                         : "the line is not valid UTF-8";
}

// Splits and tokenizes one line (not blank) into line->sentences.
void make_sentences(const edgemt::Tokenizer& tokenizer, const edgemt_document_options& document,
                    std::string_view language, const int32_t* prefix, size_t max_source_len,
                    Line* line) {
  // Each sentence encoded once, with the prefix; with splitting on, one over
  // max_source_len is cut into pieces that fit (edgemt/sentences.h), as
  // `edgemt translate` does. A sentence the tokenizer refuses is encoded
  // again below for the reason.
  const edgemt::SourceEncoder encode = [&](std::string_view text, std::vector<int32_t>* ids) {
    if (!tokenizer.encode(text, ids).is_ok()) return false;
    if (prefix != nullptr) ids->insert(ids->begin(), *prefix);
    return true;
  };
  std::vector<edgemt::EncodedSpan> sources = edgemt::source_spans(
      line->text, document.split_sentences != 0, language, max_source_len, encode);
  line->split = sources.size() > 1;
  line->sentences.resize(sources.size());
  for (size_t k = 0; k < sources.size(); ++k) {
    Sentence& sentence = line->sentences[k];
    sentence.span = sources[k].span;
    sentence.source = std::move(sources[k].ids);
    if (!sources[k].encoded) {
      std::vector<int32_t> unused;
      const StatusCode code =
          tokenizer.encode(line->text.substr(sentence.span.begin, sentence.span.end - sentence.span.begin),
                           &unused).code();
      line->code = static_cast<edgemt_code>(code);
      line->error = encode_error(code);
    } else if (sentence.source.size() > max_source_len) {
      line->code = EDGEMT_OUT_OF_RANGE;
      line->error = "a sentence has more tokens than the translator's max_source_len";
    }
    if (line->code != EDGEMT_OK) {
      line->sentences.clear();
      line->split = false;
      return;
    }
  }
}

// Every sentence of the lines that did not fail, through edgemt_translate()
// in batches of the translator's max_batch.
edgemt_code translate_sentences(edgemt_translator* translator, std::vector<Line>* lines,
                                const edgemt_decode_options* options, bool align,
                                edgemt_error* error) {
  const size_t max_target_len = translator->translator->limits().max_target_len;
  std::vector<Sentence*> todo;
  for (Line& line : *lines) {
    for (Sentence& sentence : line.sentences) {
      sentence.tokens.assign(max_target_len, 0);
      if (align) sentence.attention.assign(max_target_len * sentence.source.size(), 0.0f);
      todo.push_back(&sentence);
    }
  }
  std::vector<edgemt_tokens> sources;
  std::vector<edgemt_result> results;
  for (size_t first = 0; first < todo.size(); first += translator->max_batch) {
    const size_t count = std::min(translator->max_batch, todo.size() - first);
    sources.assign(count, edgemt_tokens{});
    results.assign(count, edgemt_result{});
    for (size_t k = 0; k < count; ++k) {
      Sentence& sentence = *todo[first + k];
      sources[k] = edgemt_tokens{sentence.source.data(), sentence.source.size()};
      results[k].tokens = sentence.tokens.data();
      results[k].capacity = sentence.tokens.size();
      results[k].attention = align ? sentence.attention.data() : nullptr;
      results[k].attention_capacity = sentence.attention.size();
    }
    const edgemt_code code =
        edgemt_translate(translator, sources.data(), count, options, results.data(), error);
    if (code != EDGEMT_OK) return code;
    for (size_t k = 0; k < count; ++k) todo[first + k]->result = results[k];
  }
  return EDGEMT_OK;
}

// Writes line `line`'s translation into *out (its sentences translated).
Status finish_line(const edgemt::Tokenizer& tokenizer, const edgemt_document_options& document,
                   int32_t source_eos, Line* line, edgemt_document_result* out) {
  out->sentence_count = line->sentences.size();
  edgemt_text_result& t = out->translation;
  std::vector<int32_t> tokens;
  double score = 0.0;
  for (Sentence& sentence : line->sentences) {
    const edgemt_result& r = sentence.result;
    if (r.code != EDGEMT_OK && line->code == EDGEMT_OK) {
      line->code = r.code;
      line->error = r.error;
    }
    tokens.insert(tokens.end(), sentence.tokens.begin(), sentence.tokens.begin() + r.length);
    score += static_cast<double>(r.score);
    EDGEMT_RETURN_IF_ERROR(tokenizer.decode(sentence.tokens.data(), r.length, &sentence.translation));
    edgemt::capi::keep_on_one_line(&sentence.translation);
  }
  if (line->code != EDGEMT_OK) return Status::ok();
  t.score = static_cast<float>(score);
  std::string text;
  if (line->split) {
    std::vector<edgemt::SentenceSpan> spans;
    std::vector<std::string> translations;
    for (const Sentence& sentence : line->sentences) {
      spans.push_back(sentence.span);
      translations.push_back(sentence.translation);
    }
    text = edgemt::join_sentences(line->text, spans, translations);
  } else if (!line->sentences.empty()) {
    text = line->sentences[0].translation;
  }
  t.text_length = text.size();
  t.token_length = tokens.size();
  if (!edgemt::capi::copy_text(text, t.text, t.text_capacity)) {
    t.text[0] = '\0';
    line->code = EDGEMT_OUT_OF_RANGE;
    line->error = "the translation does not fit in text_capacity (text_length says how many "
                  "bytes it needs, without the NUL)";
    return Status::ok();
  }
  if (t.tokens != nullptr) {
    if (tokens.size() > t.token_capacity) {
      line->code = EDGEMT_OUT_OF_RANGE;
      line->error = "the tokens do not fit in token_capacity (token_length says how many)";
      return Status::ok();
    }
    if (!tokens.empty()) std::memcpy(t.tokens, tokens.data(), tokens.size() * sizeof(int32_t));
  }
  if (document.align == 0) return Status::ok();
  std::vector<std::vector<edgemt::WordPair>> pairs(line->sentences.size());
  std::vector<edgemt::AlignedSentence> aligned;
  for (size_t k = 0; k < line->sentences.size(); ++k) {
    const Sentence& sentence = line->sentences[k];
    edgemt::TranslationIds ids;
    ids.source = sentence.source.data();
    ids.source_count = sentence.source.size();
    ids.has_target_prefix = document.target_prefix != nullptr && document.target_prefix[0] != '\0';
    ids.source_eos = source_eos;
    ids.tokens = sentence.tokens.data();
    ids.token_count = sentence.result.length;
    const edgemt::AttentionMatrix attention{sentence.attention.data(), sentence.result.attention_rows,
                                            sentence.result.attention_columns};
    pairs[k] = edgemt::align_translation(tokenizer, ids, attention);
    aligned.push_back({sentence.span.begin, sentence.span.end, sentence.translation, &pairs[k]});
  }
  const std::vector<edgemt::WordPair> links =
      line->split ? edgemt::line_alignment(line->text, text, aligned)
                  : pairs.empty() ? std::vector<edgemt::WordPair>() : pairs[0];
  out->alignment_length = links.size();
  if (links.size() > out->alignment_capacity || (out->alignment == nullptr && !links.empty())) {
    line->code = EDGEMT_OUT_OF_RANGE;
    line->error = "the alignment does not fit in alignment_capacity (alignment_length says how "
                  "many pairs)";
    return Status::ok();
  }
  for (size_t i = 0; i < links.size(); ++i) {
    out->alignment[i] = edgemt_word_pair{links[i].source_word, links[i].target_word};
  }
  return Status::ok();
}

// Hands each sentence of a line that succeeded to `each`.
void hand_on_sentences(const Line& line, size_t index, bool attention,
                       edgemt_sentence_callback each, void* user) {
  for (size_t k = 0; k < line.sentences.size(); ++k) {
    const Sentence& sentence = line.sentences[k];
    edgemt_document_sentence out{};
    out.line = index;
    out.index = k;
    out.span = edgemt_span{sentence.span.begin, sentence.span.end};
    out.source = sentence.source.data();
    out.source_length = sentence.source.size();
    out.tokens = sentence.tokens.data();
    out.token_length = sentence.result.length;
    out.score = sentence.result.score;
    out.translation = sentence.translation.data();
    out.translation_length = sentence.translation.size();
    if (attention) {
      out.attention = sentence.attention.data();
      out.attention_rows = sentence.result.attention_rows;
      out.attention_columns = sentence.result.attention_columns;
    }
    each(user, &out);
  }
}

// The arguments a call must have before anything runs.
edgemt_code check_arguments(const edgemt_translator* translator, const edgemt_tokenizer* tokenizer,
                            const edgemt_text* lines, size_t count,
                            const edgemt_document_options& document,
                            const edgemt_document_result* results, bool attention,
                            edgemt_error* error) {
  if (translator == nullptr || tokenizer == nullptr ||
      (count != 0 && (lines == nullptr || results == nullptr))) {
    return fail(error, StatusCode::kInvalidArgument, "edgemt_translate_document: NULL argument");
  }
  if (translator->spans == nullptr) {
    return fail(error, StatusCode::kFailedPrecondition,
                "edgemt_translate_document: the translator is not prepared (call "
                "edgemt_translator_prepare first)");
  }
  if (document.align != 0 && !translator->translator->limits().attention) {
    return fail(error, StatusCode::kFailedPrecondition,
                "edgemt_translate_document: align needs a translator prepared with "
                "limits.attention");
  }
  if (attention && !translator->translator->limits().attention) {
    return fail(error, StatusCode::kFailedPrecondition,
                "edgemt_translate_document_sentences: attention needs a translator prepared "
                "with limits.attention");
  }
  for (size_t i = 0; i < count; ++i) {
    if (lines[i].data == nullptr && lines[i].length != 0) {
      return report(error, Status::error(StatusCode::kInvalidArgument, "%s: line %zu is NULL",
                                         kCall, i));
    }
    if (results[i].translation.text == nullptr || results[i].translation.text_capacity == 0) {
      return report(error, Status::error(StatusCode::kInvalidArgument,
                                         "%s: result %zu has no text memory", kCall, i));
    }
  }
  return EDGEMT_OK;
}

}  // namespace

extern "C" {

edgemt_code edgemt_split_sentences(const char* text, size_t length, const char* language,
                                   edgemt_span* spans, size_t capacity, size_t* count,
                                   edgemt_error* error) {
  if ((text == nullptr && length != 0) || (spans == nullptr && capacity != 0) || count == nullptr) {
    return fail(error, StatusCode::kInvalidArgument, "edgemt_split_sentences: NULL argument");
  }
  return edgemt::capi::guarded(error, "edgemt_split_sentences", [&] {
    const std::vector<edgemt::SentenceSpan> found = edgemt::split_sentences(
        std::string_view(text != nullptr ? text : "", length), language != nullptr ? language : "");
    *count = found.size();
    for (size_t i = 0; i < found.size() && i < capacity; ++i) {
      spans[i] = edgemt_span{found[i].begin, found[i].end};
    }
    if (found.size() > capacity) {
      return report(error, Status::error(StatusCode::kOutOfRange,
                                         "edgemt_split_sentences: %zu sentences, more than the "
                                         "capacity %zu",
                                         found.size(), capacity));
    }
    return report(error, Status::ok());
  });
}

edgemt_document_options edgemt_document_options_default(void) {
  edgemt_document_options options;
  options.split_sentences = 1;
  options.language = nullptr;
  options.target_prefix = nullptr;
  options.align = 0;
  return options;
}

edgemt_code edgemt_translate_document(edgemt_translator* translator,
                                      const edgemt_tokenizer* tokenizer, const edgemt_text* lines,
                                      size_t count, const edgemt_document_options* document,
                                      const edgemt_decode_options* options,
                                      edgemt_document_result* results, edgemt_error* error) {
  return edgemt_translate_document_sentences(translator, tokenizer, lines, count, document,
                                             options, results, 0, nullptr, nullptr, error);
}

edgemt_code edgemt_translate_document_sentences(
    edgemt_translator* translator, const edgemt_tokenizer* tokenizer, const edgemt_text* lines,
    size_t count, const edgemt_document_options* document, const edgemt_decode_options* options,
    edgemt_document_result* results, int attention, edgemt_sentence_callback each, void* user,
    edgemt_error* error) {
  const edgemt_document_options doc =
      document != nullptr ? *document : edgemt_document_options_default();
  const edgemt_code checked =
      check_arguments(translator, tokenizer, lines, count, doc, results, attention != 0, error);
  if (checked != EDGEMT_OK) return checked;
  return edgemt::capi::guarded(error, kCall, [&] {
    const edgemt::Tokenizer& tok = *tokenizer->tokenizer;
    const edgemt::Model& model = *translator->model->model;
    int32_t prefix_id = 0;
    const bool has_prefix = doc.target_prefix != nullptr && doc.target_prefix[0] != '\0';
    if (has_prefix) {
      const Status status = edgemt::capi::target_prefix_id(tok, doc.target_prefix, kCall, &prefix_id);
      if (!status.is_ok()) return report(error, status);
    }
    const char* model_language = model.source_language();
    const std::string_view language =
        doc.language != nullptr ? doc.language : model_language != nullptr ? model_language : "";
    const size_t max_source_len = translator->translator->limits().max_source_len;
    std::vector<Line> work(count);
    for (size_t i = 0; i < count; ++i) {
      edgemt_document_result& r = results[i];
      r.translation.text[0] = '\0';
      r.translation.text_length = r.translation.token_length = 0;
      r.translation.score = 0.0f;
      r.alignment_length = r.sentence_count = 0;
      work[i].text = std::string_view(lines[i].data != nullptr ? lines[i].data : "", lines[i].length);
      if (edgemt::capi::is_blank(lines[i])) continue;
      make_sentences(tok, doc, language, has_prefix ? &prefix_id : nullptr, max_source_len, &work[i]);
    }
    const edgemt_code code =
        translate_sentences(translator, &work, options, doc.align != 0 || attention != 0, error);
    if (code != EDGEMT_OK) return code;
    const int32_t source_eos = model.eos_id(edgemt::TextSide::kSource);
    for (size_t i = 0; i < count; ++i) {
      if (work[i].code == EDGEMT_OK) {
        const Status status = finish_line(tok, doc, source_eos, &work[i], &results[i]);
        if (!status.is_ok()) {
          return report(error, Status::error(status.code(), "%s: line %zu: %s", kCall, i,
                                             status.message()));
        }
      }
      results[i].translation.code = work[i].code;
      results[i].translation.error = work[i].error;
      if (each != nullptr && work[i].code == EDGEMT_OK) {
        hand_on_sentences(work[i], i, attention != 0, each, user);
      }
    }
    return report(error, Status::ok());
  });
}

}  // extern "C"
