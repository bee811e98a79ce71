// The report formats: the JSON layout is pinned by the checked-in example
// (tests/fixtures/bench/example-report.json; a change of keys must update it
// deliberately: ENGINE_BENCH_WRITE_EXAMPLES=1 ./bench_test rewrites it), the
// JSON round trip that --compare relies on, and the markdown, JSONL and CSV
// views of the same data.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/bench/example_report.h"
#include "tools/bench/json_value.h"
#include "tools/bench/report_json.h"
#include "tools/bench/report_markdown.h"
#include "tools/bench/svg_plot.h"

namespace {

using namespace bench;

// The key structure of a JSON value: objects as their keys in order with the
// structure of each value, arrays as the structure of their first element,
// scalars as their kind (numbers and null are one kind: unknown numbers are
// written as null).
std::string structure(const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::object: {
      std::string s = "{";
      for (const auto& [k, m] : v.members()) s += k + ":" + structure(m) + ",";
      return s + "}";
    }
    case JsonValue::Kind::array:
      return v.items().empty() ? "[]" : "[" + structure(v.items()[0]) + "]";
    case JsonValue::Kind::string: return "s";
    case JsonValue::Kind::boolean: return "b";
    default: return "n";
  }
}

// Like structure() but an empty array on either side matches any array.
::testing::AssertionResult same_structure(const JsonValue& got, const JsonValue& want, const std::string& path) {
  if (got.kind() == JsonValue::Kind::array && want.kind() == JsonValue::Kind::array) {
    if (got.items().empty() || want.items().empty()) return ::testing::AssertionSuccess();
    return same_structure(got.items()[0], want.items()[0], path + "[0]");
  }
  if (got.kind() == JsonValue::Kind::object && want.kind() == JsonValue::Kind::object) {
    std::vector<std::string> gk, wk;
    for (const auto& [k, m] : got.members()) gk.push_back(k);
    for (const auto& [k, m] : want.members()) wk.push_back(k);
    if (gk != wk) {
      std::string g, w;
      for (const auto& k : gk) g += k + " ";
      for (const auto& k : wk) w += k + " ";
      return ::testing::AssertionFailure() << path << ": keys [" << g << "] but the example has [" << w << "]";
    }
    for (const auto& [k, m] : got.members()) {
      auto r = same_structure(m, want[k], path + "." + k);
      if (!r) return r;
    }
    return ::testing::AssertionSuccess();
  }
  if (structure(got) != structure(want)) {
    return ::testing::AssertionFailure() << path << ": " << structure(got) << " but the example has " << structure(want);
  }
  return ::testing::AssertionSuccess();
}

// A second report for the checked-in pair: the same run with a kernel
// fallback (Q4_0 on the reference kernel) and the decode speed it causes.
Report fallback_report() {
  Report r = bench_test::example_report();
  KernelChoice& k = r.runs[0].model.kernels[0];
  k.kernel = "matmul_f32_q8_0_q4_0_1x1_ref";
  k.tier = "ref";
  k.fallback = true;
  k.rejected = {"matmul_f32_q8_0_q4_0_4x8_i8mm: not in this build", "matmul_f32_q8_0_q4_0_4x8_dotprod: not in this build"};
  r.build.compiled_tiers = "ref";
  r.runs[0].model.fallback_advice = {
      "slow weights: Q4_0 on matmul_f32_q8_0_q4_0_1x1_ref [ref], below this CPU's tier",
      "no weight type that quantize writes has a kernel at this CPU's tier in this build"};
  for (TestResult& t : r.runs[0].tests) {
    for (double& v : t.tokens_per_s.samples) v *= t.kind == "decode" ? 0.08 : 0.02;
    for (double& v : t.ms.samples) v /= t.kind == "decode" ? 0.08 : 0.02;
    t.tokens_per_s = Stats::of(t.tokens_per_s.samples);
    t.ms = Stats::of(t.ms.samples);
  }
  Roofline& rl = r.runs[0].roofline;
  for (double* v : {&rl.decode_tokens_per_s, &rl.decode_gb_s, &rl.decode_efficiency}) *v *= 0.08;
  for (double& v : rl.decode_efficiency_paired.samples) v *= 0.08;
  rl.decode_efficiency_paired = Stats::of(rl.decode_efficiency_paired.samples);
  for (double* v : {&rl.prefill_tokens_per_s, &rl.prefill_gop_s, &rl.prefill_fraction}) *v *= 0.02;
  return r;
}

