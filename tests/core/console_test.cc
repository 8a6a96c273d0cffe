// Console text (harness/core/console.cc): columns of UTF-8 text, word wrapping within a width.
#include "harness/core/console.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace stabfuzz {
namespace {

std::string wrapped(const std::string& head, const std::string& text, size_t indent, size_t width) {
  std::ostringstream os;
  wrap(os, head, text, indent, width);
  return os.str();
}

TEST(Columns, CountsUtf8CharactersNotBytes) {
  EXPECT_EQ(columns(""), 0u);
  EXPECT_EQ(columns("abc"), 3u);
  EXPECT_EQ(columns("h\xc3\xa9llo"), 5u);  // é: two bytes
  EXPECT_EQ(columns("a\xe2\x80\x94"
                    "b"),
            3u);                               // em dash: three bytes
  EXPECT_EQ(columns("\xf0\x9f\x98\x80"), 1u);  // an emoji: four bytes
}

TEST(Wrap, BreaksAtWordsAndIndents) {
  std::ostringstream os;
  wrap(os, "head: ", "one two three four", 4, 16);
  EXPECT_EQ(os.str(), "head: one two\n    three four\n");
  std::ostringstream unicode;
  wrap(unicode, "x — ", "ab cd", 2, 9);  // the dash is one column: 9 columns in all
  EXPECT_EQ(unicode.str(), "x — ab cd\n");
}

TEST(Wrap, EmptyTextIsTheHeadAlone) {
  EXPECT_EQ(wrapped("head:", "", 2, 10), "head:\n");
  EXPECT_EQ(wrapped("", "", 2, 10), "\n");
}

TEST(Wrap, TheFirstWordStaysOnTheHeadLineHoweverLong) {
  EXPECT_EQ(wrapped("head: ", "averyveryverylongword next", 2, 10),
            "head: averyveryverylongword\n  next\n");
}

TEST(Wrap, AHeadWithoutTrailingSpaceGetsOne) { EXPECT_EQ(wrapped("x", "a b", 0, 10), "x a b\n"); }

TEST(Wrap, ALineMayFillTheWidthExactly) {
  EXPECT_EQ(wrapped("", "a b", 0, 3), "a b\n");
  EXPECT_EQ(wrapped("", "a b", 0, 2), "a\nb\n");
}

TEST(Wrap, RunsOfWhitespaceCollapse) {
  EXPECT_EQ(wrapped("- ", "one\n\ttwo   three", 2, 100), "- one two three\n");
}

TEST(Wrap, DefaultWidthIsTheConsoleWidth) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "word ";
  std::ostringstream os;
  wrap(os, "", text, 0);
  std::istringstream lines(os.str());
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) EXPECT_LE(columns(line), kConsoleColumns);
  EXPECT_EQ(n, 3);  // 300 columns of words in lines of at most 100
}

}  // namespace
}  // namespace stabfuzz
