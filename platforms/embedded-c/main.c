/* edgemt embedded in a C program, as on a device without a file system:
 *
 *   - the model is linked into the executable (model_blob.S: .incbin,
 *     64-byte aligned) and used in place by edgemt_model_open_memory();
 *   - the run-phase memory is a static array (the arena), sized at build
 *     time; the program checks that the translator fits in it;
 *   - no file is opened, and nothing is allocated on the heap after
 *     start-up (alloc_guard.c aborts the program if anything is);
 *   - the source is token ids (no SentencePiece: the core library only), and
 *     the output is turned into text by edgemt_model_detokenize().
 *
 * Output: the translation, then its target ids, then the memory figures. */
#include <stdint.h>
#include <stdio.h>

#include "alloc_guard.h"
#include "edgemt/edgemt.h"

/* The model file, linked in by model_blob.S. */
extern const unsigned char example_model_blob[];
extern const unsigned char example_model_blob_end[];

/* Line 1 of models/reference/test_2016_flickr.en, "A man in an orange hat
 * starring at something.", as token ids: line 1 of test_2016_flickr.en.ids
 * (the final 3 is EOS). Its translation by the bundled int8 model, greedy,
 * is line 1 of models/reference/edgemt_int8_greedy.de. */
static const int32_t kSource[] = {9, 21, 6, 29, 165, 95, 6492, 45, 267, 4, 3};

/* The largest request this program makes: one sentence of up to 32 source
 * tokens, greedy, up to 64 generated tokens. */
#define MAX_SOURCE_LEN 32
#define MAX_TARGET_LEN 64

/* Run-phase memory for those limits: edgemt_translator_arena_size() says
 * how much is needed (the program prints it), this is what the program has. */
#ifndef EXAMPLE_ARENA_BYTES
#define EXAMPLE_ARENA_BYTES (768u * 1024u)
#endif
static unsigned char arena[EXAMPLE_ARENA_BYTES] __attribute__((aligned(EDGEMT_ARENA_ALIGNMENT)));

static int32_t target[MAX_TARGET_LEN];
static char text[4 * MAX_TARGET_LEN * 8];

static int fail(const char* what, const edgemt_error* error) {
  fprintf(stderr, "embedded-c: %s: %s (%s)\n", what, error->message,
          edgemt_code_name(error->code));
  return 1;
}

int main(void) {
  edgemt_error error;
  edgemt_model* model = NULL;
  edgemt_translator* translator = NULL;
  int status = 1;

  /* ---- start-up: may allocate (weights packed for XNNPACK, threads) ---- */
  const size_t model_size = (size_t)(example_model_blob_end - example_model_blob);
  if (edgemt_model_open_memory(example_model_blob, model_size, &model, &error) != EDGEMT_OK) {
    return fail("model", &error);
  }
  edgemt_translator_options options = edgemt_translator_options_default();
  options.threads = 1;
  if (edgemt_translator_create(model, &options, &translator, &error) != EDGEMT_OK) {
    fail("translator", &error);
    goto done;
  }
  edgemt_limits limits = edgemt_limits_default();
  limits.max_batch = 1;
  limits.max_source_len = MAX_SOURCE_LEN;
  limits.max_beam = 1;
  limits.max_target_len = MAX_TARGET_LEN;
  size_t arena_needed = 0;
  if (edgemt_translator_arena_size(translator, &limits, &arena_needed, &error) != EDGEMT_OK) {
    fail("arena size", &error);
    goto done;
  }
  if (arena_needed > sizeof arena) {
    fprintf(stderr,
            "embedded-c: the translator needs %zu bytes of arena for these limits, the static "
            "arena has %zu: build with -DEXAMPLE_ARENA_BYTES=%zu or more\n",
            arena_needed, sizeof arena, arena_needed);
    goto done;
  }
  if (edgemt_translator_prepare(translator, &limits, arena, sizeof arena, &error) != EDGEMT_OK) {
    fail("prepare", &error);
    goto done;
  }
  edgemt_decode_options decode;
  if (edgemt_decode_options_default(model, &decode, &error) != EDGEMT_OK) {
    fail("decode options", &error);
    goto done;
  }
  decode.beam_size = 1;
  const size_t startup_allocations = alloc_guard_allocations();
  const size_t startup_bytes = alloc_guard_bytes();

  /* ---- run phase: no heap, no files ---- */
  alloc_guard_begin_run_phase();
  edgemt_tokens source;
  source.ids = kSource;
  source.length = sizeof kSource / sizeof kSource[0];
  edgemt_result result = {0};  /* zeroed: no attention weights asked */
  result.tokens = target;
  result.capacity = MAX_TARGET_LEN;
  const edgemt_code translated = edgemt_translate(translator, &source, 1, &decode, &result, &error);
  size_t text_length = 0;
  edgemt_error detokenize_error;
  const edgemt_code detokenized =
      translated == EDGEMT_OK && result.code == EDGEMT_OK
          ? edgemt_model_detokenize(model, result.tokens, result.length, text, sizeof text,
                                    &text_length, &detokenize_error)
          : EDGEMT_OK;
  alloc_guard_end_run_phase();

  if (translated != EDGEMT_OK) {
    fail("translate", &error);
    goto done;
  }
  if (result.code != EDGEMT_OK) {
    fprintf(stderr, "embedded-c: translate: %s (%s)\n", result.error, edgemt_code_name(result.code));
    goto done;
  }
  if (detokenized != EDGEMT_OK) {
    fail("detokenize", &detokenize_error);
    goto done;
  }
  printf("%s\nids:", text);
  for (size_t i = 0; i < result.length; ++i) printf(" %d", (int)result.tokens[i]);
  printf("\nmodel: %zu bytes linked in; arena: %zu of %zu bytes (batch 1, source %d, beam 1, "
         "target %d); start-up: %zu heap allocations, %zu bytes; run phase: none\n",
         model_size, arena_needed, sizeof arena, MAX_SOURCE_LEN, MAX_TARGET_LEN,
         startup_allocations, startup_bytes);
  status = 0;

done:
  edgemt_translator_free(translator);
  edgemt_model_free(model);
  return status;
}
