// edgemt bench: load time, latency, time to first token, throughput and
// (with --profile) where decode time goes, for a grid of thread counts,
// batch sizes and beam sizes. Prints figures; asserts nothing about time.
//
// Every configuration translates the same sentences (tokenized once, before
// any timing) on one Translator per thread count, prepared for the largest
// batch and beam of the grid. Outputs of each configuration are compared
// with those of the first configuration of the same beam size: the runtime
// promises identical tokens for every thread count and batch size (with a
// lexical shortlist, every thread count: a batch's candidates are those of
// its sentences, so its outputs are compared per batch size).
//
// --busy starts competing processes that spin for the whole timed part (one
// per usable CPU by default), to measure threads that must share the CPUs.
// After each thread count's runs the translator is kept alive and idle for
// --idle-seconds, and the process's CPU time over that interval is printed:
// sleeping workers use none.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/cpu_count.h"
#include "cli/line_reader.h"
#include "cli/translate_settings.h"
#include "edgemt/limits.h"
#include "edgemt/model.h"
#include "edgemt/profile.h"
#include "edgemt/tokenizer.h"
#include "edgemt/translator.h"

namespace edgemt::cli {
namespace {

constexpr const char* kHelp =
    "usage: edgemt bench -m MODEL [options]\n"
    "\n"
    "Times translation of the first N lines of a file for every combination\n"
    "of --threads, --batch and --beam, and prints one row per combination:\n"
    "  lat p50/p90  batch 1 only: milliseconds per sentence (one translate() call)\n"
    "  ttft p50     batch 1 only: milliseconds from translate() entry to the first\n"
    "               target token, measured as translate() limited to one\n"
    "               generated token (encoder + first decoder step + its search)\n"
    "  sent/s tok/s source sentences and generated target tokens (EOS not\n"
    "               counted) per second, over all timed translate() calls\n"
    "  arena MiB    run-phase memory a translator prepared for this batch\n"
    "               and beam (sources and targets up to the model's\n"
    "               max length) takes; the one timed is prepared for the\n"
    "               largest batch and beam given\n"
    "Load time is Model::load + Translator::create + prepare for the first\n"
    "thread count. After each thread count's rows the translator stays alive\n"
    "and idle for --idle-seconds and the process CPU time used meanwhile is\n"
    "printed (idle workers sleep: ~0 ms). Peak RSS (VmHWM) is printed at the end.\n"
    "\n"
    "options:\n"
    "  -m, --model FILE     model file (.emt)                              [required]\n"
    "  -i, --input FILE     source sentences, one per line                [see below]\n"
    "      --sentences N    use the first N non-blank lines (1..100000)   [100]\n"
    "      --repeat R       timed passes over the sentences (1..1000)     [1]\n"
    "      --warmup N       untimed translate() calls per config (0..1000) [1]\n"
    "      --threads LIST   comma-separated thread counts (the calling    [1]\n"
    "                       thread included; more than the CPUs is allowed:\n"
    "                       the caller then does most of the work itself)\n"
    "      --batch LIST     comma-separated batch sizes (1..256)          [1]\n"
    "      --beam LIST      comma-separated beam sizes (1..16)            [1]\n"
    "      --max-len-a A    generated tokens at most floor(A * source     [the model's]\n"
    "      --max-len-b B    tokens + B) (Marian models: ceil)             [the model's]\n"
    "                       (a model with random weights never ends on\n"
    "                       its own: these give its outputs real lengths)\n"
    "      --busy[=N]       run N competing processes that spin on the    [off; N: one\n"
    "                       CPUs for the whole timed part, killed after    per usable CPU]\n"
    "                       (measures threads on a machine that is busy)\n"
    "      --idle-seconds S keep each translator idle S s and print the   [1]\n"
    "                       process CPU time used meanwhile (0: skip)\n"
    "      --greedy-scores LIST  on, off or on,off: whether greedy (beam 1)   [on]\n"
    "                       translations compute their scores; off lets the\n"
    "                       decoder find each token without every logit of\n"
    "                       an f32 output projection (Translator::\n"
    "                       set_greedy_scores; same tokens). Each setting\n"
    "                       gets its own rows, after a line naming it; the\n"
    "                       first is set before prepare (off first: an fp32\n"
    "                       file's projection is not packed, as in translate)\n"
    "      --shortlist LIST on, off or on,off: whether a model with a lexical  [on]\n"
    "                       shortlist uses it (Translator::set_shortlist:\n"
    "                       each batch computes only its candidates'\n"
    "                       logits). Each setting gets its own rows, after a\n"
    "                       line naming it, and on,off ends with the time\n"
    "                       per generated token of each (outputs may differ;\n"
    "                       with it, between batch sizes too: a batch's\n"
    "                       candidates are its sentences')\n"
    "      --marian-int8-sums CPU  an int8 file converted from a Marian       [exact]\n"
    "                       intgemm8 model: time the sums Marian computes\n"
    "                       on a CPU of kind CPU (exact, avx2, avx512bw,\n"
    "                       ssse3; as translate's option of that name)\n"
    "      --profile        attach a Profile to the timed calls and print the\n"
    "                       share of decode time (translate - encoder) per part\n"
    "      --skip-checksum  load without computing the file's CRC-32C (for a\n"
    "                       file verified elsewhere). Otherwise, for a file\n"
    "                       that has checksums (format version 4 and later),\n"
    "                       what they cost is printed after the load time:\n"
    "                       Model::load with and without them, alternately\n"
    "                       5 times each\n"
    "  -h, --help           show this help\n"
    "\n"
    "Without -i the input is reference/test_2016_flickr.en in the model's\n"
    "folder (for the bundled models/multi30k-en-de.*.emt: the Multi30k test\n"
    "sources in models/reference/); when that file does not exist, -i is\n"
    "required.\n"
    "\n"
    "exit status: 0 ok, 1 model, input or translation error, 2 bad usage\n";

struct Settings {
  std::string model_path;
  std::string input_path;
  size_t sentences = 100;
  size_t repeat = 1;
  size_t warmup = 1;
  std::vector<size_t> threads;
  std::vector<size_t> batches;
  std::vector<size_t> beams;
  bool profile = false;
  bool help = false;
  bool skip_checksum = false;
  size_t busy = 0;  // competing spinning processes; 0: none
  size_t idle_seconds = 1;
  bool max_len_a_set = false;
  bool max_len_b_set = false;
  float max_len_a = 0.0f;
  float max_len_b = 0.0f;
  std::vector<bool> greedy_scores;  // --greedy-scores, in order
  std::vector<bool> shortlist;      // --shortlist, in order
  MarianInt8Sums marian_int8_sums = MarianInt8Sums::kExact;
};

bool parse_switch_list(const std::string& flag, const std::string& text, std::vector<bool>* out,
                       std::string* error) {
  std::stringstream stream(text);
  std::string item;
  out->clear();
  while (std::getline(stream, item, ',')) {
    if (item != "on" && item != "off") {
      *error = "option '--" + flag + "' wants on, off or on,off; got '" + item + "'";
      return false;
    }
    out->push_back(item == "on");
  }
  if (out->empty()) {
    *error = "option '--" + flag + "' needs at least one value";
    return false;
  }
  return true;
}

bool parse_list(const std::string& flag, const std::string& text, size_t max,
                std::vector<size_t>* out, std::string* error) {
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || item[0] == '-' || *end != '\0' || value < 1 || value > max) {
      *error = "option '--" + flag + "' wants comma-separated whole numbers in [1, " +
               std::to_string(max) + "], got '" + text + "'";
      return false;
    }
    out->push_back(static_cast<size_t>(value));
  }
  if (out->empty()) {
    *error = "option '--" + flag + "' needs at least one value";
    return false;
  }
  return true;
}

