/* edgemt.h: the C interface of the edgemt runtime (C99; also valid C++).
 *
 * What Swift, Kotlin/JNI, Rust, Go, Python (ctypes) and firmware C call. It
 * wraps the C++ runtime (edgemt/model.h, edgemt/translator.h,
 * edgemt/tokenizer.h) behind opaque handles. No C++ exception crosses it, and
 * nothing it allocates is freed by the caller except through the matching
 * edgemt_*_free().
 *
 * Phases, as in the C++ API:
 *
 *   load     edgemt_model_open() / edgemt_model_open_memory()   allocates
 *            edgemt_translator_create()                          allocates
 *   prepare  edgemt_translator_arena_size(), then
 *            edgemt_translator_prepare() with a caller arena    allocates nothing
 *            (or with arena NULL: the library allocates it)
 *   run      edgemt_translate()                                  allocates nothing
 *            edgemt_model_detokenize()                           allocates nothing
 *   text     edgemt_tokenizer_*(), edgemt_translate_text()       allocate (SentencePiece);
 *            these are in the text library (edgemt_text), which
 *            firmware without it does not link
 *
 * Errors. Every call that can fail returns an edgemt_code (EDGEMT_OK is 0)
 * and, when `error` is not NULL, writes the code and a NUL-terminated message
 * into the caller's edgemt_error (no allocation, no shared state: safe from
 * any thread). On failure, out-parameters are left untouched unless a call
 * says otherwise. A NULL handle, a NULL pointer the call needs, or a call in
 * the wrong order returns a code and a message; it never crashes. Passing a
 * handle after its edgemt_*_free() cannot be detected and is undefined.
 *
 * Threads. A model is immutable once open: any number of translators and
 * tokenizers on any threads may share it. A translator is used by one thread
 * at a time (it may move between threads between calls); it runs its own
 * worker threads inside edgemt_translate(), which sleep (use no CPU) while it
 * is not translating. A tokenizer's calls may run concurrently. The free
 * functions must not race with other calls on the same handle. Free
 * translators and tokenizers before their model.
 */
#ifndef EDGEMT_EDGEMT_H_
#define EDGEMT_EDGEMT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(EDGEMT_C_API_BUILD)
#define EDGEMT_API __attribute__((visibility("default")))
#else
#define EDGEMT_API
#endif

/* ---- Version ------------------------------------------------------------- */

#define EDGEMT_VERSION_MAJOR 0
#define EDGEMT_VERSION_MINOR 2
#define EDGEMT_VERSION_PATCH 0

/* The library's version, "MAJOR.MINOR.PATCH" (static string). Compare it
 * with the EDGEMT_VERSION_* macros of the header a program was built with. */
EDGEMT_API const char* edgemt_version(void);
/* The newest and oldest model file format versions this library reads. */
EDGEMT_API uint32_t edgemt_format_version(void);
EDGEMT_API uint32_t edgemt_oldest_format_version(void);

/* ---- Errors -------------------------------------------------------------- */

/* The same codes, in the same order, as edgemt::StatusCode. */
typedef enum edgemt_code {
  EDGEMT_OK = 0,
  EDGEMT_INVALID_ARGUMENT = 1,     /* bad option or input */
  EDGEMT_OUT_OF_RANGE = 2,         /* input longer than the model or the limits allow */
  EDGEMT_FAILED_PRECONDITION = 3,  /* call in the wrong order (translate before prepare) */
  EDGEMT_NOT_FOUND = 4,            /* model file missing */
  EDGEMT_IO_ERROR = 5,             /* open/stat/mmap failed */
  EDGEMT_INVALID_MODEL = 6,        /* truncated, corrupt or inconsistent model */
  EDGEMT_UNSUPPORTED_VERSION = 7,  /* model format version this library does not read */
  EDGEMT_UNSUPPORTED = 8,          /* feature this build cannot run */
  EDGEMT_OUT_OF_MEMORY = 9,        /* buffer too small, or allocation at load failed */
  EDGEMT_BACKEND_ERROR = 10,       /* XNNPACK or the thread pool failed */
  EDGEMT_NUMERIC_ERROR = 11,       /* a sentence's scores were NaN or infinite */
  EDGEMT_CODE_FORCE_INT32 = 0x7FFFFFFF  /* not a code: any int value is a valid edgemt_code */
} edgemt_code;