// The advice for a fallback reaches the markdown report and survives JSON.
TEST(ReportMarkdown, ShowsTheFallbackAdvice) {
  const Report r = fallback_report();
  EXPECT_NE(report_markdown(r).find("| advice | slow weights: Q4_0 on matmul_f32_q8_0_q4_0_1x1_ref [ref], below this "
                                    "CPU's tier<br>no weight type"),
            std::string::npos);
  EXPECT_EQ(report_from_json(JsonValue::parse(report_json(r))).runs[0].model.fallback_advice, r.runs[0].model.fallback_advice);
}

TEST(ReportJson, SchemaMatchesTheCheckedInExample) {
  const std::string example = bench_test::bench_fixture("example-report.json");
  const std::string json = report_json(bench_test::example_report());
  if (const char* w = std::getenv("ENGINE_BENCH_WRITE_EXAMPLES"); w != nullptr && std::string(w) == "1") {
    std::ofstream(example) << json;
    std::ofstream(bench_test::bench_fixture("example-report-fallback.json")) << report_json(fallback_report());
    std::ofstream(bench_test::bench_fixture("example-report.md")) << report_markdown(bench_test::example_report());
    std::ofstream(bench_test::bench_fixture("example-sustained.svg"))
        << sustained_svg(bench_test::example_report().runs[0].sustained, "sustained decode: example");
    GTEST_SKIP() << "wrote " << example;
  }
  const JsonValue want = JsonValue::parse_file(example);
  const JsonValue got = JsonValue::parse(json);
  EXPECT_TRUE(same_structure(got, want, "$"));
  EXPECT_EQ(want["schema"].string(), kReportSchema);
  // The example's own arrays are populated where it matters, so their element layout is pinned too.
  EXPECT_FALSE(want["runs"].items().at(0)["tests"].items().empty());
  EXPECT_FALSE(want["runs"].items().at(0)["threads"]["workers"].items().empty());
  EXPECT_FALSE(want["runs"].items().at(0)["sustained"]["per_round"].items().empty());
  EXPECT_FALSE(want["runs"].items().at(0)["before"]["thermal"].items().empty());
  EXPECT_FALSE(want["device"]["clusters"].items().empty());
}

TEST(ReportJson, FallbackExampleIsTheSameSchema) {
  const JsonValue a = JsonValue::parse_file(bench_test::bench_fixture("example-report.json"));
  const JsonValue b = JsonValue::parse_file(bench_test::bench_fixture("example-report-fallback.json"));
  EXPECT_TRUE(same_structure(b, a, "$"));
}

TEST(ReportJson, RoundTripKeepsEveryField) {
  const Report r = bench_test::example_report();
  const std::string once = report_json(r);
  const Report back = report_from_json(JsonValue::parse(once));
  EXPECT_EQ(report_json(back), once);
  EXPECT_EQ(back.runs.at(0).tests.at(2).tokens_per_s.samples, r.runs[0].tests[2].tokens_per_s.samples);
  EXPECT_EQ(back.runs[0].sustained.verdict, "stable");
  EXPECT_TRUE(std::isnan(back.runs[0].before.power.battery_percent) ==
              std::isnan(r.runs[0].before.power.battery_percent));
}

TEST(ReportJson, OlderReportsWithMissingFieldsStillRead) {
  const Report r = report_from_json(JsonValue::parse(R"({"runs": [{"tests": [{"name": "tg128", "kind": "decode",
      "tokens_per_s": {"n": 3, "mean": 10, "median": 10, "min": 9, "max": 11, "stddev": 1}}]}]})"));
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].model.sha256, "unknown");
  EXPECT_EQ(r.runs[0].tests[0].tokens_per_s.n, 3u);
  EXPECT_DOUBLE_EQ(r.runs[0].tests[0].tokens_per_s.median, 10);
  EXPECT_EQ(r.device.clusters.size(), 0u);
}

