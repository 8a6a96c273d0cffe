// junit.xml parses as XML (expat) with one testcase per implementation x dtype and the expected
// failures.
#include "reports/junit.h"

#include <expat.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/reports/run_fixture.h"

namespace stabfuzz {
namespace {

using testing::FixtureFinding;
using testing::FixtureResult;

struct Parsed {
  bool ok = false;
  std::string error;
  std::map<std::string, int> elements;  // element name -> count
  std::vector<std::map<std::string, std::string>> suites, cases;
  std::string root_tests, root_failures;
  std::string text;  // all character data
};

Parsed parse_xml(const std::string& xml) {
  Parsed p;
  XML_Parser parser = XML_ParserCreate("UTF-8");
  XML_SetUserData(parser, &p);
  XML_SetElementHandler(
      parser,
      [](void* ud, const XML_Char* name, const XML_Char** attrs) {
        auto* p = static_cast<Parsed*>(ud);
        const std::string n = name;
        ++p->elements[n];
        std::map<std::string, std::string> a;
        for (int i = 0; attrs[i]; i += 2) a[attrs[i]] = attrs[i + 1];
        if (n == "testsuites") {
          p->root_tests = a["tests"];
          p->root_failures = a["failures"];
        }
        if (n == "testsuite") p->suites.push_back(a);
        if (n == "testcase") p->cases.push_back(a);
      },
      [](void*, const XML_Char*) {});
  XML_SetCharacterDataHandler(parser, [](void* ud, const XML_Char* s, int len) {
    static_cast<Parsed*>(ud)->text.append(s, static_cast<size_t>(len));
  });
  p.ok = XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_OK;
  if (!p.ok) p.error = XML_ErrorString(XML_GetErrorCode(parser));
  XML_ParserFree(parser);
  return p;
}

TEST(Junit, OneTestcasePerImplementationAndDtype) {
  const std::vector<FixtureResult> results = {
      {"softmax/cpu/stable", "reference", "f32", 100, 2, 1},
      {"softmax/cpu/stable", "reference", "f64", 100, 0, 0},
      {"softmax/injected/no_max_subtract", "injected", "f32", 100, 40, 1},
      {"softmax/injected/no_max_subtract", "injected", "f16", 100, 0, 0},
      {"var/cpu/two_pass", "reference", "f64", 50, 0, 0},
  };
  FixtureFinding f;
  f.impl = "softmax/cpu/stable";
  f.case_index = 4;
  f.regime = "<odd> & \"quoted\" regime";  // markup in a field must be escaped
  FixtureFinding g;
  g.impl = "softmax/injected/no_max_subtract";
  g.impl_kind = "injected";
  g.fix = "shift by the max";
  const std::string dir = testing::write_run(testing::temp_dir("junit"), results, {f, g});
  const std::string xml = reports::render_junit(reports::load_run(dir));
  const Parsed p = parse_xml(xml);
  ASSERT_TRUE(p.ok) << p.error << "\n" << xml;
  EXPECT_EQ(p.elements.at("testsuites"), 1);
  EXPECT_EQ(p.elements.at("testcase"), 5);
  EXPECT_EQ(p.root_tests, "5");
  // Failures: the unstable reference f32 and the undetected planted bug in f16.
  EXPECT_EQ(p.root_failures, "2");
  EXPECT_EQ(p.elements.at("failure"), 2);
  ASSERT_EQ(p.suites.size(), 2u);
  EXPECT_EQ(p.suites[0].at("name"), "softmax");
  EXPECT_EQ(p.suites[0].at("tests"), "4");
  EXPECT_EQ(p.suites[1].at("name"), "var");
  EXPECT_EQ(p.suites[1].at("failures"), "0");
  EXPECT_EQ(p.cases[0].at("name"), "softmax/cpu/stable f32");
  EXPECT_NE(p.text.find("replay: stabfuzz --target softmax --impl softmax/cpu/stable --dtype f32 "
                        "--seed 1 --case 4"),
            std::string::npos);
  EXPECT_NE(p.text.find("<odd> & \"quoted\" regime"), std::string::npos);  // round-trips
}

TEST(Junit, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(reports::xml_escape("a<b>&\"c'\x01"), "a&lt;b&gt;&amp;&quot;c&apos;");
}

}  // namespace
}  // namespace stabfuzz
