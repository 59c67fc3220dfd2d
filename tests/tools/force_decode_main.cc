// edgemt_force_decode: test helper that prints teacher-forced decoder logits,
// so Python tests can compare them with PyTorch's.
//
//   edgemt_force_decode MODEL INPUT OUTPUT
//
// INPUT: one case per line, "source ids<TAB>target ids" (space-separated).
// OUTPUT: for each case, target-length × vocab float32 values (little-endian),
// the logits of each step (step 0 is fed the decoder start token).
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "edgemt/model.h"
#include "edgemt/translator.h"

namespace {

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  int32_t id = 0;
  while (in >> id) ids.push_back(id);
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: edgemt_force_decode MODEL INPUT OUTPUT\n");
    return 2;
  }
  std::unique_ptr<edgemt::Model> model;
  edgemt::Status status = edgemt::Model::load(argv[1], &model);
  std::unique_ptr<edgemt::Translator> translator;
  if (status.is_ok()) status = edgemt::Translator::create(*model, {}, &translator);
  edgemt::Limits limits;
  limits.max_batch = 1;
  limits.max_beam = 1;
  limits.max_source_len = model ? model->max_sequence_length() : 1;
  limits.max_target_len = limits.max_source_len;
  if (status.is_ok()) status = translator->prepare(limits);
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt_force_decode: %s\n", status.message());
    return 1;
  }
  std::ifstream in(argv[2]);
  std::ofstream out(argv[3], std::ios::binary);
  if (!in || !out) {
    std::fprintf(stderr, "edgemt_force_decode: cannot open input or output\n");
    return 1;
  }
  const size_t vocab = model->vocab_size();
  std::string line;
  std::vector<float> logits;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      std::fprintf(stderr, "edgemt_force_decode: line without a tab\n");
      return 1;
    }
    const std::vector<int32_t> source = parse_ids(line.substr(0, tab));
    const std::vector<int32_t> target = parse_ids(line.substr(tab + 1));
    logits.assign(target.size() * vocab, 0.0f);
    status = translator->force_decode({source.data(), source.size()},
                                      {target.data(), target.size()}, logits.data());
    if (!status.is_ok()) {
      std::fprintf(stderr, "edgemt_force_decode: %s\n", status.message());
      return 1;
    }
    out.write(reinterpret_cast<const char*>(logits.data()),
              static_cast<std::streamsize>(logits.size() * sizeof(float)));
  }
  return out ? 0 : 1;
}
