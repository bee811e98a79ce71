// CPU list parsing and formatting, and the MIDR table.
#include <gtest/gtest.h>

#include "engine/support/error.h"
#include "engine/threads/cpu_list.h"
#include "engine/threads/midr.h"

namespace {

using engine::format_cpu_list;
using engine::parse_cpu_list;

TEST(CpuList, ParsesRangesAndSingles) {
  EXPECT_EQ(parse_cpu_list("0-3,6,8-9"), (std::vector<int>{0, 1, 2, 3, 6, 8, 9}));
  EXPECT_EQ(parse_cpu_list("0-7\n"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(parse_cpu_list(" 5 , 2 "), (std::vector<int>{5, 2}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_TRUE(parse_cpu_list("\n").empty());  // sysfs "offline" with nothing offline
}

TEST(CpuList, KeepsTheUsersOrderAndDropsDuplicates) {
  EXPECT_EQ(parse_cpu_list("7,4-6"), (std::vector<int>{7, 4, 5, 6}));
  EXPECT_EQ(parse_cpu_list("1,0-2,1"), (std::vector<int>{1, 0, 2}));
}

TEST(CpuList, RejectsMalformedItems) {
  for (const char* bad : {"4-", "-4", "a", "7-4", "1,,2", "99999", "1-2-3", "0x4"}) {
    EXPECT_THROW(parse_cpu_list(bad), engine::Error) << bad;
  }
}

TEST(CpuList, Formats) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 6}), "0-3,6");
  EXPECT_EQ(format_cpu_list({7, 2, 3, 4}), "2-4,7");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({}), "none");
}

TEST(Midr, FieldsRoundTrip) {
  const uint32_t midr = engine::make_midr(0x41, 0x4, 0xD0B, 0x1);
  EXPECT_EQ(midr, 0x414FD0B1u);  // a Raspberry Pi 5's Cortex-A76 r4p1
  EXPECT_EQ(engine::midr_implementer(midr), 0x41u);
  EXPECT_EQ(engine::midr_variant(midr), 0x4u);
  EXPECT_EQ(engine::midr_part(midr), 0xD0Bu);
  EXPECT_EQ(engine::midr_revision(midr), 0x1u);
}

TEST(Midr, NamesKnownCores) {
  EXPECT_EQ(engine::midr_core_name(engine::make_midr(0x41, 0, 0xD80, 0)), "Cortex-A520");
  EXPECT_EQ(engine::midr_core_name(engine::make_midr(0x41, 0, 0xD85, 0)), "Cortex-X925");
  EXPECT_EQ(engine::midr_core_name(engine::make_midr(0x51, 2, 0x001, 1)), "Oryon");
  EXPECT_EQ(engine::midr_core_name(engine::make_midr(0x61, 0, 0x023, 0)), "Apple-M1-Firestorm");
  EXPECT_EQ(engine::find_core_type(engine::make_midr(0x41, 0, 0xD05, 0))->core_class, engine::CoreClass::efficiency);
  EXPECT_EQ(engine::find_core_type(engine::make_midr(0x41, 0, 0xD82, 0))->core_class, engine::CoreClass::flagship);
  // The same part number under another implementer is another core.
  EXPECT_EQ(engine::midr_core_name(engine::make_midr(0x48, 0, 0xD01, 0)), "TaiShan-v110");
  EXPECT_EQ(engine::find_core_type(engine::make_midr(0x41, 0, 0xD99, 0)), nullptr);
  EXPECT_EQ(engine::midr_core_name(engine::make_midr(0x41, 0, 0xD99, 0)),
            "unknown core (implementer 0x41, part 0xd99)");
  EXPECT_EQ(engine::midr_core_name(0), "");
}

}  // namespace
