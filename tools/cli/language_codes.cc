#include "cli/language_codes.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

namespace edgemt::cli {

namespace {

using std::string_view;

// ISO 639-1, sorted (std::binary_search), with the retired codes still in use.
constexpr string_view kIso639_1[] = {
    "aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg",
    "bh", "bi", "bm", "bn", "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv",
    "cy", "da", "de", "dv", "dz", "ee", "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi",
    "fj", "fo", "fr", "fy", "ga", "gd", "gl", "gn", "gu", "gv", "ha", "he", "hi", "ho", "hr",
    "ht", "hu", "hy", "hz", "ia", "id", "ie", "ig", "ii", "ik", "in", "io", "is", "it", "iu",
    "iw", "ja", "ji", "jv", "jw", "ka", "kg", "ki", "kj", "kk", "kl", "km", "kn", "ko", "kr",
    "ks", "ku", "kv", "kw", "ky", "la", "lb", "lg", "li", "ln", "lo", "lt", "lu", "lv", "mg",
    "mh", "mi", "mk", "ml", "mn", "mo", "mr", "ms", "mt", "my", "na", "nb", "nd", "ne", "ng",
    "nl", "nn", "no", "nr", "nv", "ny", "oc", "oj", "om", "or", "os", "pa", "pi", "pl", "ps",
    "pt", "qu", "rm", "rn", "ro", "ru", "rw", "sa", "sc", "sd", "se", "sg", "sh", "si", "sk",
    "sl", "sm", "sn", "so", "sq", "sr", "ss", "st", "su", "sv", "sw", "ta", "te", "tg", "th",
    "ti", "tk", "tl", "tn", "to", "tr", "ts", "tt", "tw", "ty", "ug", "uk", "ur", "uz", "ve",
    "vi", "vo", "wa", "wo", "xh", "yi", "yo", "za", "zh", "zu"};

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ascii_alnum(char c) { return is_ascii_letter(c) || (c >= '0' && c <= '9'); }

bool is_primary_language(string_view subtag) {
  if (!std::all_of(subtag.begin(), subtag.end(), is_ascii_letter)) return false;
  if (subtag.size() == 3) return true;
  if (subtag.size() != 2) return false;
  std::string lower(subtag);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::binary_search(std::begin(kIso639_1), std::end(kIso639_1), string_view(lower));
}

}  // namespace

bool is_language_code(string_view code) {
  const size_t end = code.find_first_of("-_");
  if (!is_primary_language(code.substr(0, end))) return false;
  if (end == string_view::npos) return true;
  // Subtags: 1 to 8 letters or digits each, separated by '-' or '_'.
  string_view rest = code.substr(end + 1);
  for (;;) {
    const size_t next = rest.find_first_of("-_");
    const string_view subtag = rest.substr(0, next);
    if (subtag.empty() || subtag.size() > 8 ||
        !std::all_of(subtag.begin(), subtag.end(), is_ascii_alnum)) {
      return false;
    }
    if (next == string_view::npos) return true;
    rest = rest.substr(next + 1);
  }
}

}  // namespace edgemt::cli