#define EDGEMT_ERROR_MESSAGE_CAPACITY 256

/* Caller-owned; filled by a failing call (code and message), and by a
 * successful one with EDGEMT_OK and "". */
typedef struct edgemt_error {
  edgemt_code code;
  char message[EDGEMT_ERROR_MESSAGE_CAPACITY];
} edgemt_error;

/* Short stable name of a code ("invalid-model", ...): a static string;
 * "unknown" for a value that is not a code. */
EDGEMT_API const char* edgemt_code_name(edgemt_code code);

/* ---- Model ---------------------------------------------------------------- */

typedef struct edgemt_model edgemt_model;

/* Alignment a model buffer given to edgemt_model_open_memory() must have
 * (the weight segment inside the file is aligned to it). */
#define EDGEMT_MODEL_ALIGNMENT 64

/* Maps the file at `path` (mmap: nothing is copied) and verifies it fully.
 * The file must not be truncated or rewritten in place while the model is
 * open (replace it by renaming). *out is the caller's until
 * edgemt_model_free(). Errors: NOT_FOUND, IO_ERROR, INVALID_MODEL,
 * UNSUPPORTED_VERSION, UNSUPPORTED, OUT_OF_MEMORY, INVALID_ARGUMENT. */
EDGEMT_API edgemt_code edgemt_model_open(const char* path, edgemt_model** out,
                                         edgemt_error* error);

/* Verifies a model file already in memory (flash, a blob linked into the
 * executable, a caller buffer) and uses it in place: nothing is copied. The
 * buffer stays the caller's; it must hold the whole file, be
 * EDGEMT_MODEL_ALIGNMENT-aligned (INVALID_ARGUMENT otherwise), stay
 * unchanged and outlive the model. Other errors as edgemt_model_open(). */
EDGEMT_API edgemt_code edgemt_model_open_memory(const void* data, size_t size,
                                                edgemt_model** out, edgemt_error* error);

/* Flags of edgemt_model_open_with() and edgemt_model_open_memory_with(). */
/* Read the whole file into memory instead of mapping it: immune to anything
 * done to the file later (files only). */
#define EDGEMT_OPEN_COPY 1u
/* Do not compute the file's CRC-32C checksums (format version 4 and later
 * files carry them; a file whose bytes differ from those the converter
 * wrote is then refused with INVALID_MODEL). Only for a file verified
 * elsewhere (a signed image, a download checked against its hash): every
 * other check still runs. */
#define EDGEMT_OPEN_SKIP_CHECKSUM 2u

/* edgemt_model_open() and edgemt_model_open_memory() with flags (0: the
 * same as they). INVALID_ARGUMENT for an unknown flag, or
 * EDGEMT_OPEN_COPY with a buffer. */
EDGEMT_API edgemt_code edgemt_model_open_with(const char* path, uint32_t flags,
                                              edgemt_model** out, edgemt_error* error);
EDGEMT_API edgemt_code edgemt_model_open_memory_with(const void* data, size_t size,
                                                     uint32_t flags, edgemt_model** out,
                                                     edgemt_error* error);

/* Frees the model (NULL: no-op). Its translators and tokenizers must be
 * freed first. */
EDGEMT_API void edgemt_model_free(edgemt_model* model);

/* What a program needs to know of a model. Strings are the model's and
 * live as long as it. */
typedef struct edgemt_model_info {
  uint32_t format_version;
  const char* family;           /* the runtime/models/ folder that runs it */
  const char* source_language;  /* "en" ("" when unknown) */
  const char* target_language;
  const char* weight_dtype;     /* "f32", "f16", "i8" */
  uint32_t source_vocab_size;   /* source ids are below it */
  uint32_t target_vocab_size;   /* output ids are below it */
  uint32_t max_sequence_length; /* longest source or target, in tokens counting EOS */
  int32_t source_eos_id;        /* appended to each source when append_eos_to_source */
  int append_eos_to_source;     /* 1 or 0 */
  int has_tokenizer;            /* 1 when the file holds SentencePiece model(s) */
} edgemt_model_info;

