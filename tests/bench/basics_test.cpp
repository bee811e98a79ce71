// Statistics, the JSON reader, natural sorting, build.prop values.
#include <gtest/gtest.h>

#include <cmath>

#include "tools/bench/json_value.h"
#include "tools/bench/stats.h"
#include "tools/bench/sysfs.h"

namespace {

TEST(Stats, SummaryOfSamples) {
  const bench::Stats s = bench::Stats::of({4, 1, 3, 2});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);  // sample standard deviation
  EXPECT_EQ(s.samples, (std::vector<double>{4, 1, 3, 2}));  // measurement order kept

  const bench::Stats odd = bench::Stats::of({5, 9, 1});
  EXPECT_DOUBLE_EQ(odd.median, 5);
  EXPECT_DOUBLE_EQ(bench::Stats::of({7}).stddev, 0);
  EXPECT_TRUE(bench::Stats::of({}).empty());
}

TEST(JsonValue, ParsesNestedValuesInOrder) {
  const auto v = bench::JsonValue::parse(R"( {"b": [1, 2.5e3, -3], "a": {"s": "x\"y\u00e9\ud83d\ude00", "t": true,
                                              "n": null}} )");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.members()[0].first, "b");
  EXPECT_EQ(v["b"].items().size(), 3u);
  EXPECT_DOUBLE_EQ(v["b"].items()[1].number(0), 2500);
  EXPECT_EQ(v["a"]["s"].string(), "x\"y\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(v["a"]["t"].boolean());
  EXPECT_TRUE(std::isnan(v["a"]["n"].number(NAN)));
  EXPECT_EQ(v["missing"]["deeper"].string("fallback"), "fallback");
}

TEST(JsonValue, ErrorsNameTheOffset) {
  for (const char* bad : {"{", "[1,]", "{\"a\" 1}", "\"open", "tru", "{} x", "[\"\\q\"]"}) {
    EXPECT_THROW(bench::JsonValue::parse(bad), std::runtime_error) << bad;
  }
  try {
    bench::JsonValue::parse("[1, @]");
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("offset 4"), std::string::npos) << e.what();
  }
}

TEST(Sysfs, NaturalOrderAndBuildProp) {
  EXPECT_TRUE(bench::natural_less("thermal_zone2", "thermal_zone10"));
  EXPECT_FALSE(bench::natural_less("thermal_zone10", "thermal_zone2"));
  EXPECT_TRUE(bench::natural_less("cpu1", "cpu01x"));
  EXPECT_TRUE(bench::natural_less("a", "b"));
  const std::string prop = "# comment\nro.product.model=Pixel 8 Pro  \nro.product.modelx=no\nro.x=\n";
  EXPECT_EQ(bench::prop_value(prop, "ro.product.model"), "Pixel 8 Pro");
  EXPECT_EQ(bench::prop_value(prop, "ro.x"), "");
  EXPECT_FALSE(bench::prop_value(prop, "ro.product").has_value());
  EXPECT_FALSE(bench::run_program("no-such-program-for-bench-tests", {}).has_value());
}

}  // namespace