TEST(ReportFormats, MarkdownHasEveryBlock) {
  const std::string md = report_markdown(bench_test::example_report());
  for (const char* want : {"## Environment", "Pixel 8 Pro (from build.prop)", "Tensor G3", "Cortex-X3",
                           "governor schedutil", "MemAvailable", "battery Discharging 78%",
                           "SHA-256 | " /* digest row */, "Q4_0 x155", "matmul_f32_q8_0_q4_0_4x8_i8mm (i8mm)",
                           "resident after load", "| pp512 | prefill | t/s |", "| ttft512 | ttft | ms |",
                           "| tg128 | decode | t/s |", "t0 cpu 8 pinned, ran on cpu 8", "read bandwidth (probe): 38.20 GB/s",
                           "of the probe**", "of the peak estimate**", "| thermal_zone0 | BIG | 41.2 C | 44.7 C |",
                           "Sustained decode (6 rounds", "**stable**", "CPU share during the tests: 98%"}) {
    EXPECT_NE(md.find(want), std::string::npos) << want << "\n" << md;
  }
}

TEST(ReportFormats, MarkdownNotesBandwidthThatMovedDuringTheRun) {
  Report r = bench_test::example_report();
  EXPECT_NE(report_markdown(r).find("median of 10 passes (38.20 before the tests, 38.20 after)"), std::string::npos);
  EXPECT_EQ(report_markdown(r).find("the bandwidth moved"), std::string::npos);
  r.runs[0].probe.gb_per_s_after = Stats::of({28.0, 28.5, 27.9, 28.2, 28.1});
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("the bandwidth moved by 26% between the probe before and after the tests"), std::string::npos)
      << md;
}

TEST(ReportFormats, OneRepetitionShowsOneFigure) {
  Report r = bench_test::example_report();
  r.settings.repetitions = 1;
  r.settings.warmup = 1;
  for (TestResult& t : r.runs[0].tests) {
    for (Stats* st : {&t.tokens_per_s, &t.ms}) {
      if (!st->samples.empty()) *st = Stats::of({st->samples.front()});  // ttft has no tokens/s
    }
  }
  r.runs[0].roofline.decode_efficiency_paired = Stats::of({0.65});
  const std::string md = report_markdown(r);
  // One sample has no spread: no "± 0.00", no "1 repetitions", no range.
  for (const char* want :
       {"1 warm-up run per test not counted; 1 repetition;", "| tg128 | decode | t/s | 52.40 (n=1) |",
        "the repetition against the probe passes right before and after it: 65% (the figure above)"}) {
    EXPECT_NE(md.find(want), std::string::npos) << want << "\n" << md;
  }
  for (const char* unwanted : {"± 0.00", "1 repetitions", "1 warm-up runs", "65% to 65%"}) {
    EXPECT_EQ(md.find(unwanted), std::string::npos) << unwanted << "\n" << md;
  }
}

TEST(ReportFormats, JsonlAndCsvCarryOneLinePerRow) {
  const Report r = bench_test::example_report();
  std::istringstream jsonl(report_jsonl(r));
  std::vector<JsonValue> lines;
  for (std::string line; std::getline(jsonl, line);) lines.push_back(JsonValue::parse(line));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["type"].string(), "environment");
  EXPECT_EQ(lines[0]["device"]["model"].string(), "Pixel 8 Pro");
  EXPECT_EQ(lines[3]["type"].string(), "result");
  EXPECT_EQ(lines[3]["test"].string(), "tg128");
  EXPECT_EQ(lines[3]["tokens_per_s"]["samples"].items().size(), 5u);

  std::istringstream csv(report_csv(r));
  std::vector<std::string> rows;
  for (std::string line; std::getline(csv, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].rfind("device,arch,", 0), 0u);
  EXPECT_NE(rows[3].find(",tg128,decode,0,128,0,5,"), std::string::npos) << rows[3];
  EXPECT_NE(rows[1].find("Q4_0:i8mm"), std::string::npos) << rows[1];
}