bool read_settings(int argc, char** argv, Settings* settings, std::string* error) {
  const std::vector<FlagSpec> specs = {
      {"model", 'm', true},    {"input", 'i', true},   {"sentences", '\0', true},
      {"repeat", '\0', true},  {"warmup", '\0', true}, {"threads", '\0', true},
      {"batch", '\0', true},   {"beam", '\0', true},   {"profile", '\0', false},
      {"help", 'h', false},    {"max-len-a", '\0', true}, {"max-len-b", '\0', true},
      {"busy", '\0', false, true}, {"idle-seconds", '\0', true},
      {"greedy-scores", '\0', true}, {"skip-checksum", '\0', false}, {"shortlist", '\0', true},
      {"marian-int8-sums", '\0', true},
  };
  Arguments args;
  if (!args.parse(argc, argv, 2, specs, error)) return false;
  if (args.has("help")) {
    settings->help = true;
    return true;
  }
  if (!args.get_model_only(&settings->model_path, error)) return false;
  if (args.has("input")) {
    settings->input_path = args.get("input", "");
    if (settings->input_path.empty()) {
      *error = "an input file is required (-i FILE)";
      return false;
    }
  } else {
    // Nothing of the build machine is compiled in: the default is found
    // beside the model (the bundled models keep their reference sources
    // in models/reference/).
    const size_t slash = settings->model_path.rfind('/');
    const std::string folder =
        slash == std::string::npos ? std::string() : settings->model_path.substr(0, slash + 1);
    settings->input_path = folder + "reference/test_2016_flickr.en";
    struct stat info;
    if (::stat(settings->input_path.c_str(), &info) != 0) {
      *error = "no input: give -i FILE (the default, '" + settings->input_path +
               "' beside the model, does not exist)";
      return false;
    }
  }
  settings->profile = args.has("profile");
  settings->skip_checksum = args.has("skip-checksum");
  if (!parse_switch_list("greedy-scores", args.get("greedy-scores", "on"), &settings->greedy_scores,
                         error)) {
    return false;
  }
  if (!parse_switch_list("shortlist", args.get("shortlist", "on"), &settings->shortlist, error)) {
    return false;
  }
  if (args.has("marian-int8-sums") &&
      !parse_marian_int8_sums(args.get("marian-int8-sums", ""), &settings->marian_int8_sums,
                              error)) {
    return false;
  }
  if (args.has("busy")) {
    if (args.get("busy", "").empty()) {
      settings->busy = usable_cpu_count();  // the bare flag: one per CPU
    } else if (!args.get_size("busy", 0, 1, 256, &settings->busy, error)) {
      return false;
    }
  }
  if (!args.get_size("idle-seconds", 1, 0, 60, &settings->idle_seconds, error)) return false;
  settings->max_len_a_set = args.has("max-len-a");
  settings->max_len_b_set = args.has("max-len-b");
  return args.get_size("sentences", 100, 1, 100000, &settings->sentences, error) &&
         args.get_size("repeat", 1, 1, 1000, &settings->repeat, error) &&
         args.get_size("warmup", 1, 0, 1000, &settings->warmup, error) &&
         parse_list("threads", args.get("threads", "1"), 256, &settings->threads, error) &&
         parse_list("batch", args.get("batch", "1"), 256, &settings->batches, error) &&
         parse_list("beam", args.get("beam", "1"), 16, &settings->beams, error) &&
         args.get_float("max-len-a", 0.0f, &settings->max_len_a, error) &&
         args.get_float("max-len-b", 0.0f, &settings->max_len_b, error) &&
         (settings->max_len_a >= 0.0f ||
          (*error = "option '--max-len-a' must not be negative", false));
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}