/* Errors: INVALID_ARGUMENT (NULL model or out). */
EDGEMT_API edgemt_code edgemt_model_get_info(const edgemt_model* model, edgemt_model_info* out,
                                             edgemt_error* error);

/* Text of target ids without SentencePiece: the pieces of the model's
 * target vocabulary concatenated, "\xe2\x96\x81" (U+2581) turned into a
 * space, the leading space dropped, special tokens (pad, bos, eos, unk's
 * piece excepted) skipped. This is what SentencePiece's decoder does for the
 * models edgemt converts, except for byte-fallback pieces (<0x..>), which
 * are written as the bytes they stand for. Writes at most `capacity` bytes
 * and a NUL into `text` (capacity >= 1); *length is the text's length
 * without the NUL. Allocates nothing. Errors: INVALID_ARGUMENT (NULL
 * pointer, id outside the vocabulary), OUT_OF_RANGE (text does not fit:
 * `text` then holds the longest prefix that does, cut between pieces),
 * UNSUPPORTED (the model has no vocabulary of pieces). */
EDGEMT_API edgemt_code edgemt_model_detokenize(const edgemt_model* model, const int32_t* ids,
                                               size_t count, char* text, size_t capacity,
                                               size_t* length, edgemt_error* error);

/* ---- Translator ------------------------------------------------------------ */

typedef struct edgemt_translator edgemt_translator;

typedef struct edgemt_translator_options {
  size_t threads;                  /* 1..256 workers in edgemt_translate(); 1 = the caller only */
  size_t min_parallel_nanoseconds; /* smallest work worth a worker (edgemt/translator.h) */
} edgemt_translator_options;

/* threads 1, min_parallel_nanoseconds as the C++ default. */
EDGEMT_API edgemt_translator_options edgemt_translator_options_default(void);

/* The largest request edgemt_translate() accepts after prepare; each >= 1. */
typedef struct edgemt_limits {
  size_t max_batch;       /* sentences per call, <= 1024 */
  size_t max_source_len;  /* source tokens counting EOS, <= max_sequence_length */
  size_t max_beam;        /* <= 64 */
  size_t max_target_len;  /* generated tokens counting EOS, <= max_sequence_length */
  int attention;          /* nonzero: plan memory for attention weights (edgemt_result) */
  int attention_layer;    /* decoder layer of the attention over the source, -1 the last */
  int attention_head;     /* its head, -1 the mean over every head (start from edgemt_limits_default) */
} edgemt_limits;

/* 16 sentences of 256 tokens, beam 4 (edgemt::Limits). */
EDGEMT_API edgemt_limits edgemt_limits_default(void);

/* Creates a translator over `model` (options NULL: defaults). Packs the
 * weights it computes with and starts its worker threads. The model must
 * outlive it. Errors: INVALID_ARGUMENT, UNSUPPORTED, BACKEND_ERROR,
 * OUT_OF_MEMORY. */
EDGEMT_API edgemt_code edgemt_translator_create(const edgemt_model* model,
                                                const edgemt_translator_options* options,
                                                edgemt_translator** out, edgemt_error* error);

/* Frees the translator (NULL: no-op) and stops its threads. A caller arena
 * stays the caller's; an arena the library allocated is freed. */
EDGEMT_API void edgemt_translator_free(edgemt_translator* translator);

/* Whether greedy translations (beam_size 1) report their score (nonzero,
 * the default) or not (0): then their score is NaN and, for a model with an
 * f32 output projection, the decoder finds each step's most likely token
 * without computing every logit, from an int8 copy of that matrix this call
 * builds (vocab x (hidden size + 28) bytes; edgemt::Translator::
 * set_greedy_scores). The tokens and failures are the same either way; beam
 * search is not affected. Set to 0 before the first prepare, the translator
 * also keeps no f32 copy of that matrix (the size of the matrix) and reads
 * its rows from the model instead: beam search then gives the same results
 * with a slower output projection. Call between translations (it allocates).
 * Errors: INVALID_ARGUMENT (NULL translator), OUT_OF_MEMORY. */
