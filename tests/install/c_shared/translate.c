/* Consumer of the installed C API (tests/install/CMakeLists.txt): built as
 * C99 with -Wall -Werror, once through find_package(edgemt) against
 * edgemt::edgemt (libedgemt.so) and once with plain
 * `cc $(pkg-config --cflags --libs edgemt)`.
 *
 *   translate MODEL SENTENCE   prints the greedy translation of SENTENCE */
#include <stdio.h>
#include <string.h>

#include "edgemt/edgemt.h"

static int fail(const char* what, const edgemt_error* error) {
  fprintf(stderr, "translate: %s: %s (%s)\n", what, error->message, edgemt_code_name(error->code));
  return 1;
}

int main(int argc, char** argv) {
  char header_version[32];
  edgemt_error error;
  edgemt_model* model = NULL;
  edgemt_translator* translator = NULL;
  edgemt_tokenizer* tokenizer = NULL;
  edgemt_limits limits;
  edgemt_decode_options decode;
  edgemt_text text;
  edgemt_text_result result;
  char output[1024];
  int status = 1;

  if (argc != 3) {
    fprintf(stderr, "usage: translate MODEL SENTENCE\n");
    return 2;
  }
  snprintf(header_version, sizeof header_version, "%d.%d.%d", EDGEMT_VERSION_MAJOR,
           EDGEMT_VERSION_MINOR, EDGEMT_VERSION_PATCH);
  if (strcmp(header_version, edgemt_version()) != 0) {
    fprintf(stderr, "translate: header %s, library %s\n", header_version, edgemt_version());
    return 1;
  }
  if (edgemt_model_open(argv[1], &model, &error) != EDGEMT_OK) return fail("model", &error);
  if (edgemt_translator_create(model, NULL, &translator, &error) != EDGEMT_OK) {
    fail("translator", &error);
    goto done;
  }
  if (edgemt_tokenizer_create(model, &tokenizer, &error) != EDGEMT_OK) {
    fail("tokenizer", &error);
    goto done;
  }
  limits = edgemt_limits_default();
  limits.max_batch = 1;
  limits.max_beam = 1;
  if (edgemt_translator_prepare(translator, &limits, NULL, 0, &error) != EDGEMT_OK) {
    fail("prepare", &error);
    goto done;
  }
  if (edgemt_decode_options_default(model, &decode, &error) != EDGEMT_OK) {
    fail("decode options", &error);
    goto done;
  }
  decode.beam_size = 1;
  text.data = argv[2];
  text.length = strlen(argv[2]);
  memset(&result, 0, sizeof result);
  result.text = output;
  result.text_capacity = sizeof output;
  if (edgemt_translate_text(translator, tokenizer, &text, 1, NULL, &decode, &result, &error) !=
      EDGEMT_OK) {
    fail("translate", &error);
    goto done;
  }
  if (result.code != EDGEMT_OK) {
    fprintf(stderr, "translate: %s (%s)\n", result.error, edgemt_code_name(result.code));
    goto done;
  }
  printf("%s\n", output);
  status = 0;

done:
  edgemt_tokenizer_free(tokenizer);
  edgemt_translator_free(translator);
  edgemt_model_free(model);
  return status;
}
