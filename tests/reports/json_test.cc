// Report serialization: JSON dump/parse, and old run files read back into the same fields.
#include "reports/json.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "reports/findings.h"
#include "reports/run_data.h"

namespace stabfuzz {
namespace {

using json::Array;
using json::Object;
using json::ParseError;
using json::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

TEST(Json, NestedRoundtripKeepsStructureAndOrder) {
  Value v{Object{}};
  v.set("zeta", 1);
  v.set("alpha", Array{Value(true), Value(false), Value(), Value("x"), Value(Array{})});
  Value inner{Object{}};
  inner.set("s", "quote\" backslash\\ nl\n tab\t cr\r ctl\x01 slash/");
  inner.set("n", -2.5);
  v.set("inner", inner);
  v.set("empty", Object{});
  for (int indent : {-1, 2}) {
    const std::string text = json::dump(v, indent);
    const Value back = json::parse(text);
    EXPECT_EQ(json::dump(back, indent), text);
    const Object& o = back.as_object();
    ASSERT_EQ(o.size(), 4u);
    EXPECT_EQ(o[0].first, "zeta");  // insertion order, not sorted
    EXPECT_EQ(o[1].first, "alpha");
    EXPECT_EQ(back.at("zeta").as_number(), 1.0);
    const Array& a = back.at("alpha").as_array();
    ASSERT_EQ(a.size(), 5u);
    EXPECT_TRUE(a[0].as_bool());
    EXPECT_FALSE(a[1].as_bool());
    EXPECT_TRUE(a[2].is_null());
    EXPECT_EQ(a[3].as_string(), "x");
    EXPECT_TRUE(a[4].as_array().empty());
    EXPECT_EQ(back.at("inner").at("s").as_string(), inner.at("s").as_string());
    EXPECT_EQ(back.at("inner").at("n").as_number(), -2.5);
    EXPECT_TRUE(back.at("empty").as_object().empty());
  }
  EXPECT_EQ(json::dump(v).find('\n'), std::string::npos);  // compact output is one line
  EXPECT_EQ(json::dump(Value("a\nb\t\"\\\x01")), R"("a\nb\t\"\\\u0001")");
}

TEST(Json, BoundsNestingDepth) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_NO_THROW(json::parse(nested(60)));
  EXPECT_NO_THROW(json::parse(nested(65)));  // the top-level value and 64 levels below it
  EXPECT_THROW(json::parse(nested(100000)), ParseError);  // an error, not a stack overflow
  EXPECT_THROW(json::parse(std::string(100000, '[')), ParseError);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  EXPECT_THROW(json::parse(objects + "1" + std::string(100000, '}')), ParseError);
  try {
    json::parse(nested(66));
    ADD_FAILURE() << "66 levels parsed";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("nesting deeper than 64 levels"), std::string::npos)
        << e.what();
  }
}