EDGEMT_API edgemt_code edgemt_translator_set_greedy_scores(edgemt_translator* translator,
                                                          int scores, edgemt_error* error);

/* Whether translations use the model file's lexical shortlist (nonzero, the
 * default for a model converted with one) or the whole vocabulary (0). With
 * it each call's output covers only the candidate ids of its sentences (the
 * first ids, each source token's list, EOS) and scores are normalized over
 * them, as Marian does with the same shortlist; a sentence's translation may
 * then depend on the sentences translated with it. Takes effect at the next
 * edgemt_translator_prepare (it plans the shortlist's buffers).
 * Errors: INVALID_ARGUMENT (NULL translator), FAILED_PRECONDITION (nonzero
 * for a model without a shortlist). */
/* For an int8 file converted from a Marian intgemm8 model (with or without
 * alphas): whose int8 sums translations reproduce. 0, the default: exact
 * sums, the output of Marian (and Firefox's Bergamot) on CPUs with AVX-512
 * VNNI; 1 AVX2, 2 AVX-512 BW, 3 SSSE3: the 16-bit saturating sums Marian
 * computes on CPUs of that kind, on any CPU (slower; edgemt/translator.h,
 * MarianInt8Sums). Before edgemt_translator_prepare (the translator's
 * layers are made again; greedy-score and shortlist choices are kept).
 * Errors: INVALID_ARGUMENT (NULL translator, `sums` outside 0..3, nonzero
 * for a file not in Marian's int8 arithmetic), FAILED_PRECONDITION (after
 * prepare), OUT_OF_MEMORY. */
EDGEMT_API edgemt_code edgemt_translator_set_marian_int8_sums(edgemt_translator* translator,
                                                             int sums, edgemt_error* error);

EDGEMT_API edgemt_code edgemt_translator_set_shortlist(edgemt_translator* translator, int use,
                                                      edgemt_error* error);

/* Alignment of a caller arena. */
#define EDGEMT_ARENA_ALIGNMENT 64

/* Bytes of arena edgemt_translator_prepare() needs for `limits`. Allocates
 * nothing. Errors: INVALID_ARGUMENT (NULL pointer, limits outside the
 * model's or the library's). */
EDGEMT_API edgemt_code edgemt_translator_arena_size(const edgemt_translator* translator,
                                                    const edgemt_limits* limits, size_t* bytes,
                                                    edgemt_error* error);

/* Lays out every run-phase buffer for `limits` in `arena`: caller memory,
 * EDGEMT_ARENA_ALIGNMENT-aligned, at least edgemt_translator_arena_size()
 * bytes, that the translator uses until it is freed or prepared again (the
 * caller must not touch it meanwhile). With arena NULL (and arena_size 0)
 * the library allocates it. May be called again with other limits; a prepare
 * that fails leaves the translator as it was. Errors: INVALID_ARGUMENT
 * (limits, misaligned arena), OUT_OF_MEMORY (arena smaller than needed, or
 * the library's allocation failed). */
EDGEMT_API edgemt_code edgemt_translator_prepare(edgemt_translator* translator,
                                                 const edgemt_limits* limits, void* arena,
                                                 size_t arena_size, edgemt_error* error);

/* How to decode. The search follows the model's recorded rules (its source
 * framework's) and never emits its banned tokens. */
typedef struct edgemt_decode_options {
  size_t beam_size;      /* 1 = greedy; <= the prepared max_beam */
  float length_penalty;  /* beam: score / L^length_penalty */
  float max_len_a;       /* at most floor(a * source_len + b) generated tokens */
  float max_len_b;
  float word_penalty;    /* Marian rules: per generated token */
} edgemt_decode_options;

/* The model's own decoding defaults (what `edgemt translate` uses).
 * Errors: INVALID_ARGUMENT (NULL pointer). */
EDGEMT_API edgemt_code edgemt_decode_options_default(const edgemt_model* model,
                                                     edgemt_decode_options* out,
                                                     edgemt_error* error);

