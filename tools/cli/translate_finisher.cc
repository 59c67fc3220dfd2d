#include "cli/translate_finisher.h"

#include <string>

#include "cli/translate_sources.h"

namespace edgemt::cli {

namespace {

OutputOptions output_options(const TranslateSettings& settings) {
  OutputOptions options;
  options.json = settings.json;
  options.align = settings.align;
  return options;
}

}  // namespace

LineFinisher::LineFinisher(const TranslateSettings& settings, const TranslateEngine& engine,
                           std::ostream& out, ProgressBar& progress)
    : pieces_(engine.pieces.get()),
      align_(settings.align),
      writer_(out, output_options(settings), engine.pieces.get()),
      progress_(progress) {
  special_.has_target_prefix = engine.has_target_prefix;
  special_.eos = engine.model->eos_id(TextSide::kSource);
  if (!settings.attention_dir.empty() || settings.show_attention) {
    pictures_ = std::make_unique<AttentionPictures>(settings.attention_dir,
                                                    settings.show_attention, *pieces_, special_);
  }
}

bool LineFinisher::prepare(std::string* error) const {
  return pictures_ == nullptr || pictures_->prepare_directory(error);
}

void LineFinisher::finish(LineWork& line) {
  if (line.failed()) {
    progress_.print_above("edgemt: line " + std::to_string(line.number) + ": " + line.error +
                          "; line left empty\n");
    all_ok_ = false;
  } else {
    line.translation = join_translations(line);
  }
  if (pictures_ != nullptr && !pictures_->draw(line, &progress_)) all_ok_ = false;
  if (align_) {
    const LineAlignment alignment = align_line(line, *pieces_, special_);
    writer_.write(line, &alignment);
  } else {
    writer_.write(line, nullptr);
  }
  ++lines_;
  sentences_ += line.sentences.size();
  progress_.update(lines_, sentences_, line.end_offset);
}

}  // namespace edgemt::cli
