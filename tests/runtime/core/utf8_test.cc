// is_valid_utf8: hand-picked valid and invalid texts with their error
// offsets, then every 1-, 2- and 3-byte string and a dense 4-byte sample
// against a naive validator written from the table of well-formed byte
// sequences in the Unicode Standard (Table 3-7).
//
// The error offset is the first byte of the first ill-formed sequence (its
// lead byte, or the stray byte itself).
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "edgemt/utf8.h"

namespace edgemt {
namespace {

// Length of the well-formed sequence starting at s[i], 0 when none does.
size_t well_formed_length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const auto in = [](unsigned char b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
  const size_t left = s.size() - i;
  const unsigned char b0 = at(i);
  if (b0 <= 0x7F) return 1;
  if (in(b0, 0xC2, 0xDF)) return left >= 2 && in(at(i + 1), 0x80, 0xBF) ? 2 : 0;
  if (in(b0, 0xE0, 0xEF)) {
    if (left < 3) return 0;
    const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    return in(at(i + 1), lo, hi) && in(at(i + 2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    if (left < 4) return 0;
    const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return in(at(i + 1), lo, hi) && in(at(i + 2), 0x80, 0xBF) && in(at(i + 3), 0x80, 0xBF) ? 4
                                                                                           : 0;
  }
  return 0;  // 80..C1, F5..FF
}

bool naive_valid(std::string_view s, size_t* offset) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = well_formed_length(s, i);
    if (n == 0) {
      *offset = i;
      return false;
    }
    i += n;
  }
  return true;
}

std::string bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

TEST_CASE("core/utf8: valid texts") {
  const std::string valid[] = {
      "",
      "plain ASCII with punctuation: 1 + 2 = 3!",
      std::string("nul\0inside", 10),
      "Gr\xC3\xBC\xC3\x9F" "e aus K\xC3\xB6ln, \xC3\x84pfel und \xC3\x9C" "ber",  // Grüße aus Köln, Äpfel und Über
      "\xE2\x82\xAC 5 \xE4\xB8\xAD\xE6\x96\x87",                               // € 5 中文
      "\xF0\x9F\x98\x80 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",                      // 😀 👍🏽
      bytes({0xC2, 0x80}),                     // U+0080, smallest 2-byte
      bytes({0xDF, 0xBF}),                     // U+07FF
      bytes({0xE0, 0xA0, 0x80}),               // U+0800, smallest 3-byte
      bytes({0xED, 0x9F, 0xBF}),               // U+D7FF, below the surrogates
      bytes({0xEE, 0x80, 0x80}),               // U+E000, above them
      bytes({0xEF, 0xBF, 0xBF}),               // U+FFFF
      bytes({0xF0, 0x90, 0x80, 0x80}),         // U+10000, smallest 4-byte
      bytes({0xF4, 0x8F, 0xBF, 0xBF}),         // U+10FFFF, the last code point
      bytes({0x7F}),
  };
  for (const std::string& text : valid) {
    CAPTURE(text);
    size_t offset = 12345;
    CHECK(is_valid_utf8(text, &offset));
    CHECK(offset == 12345);  // untouched on success
    CHECK(is_valid_utf8(text, nullptr));
  }
}

TEST_CASE("core/utf8: invalid texts report the first bad sequence") {
  struct Case {
    const char* what;
    std::string text;
    size_t offset;
  };
  const Case cases[] = {
      {"lone continuation", bytes({0x80}), 0},
      {"continuation after ASCII", "ab" + bytes({0xBF}) + "cd", 2},
      {"continuation after a complete 2-byte", bytes({0xC3, 0xA4, 0xA4}), 2},
      {"truncated 2-byte at the end", "abc" + bytes({0xC3}), 3},
      {"truncated 3-byte at the end", "x" + bytes({0xE2, 0x82}), 1},
      {"truncated 4-byte at the end", bytes({0xF0, 0x9F, 0x98}), 0},
      {"truncated 3-byte before ASCII", bytes({0xE2, 0x82}) + "z", 0},
      {"2-byte lead then ASCII", bytes({0xC3, 0x41}), 0},
      {"overlong NUL C0 80", bytes({0xC0, 0x80}), 0},
      {"overlong C1 BF", bytes({0xC1, 0xBF}), 0},
      {"overlong 3-byte E0 80 80", "ok " + bytes({0xE0, 0x80, 0x80}), 3},
      {"overlong 3-byte E0 9F BF", bytes({0xE0, 0x9F, 0xBF}), 0},
      {"overlong 4-byte F0 8F BF BF", bytes({0xF0, 0x8F, 0xBF, 0xBF}), 0},
      {"surrogate ED A0 80", "\xC3\xA4" + bytes({0xED, 0xA0, 0x80}), 2},
      {"surrogate ED BF BF", bytes({0xED, 0xBF, 0xBF}), 0},
      {"above U+10FFFF F4 90 80 80", bytes({0xF4, 0x90, 0x80, 0x80}), 0},
      {"F5 lead", bytes({0xF5, 0x80, 0x80, 0x80}), 0},
      {"F8 lead", bytes({0xF8, 0x88, 0x80, 0x80, 0x80}), 0},
      {"FC lead", bytes({0xFC, 0x84, 0x80, 0x80, 0x80, 0x80}), 0},
      {"FE", "a" + bytes({0xFE}), 1},
      {"FF", bytes({0xFF}), 0},
      {"bad after valid emoji", "\xF0\x9F\x98\x80" + bytes({0x80}), 4},
      {"second of two errors is not reported", "ab" + bytes({0xC0, 0x80, 0xFF}), 2},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.what));
    size_t offset = 12345;
    CHECK_FALSE(is_valid_utf8(c.text, &offset));
    CHECK(offset == c.offset);
    CHECK_FALSE(is_valid_utf8(c.text, nullptr));  // no offset wanted: no crash
    size_t naive = 0;
    CHECK_FALSE(naive_valid(c.text, &naive));
    CHECK(naive == c.offset);  // the table above agrees with Table 3-7
  }
}