/* One source sentence of token ids (ending with source_eos_id when the
 * model's append_eos_to_source is 1). The ids stay the caller's. */
typedef struct edgemt_tokens {
  const int32_t* ids;
  size_t length;
} edgemt_tokens;

/* One translation. Before the call the caller sets `tokens` (its memory)
 * and `capacity` (>= max_target_len never truncates); the call writes the
 * rest. A sentence can fail alone (code NUMERIC_ERROR, `error` says why,
 * length 0) while its batch succeeds. `error` is a static string, never
 * NULL. EOS, BOS and pad are not in `tokens`. */
typedef struct edgemt_result {
  int32_t* tokens;
  size_t capacity;
  size_t length;
  float score;        /* log-probability (beam: length-normalized) */
  edgemt_code code;
  const char* error;
  /* Attention weights on request (edgemt::Translation::attention): NULL for
   * none (zero-initialize results: `edgemt_result r = {0};`); else room for attention_capacity floats, and the translator
   * prepared with limits.attention. Filled [attention_rows,
   * attention_columns]: one row per decoder step of the returned
   * hypothesis (its tokens, then its EOS if it ended with one), one column
   * per source token. */
  float* attention;
  size_t attention_capacity;
  size_t attention_rows;
  size_t attention_columns;
} edgemt_result;

/* Translates `count` sentences (count <= max_batch) in one batch, on the
 * prepared arena: allocates nothing. options NULL: the model's defaults.
 * Errors (the whole call; results are not written): FAILED_PRECONDITION
 * (not prepared), INVALID_ARGUMENT (NULL pointer, count or beam over the
 * limits, id outside the vocabulary, empty source, result without tokens
 * memory), OUT_OF_RANGE (source longer than max_source_len). On EDGEMT_OK
 * check each result's code. */
EDGEMT_API edgemt_code edgemt_translate(edgemt_translator* translator,
                                        const edgemt_tokens* sources, size_t count,
                                        const edgemt_decode_options* options,
                                        edgemt_result* results, edgemt_error* error);

/* ---- Text (the edgemt_text library: SentencePiece; allocates) ------------- */

typedef struct edgemt_tokenizer edgemt_tokenizer;

/* A tokenizer from the SentencePiece model(s) in the model file. The model
 * must outlive it. Errors: INVALID_ARGUMENT, INVALID_MODEL (no tokenizer in
 * the file), OUT_OF_MEMORY. */
EDGEMT_API edgemt_code edgemt_tokenizer_create(const edgemt_model* model,
                                               edgemt_tokenizer** out, edgemt_error* error);
EDGEMT_API void edgemt_tokenizer_free(edgemt_tokenizer* tokenizer);

/* Source ids of UTF-8 `text` (`text_length` bytes, no NUL needed), EOS
 * appended when the model wants it, into ids[0..capacity); *length is the
 * count. Errors: INVALID_ARGUMENT (invalid UTF-8, NULL pointer),
 * OUT_OF_RANGE (text over 64 KiB, or more than `capacity` ids: *length then
 * says how many are needed). */
EDGEMT_API edgemt_code edgemt_tokenizer_encode(const edgemt_tokenizer* tokenizer,
                                               const char* text, size_t text_length,
                                               int32_t* ids, size_t capacity, size_t* length,
                                               edgemt_error* error);

/* UTF-8 text of target ids into text[0..capacity) with a NUL; *length
 * without it. Errors: INVALID_ARGUMENT, OUT_OF_RANGE (does not fit:
 * *length then is the length needed, and text holds "" ). */
EDGEMT_API edgemt_code edgemt_tokenizer_decode(const edgemt_tokenizer* tokenizer,
                                               const int32_t* ids, size_t count, char* text,
                                               size_t capacity, size_t* length,
                                               edgemt_error* error);