// A model with sliding windows: the report records the windows and the
// cache's bytes beside a full cache's, in every format.
TEST(ReportFormats, TheKvCacheAndItsWindowsAreInEveryFormat) {
  Report r = bench_test::example_report();
  ModelInfo& m = r.runs[0].model;
  m.kv_type = "f16";
  m.kv_layers = "22 windowed attention layers x 1023.0 KiB + 4 attention layers x 32.0 MiB";
  m.kv_n_ctx = 32768;
  m.kv_bytes = (4ull * 32768 + 22 * 1023) * 1024;
  m.kv_full_bytes = 26ull * 32768 * 1024;
  m.kv_cached_layers = 26;
  m.kv_windowed_layers = 22;
  m.kv_windows = {512};
  EXPECT_NE(report_markdown(r).find("KV cache of 32768 positions: 150.0 MiB (f16; 22 of 26 layers windowed to 512 "
                                    "positions; a full cache would be 832.0 MiB) = 22 windowed attention layers"),
            std::string::npos)
      << report_markdown(r);

  const ModelInfo back = report_from_json(JsonValue::parse(report_json(r))).runs.at(0).model;
  EXPECT_EQ(back.kv_n_ctx, 32768u);
  EXPECT_EQ(back.kv_bytes, m.kv_bytes);
  EXPECT_EQ(back.kv_full_bytes, m.kv_full_bytes);
  EXPECT_EQ(back.kv_cached_layers, 26u);
  EXPECT_EQ(back.kv_windowed_layers, 22u);
  EXPECT_EQ(back.kv_windows, std::vector<uint32_t>{512});

  std::istringstream csv(report_csv(r));
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_NE(header.find(",kv_n_ctx,kv_bytes,kv_full_bytes,kv_windows"), std::string::npos) << header;
  EXPECT_NE(row.find(",32768,157263872,872415232,512"), std::string::npos) << row;
}

// An older report has no cache figures: the markdown gives what it has.
TEST(ReportFormats, AnOlderReportWithoutKvBytesShowsTheTypeAlone) {
  const Report r = report_from_json(JsonValue::parse(R"({"runs": [{"model": {"path": "m.gguf", "kv_type": "f16",
      "kv_layers": "5 attention layers x 256.0 KiB"}}]})"));
  EXPECT_NE(report_markdown(r).find("KV cache f16 (5 attention layers x 256.0 KiB)"), std::string::npos)
      << report_markdown(r);
}

TEST(ReportFormats, IndentKeepsJsonIntact) {
  const std::string compact = R"({"a":[1,2,{"b":"x,{y}"}],"c":{},"d":[],"e":["s",2]})";
  const std::string pretty = indent_json(compact);
  EXPECT_EQ(structure(JsonValue::parse(pretty)), structure(JsonValue::parse(compact)));
  EXPECT_NE(pretty.find("\"e\": [\"s\", 2]"), std::string::npos) << pretty;  // scalars stay on one line
  EXPECT_NE(pretty.find("\"b\": \"x,{y}\""), std::string::npos) << pretty;
}

TEST(SvgPlot, ThreePanelsAndGaps) {
  const Sustained s = bench_test::example_report().runs[0].sustained;
  const std::string svg = sustained_svg(s, "a <title> & more");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;title&gt; &amp; more"), std::string::npos);
  size_t polylines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++polylines;
  EXPECT_EQ(polylines, 3u);

  Sustained blind = s;
  for (Round& r : blind.per_round) r.max_temp_c = r.mean_freq_mhz = kUnknown;
  const std::string svg2 = sustained_svg(blind, "blind");
  polylines = 0;
  for (size_t p = svg2.find("<polyline"); p != std::string::npos; p = svg2.find("<polyline", p + 1)) ++polylines;
  EXPECT_EQ(polylines, 1u);
  EXPECT_NE(svg2.find("not readable on this device"), std::string::npos);
}

}  // namespace
