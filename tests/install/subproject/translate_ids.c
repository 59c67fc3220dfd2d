/* edgemt::core from a parent project (subproject/CMakeLists.txt):
 *
 *   translate_ids MODEL ID...   prints the greedy translation of the source
 *                               ids (EOS included) as text */
#include <stdio.h>
#include <stdlib.h>

#include "edgemt/edgemt.h"

#define MAX_IDS 256

int main(int argc, char** argv) {
  static int32_t source[MAX_IDS];
  static int32_t target[MAX_IDS];
  static char text[4096];
  edgemt_error error;
  edgemt_model* model = NULL;
  edgemt_translator* translator = NULL;
  edgemt_limits limits = edgemt_limits_default();
  edgemt_decode_options decode;
  edgemt_tokens tokens;
  edgemt_result result = {0};
  size_t length = 0;
  int i;

  if (argc < 3 || argc - 2 > MAX_IDS) {
    fprintf(stderr, "usage: translate_ids MODEL ID...\n");
    return 2;
  }
  for (i = 2; i < argc; ++i) source[i - 2] = (int32_t)strtol(argv[i], NULL, 10);
  limits.max_batch = 1;
  limits.max_beam = 1;
  tokens.ids = source;
  tokens.length = (size_t)(argc - 2);
  result.tokens = target;
  result.capacity = MAX_IDS;
  if (edgemt_model_open(argv[1], &model, &error) != EDGEMT_OK ||
      edgemt_translator_create(model, NULL, &translator, &error) != EDGEMT_OK ||
      edgemt_translator_prepare(translator, &limits, NULL, 0, &error) != EDGEMT_OK ||
      edgemt_decode_options_default(model, &decode, &error) != EDGEMT_OK ||
      (decode.beam_size = 1,
       edgemt_translate(translator, &tokens, 1, &decode, &result, &error) != EDGEMT_OK) ||
      edgemt_model_detokenize(model, result.tokens, result.length, text, sizeof text, &length,
                              &error) != EDGEMT_OK) {
    fprintf(stderr, "translate_ids: %s (%s)\n", error.message, edgemt_code_name(error.code));
    edgemt_translator_free(translator);
    edgemt_model_free(model);
    return 1;
  }
  printf("%s\n", text);
  edgemt_translator_free(translator);
  edgemt_model_free(model);
  return 0;
}