/* The piece of `id` as its side's vocabulary spells it ("\xe2\x96\x81Hund",
 * "</s>", ">>fra<<"): for token lists and attention labels. side 0: the
 * source vocabulary, 1: the target's. Writes the piece and a NUL into
 * piece[0..capacity); *length is its length without the NUL. Errors:
 * INVALID_ARGUMENT (NULL pointer, side not 0 or 1, id outside the side's
 * vocabulary), OUT_OF_RANGE (does not fit: *length is the length needed,
 * and piece holds ""). */
EDGEMT_API edgemt_code edgemt_tokenizer_piece(const edgemt_tokenizer* tokenizer, int side,
                                              int32_t id, char* piece, size_t capacity,
                                              size_t* length, edgemt_error* error);

/* One line of UTF-8 text (not NUL-terminated: `length` bytes). */
typedef struct edgemt_text {
  const char* data;
  size_t length;
} edgemt_text;

/* One text translation: the caller sets `text`/`text_capacity` (and, to
 * get them, `tokens`/`token_capacity`; tokens NULL: not written); the call
 * writes the rest. `text` gets a NUL. */
typedef struct edgemt_text_result {
  char* text;
  size_t text_capacity;
  size_t text_length;
  int32_t* tokens;
  size_t token_capacity;
  size_t token_length;
  float score;
  edgemt_code code;   /* per sentence: OK, NUMERIC_ERROR, or OUT_OF_RANGE (did not fit) */
  const char* error;  /* static string, never NULL */
} edgemt_text_result;

/* Tokenizes `count` texts, translates them in one batch (count <=
 * max_batch), and detokenizes. target_prefix: a target-language token that
 * multi-target models expect first in the source (">>fra<<"), or NULL.
 * options NULL: the model's defaults. Errors (whole call): as
 * edgemt_translate() and edgemt_tokenizer_encode() (a text that cannot be
 * encoded fails the call, and the message names its index). */
EDGEMT_API edgemt_code edgemt_translate_text(edgemt_translator* translator,
                                             const edgemt_tokenizer* tokenizer,
                                             const edgemt_text* texts, size_t count,
                                             const char* target_prefix,
                                             const edgemt_decode_options* options,
                                             edgemt_text_result* results, edgemt_error* error);

/* ---- Documents: sentences and word alignments (edgemt_text) -------------- */

/* Bytes [begin, end) of a text. */
typedef struct edgemt_span {
  size_t begin;
  size_t end;
} edgemt_span;

/* The sentences of one line of UTF-8 text (`length` bytes), as `edgemt
 * translate` splits it (edgemt/sentences.h: conservative rules; a wrong
 * split ruins a translation, a missed one does not). language: an ISO 639-1
 * code ("en", "de" and "fr" have rules of their own; NULL, "" or any other:
 * the union of theirs). Writes the first `capacity` spans (no whitespace
 * around them) into spans; *count is how many there are: 0 for a blank
 * line, 1 for a line of one sentence. Bytes that are not UTF-8 are read as
 * non-letters, never an error. Errors: INVALID_ARGUMENT (NULL pointer),
 * OUT_OF_RANGE (more than `capacity`: *count says how many). */
EDGEMT_API edgemt_code edgemt_split_sentences(const char* text, size_t length,
                                              const char* language, edgemt_span* spans,
                                              size_t capacity, size_t* count,
                                              edgemt_error* error);

/* One word alignment link: source word i, target word j, counted as the
 * whitespace words of the line and of its translation (line.split()). */
typedef struct edgemt_word_pair {
  size_t source_word;
  size_t target_word;
} edgemt_word_pair;

typedef struct edgemt_document_options {
  /* Nonzero (default): a line of several sentences is translated sentence by
   * sentence and the translations joined, keeping the line's own spaces
   * between them, and a sentence over the translator's max_source_len is
   * cut into pieces that fit, joined the same way (edgemt/sentences.h:
   * cut_long_sentence); 0: each line is one source. */
  int split_sentences;
  /* The splitting rules' language (ISO 639-1); NULL (default): the model's
   * source language; "": the generic rules. */
  const char* language;
  /* As edgemt_translate_text's target_prefix; NULL (default): none. */
  const char* target_prefix;
  /* Nonzero: write each line's word alignment (needs a translator prepared
   * with limits.attention); default 0. */
  int align;
} edgemt_document_options;