// Compares with the naive validator; returns false on the first mismatch.
bool agrees(const std::string& s) {
  size_t expected_offset = 0, offset = 0;
  const bool expected = naive_valid(s, &expected_offset);
  const bool actual = is_valid_utf8(s, &offset);
  if (expected != actual) return false;
  return expected || offset == expected_offset;
}

std::string hex(const std::string& s) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
    out += ' ';
  }
  return out;
}

TEST_CASE("core/utf8: every string of 1 to 3 bytes agrees with Table 3-7") {
  std::string s;
  size_t mismatches = 0;
  std::string first;
  for (int a = 0; a < 256; ++a) {
    s.assign(1, static_cast<char>(a));
    if (!agrees(s) && mismatches++ == 0) first = hex(s);
    for (int b = 0; b < 256; ++b) {
      s.assign({static_cast<char>(a), static_cast<char>(b)});
      if (!agrees(s) && mismatches++ == 0) first = hex(s);
      if (a < 0x80) continue;  // an ASCII first byte reduces to the 2-byte case
      for (int c = 0; c < 256; ++c) {
        s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
        if (!agrees(s) && mismatches++ == 0) first = hex(s);
      }
    }
  }
  CHECK_MESSAGE(mismatches == 0, "first mismatch: " << first);
}

TEST_CASE("core/utf8: 4-byte strings of boundary bytes agree with Table 3-7 alone and shifted") {
  const unsigned char kBoundaries[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                       0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
                                       0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5,
                                       0xF7, 0xF8, 0xFB, 0xFC, 0xFE, 0xFF};
  size_t mismatches = 0;
  std::string first;
  std::string s(4, '\0');
  for (unsigned char a : kBoundaries) {
    for (unsigned char b : kBoundaries) {
      for (unsigned char c : kBoundaries) {
        for (unsigned char d : kBoundaries) {
          s[0] = static_cast<char>(a);
          s[1] = static_cast<char>(b);
          s[2] = static_cast<char>(c);
          s[3] = static_cast<char>(d);
          if (!agrees(s) && mismatches++ == 0) first = hex(s);
          // Behind a valid 2-byte character the offsets shift by 2.
          const std::string shifted = "\xC3\xBC" + s;
          if (!agrees(shifted) && mismatches++ == 0) first = hex(shifted);
        }
      }
    }
  }
  CHECK_MESSAGE(mismatches == 0, "first mismatch: " << first);
}

}  // namespace
}  // namespace edgemt