// Nearest-rank percentile of unsorted values (p in (0, 100]).
double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(values.size()) + 0.999999);
  rank = std::min(std::max<size_t>(rank, 1), values.size());
  return values[rank - 1];
}

// VmHWM (peak resident set) from /proc/self/status, in MiB; -1 if unknown.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, 6, "VmHWM:") == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return -1.0;
}

// Processes that spin on the CPUs while they live (--busy): forked before
// any Translator (and so any thread) exists, killed and reaped by stop() or
// the destructor on every path out of run_bench; PR_SET_PDEATHSIG kills
// them if this process dies first.
class BusyProcesses {
 public:
  ~BusyProcesses() { stop(); }

  // False (with the processes started so far stopped) if a fork failed.
  bool start(size_t count) {
    const pid_t parent = getpid();
    for (size_t i = 0; i < count; ++i) {
      std::fflush(nullptr);  // nothing buffered is written twice
      const pid_t pid = fork();
      if (pid < 0) {
        stop();
        return false;
      }
      if (pid == 0) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);  // the parent died before prctl
        volatile uint64_t spin = 0;
        for (;;) spin = spin + 1;
      }
      pids_.push_back(pid);
    }
    return true;
  }

  void stop() {
    for (pid_t pid : pids_) (void)kill(pid, SIGKILL);
    for (pid_t pid : pids_) {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    pids_.clear();
  }

 private:
  std::vector<pid_t> pids_;
};

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// "cpu family : 25" and the model name from /proc/cpuinfo ("" if absent).
std::string cpu_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, family, model;
  while (std::getline(cpuinfo, line) && (family.empty() || model.empty())) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (key == "cpu family" && family.empty()) family = value;
    if ((key == "model name" || key == "CPU part") && model.empty()) model = value;
  }
  std::string out;
  if (!family.empty()) out = "cpu family " + family;
  if (!model.empty()) out += (out.empty() ? "" : ", ") + model;
  return out;
}

