#include "thaw/common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace thaw {
namespace {

TEST(Utf8, AcceptsText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii {\"json\": 1}"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9"));                      // U+00E9
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));                     // U+20AC
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));                 // U+1F600
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));                 // U+10FFFF
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));             // NUL is a character
  EXPECT_TRUE(IsValidUtf8("\xED\x9F\xBF"));                     // U+D7FF, below the surrogates
}

TEST(Utf8, RefusesWhatIsNotText) {
  EXPECT_FALSE(IsValidUtf8("\x80"));              // a lone continuation byte
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // cut short
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // cut short
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xF0\x80\x80\xAF"));  // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // U+D800, a surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("\xC3\x28"));          // bad continuation
  EXPECT_FALSE(IsValidUtf8(std::string_view("ok\x00\xFE", 4)));
}

}  // namespace
}  // namespace thaw