TEST(Json, ParseErrorsSayWhatAndWhere) {
  // One line for a bad file: what is wrong, and the 0-based byte offset where it was noticed.
  const auto message = [](const std::string& text) {
    try {
      json::parse(text);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string literal = message("[1, tru]");
  EXPECT_NE(literal.find("invalid literal"), std::string::npos) << literal;
  EXPECT_NE(literal.find("byte offset 7"), std::string::npos) << literal;
  const std::string trailing = message("{} x");
  EXPECT_NE(trailing.find("expected end of input"), std::string::npos) << trailing;
  EXPECT_NE(trailing.find("byte offset 3"), std::string::npos) << trailing;
  const std::string truncated = message(R"({"a": [1, 2)");
  EXPECT_NE(truncated.find("byte offset 11"), std::string::npos) << truncated;
  for (const std::string& m : {literal, trailing, truncated}) {
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.rfind("JSON", 0), 0u) << m;
  }
}

TEST(Json, DuplicateKeysKeepTheFirstValue) {
  const Value v = json::parse(R"({"a": 1, "b": 2, "a": 3})");
  EXPECT_EQ(v.at("a").as_number(), 1.0);  // as the hand-written parser did
  EXPECT_EQ(v.as_object().size(), 3u);
  EXPECT_EQ(json::dump(v), R"({"a":1,"b":2})");  // written once, the value get() sees
}

TEST(Json, InvalidUtf8IsReplacedWhenWritingAndRejectedWhenReading) {
  // A library's version string with odd bytes must not make a report throw.
  const std::string odd = "v1.2\xff\xfe-\xc3";
  std::string text;
  ASSERT_NO_THROW(text = json::dump(Value(odd)));
  EXPECT_EQ(text, "\"v1.2\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd\"");  // U+FFFD each
  EXPECT_EQ(json::parse(text).as_string(), "v1.2\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd");
  EXPECT_NO_THROW(json::dump(Object{{odd, Array{odd}}}, 2));  // keys and nested values too
  EXPECT_THROW(json::parse("\"a\xff\""), ParseError);
  EXPECT_THROW(json::parse("\"\xc3\""), ParseError);  // truncated sequence
}

TEST(Json, OutputShapes) {
  Value v;
  v.set("a", 1);
  v.set("b", Array{true, "0x1.999999999999ap-4"});
  v.set("c", Object{});
  EXPECT_EQ(json::dump(v), R"({"a":1,"b":[true,"0x1.999999999999ap-4"],"c":{}})");
  EXPECT_EQ(json::dump(v, 2),
            "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    \"0x1.999999999999ap-4\"\n  ],\n"
            "  \"c\": {}\n}");
  EXPECT_EQ(json::dump(Array{}, 2), "[]");
}

TEST(Json, SetReplacesExistingKeys) {
  Value v;
  v.set("k", 1);
  v.set("k", "two");
  ASSERT_EQ(v.as_object().size(), 1u);
  EXPECT_EQ(v.at("k").as_string(), "two");
  EXPECT_EQ(v.get("missing"), nullptr);
  EXPECT_THROW(v.at("missing"), ParseError);
}

TEST(Json, ParsesUnicodeEscapesToUtf8) {
  EXPECT_EQ(json::parse(R"("\u0041")").as_string(), "A");
  EXPECT_EQ(json::parse(R"("\u00e9")").as_string(), "\xc3\xa9");      // é
  EXPECT_EQ(json::parse(R"("\u20AC")").as_string(), "\xe2\x82\xac");  // €
  EXPECT_EQ(json::parse(R"("a\u0000b")").as_string(), std::string("a\0b", 3));
  EXPECT_EQ(json::parse(R"("\/\b\f")").as_string(), "/\b\f");
  // Raw UTF-8 passes through both ways.
  const std::string raw = "\xe2\x82\xac \xc3\xa9";
  EXPECT_EQ(json::parse(json::dump(Value(raw))).as_string(), raw);
}

TEST(Json, ParsesSurrogatePairsToOneCodePoint) {
  // RFC 8259 section 7: U+1F600 is written as the surrogate pair \ud83d\ude00 (4 bytes of UTF-8).
  EXPECT_EQ(json::parse(R"("\ud83d\ude00")").as_string(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(json::parse(R"("x\uD834\uDD1Ey")").as_string(), "x\xf0\x9d\x84\x9ey");  // U+1D11E
  for (const char* lone : {R"("\ud83d")", R"("\ude00")", R"("\ud83d x")", R"("\ud83d\u0041")"})
    EXPECT_THROW(json::parse(lone), ParseError) << lone;
}

TEST(Json, IntegersAreWrittenWithoutDecimals) {
  EXPECT_EQ(json::dump(Value(42)), "42");
  EXPECT_EQ(json::dump(Value(-7L)), "-7");
  EXPECT_EQ(json::dump(Value(3.0)), "3");
  EXPECT_EQ(json::dump(Value(0.0)), "0");
  EXPECT_EQ(json::dump(Value(size_t{123456789012})), "123456789012");
  EXPECT_EQ(json::dump(Value(0.5)), "0.5");
  EXPECT_EQ(json::dump(Array{1, 2.25, -3}), "[1,2.25,-3]");
}

TEST(Json, DoublesRoundtripExactly) {
  using lim = std::numeric_limits<double>;
  for (double d : {0.1,
                   1.0 / 3,
                   -2.0 / 7,
                   1e-300,
                   -1e-300,
                   5e-324,
                   -5e-324,
                   lim::denorm_min(),
                   lim::min(),
                   0x1.fffffffffffffp-1023,
                   lim::max(),
                   -lim::max(),
                   1e15 + 0.5,
                   1e15 - 1,
                   1e15,
                   1e16,
                   1e300,
                   123456789.123456789,
                   -0.0,
                   0.0,
                   0x1p53,
                   0x1p53 + 2,
                   0x1p60,
                   0x1p63,
                   0x1p64,
                   -0x1p63,
                   18446744073709551616.0 * 3,
                   lim::epsilon(),
                   1 + lim::epsilon()}) {
    const double back = json::parse(json::dump(Value(d))).as_number();
    EXPECT_TRUE(same_bits(back, d)) << json::dump(Value(d));
  }
  // Shortest text that reads back exactly; -0.0 keeps its sign.
  EXPECT_EQ(json::dump(Value(0.1)), "0.1");
  EXPECT_EQ(json::dump(Value(-0.0)), "-0.0");
  EXPECT_EQ(json::parse("9007199254740993").as_number(), 0x1p53);  // 2^53 + 1 rounds to even
  EXPECT_EQ(json::parse("18446744073709551615").as_number(), 0x1p64);
  EXPECT_EQ(json::parse("-9223372036854775808").as_number(), -0x1p63);
  EXPECT_THROW(json::parse("1e400"), ParseError);  // would be inf: not a JSON number
}

// Raw bit patterns: size-scaled (tiny magnitudes, subnormals) or full width (any exponent, sign).
rc::Gen<uint64_t> any_bits() {
  return rc::gen::oneOf(rc::gen::arbitrary<uint64_t>(),
                        rc::gen::resize(100, rc::gen::arbitrary<uint64_t>()));
}

RC_GTEST_PROP(JsonProp, FiniteDoublesRoundtripBitExactly, ()) {
  const double d = std::bit_cast<double>(*any_bits());
  RC_PRE(std::isfinite(d));
  const std::string text = json::dump(Array{d});
  RC_ASSERT(same_bits(json::parse(text).as_array().at(0).as_number(), d));
}

TEST(Json, NonFiniteNumbersAreStrings) {
  const double inf = kInf;
  EXPECT_EQ(json::dump(Array{inf, -inf, kNaN}), R"(["inf","-inf","nan"])");
  const Array back = json::parse(json::dump(Array{inf, -inf, -kNaN})).as_array();
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(back[0].is_string());
  EXPECT_EQ(back[0].as_number(), inf);
  EXPECT_EQ(back[1].as_number(), -inf);
  EXPECT_TRUE(std::isnan(back[2].as_number()));
  EXPECT_THROW(Value("infinity").as_number(), ParseError);
  EXPECT_THROW(Value(true).as_number(), ParseError);
}

TEST(Json, RejectsTruncatedInput) {
  for (const char* text : {"", " ", "{", "[", "[1,", R"({"a")", R"({"a":)", R"({"a": [1, 2)",
                           R"("abc)", R"("a\)", R"("\u00)", "tru", "-"}) {
    EXPECT_THROW(json::parse(text), ParseError) << "'" << text << "'";
  }
}

TEST(Json, RejectsTrailingGarbage) {
  for (const char* text : {"{} x", "1 2", "[1]]", "truex", R"("a""b")", "null,", "1.5.2"}) {
    EXPECT_THROW(json::parse(text), ParseError) << "'" << text << "'";
  }
  EXPECT_NO_THROW(json::parse(" {\"a\" : [ 1 , 2 ] }\n"));
}

TEST(Json, RejectsBadEscapesAndRawControlCharacters) {
  for (const char* text :
       {R"("\q")", R"("\x41")", R"("\U0041")", R"("\'")", "\"a\nb\"", "\"\x01\""}) {
    EXPECT_THROW(json::parse(text), ParseError) << "'" << text << "'";
  }
  EXPECT_THROW(json::parse("{1: 2}"), ParseError);  // keys are strings
  EXPECT_THROW(json::parse("[nan]"), ParseError);   // JSON has no literal NaN
}

TEST(Json, RejectsNonHexDigitsInUnicodeEscapes) {
  for (const char* text : {R"("\u00zz")", R"("\u+041")", R"("\u 041")", R"("\u-041")"})
    EXPECT_THROW(json::parse(text), ParseError) << text;
}

TEST(Json, NumbersFollowTheJsonGrammar) {
  EXPECT_EQ(json::parse("-0.5e+2").as_number(), -50.0);
  EXPECT_EQ(json::parse("1E2").as_number(), 100.0);
  EXPECT_EQ(json::parse("0").as_number(), 0.0);
  // RFC 8259 section 6: no plus sign, leading zeros, bare dots or empty exponents.
  for (const char* text : {"+1", "01", ".5", "1.", "-.5", "1e", "1e+", "-", "0x10", "--1"})
    EXPECT_THROW(json::parse(text), ParseError) << text;
}

// Every field the reports read from a run, one per line, doubles as exact hex floats.
std::string fields_text(const reports::RunData& run) {
  std::ostringstream os;
  const auto hex = [](double d) { return reports::hex_float(d); };
  os << "run target=" << run.target << " seed=" << run.seed << " seconds=" << hex(run.seconds)
     << " problems=" << run.problems.size() << "\n";
  for (const auto& r : run.results) {
    os << "result " << r.family << " " << r.impl << " " << r.impl_kind << " " << r.dtype
       << " inputs=" << r.inputs << " failing=" << r.failing_inputs << " findings=" << r.findings
       << " undecidable=" << r.undecidable << " oracle=" << r.oracle_detections
       << " cestac=" << r.cestac_detections << " max_ulp=" << hex(r.max_ulp)
       << " eot=" << hex(r.max_error_over_tolerance)
       << " min_digits=" << (r.min_digits ? hex(*r.min_digits) : "-")
       << " seconds=" << hex(r.seconds) << " failed=" << r.failed() << " kinds=";
    for (const auto& [k, n] : r.failing_by_kind) os << k << ":" << n << ",";
    os << " bb=" << r.has_blackbox << " " << (r.bb_min_digits ? hex(*r.bb_min_digits) : "-") << " "
       << r.bb_sensitive_inputs << " " << r.bb_nondeterministic_inputs << "\n";
  }
  for (const auto& f : run.findings) {
    os << "finding " << f.line << " " << f.target << " " << f.impl << " " << f.impl_kind << " "
       << f.kind << " " << f.kind_detail << " " << f.dtype << " " << f.regime << " " << f.severity
       << " " << f.engine << " replay=" << f.replay << " detectors=";
    for (const auto& d : f.detectors) os << d << ",";
    os << " seed=" << f.seed << " case=" << f.case_index << " max_ulp=" << hex(f.max_ulp)
       << " eot=" << hex(f.error_over_tolerance) << " tol=" << hex(f.tolerance_ulps)
       << " cond=" << hex(f.cond) << " max_cond=" << hex(f.max_cond) << " worst=" << f.worst_index
       << " computed=" << f.computed << " exact=" << f.exact << " " << hex(f.computed_dec) << " "
       << hex(f.exact_dec) << " nonfinite=" << f.nonfinite << " undecidable=" << f.undecidable
       << " cestac=" << f.has_cestac << " " << hex(f.digits) << " " << hex(f.expected_digits) << " "
       << hex(f.min_digits) << " " << f.self_validation << " n=" << f.n << " " << f.original_n
       << " " << f.shrink_steps << " magnitude=" << hex(f.magnitude) << " plants=" << f.plants
       << " fails_where=" << f.fails_where << " fix=" << f.suggested_fix << " failure=" << f.failure
       << " " << f.failure_detail << " instabilities=";
    for (const auto& s : f.instabilities) os << s.kind << "@" << s.site << "x" << s.count << ",";
    os << " input=";
    for (double x : f.input) os << hex(x) << ",";
    os << "\n";
  }
  return os.str();
}

// tests/reports/data/old-run (a softmax run: reference and injected targets, 12 findings.jsonl
// lines) and old-run-library (a blas run: summary.json's "blackbox" rows): files written by
// stabfuzz before JSON went through nlohmann-json (the hand-written writer: "%.17g" numbers,
// integers without decimals), and fields.txt, the fields the reports read from them with the
// hand-written parser.
TEST(OldRunFiles, ReadBackIntoTheSameFields) {
  for (const char* name : {"old-run", "old-run-library"}) {
    SCOPED_TRACE(name);
    const std::string dir = std::string(STABFUZZ_SOURCE_DIR) + "/tests/reports/data/" + name;
    const reports::RunData run = reports::load_run(dir);
    EXPECT_TRUE(run.problems.empty()) << run.problems.front();
    EXPECT_FALSE(run.results.empty());
    const std::string got = fields_text(run);
    std::ifstream in(dir + "/fields.txt");
    const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (got != want) {
      const std::string path = testing::TempDir() + name + "-fields.txt";
      std::ofstream(path) << got;
      ADD_FAILURE() << "fields differ from " << dir << "/fields.txt; these are in " << path;
    }
    // Each line, written again by the current writer, reads back into the same fields.
    std::istringstream lines(reports::read_text(dir + "/findings.jsonl"));
    size_t i = 0;
    for (std::string line; std::getline(lines, line); ++i) {
      const json::Value v = json::parse(line);
      reports::RunData one, again;
      one.findings.push_back(reports::parse_finding(v));
      again.findings.push_back(reports::parse_finding(json::parse(json::dump(v))));
      EXPECT_EQ(fields_text(again), fields_text(one)) << line;
    }
    EXPECT_EQ(i, run.findings.size());
  }
}

}  // namespace
}  // namespace stabfuzz