struct Corpus {
  std::vector<std::vector<int32_t>> ids;
  size_t source_tokens = 0;
};

// The first `count` non-blank lines, tokenized; lines longer than the
// model's max length are skipped (and counted in *skipped).
Status load_corpus(const std::string& path, size_t count, const Model& model, Corpus* corpus,
                   size_t* skipped) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(StatusCode::kNotFound, "cannot open input '%s'", path.c_str());
  std::unique_ptr<Tokenizer> tokenizer;
  const Status created = Tokenizer::create(model, &tokenizer);
  if (!created.is_ok()) {
    ::close(fd);
    return created;
  }
  // Lines past the tokenizer's limit are skipped unread (memory stays bounded).
  LineReader reader(fd, kDefaultMaxInputBytes);
  std::string line;
  size_t bytes = 0;
  LineReader::Result result = LineReader::Result::kLine;
  while (corpus->ids.size() < count &&
         ((result = reader.next(&line, &bytes)) == LineReader::Result::kLine ||
          result == LineReader::Result::kTooLong)) {
    if (result == LineReader::Result::kTooLong) {
      ++*skipped;
      continue;
    }
    if (line.find_first_not_of(" \t\r\v\f") == std::string::npos) continue;
    std::vector<int32_t> ids;
    if (!tokenizer->encode(line, &ids).is_ok() || ids.size() > model.max_sequence_length()) {
      ++*skipped;
      continue;
    }
    corpus->source_tokens += ids.size();
    corpus->ids.push_back(std::move(ids));
  }
  ::close(fd);
  if (result == LineReader::Result::kError) {
    return Status::error(StatusCode::kIoError, "cannot read input '%s': %s", path.c_str(),
                         std::strerror(reader.error()));
  }
  if (corpus->ids.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "no usable sentence in '%s'", path.c_str());
  }
  return Status::ok();
}

// Output buffers for one batch of up to max_batch sentences.
struct Batch {
  std::vector<TokenSpan> spans;
  std::vector<Translation> results;
  std::vector<std::vector<int32_t>> buffers;

  Batch(size_t max_batch, size_t capacity)
      : spans(max_batch), results(max_batch), buffers(max_batch, std::vector<int32_t>(capacity)) {
    for (size_t i = 0; i < max_batch; ++i) {
      results[i].tokens = buffers[i].data();
      results[i].capacity = capacity;
    }
  }

  // Points the spans at sentences [first, first + n).
  void set(const Corpus& corpus, size_t first, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      spans[i].ids = corpus.ids[first + i].data();
      spans[i].length = corpus.ids[first + i].size();
    }
  }
};

struct Row {
  std::vector<double> sentence_ms;  // per translate() call (batch 1: per sentence)
  std::vector<double> first_token_ms;
  double total_ms = 0.0;
  size_t sentences = 0;
  size_t target_tokens = 0;
  std::vector<std::vector<int32_t>> outputs;  // of the first timed pass
};