EDGEMT_API edgemt_document_options edgemt_document_options_default(void);

/* One line's translation. In `translation`, as for edgemt_translate_text,
 * the caller sets text/text_capacity (and tokens/token_capacity to get
 * them); the call writes the rest: the sentences' translations joined, all
 * their tokens in order, their scores summed (log-probabilities add), and
 * per line the code: OK; INVALID_ARGUMENT (not UTF-8); OUT_OF_RANGE (a
 * line over max_source_len without splitting, a sentence over the
 * tokenizer's 64 KiB,
 * or an output that does not fit: the *_length fields say how much it
 * needs); NUMERIC_ERROR. The caller sets alignment/alignment_capacity to
 * get the word alignment (options.align). */
typedef struct edgemt_document_result {
  edgemt_text_result translation;
  size_t sentence_count;        /* the sources the line was translated as; 0: blank */
  edgemt_word_pair* alignment;  /* sorted by target word */
  size_t alignment_capacity;
  size_t alignment_length;
} edgemt_document_result;

/* Translates `count` lines (any number; sent in batches of the prepared
 * max_batch sentences) as `edgemt translate` does: each line split into
 * sentences (document->split_sentences), every sentence tokenized (with the
 * target prefix) and translated, the translations detokenized and joined;
 * with document->align, each line's word alignment as `edgemt translate
 * --align` prints it. A blank line gives "" and no sentence. document NULL:
 * edgemt_document_options_default(); options NULL: the model's defaults.
 * Errors (whole call): INVALID_ARGUMENT (NULL pointer, result without text
 * memory, unknown target prefix), FAILED_PRECONDITION (not prepared; align
 * without limits.attention), and edgemt_translate()'s; a line that cannot
 * be translated fails alone (its result's code). */
EDGEMT_API edgemt_code edgemt_translate_document(edgemt_translator* translator,
                                                 const edgemt_tokenizer* tokenizer,
                                                 const edgemt_text* lines, size_t count,
                                                 const edgemt_document_options* document,
                                                 const edgemt_decode_options* options,
                                                 edgemt_document_result* results,
                                                 edgemt_error* error);

/* One sentence of a line that edgemt_translate_document_sentences()
 * translated. Every pointer is the library's, valid only during the
 * callback that receives it. */
typedef struct edgemt_document_sentence {
  size_t line;                /* index of its line in the call */
  size_t index;               /* its place in the line: 0, 1, ... */
  edgemt_span span;           /* its bytes in the line */
  const int32_t* source;      /* the ids the model read: [target prefix] pieces [EOS] */
  size_t source_length;
  const int32_t* tokens;      /* its generated ids (no EOS) */
  size_t token_length;
  float score;
  const char* translation;    /* its own text (not NUL-terminated) */
  size_t translation_length;
  /* With `attention`: [attention_rows, attention_columns] weights as in
   * edgemt_result (a row per decoder step of its tokens, then its EOS if
   * it ended with one; a column per source id); else NULL and 0, 0. */
  const float* attention;
  size_t attention_rows;
  size_t attention_columns;
} edgemt_document_sentence;

typedef void (*edgemt_sentence_callback)(void* user, const edgemt_document_sentence* sentence);

/* edgemt_translate_document(), which also hands every sentence of every
 * line that succeeded (result code OK) to `each` (NULL: none), in line
 * order then sentence order, before it returns: what a caller needs for
 * per-sentence sources, tokens and scores. attention nonzero: each
 * sentence's attention weights too (a translator prepared with
 * limits.attention, else FAILED_PRECONDITION). The same results and
 * errors as edgemt_translate_document() otherwise. */
EDGEMT_API edgemt_code edgemt_translate_document_sentences(
    edgemt_translator* translator, const edgemt_tokenizer* tokenizer, const edgemt_text* lines,
    size_t count, const edgemt_document_options* document, const edgemt_decode_options* options,
    edgemt_document_result* results, int attention, edgemt_sentence_callback each, void* user,
    edgemt_error* error);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* EDGEMT_EDGEMT_H_ */
