// Core types from the MIDR_EL1 value Linux prints per CPU in /proc/cpuinfo
// ("CPU implementer", "CPU variant", "CPU part", "CPU revision"). The name makes
// logs readable ("Cortex-A520"); the class lets the topology tell an efficiency
// core from a performance core when cpu_capacity and frequencies are missing or
// misleading (a Dimensity 800 runs its A55 and A76 cores at the same 2.0 GHz).
#pragma once

#include <cstdint>
#include <string>

namespace engine {

// What the core was designed for, not how fast it is on a given chip.
enum class CoreClass : uint8_t {
  unknown,
  efficiency,   // in-order little cores: Cortex-A53/A55/A510/A520, Kryo Silver, Apple E-cores
  performance,  // out-of-order big cores: Cortex-A7x/A7xx, Neoverse, Kryo Gold, Oryon, Apple P-cores
  flagship,     // Cortex-X series: the widest core Arm licenses for phones
};

struct CoreType {
  uint8_t implementer;  // MIDR[31:24]: 0x41 Arm, 0x51 Qualcomm, 0x61 Apple, ...
  uint16_t part;        // MIDR[15:4]
  const char* name;     // "Cortex-A720"
  CoreClass core_class;
};

// MIDR fields, as the kernel's arch/arm64/include/asm/cputype.h lays them out.
inline constexpr uint32_t midr_implementer(uint32_t midr) { return midr >> 24; }
inline constexpr uint32_t midr_variant(uint32_t midr) { return (midr >> 20) & 0xF; }
inline constexpr uint32_t midr_part(uint32_t midr) { return (midr >> 4) & 0xFFF; }
inline constexpr uint32_t midr_revision(uint32_t midr) { return midr & 0xF; }
// Architecture field 0xF: "defined by the ID registers", what every Armv7+ core reports.
inline constexpr uint32_t make_midr(uint32_t implementer, uint32_t variant, uint32_t part, uint32_t revision) {
  return (implementer & 0xFF) << 24 | (variant & 0xF) << 20 | 0xFu << 16 | (part & 0xFFF) << 4 | (revision & 0xF);
}
// Implementer and part only: the same core type whatever its revision.
inline constexpr uint32_t midr_model(uint32_t midr) { return midr & 0xFF00FFF0u; }

// The known core type of a MIDR value, nullptr when it is not in the table.
const CoreType* find_core_type(uint32_t midr);

// "Cortex-A720", or "unknown core (implementer 0x41, part 0xd99)"; "" for 0.
std::string midr_core_name(uint32_t midr);

const char* core_class_name(CoreClass c);

}  // namespace engine