Status run_config(Translator& translator, const Corpus& corpus, size_t batch_size, size_t beam,
                  const DecodeOptions& defaults, const Settings& settings, Profile* profile,
                  Row* row) {
  DecodeOptions decode = defaults;
  decode.beam_size = beam;
  if (settings.max_len_a_set) decode.max_len_a = settings.max_len_a;
  if (settings.max_len_b_set) decode.max_len_b = settings.max_len_b;
  const size_t n = corpus.ids.size();
  Batch batch(batch_size, translator.limits().max_target_len);

  for (size_t w = 0; w < settings.warmup; ++w) {
    const size_t count = std::min(batch_size, n);
    batch.set(corpus, 0, count);
    EDGEMT_RETURN_IF_ERROR(
        translator.translate(batch.spans.data(), count, decode, batch.results.data()));
  }

  translator.set_profile(profile);
  row->outputs.resize(n);
  for (size_t pass = 0; pass < settings.repeat; ++pass) {
    for (size_t first = 0; first < n; first += batch_size) {
      const size_t count = std::min(batch_size, n - first);
      batch.set(corpus, first, count);
      const double start = now_ms();
      const Status status =
          translator.translate(batch.spans.data(), count, decode, batch.results.data());
      const double elapsed = now_ms() - start;
      if (!status.is_ok()) {
        translator.set_profile(nullptr);
        return status;
      }
      row->sentence_ms.push_back(elapsed);
      row->total_ms += elapsed;
      row->sentences += count;
      for (size_t i = 0; i < count; ++i) {
        const Translation& result = batch.results[i];
        row->target_tokens += result.length;
        if (pass == 0) row->outputs[first + i].assign(result.tokens, result.tokens + result.length);
      }
    }
  }
  translator.set_profile(nullptr);

  if (batch_size == 1) {
    // Time to first token: the same call limited to one generated token.
    DecodeOptions first_token = decode;
    first_token.max_len_a = 0.0f;
    first_token.max_len_b = 1.0f;
    for (size_t i = 0; i < n; ++i) {
      batch.set(corpus, i, 1);
      const double start = now_ms();
      EDGEMT_RETURN_IF_ERROR(
          translator.translate(batch.spans.data(), 1, first_token, batch.results.data()));
      row->first_token_ms.push_back(now_ms() - start);
    }
  }
  return Status::ok();
}

void print_profile(const Profile& profile) {
  const double translate = static_cast<double>(profile.ns(ProfilePart::kTranslate));
  const double encoder = static_cast<double>(profile.ns(ProfilePart::kEncoder));
  const double decode = translate - encoder;
  if (translate <= 0.0 || decode <= 0.0) return;
  std::printf("    encoder %.1f%% of translate; decode (translate - encoder) %.1f ms:", 100.0 * encoder / translate,
              decode / 1e6);
  const ProfilePart parts[] = {ProfilePart::kEmbedding,      ProfilePart::kLayerNorm,
                               ProfilePart::kAttentionGemm,  ProfilePart::kDecoderState,
                               ProfilePart::kSourceAttention, ProfilePart::kFeedForwardGemm,
                               ProfilePart::kOutputProjection, ProfilePart::kSearch};
  double accounted = 0.0;
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    const double ns = static_cast<double>(profile.ns(parts[i]));
    accounted += ns;
    std::printf("%s %s %.1f%%", i % 4 == 0 ? "\n     " : ",", profile_part_name(parts[i]),
                100.0 * ns / decode);
  }
  const double gemm = static_cast<double>(profile.ns(ProfilePart::kAttentionGemm) +
                                          profile.ns(ProfilePart::kFeedForwardGemm) +
                                          profile.ns(ProfilePart::kOutputProjection));
  std::printf(", other %.1f%%\n      GEMM total %.1f%% of decode; %llu decoder steps, %.3f ms/step\n",
              100.0 * (decode - accounted) / decode, 100.0 * gemm / decode,
              static_cast<unsigned long long>(profile.count(ProfilePart::kDecoderStep)),
              profile.count(ProfilePart::kDecoderStep) == 0
                  ? 0.0
                  : static_cast<double>(profile.ns(ProfilePart::kDecoderStep)) / 1e6 /
                        static_cast<double>(profile.count(ProfilePart::kDecoderStep)));
}

}  // namespace

