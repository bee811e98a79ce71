// The MIDR table. Implementer and part numbers are those of the Linux kernel's
// arch/arm64/include/asm/cputype.h (which takes them from each core's TRM);
// Qualcomm's Oryon V3 part 0x002 is pytorch/cpuinfo's. Qualcomm Kryo 5xx and
// later report the Arm part they are built on (Kryo 6xx Gold is a Cortex-A78),
// so they need no entries of their own.
#include "engine/threads/midr.h"

#include <array>
#include <cstdio>

namespace engine {
namespace {

using C = CoreClass;

constexpr std::array kCoreTypes = {
    // Arm
    CoreType{0x41, 0xD02, "Cortex-A34", C::efficiency},
    CoreType{0x41, 0xD03, "Cortex-A53", C::efficiency},
    CoreType{0x41, 0xD04, "Cortex-A35", C::efficiency},
    CoreType{0x41, 0xD05, "Cortex-A55", C::efficiency},
    CoreType{0x41, 0xD07, "Cortex-A57", C::performance},
    CoreType{0x41, 0xD08, "Cortex-A72", C::performance},
    CoreType{0x41, 0xD09, "Cortex-A73", C::performance},
    CoreType{0x41, 0xD0A, "Cortex-A75", C::performance},
    CoreType{0x41, 0xD0B, "Cortex-A76", C::performance},
    CoreType{0x41, 0xD0C, "Neoverse-N1", C::performance},
    CoreType{0x41, 0xD0D, "Cortex-A77", C::performance},
    CoreType{0x41, 0xD0E, "Cortex-A76AE", C::performance},
    CoreType{0x41, 0xD40, "Neoverse-V1", C::performance},
    CoreType{0x41, 0xD41, "Cortex-A78", C::performance},
    CoreType{0x41, 0xD42, "Cortex-A78AE", C::performance},
    CoreType{0x41, 0xD44, "Cortex-X1", C::flagship},
    CoreType{0x41, 0xD46, "Cortex-A510", C::efficiency},
    CoreType{0x41, 0xD47, "Cortex-A710", C::performance},
    CoreType{0x41, 0xD48, "Cortex-X2", C::flagship},
    CoreType{0x41, 0xD49, "Neoverse-N2", C::performance},
    CoreType{0x41, 0xD4A, "Neoverse-E1", C::efficiency},
    CoreType{0x41, 0xD4B, "Cortex-A78C", C::performance},
    CoreType{0x41, 0xD4C, "Cortex-X1C", C::flagship},
    CoreType{0x41, 0xD4D, "Cortex-A715", C::performance},
    CoreType{0x41, 0xD4E, "Cortex-X3", C::flagship},
    CoreType{0x41, 0xD4F, "Neoverse-V2", C::performance},
    CoreType{0x41, 0xD80, "Cortex-A520", C::efficiency},
    CoreType{0x41, 0xD81, "Cortex-A720", C::performance},
    CoreType{0x41, 0xD82, "Cortex-X4", C::flagship},
    CoreType{0x41, 0xD83, "Neoverse-V3AE", C::performance},
    CoreType{0x41, 0xD84, "Neoverse-V3", C::performance},
    CoreType{0x41, 0xD85, "Cortex-X925", C::flagship},
    CoreType{0x41, 0xD87, "Cortex-A725", C::performance},
    CoreType{0x41, 0xD89, "Cortex-A720AE", C::performance},
    CoreType{0x41, 0xD8B, "C1-Pro", C::performance},
    CoreType{0x41, 0xD8C, "C1-Ultra", C::flagship},
    CoreType{0x41, 0xD8E, "Neoverse-N3", C::performance},
    // Broadcom
    CoreType{0x42, 0x100, "Brahma-B53", C::efficiency},
    // Cavium / Marvell
    CoreType{0x43, 0x0A1, "ThunderX", C::performance},
    CoreType{0x43, 0x0AF, "ThunderX2", C::performance},
    // Fujitsu
    CoreType{0x46, 0x001, "A64FX", C::performance},
    // HiSilicon
    CoreType{0x48, 0xD01, "TaiShan-v110", C::performance},
    // NVIDIA
    CoreType{0x4E, 0x003, "Denver", C::performance},
    CoreType{0x4E, 0x004, "Carmel", C::performance},
    // Qualcomm
    CoreType{0x51, 0x001, "Oryon", C::performance},
    CoreType{0x51, 0x002, "Oryon-V3", C::performance},
    CoreType{0x51, 0x800, "Kryo-2xx-Gold", C::performance},
    CoreType{0x51, 0x801, "Kryo-2xx-Silver", C::efficiency},
    CoreType{0x51, 0x802, "Kryo-3xx-Gold", C::performance},
    CoreType{0x51, 0x803, "Kryo-3xx-Silver", C::efficiency},
    CoreType{0x51, 0x804, "Kryo-4xx-Gold", C::performance},
    CoreType{0x51, 0x805, "Kryo-4xx-Silver", C::efficiency},
    CoreType{0x51, 0xC00, "Falkor", C::performance},
    // Samsung
    CoreType{0x53, 0x001, "Exynos-M1/M2", C::performance},
    CoreType{0x53, 0x002, "Exynos-M3", C::performance},
    CoreType{0x53, 0x003, "Exynos-M4", C::performance},
    CoreType{0x53, 0x004, "Exynos-M5", C::performance},
    // Apple (as Asahi Linux reports them)
    CoreType{0x61, 0x022, "Apple-M1-Icestorm", C::efficiency},
    CoreType{0x61, 0x023, "Apple-M1-Firestorm", C::performance},
    CoreType{0x61, 0x024, "Apple-M1-Pro-Icestorm", C::efficiency},
    CoreType{0x61, 0x025, "Apple-M1-Pro-Firestorm", C::performance},
    CoreType{0x61, 0x028, "Apple-M1-Max-Icestorm", C::efficiency},
    CoreType{0x61, 0x029, "Apple-M1-Max-Firestorm", C::performance},
    CoreType{0x61, 0x032, "Apple-M2-Blizzard", C::efficiency},
    CoreType{0x61, 0x033, "Apple-M2-Avalanche", C::performance},
    CoreType{0x61, 0x034, "Apple-M2-Pro-Blizzard", C::efficiency},
    CoreType{0x61, 0x035, "Apple-M2-Pro-Avalanche", C::performance},
    CoreType{0x61, 0x038, "Apple-M2-Max-Blizzard", C::efficiency},
    CoreType{0x61, 0x039, "Apple-M2-Max-Avalanche", C::performance},
    // Microsoft (a Neoverse-N2 under its own implementer code)
    CoreType{0x6D, 0xD49, "Azure-Cobalt-100", C::performance},
    // Ampere
    CoreType{0xC0, 0xAC3, "Ampere-1", C::performance},
    CoreType{0xC0, 0xAC4, "Ampere-1A", C::performance},
};

}  // namespace

const CoreType* find_core_type(uint32_t midr) {
  for (const CoreType& t : kCoreTypes) {
    if (t.implementer == midr_implementer(midr) && t.part == midr_part(midr)) return &t;
  }
  return nullptr;
}

std::string midr_core_name(uint32_t midr) {
  if (midr == 0) return "";
  if (const CoreType* t = find_core_type(midr)) return t->name;
  char buf[64];
  std::snprintf(buf, sizeof buf, "unknown core (implementer 0x%02x, part 0x%03x)", midr_implementer(midr),
                midr_part(midr));
  return buf;
}

const char* core_class_name(CoreClass c) {
  switch (c) {
    case CoreClass::unknown:
      return "unknown";
    case CoreClass::efficiency:
      return "efficiency";
    case CoreClass::performance:
      return "performance";
    case CoreClass::flagship:
      return "flagship";
  }
  return "?";
}

}  // namespace engine
