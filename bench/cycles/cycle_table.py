#!/usr/bin/env python3
"""Cycles per weight of the ARM matmul kernels on LLVM's scheduling models of phone and server cores.

    cycle_table.py --kernel-insn build/aarch64/bin/kernel_insn [-o docs/cycles.md] [--only REGEX] [--jobs N]

Instruction counts under qemu say how much work a loop does, not how a Cortex-A55 (in order, one
128-bit pipe for SDOT) and a Neoverse V1 (four vector pipes) run it. This tool combines both:

1. Each kernel runs under qemu-aarch64 (kernel_insn, one call of run() on one shape) with the
   block profiler (bench/insn_profile/insnprofile.c): how many times each translation block (a
   straight run of code ending at a branch: a loop body, mostly) executed in one call, the
   difference of --reps 3 and --reps 1 halved so that set-up is not counted; a block that runs
   straight into the next (qemu cuts at page boundaries and jump targets too) is joined to it
   again (joined()).
2. Each block's code, read from the static binary, goes through llvm-mca (Debian's llvm-19) for
   every core model: its cycles per iteration in a steady loop, the resource under the most
   pressure, and its port bound (pipe_bound(), and independent() on the in-order cores).
3. Cycles per call = the sum over blocks of executions x cycles per iteration; per weight for
   decode (m = 1) and per weight and row for prefill (m rows).

A block that is not a loop is counted as if it were one (its code repeated back to back); the
hot blocks of these kernels are loop bodies. Branch prediction, caches and memory are not
modelled: these are core-bound figures, as if the weights streamed from L1. SVE kernels are
profiled at the vector length of each core (128, 256 or 512 bits). The result is a markdown
table on stdout or in -o FILE; any step that fails (qemu, llvm-mc, llvm-mca, a kernel that cannot
run) is an error, so CI fails rather than printing a partial table.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# The core models: the column, LLVM's -mcpu, the features the core has (as kernel_insn --list
# names them), its SVE vector length (0: no SVE), and why that model when it is not the core's own.
CORES = [
    ("Cortex-A55", "cortex-a55", {"asimd", "fp16", "dotprod"}, 0, ""),
    ("Cortex-A510", "cortex-a510", {"asimd", "fp16", "dotprod", "i8mm", "bf16", "sve", "sve2", "svei8mm"}, 128, ""),
    ("Cortex-A76/A78", "neoverse-n1", {"asimd", "fp16", "dotprod"}, 0,
     "LLVM 19 gives cortex-a76 and cortex-a78 the Cortex-A57 model; Neoverse N1 is the A76's server twin"),
    ("Cortex-X2", "neoverse-v2", {"asimd", "fp16", "dotprod", "i8mm", "bf16", "sve", "sve2", "svei8mm"}, 128,
     "LLVM 19 gives cortex-x2 the Neoverse N2 model (2 vector pipes); Neoverse V2 has the X-series' 4 x 128-bit"),
    ("Neoverse N2", "neoverse-n2", {"asimd", "fp16", "dotprod", "i8mm", "bf16", "sve", "sve2", "svei8mm"}, 128, ""),
    ("Neoverse V1", "neoverse-v1", {"asimd", "fp16", "dotprod", "i8mm", "bf16", "sve", "svei8mm"}, 256, ""),
    ("A64FX", "a64fx", {"asimd", "fp16", "sve"}, 512, ""),
]

# The shapes: decode one row against 1024 x 4096 weights, prefill 32 rows against 256 x 4096.
DECODE = (1, 1024, 4096)
PREFILL = (32, 256, 4096)
# The in-order cores: their port bound also counts their issue rules (independent() below).
IN_ORDER = {"cortex-a55", "cortex-a510"}
ITERATIONS = 100  # llvm-mca iterations per block: 50 and 200 differ by about 1% (the pipeline's fill)


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"cycle_table: {' '.join(cmd[:6])} ... failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return result.stdout


class Elf:
    """The loadable segments of a static aarch64 executable: code bytes by virtual address."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        if self.data[:4] != b"\x7fELF" or self.data[4] != 2:
            sys.exit(f"cycle_table: {path} is not a 64-bit ELF file")
        phoff, = struct.unpack_from("<Q", self.data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", self.data, 0x36)
        self.segments = []
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", self.data, phoff + i * phentsize)
            if p_type == 1:  # PT_LOAD
                self.segments.append((p_vaddr, p_filesz, p_offset))

    def words(self, vaddr, count):
        for start, size, offset in self.segments:
            if start <= vaddr and vaddr + 4 * count <= start + size:
                at = offset + vaddr - start
                return self.data[at:at + 4 * count]
        sys.exit(f"cycle_table: address {vaddr:#x} is outside the binary's segments (a dynamic binary?)")


def list_kernels(qemu, kernel_insn):
    kernels = []
    for line in run([qemu, "-cpu", "max", kernel_insn, "--list"]).splitlines():
        name, tier, *features = line.split()
        if tier not in ("ref", "sme"):  # no LLVM model of these cores has SME
            kernels.append((name, tier, set(features)))
    return kernels


def block_counts(qemu, cpu, plugin, argv, out):
    """{block address: (instructions, executions)} of one run of argv under qemu -cpu cpu."""
    run([qemu, "-cpu", cpu, "-plugin", f"{plugin},out={out}", *argv])
    blocks = {}
    with open(out) as f:
        for line in f:
            addr, insns, size = line.split()
            old = blocks.get(int(addr, 16), (int(size), 0))
            blocks[int(addr, 16)] = (int(size), old[1] + int(insns) // int(size))
    return blocks


def difference(more, less, divisor):
    """The executions of `more` beyond `less`, divided: the blocks of what one run did more."""
    per_unit = {}
    for addr, (size, execs) in more.items():
        diff = execs - less.get(addr, (size, 0))[1]
        if diff > 0:
            per_unit[addr] = (size, diff / divisor)
    return per_unit


def is_branch(word):
    """An AArch64 branch instruction word: B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, BR/BLR/RET."""
    return ((word & 0x7C000000) == 0x14000000 or (word & 0xFF000010) == 0x54000000 or
            (word & 0x7E000000) in (0x34000000, 0x36000000) or (word & 0xFE000000) == 0xD6000000)


def joined(blocks, elf):
    """The blocks joined to the block they run straight into. qemu ends a block at a branch, but also
    at a page boundary, or where another path jumped in before: a loop body came out as two or three
    blocks (the Q4_0 dotprod decode loop crossing a page, the Q4_K i8mm one a jump target), each sent
    to llvm-mca as a loop of its own (on Neoverse V2 the Q4_0 loop read 1.40x its port bound instead
    of 1.02x), and which loops were cut changed whenever code moved. A block that does not end in a
    branch takes along the block after it, for as many executions as it had; what the block after
    it ran beyond those stays on its own (entered from elsewhere)."""
    out = dict(blocks)
    ending_at = {}
    for addr, (size, _) in blocks.items():
        ending_at.setdefault(addr + 4 * size, []).append(addr)
    # From the end: a block that ends where one starts has not been joined yet when that one is.
    for start in sorted(blocks, reverse=True):
        if start not in ending_at or is_branch(struct.unpack("<I", elf.words(start - 4, 1))[0]):
            continue  # nothing ends here, or what ends here ends in a branch
        size_b, execs_b = out[start]
        for addr in ending_at[start]:
            size, execs = out[addr]
            # A block that runs on into this one runs it at least as often: where it does not (a
            # block that ends for another reason, a trap), the two are left apart.
            if execs <= execs_b * (1 + 1e-9):
                out[addr] = (size + size_b, execs)
                execs_b -= execs
        if execs_b <= 1e-9 * max(out[start][1], 1):
            del out[start]
        else:
            out[start] = (size_b, execs_b)
    return out


def profile(qemu, cpu, kernel_insn, plugin, call, workdir, elf):
    """{block address: (instructions, executions per call)} of one call (kernel_insn's arguments)."""
    once, three = (block_counts(qemu, cpu, plugin, [kernel_insn, *call, "--reps", str(reps)],
                                os.path.join(workdir, f"blocks-{reps}.txt")) for reps in (1, 3))
    return joined(difference(three, once, 2), elf)


def hot(blocks, share=0.995):
    """The blocks that execute `share` of the instructions, most first."""
    ranked = sorted(blocks.items(), key=lambda kv: -kv[1][0] * kv[1][1])
    total = sum(size * execs for _, (size, execs) in ranked)
    kept, running = [], 0.0
    for addr, (size, execs) in ranked:
        kept.append((addr, size, execs))
        running += size * execs
        if running >= share * total:
            break
    return kept, total


def disassemble(llvm_mc, elf, blocks):
    """The assembly text of each block, in llvm-mc's syntax (what llvm-mca reads)."""
    code = b"".join(elf.words(addr, size) for addr, size, _ in blocks)
    text = " ".join(f"0x{b:02x}" for b in code)
    out = run([llvm_mc, "--disassemble", "-triple=aarch64", "-mattr=+all"], input=text)
    lines = [line.strip() for line in out.splitlines() if line.strip() and not line.strip().startswith(".text")]
    if len(lines) != len(code) // 4:
        sys.exit(f"cycle_table: llvm-mc gave {len(lines)} instructions for {len(code) // 4} words")
    result, at = [], 0
    for _, size, _ in blocks:
        result.append(lines[at:at + size])
        at += size
    return result


def block_sums(kept, per_block):
    """Cycles and port-bound cycles of the kept blocks' executions, from mca()'s figures."""
    cycles = sum(execs * c for (_, _, execs), (c, _, _, _) in zip(kept, per_block))
    bound = sum(execs * b for (_, _, execs), (_, _, _, b) in zip(kept, per_block))
    return cycles, bound


def build_plugin(workdir):
    """bench/insn_profile/insnprofile.c built into workdir with cc: the .so's path."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "insn_profile", "insnprofile.c")
    plugin = os.path.join(workdir, "libinsnprofile.so")
    run(["cc", "-O2", "-shared", "-fPIC", "-o", plugin, source])
    return plugin


RESOURCE_RE = re.compile(r"^\[(\d+(?:\.\d+)?)\]\s+-\s+(\S+)")


def mca_source(asm_blocks):
    """llvm-mca's input: one code region per block."""
    source = []
    for i, block in enumerate(asm_blocks):
        # A block that qemu ended at a page boundary may end in a MOVPRFX, which the assembler
        # refuses before any instruction but the one it prefixes: it is left out (one cheap
        # instruction, of a block that is not a whole loop body anyway).
        if block and block[-1].startswith("movprfx"):
            block = block[:-1] or ["nop"]
        source.append(f"# LLVM-MCA-BEGIN b{i}")
        source.extend(block)
        source.append("# LLVM-MCA-END")
    return "\n".join(source) + "\n"


def regions(out, count, mcpu):
    """llvm-mca's report split into its code regions, one per block."""
    found = [r for r in re.split(r"\n(?=\[\d+\] Code Region - )", out) if "Code Region" in r]
    if len(found) != count:
        sys.exit(f"cycle_table: llvm-mca -mcpu={mcpu} reported {len(found)} regions for {count} blocks")
    return found


def resource_names(region):
    names = {}
    for line in region.split("Resources:")[1].split("\n\n")[0].splitlines()[1:]:
        r = RESOURCE_RE.match(line.strip())
        if r:
            names[r.group(1)] = r.group(2)
    return names


def pipe_bound(table_region):
    """The fewest cycles per iteration in which the core's pipes can take a block's work, from
    llvm-mca's instruction table (each instruction's cycles spread evenly over the pipes it may use).

    llvm-mca's own "Block RThroughput" undercounts: it divides the work of a group of pipes (the
    Neoverse V2's vector pipes V0-V3) by the group's size but leaves out the work of the group's
    subsets (shifts go to V1/V3 only, FCVTL to V0/V2). For the dotprod Q4_0 decode loop on V2 it
    gives 4.3 cycles though the loop issues 23 vector micro-ops on 4 pipes: 5.75 at the least.

    Here an instruction's work is read as layers: the pipes at its smallest share take that share
    each (work that may go to any of them), those above it the rest, and so on. This can only
    loosen a real constraint (an instruction that uses two kinds of pipe at once is read as one
    that may use either), so the result stays a lower bound. The bound is then the largest, over
    every union U of the instructions' pipe sets, of the work that must go to U over U's size
    (with fractional issue, that is exactly what the pipes allow)."""
    lines = table_region.split("Resource pressure by instruction:")[1].strip().splitlines()
    header = re.findall(r"\[(\d+(?:\.\d+)?)\]", lines[0])
    work = {}
    for line in lines[1:]:
        values = line.split()[:len(header)]
        if len(values) < len(header) or not all(re.fullmatch(r"-|[\d.]+", v) for v in values):
            break
        shares = {key: float(v) for key, v in zip(header, values) if v != "-"}
        while shares:
            pipes = frozenset(shares)
            least = min(shares.values())
            work[pipes] = work.get(pipes, 0.0) + least * len(pipes)
            shares = {key: v - least for key, v in shares.items() if v - least > 1e-9}
    unions = set(work)
    while True:
        grown = {a | b for a in unions for b in work} - unions
        if not grown:
            break
        unions |= grown
    return max((sum(w for pipes, w in work.items() if pipes <= u) / len(u) for u in unions), default=0.0)


VECTOR_REG_RE = re.compile(r"\b([vqdshbz])(\d+)\b")
STORE_RE = re.compile(r"^(st|stp|stur|str)")


def independent(block):
    """The block with no instruction waiting on another's vector result: each one writes registers of
    its own (a rotating set) and reads registers that nothing writes. An in-order core runs that as
    fast as its issue rules allow (which pairs of instructions it can issue in one cycle), with no
    wait on a result: its issue bound, which the pipes' work alone does not show (LLVM's Cortex-A55
    model issues an SDOT, AND or FADD on Q registers alone in its cycle, even beside a load)."""
    out, fresh = [], 0
    for line in block:
        op, _, operands = line.partition("\t") if "\t" in line else line.partition(" ")
        if op == "movprfx":  # it must name the next instruction's registers: left out (one cheap instruction)
            continue
        if not operands or op in ("b", "br", "bl", "blr", "ret") or op.startswith(("b.", "cbz", "cbnz", "tbz", "tbnz")):
            out.append(line)
            continue
        regs = VECTOR_REG_RE.findall(operands)
        # The first register is the result (for stores, a source); a source that names it too is the
        # same register (SDOT's accumulator, SVE's tied operands) and is given the same new name.
        dest = regs[0][1] if regs and not STORE_RE.match(op) else None
        if dest is not None:
            fresh += 1

        def vector(m):
            indexed = m.group(1) == "z" and re.match(r"\.\w\[", m.string[m.end():])
            if m.group(2) == dest and not indexed:  # SVE's indexed operand must be z0-z7: a source
                return f"{m.group(1)}{4 + fresh % 24}"
            return f"{m.group(1)}{int(m.group(2)) % 4}"

        # Vector registers v4-v27 take the results in turn and v0-v3 are only read (indexed forms
        # need low ones); the general registers (addresses, counters: single-cycle updates) stay.
        if op.startswith("ld"):  # every register before the address is loaded (lists stay consecutive)
            head, bracket, tail = operands.partition("[")
            names = VECTOR_REG_RE.findall(head)
            start = fresh + 1 if (fresh + 1) % 24 + len(names) <= 24 else 24 * ((fresh + 1) // 24 + 1)
            fresh = start + len(names) - 1
            regs = iter(range(start, start + len(names)))
            operands = VECTOR_REG_RE.sub(lambda m: f"{m.group(1)}{4 + next(regs) % 24}", head) + bracket + tail
        elif STORE_RE.match(op) and "{" in operands:  # a stored list: read-only registers, consecutive
            head, bracket, tail = operands.partition("[")
            regs = iter(range(4))
            operands = VECTOR_REG_RE.sub(lambda m: f"{m.group(1)}{next(regs)}", head) + bracket + tail
        else:
            operands = VECTOR_REG_RE.sub(vector, operands)
        out.append(f"{op}\t{operands}")
    return out


def mca(llvm_mca, mcpu, asm_blocks):
    """Per block: (cycles per iteration, the resource under most pressure, its cycles per iteration,
    the port bound: the cycles per iteration the block's micro-ops need on the core's pipes and
    its dispatch width, with no wait on any result)."""
    source = mca_source(asm_blocks)
    common = [llvm_mca, "-mtriple=aarch64", f"-mcpu={mcpu}", "-mattr=+all"]
    out = run([*common, f"-iterations={ITERATIONS}", "-resource-pressure", "-instruction-info=0", "-dispatch-stats=0"],
              input=source)
    tables = regions(run([*common, "--instruction-tables"], input=source), len(asm_blocks), mcpu)
    issue = [0.0] * len(asm_blocks)
    if mcpu in IN_ORDER:
        free_source = mca_source([independent(b) for b in asm_blocks])
        free = regions(run([*common, f"-iterations={ITERATIONS}"], input=free_source), len(asm_blocks), mcpu)
        issue = [int(re.search(r"Total Cycles:\s+(\d+)", r).group(1)) / ITERATIONS for r in free]
    results = []
    for region, table_region, issue_bound in zip(regions(out, len(asm_blocks), mcpu), tables, issue):
        cycles = int(re.search(r"Total Cycles:\s+(\d+)", region).group(1)) / ITERATIONS
        uops = int(re.search(r"Total uOps:\s+(\d+)", region).group(1)) / ITERATIONS
        width = int(re.search(r"Dispatch Width:\s+(\d+)", region).group(1))
        llvm_bound = float(re.search(r"Block RThroughput:\s+([\d.]+)", region).group(1))
        bound = max(llvm_bound, uops / width, pipe_bound(table_region), issue_bound)
        names = resource_names(region)
        pressure_part = region.split("Resource pressure per iteration:")[1].strip().splitlines()
        header = re.findall(r"\[(\d+(?:\.\d+)?)\]", pressure_part[0])
        values = pressure_part[1].split()
        best, best_value = "", 0.0
        for key, value in zip(header, values):
            v = 0.0 if value == "-" else float(value)
            if v > best_value:
                best, best_value = names.get(key, key), v
        results.append((cycles, best, best_value, bound))
    return results


class Job:
    """One row of a table: kernel_insn's arguments for one call, the units the call does (weights
    x rows, state values, ...), the CPU features it needs, and whether its code depends on the SVE
    vector length (an sve kernel; the row operations, which have fixed-length SVE variants)."""

    def __init__(self, label, call, units, features, by_vector_length):
        self.label, self.call, self.units = label, call, units
        self.features, self.by_vector_length = features, by_vector_length


def analyse(args, elf, job, cpu_for_vl):
    """{core column: (cycles per unit, cycles over the port bound, bottleneck)} and instructions per unit."""
    cells, insns_per_unit = {}, None
    profiles = {}
    for column, mcpu, core_features, sve_bits, _ in CORES:
        if not job.features <= core_features:
            continue
        vl = (sve_bits or 128) if job.by_vector_length else 128
        if vl not in profiles:
            with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
                blocks = profile(args.qemu, cpu_for_vl[vl], args.kernel_insn, args.plugin, job.call, workdir, elf)
            kept, total = hot(blocks)
            profiles[vl] = (kept, total, disassemble(args.llvm_mc, elf, kept))
        kept, total, asm = profiles[vl]
        if insns_per_unit is None or vl == 128:
            insns_per_unit = total / job.units
        per_block = mca(args.llvm_mca, mcpu, asm)
        cycles, bound = block_sums(kept, per_block)
        # The bottleneck: the heaviest block's busiest resource when it is busy most of the
        # block's cycles, else the block waits on latency (a dependency chain, or on the
        # in-order cores the order of issue).
        heaviest = max(range(len(kept)), key=lambda i: kept[i][2] * per_block[i][0])
        c, resource, busy, _ = per_block[heaviest]
        limit = resource if busy >= 0.8 * c else "latency"
        cells[column] = (cycles / job.units, cycles / bound, limit)
    return cells, insns_per_unit


# The row operations of the forward pass: (label, kernel_insn arguments, units per call).
ROW_OPS = [
    ("attention scores q.k, F32 rows (1 query x 1024 keys x 128), per multiply-add",
     ["--kernel", "op:dot_rows", "--m", "1", "--n", "1024", "--k", "128"], 1024 * 128),
    ("attention scores q.k, F16 cache rows, per multiply-add",
     ["--kernel", "op:dot_rows_f16", "--m", "1", "--n", "1024", "--k", "128"], 1024 * 128),
    ("attention sum of values, F16 cache rows (1 x 1024 x 128), per multiply-add",
     ["--kernel", "op:weighted_rows_f16", "--m", "1", "--n", "1024", "--k", "128"], 1024 * 128),
    ("softmax, 1024 values, per value", ["--kernel", "op:softmax", "--k", "1024"], 1024),
    ("SwiGLU, 8192 values, per value", ["--kernel", "op:silu_mul", "--k", "8192"], 8192),
    ("RMSNorm, 4096 values, per value", ["--kernel", "op:rmsnorm", "--k", "4096"], 4096),
    ("LFM2 short convolution, 1 token, 2048 channels, per channel",
     ["--kernel", "op:shortconv", "--m", "1", "--n", "3", "--k", "2048"], 2048),
    ("DeltaNet convolution, 1 token, 6144 channels, per channel",
     ["--kernel", "op:delta_net_conv", "--m", "1", "--n", "4", "--k", "6144"], 6144),
    ("delta rule, 1 token, 128 x 128 state, per state value",
     ["--kernel", "op:delta_rule", "--m", "1", "--k", "128"], 128 * 128),
    ("delta rule, chunk of 64 tokens, per state value and token",
     ["--kernel", "op:delta_rule", "--m", "64", "--k", "128"], 64 * 128 * 128),
]


HEADER = """# The ARM kernels in cycles, on LLVM's models of phone and server cores

Generated by `python3 bench/cycles/cycle_table.py --kernel-insn build/aarch64/bin/kernel_insn -o docs/cycles.md`
(the aarch64 tree of `scripts/test.sh`; the `cycle_table` test runs the same in CI and warns when this file is out
of date). Each kernel runs once under qemu-aarch64 with a block profiler; every hot block of its code goes through
`llvm-mca` (LLVM 19) for each core model. A cell is the cycles per weight (decode), per weight and row (prefill) or
per unit (row operations), then in brackets those cycles over the port bound (what the core's issue ports alone
allow: 1.00x is as fast as the loop can go on that core without fewer instructions; the pipes' work from llvm-mca's
instruction table, spread as well as the pipes each instruction may use allow, and on the in-order A55 and A510 also
the cycles the instructions take in their order with no wait on a result, which counts their rules of dual issue),
then what limits it: the resource of the heaviest block when it is busy 80% of that block's cycles or more, else
`latency` (the block waits on results; on the in-order A55 and A510, also on the order of issue). `insns` is the
instructions per unit under qemu. `-`: the core lacks a feature the kernel needs. Caches, memory and branch
prediction are not modelled: the weights are as if in L1."""


def table(rows, title, what="kernel"):
    lines = [f"**{title}**", "", f"| {what} | insns | " + " | ".join(c[0] for c in CORES) + " |",
             "|---|---:|" + "---:|" * len(CORES)]
    for name, insns, cells in rows:
        row = [name, f"{insns:.3f}"]
        for column, *_ in CORES:
            if column in cells:
                cycles, over_bound, limit = cells[column]
                row.append(f"{cycles:.3f} ({over_bound:.2f}x) {limit}")
            else:
                row.append("-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel-insn", required=True, help="the static aarch64 kernel_insn")
    parser.add_argument("--plugin", default=None,
                        help="a built bench/insn_profile/insnprofile.c (default: built here with cc)")
    parser.add_argument("--qemu", default="qemu-aarch64")
    parser.add_argument("--llvm-mc", default="/usr/lib/llvm-19/bin/llvm-mc")
    parser.add_argument("--llvm-mca", default="/usr/lib/llvm-19/bin/llvm-mca")
    parser.add_argument("--only", default="", help="kernels whose name matches this regular expression")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--json", default=None, help="also the figures as JSON, for bench/cycles/estimate.py")
    parser.add_argument("--compare", default=None,
                        help="a table written before (docs/cycles.md): name the cells that moved by more than 5%%")
    args = parser.parse_args()
    for tool in (args.qemu, args.llvm_mc, args.llvm_mca, "cc"):
        if shutil.which(tool) is None:
            sys.exit(f"cycle_table: {tool} not found (scripts/setup.sh installs qemu-user and llvm-19)")
    elf = Elf(args.kernel_insn)
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
    scratch = tempfile.TemporaryDirectory(dir=args.workdir)
    args.workdir = scratch.name
    if args.plugin is None:
        args.plugin = build_plugin(args.workdir)
    cpu_for_vl = {vl: f"max,sve-default-vector-length={vl // 8}" for vl in (128, 256, 512)}
    kernels = [k for k in list_kernels(args.qemu, args.kernel_insn) if re.search(args.only, k[0])]
    jobs = []
    for name, tier, features in kernels:
        for shape in (DECODE, PREFILL):
            m, n, k = shape
            jobs.append(Job(f"`{name}`", ["--kernel", name, "--m", str(m), "--n", str(n), "--k", str(k)], m * n * k,
                            features, "sve" in features))
    row_jobs = [Job(label, call, units, {"asimd"}, True) for label, call, units in ROW_OPS if re.search(args.only, call[1])]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda job: analyse(args, elf, job, cpu_for_vl), jobs + row_jobs))
    rows = [(job.label, insns, cells) for job, (cells, insns) in zip(jobs + row_jobs, results)]
    decode, prefill, ops = rows[0:len(jobs):2], rows[1:len(jobs):2], rows[len(jobs):]
    notes = "\n".join(f"- {c[0]}: LLVM's `{c[1]}` model. {c[4]}".rstrip() for c in CORES)
    text = (HEADER + "\n\n" +
            table(decode, f"Decode: cycles per weight, m = {DECODE[0]}, n = {DECODE[1]}, k = {DECODE[2]}") + "\n" +
            table(prefill, f"Prefill: cycles per weight and row, m = {PREFILL[0]}, n = {PREFILL[1]}, k = {PREFILL[2]}") +
            "\n" + table(ops, "Row operations (the instruction set each core's vector length chooses)", "operation") +
            "\nThe core models:\n\n" + notes + "\n")
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    if args.json:
        figures = {part: {label.strip("`"): {"insns": insns, **{c: cells[c][0] for c in cells}} for label, insns, cells in rows}
                   for part, rows in (("decode", decode), ("prefill", prefill), ("ops", ops))}
        with open(args.json, "w") as f:
            json.dump({"cores": [{"column": c[0], "llvm_model": c[1], "sve_bits": c[3]} for c in CORES], **figures}, f,
                      indent=1)
    if args.compare:
        compare(args.compare, text, partial=bool(args.only))


CELL_RE = re.compile(r"^([\d.]+) \(")


def cells_of(text):
    """{(table title, row label, column): cycles} of a table this tool wrote."""
    found, title, columns = {}, "", []
    for line in text.splitlines():
        if line.startswith("**"):
            title = line
        elif line.startswith("| ") and not line.startswith("|---"):
            parts = [p.strip() for p in line.strip("|").split("|")]
            if parts[1] == "insns":
                columns = parts
                continue
            for column, cell in zip(columns[2:], parts[2:]):
                m = CELL_RE.match(cell)
                if m:
                    found[(title, parts[0], column)] = float(m.group(1))
    return found


def compare(path, text, partial):
    """Prints the cells that moved by more than 5% against the table at path (a warning: block
    boundaries can move with code addresses, so a guard on exact figures would be fragile)."""
    if not os.path.exists(path):
        print(f"cycle_table: {path} not found: nothing to compare with")
        return
    with open(path) as f:
        old = cells_of(f.read())
    new = cells_of(text)
    moved = [(key, old[key], new[key]) for key in sorted(set(old) & set(new))
             if abs(new[key] - old[key]) > 0.05 * max(old[key], 1e-9)]
    gone = [] if partial else sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    for (title, label, column), was, now in moved:
        print(f"cycle_table: WARNING: {label} on {column}: {was:.3f} -> {now:.3f} cycles ({title.strip('*')})")
    for key in gone:
        print(f"cycle_table: WARNING: {key[1]} on {key[2]}: gone")
    for key in added:
        print(f"cycle_table: WARNING: {key[1]} on {key[2]}: new")
    if moved or gone or added:
        print(f"cycle_table: {path} is out of date: regenerate it (docs/cycles.md says how)")
    else:
        print(f"cycle_table: {path} agrees within 5% ({len(new)} cells)")


if __name__ == "__main__":
    main()