int run_bench(int argc, char** argv) {
  Settings settings;
  std::string error;
  if (!read_settings(argc, argv, &settings, &error)) {
    std::fprintf(stderr, "edgemt bench: %s\n(run 'edgemt bench --help')\n", error.c_str());
    return kExitUsage;
  }
  if (settings.help) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }

  struct stat file_stat;
  const double file_mib = stat(settings.model_path.c_str(), &file_stat) == 0
                              ? static_cast<double>(file_stat.st_size) / (1024.0 * 1024.0)
                              : 0.0;
  double load_start = now_ms();
  std::unique_ptr<Model> model;
  LoadOptions load_options;
  load_options.verify_checksum = !settings.skip_checksum;
  Status status = Model::load(settings.model_path.c_str(), load_options, &model);
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: cannot load model '%s': %s\n", settings.model_path.c_str(),
                 status.message());
    return kExitFailure;
  }
  double load_ms = now_ms() - load_start;
  const std::string sums_error = marian_int8_sums_error(*model, settings.marian_int8_sums);
  if (!sums_error.empty()) {
    std::fprintf(stderr, "edgemt bench: %s\n", sums_error.c_str());
    return kExitUsage;
  }

  Corpus corpus;
  size_t skipped = 0;
  status = load_corpus(settings.input_path, settings.sentences, *model, &corpus, &skipped);
  if (!status.is_ok()) {
    std::fprintf(stderr, "edgemt: %s\n", status.message());
    return kExitFailure;
  }

  const size_t longest = model->max_sequence_length();
  Limits limits;
  limits.max_batch = *std::max_element(settings.batches.begin(), settings.batches.end());
  limits.max_beam = *std::max_element(settings.beams.begin(), settings.beams.end());
  limits.max_source_len = longest;
  limits.max_target_len = longest;

  std::printf("model %s (%.1f MiB)\n", settings.model_path.c_str(), file_mib);
  std::printf("input %s: %zu sentences, %zu source tokens%s; %zu timed pass(es), %zu warm-up call(s)\n",
              settings.input_path.c_str(), corpus.ids.size(), corpus.source_tokens,
              skipped > 0 ? (", " + std::to_string(skipped) + " line(s) skipped").c_str() : "",
              settings.repeat, settings.warmup);
  if (settings.profile) {
    std::printf("profiling on: timed calls read the clock per part (a few us per decoder step)\n");
  }
  const std::string cpu = cpu_description();
  std::printf("%s%susable CPUs: %zu; competing busy processes: %zu\n", cpu.c_str(),
              cpu.empty() ? "" : "; ", usable_cpu_count(), settings.busy);

  BusyProcesses busy;  // stopped on every return below
  if (settings.busy > 0 && !busy.start(settings.busy)) {
    std::fprintf(stderr, "edgemt: cannot start %zu busy processes: %s\n", settings.busy,
                 std::strerror(errno));
    return kExitFailure;
  }

  // (beam, shortlist, batch) -> outputs. With the shortlist a batch's
  // candidates are those of its sentences (Marian's rule), so another batch
  // size may choose other tokens: those outputs are compared per batch size
  // (batch 0 stands for any size without the shortlist).
  std::map<std::tuple<size_t, bool, size_t>, std::vector<std::vector<int32_t>>> reference;
  // ms per generated token by (threads, batch, beam, greedy scores, shortlist),
  // for the shortlist's line at the end.
  std::map<std::tuple<size_t, size_t, size_t, bool, bool>, double> token_ms;
  const bool has_shortlist = model->shortlist() != nullptr;
  if (!has_shortlist && (settings.shortlist.size() > 1 || !settings.shortlist.front())) {
    std::fprintf(stderr, "edgemt bench: --shortlist: the model has no lexical shortlist\n");
    return kExitUsage;
  }
  // Greedy sentences/s by (threads, batch, greedy scores), for the arg-max
  // shortcut's speedup line at the end.
  std::map<std::tuple<size_t, size_t, bool>, double> greedy_speed;
  bool all_same = true;
  bool header_printed = false;
  bool listed_any = false;  // a configuration ran with the shortlist
  for (size_t t = 0; t < settings.threads.size(); ++t) {
    const size_t threads = settings.threads[t];
    const double create_start = now_ms();
    std::unique_ptr<Translator> translator;
    TranslatorOptions options;
    options.threads = threads;
    options.marian_int8_sums = settings.marian_int8_sums;
    status = Translator::create(*model, options, &translator);
    // The first setting before prepare(), as a translator that keeps it
    // would be made (unscored first: an fp32 output projection stays
    // unpacked; a later "on" packs it).
    if (status.is_ok()) status = translator->set_greedy_scores(settings.greedy_scores.front());
    if (status.is_ok()) status = translator->prepare(limits);
    if (!status.is_ok()) {
      std::fprintf(stderr, "edgemt: %s\n", status.message());
      return kExitFailure;
    }
    if (t == 0) {
      load_ms += now_ms() - create_start;
      std::printf("load %.1f ms (Model::load + Translator::create + prepare, %zu thread(s)); %s\n",
                  load_ms, threads, translator->compute_path());
      if (model->checksum().present && !settings.skip_checksum) {
        // What the file's CRC-32C costs: the whole load as above, with and
        // without it, alternately (the file in the page cache for both),
        // medians of 5.
        auto timed_load = [&](bool verify, double* ms) {
          LoadOptions options_again;
          options_again.verify_checksum = verify;
          const double start = now_ms();
          std::unique_ptr<Model> again;
          std::unique_ptr<Translator> translator_again;
          TranslatorOptions translator_options;
          translator_options.threads = threads;
          translator_options.marian_int8_sums = settings.marian_int8_sums;
          Status s = Model::load(settings.model_path.c_str(), options_again, &again);
          if (s.is_ok()) s = Translator::create(*again, translator_options, &translator_again);
          if (s.is_ok()) s = translator_again->set_greedy_scores(settings.greedy_scores.front());
          if (s.is_ok()) s = translator_again->prepare(limits);
          *ms = now_ms() - start;
          return s.is_ok();
        };
        std::vector<double> with;
        std::vector<double> without;
        for (int round = 0; round < 5; ++round) {
          double ms = 0.0;
          if (timed_load(true, &ms)) with.push_back(ms);
          if (timed_load(false, &ms)) without.push_back(ms);
        }
        if (with.size() == 5 && without.size() == 5) {
          std::sort(with.begin(), with.end());
          std::sort(without.begin(), without.end());
          std::printf("checksum CRC-32C verified at load: load %.1f ms with it, %.1f ms without "
                      "(medians of 5 alternate loads): %+.1f%%\n",
                      with[2], without[2], 100.0 * (with[2] - without[2]) / without[2]);
        }
      }
      std::printf("\n");
    }
    for (bool scores : settings.greedy_scores) {
      status = translator->set_greedy_scores(scores);
      if (!status.is_ok()) {
        std::fprintf(stderr, "edgemt: %s\n", status.message());
        return kExitFailure;
      }
      if (!scores || settings.greedy_scores.size() > 1) {
        std::printf("greedy scores %s%s\n", scores ? "on" : "off",
                    scores ? ""
                    : translator->greedy_shortcut_bytes() == 0
                        ? " (no arg-max shortcut for this model: the full logits are computed)"
                        : (" (arg-max shortcut: " +
                           std::to_string(translator->greedy_shortcut_bytes() >> 10) + " KiB)").c_str());
      }
      for (bool use_shortlist : settings.shortlist) {
      if (has_shortlist) {
        status = translator->set_shortlist(use_shortlist);
        if (status.is_ok()) status = translator->prepare(limits);
        if (!status.is_ok()) {
          std::fprintf(stderr, "edgemt: %s\n", status.message());
          return kExitFailure;
        }
        if (settings.shortlist.size() > 1) std::printf("shortlist %s\n", use_shortlist ? "on" : "off");
      }
      for (size_t batch : settings.batches) {
        for (size_t beam : settings.beams) {
          if (!header_printed) {
            std::printf("threads batch beam  lat p50  lat p90  ttft p50   sent/s    tok/s  arena MiB\n");
            header_printed = true;
          }
          Profile profile;
          Row row;
          status = run_config(*translator, corpus, batch, beam, decode_options(*model), settings,
                              settings.profile ? &profile : nullptr, &row);
          if (!status.is_ok()) {
            std::fprintf(stderr, "edgemt: threads %zu batch %zu beam %zu: %s\n", threads, batch, beam,
                         status.message());
            return kExitFailure;
          }
          const double seconds = row.total_ms / 1000.0;
          // The arena a translator prepared for exactly this batch and beam
          // would take (the one timed is prepared for the largest of each).
          Limits own = limits;
          own.max_batch = batch;
          own.max_beam = beam;
          size_t arena = 0;
          status = translator->arena_bytes(own, &arena);
          const double arena_mib = status.is_ok() ? static_cast<double>(arena) / (1 << 20) : -1.0;
          if (batch == 1) {
            std::printf("%7zu %5zu %4zu %8.2f %8.2f %9.2f %8.1f %8.0f %10.1f\n", threads, batch, beam,
                        percentile(row.sentence_ms, 50), percentile(row.sentence_ms, 90),
                        percentile(row.first_token_ms, 50), row.sentences / seconds,
                        row.target_tokens / seconds, arena_mib);
          } else {
            std::printf("%7zu %5zu %4zu %8s %8s %9s %8.1f %8.0f %10.1f\n", threads, batch, beam, "-", "-",
                        "-", row.sentences / seconds, row.target_tokens / seconds, arena_mib);
          }
          if (settings.profile) print_profile(profile);
          if (beam == 1 && use_shortlist == settings.shortlist.front()) {
            greedy_speed[{threads, batch, scores}] = row.sentences / seconds;
          }
          if (row.target_tokens > 0) {
            token_ms[{threads, batch, beam, scores, use_shortlist}] =
                row.total_ms / static_cast<double>(row.target_tokens);
          }
          const bool listed = has_shortlist && use_shortlist;  // candidates per batch
          listed_any = listed_any || listed;
          const std::tuple<size_t, bool, size_t> same_outputs{beam, use_shortlist, listed ? batch : 0};
          auto found = reference.find(same_outputs);
          if (found == reference.end()) {
            reference.emplace(same_outputs, std::move(row.outputs));
          } else {
            size_t differing = 0;
            for (size_t i = 0; i < row.outputs.size(); ++i) differing += row.outputs[i] != found->second[i];
            if (differing > 0) {
              all_same = false;
              std::printf("    WARNING: %zu of %zu outputs differ from the first beam-%zu%s configuration\n",
                          differing, row.outputs.size(), beam, listed ? " same-batch" : "");
            }
          }
          std::fflush(stdout);
        }
      }
      }
    }
    if (settings.idle_seconds > 0) {
      // The translator (and its workers) alive, no call in flight.
      const double cpu_start = process_cpu_ms();
      const double wall_start = now_ms();
      std::this_thread::sleep_for(std::chrono::seconds(settings.idle_seconds));
      std::printf("    idle CPU (threads %zu, translator alive, no call): %.1f ms over %.0f ms\n",
                  threads, process_cpu_ms() - cpu_start, now_ms() - wall_start);
      std::fflush(stdout);
    }
  }
  busy.stop();
  std::printf("\noutputs %s across configurations of the same beam size%s%s\n",
              all_same ? "identical" : "NOT identical",
              settings.shortlist.size() > 1 ? " and shortlist setting" : "",
              listed_any ? " (with the shortlist, of the same batch size too: a batch's candidates "
                           "are its sentences')"
                         : "");
  // The shortlist on against off, the same threads, batch, beam and scores.
  for (const auto& [key, on_ms] : token_ms) {
    const auto& [threads, batch, beam, scores, use_shortlist] = key;
    const auto off = token_ms.find({threads, batch, beam, scores, false});
    if (!use_shortlist || off == token_ms.end() || off->second <= 0.0) continue;
    std::printf("shortlist on / off, threads %zu batch %zu beam %zu greedy scores %s: %.3f / %.3f "
                "ms per generated token: %+.1f%%\n",
                threads, batch, beam, scores ? "on" : "off", on_ms, off->second,
                100.0 * (on_ms - off->second) / off->second);
  }
  // Greedy with scores off (the arg-max shortcut where the model has one)
  // against on, the same threads and batch, one line each.
  for (const auto& [key, off_speed] : greedy_speed) {
    const auto& [threads, batch, scores] = key;
    const auto on = greedy_speed.find({threads, batch, true});
    if (scores || on == greedy_speed.end() || on->second <= 0.0) continue;
    std::printf("greedy scores off / on (arg-max shortcut), threads %zu batch %zu: %.2fx sent/s\n",
                threads, batch, off_speed / on->second);
  }
  std::printf("peak RSS (VmHWM) %.1f MiB\n", peak_rss_mib());
  return kExitOk;
}

}  // namespace edgemt::cli
