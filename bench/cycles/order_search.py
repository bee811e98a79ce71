#!/usr/bin/env python3
"""Orders the instructions of a hand-written loop for an in-order core, by llvm-mca's model of it.

    order_search.py LISTING [--cpu cortex-a55] [--steps 3000] [--seed 1]   # improves LISTING in place
    order_search.py LISTING --emit                                          # the C++ asm strings

An in-order core (Cortex-A53/A55/A510/A520) issues instructions in the order written and waits on any
result that is not ready, so a loop's order is its speed there. LISTING is one iteration of a software
pipelined loop in llvm-mc syntax: the lines ending in `// tail` finish the previous iteration's blocks
(their registers come from it), the others start this iteration's; the last line is the loop's branch.
The search moves one instruction at a time to a place where every register still carries the value it
carried before (reads after their writes, writes after the reads of the old value), and keeps the order
when llvm-mca's cycles per iteration do not grow (a little annealing lets it leave a local minimum).

--emit prints the loop as the lines of a GCC asm statement: the tail's registers cleared, the loop (the
tail of the previous pair, the head of the next), then the last tail. x1 is the weights' pointer (operand
w), x0 the activations' (x), x11 their end (end), v28 the float accumulator (acc); x9 is free for an
address. The kernels that use it: kernels/arm/dotprod/matmul_q4_0.cpp, matmul_q8_0.cpp and
matmul_q4_k_q5_k.cpp (Cortex-A55), kernels/arm/i8mm/matmul_q4_0.cpp and matmul_q8_0.cpp (--cpu
cortex-a510); their listings are in bench/cycles/in_order/.
"""
import argparse
import math
import random
import re
import subprocess
import sys

LLVM_MCA = "/usr/lib/llvm-19/bin/llvm-mca"
REG_RE = re.compile(r"\b([vqdsx])(\d+)\b")
ACCUMULATES = ("sdot", "udot", "ssra", "usra", "mla", "fmla", "smmla", "smlal", "smlal2", "sli", "sri")


def parse(path):
    """[(instruction, is_tail)] of a listing."""
    lines = []
    for raw in open(path):
        text, _, comment = raw.partition("//")
        if text.strip():
            lines.append((" ".join(text.split()), comment.strip() == "tail"))
    return lines


def registers(ins):
    """(written, read) register names of an instruction: v0 for q0 / d0 / s0, x1 for x1."""
    op, _, operands = ins.partition(" ")
    names = [("v" if kind in "vqds" else "x") + num for kind, num in REG_RE.findall(operands)]
    if op.startswith(("cmp", "b.")):
        return [], names
    written, read = names[:1], names[1:]
    if op in ACCUMULATES:
        read = read + written
    return written, read


def constraints(lines):
    """(i, j): instruction i must stay before j (j reads what i wrote, or writes what i read or wrote)."""
    must, last_write, readers = set(), {}, {}
    for j, (ins, _) in enumerate(lines):
        written, read = registers(ins)
        for r in read:
            if r in last_write:
                must.add((last_write[r], j))
        for r in written:
            must.update((i, j) for i in readers.get(r, []))
            if r in last_write:
                must.add((last_write[r], j))
        for r in read:
            readers.setdefault(r, []).append(j)
        for r in written:
            last_write[r], readers[r] = j, []
    return must


def cycles(lines, cpu, iterations=60):
    out = subprocess.run([LLVM_MCA, "-mtriple=aarch64", f"-mcpu={cpu}", f"-iterations={iterations}"],
                         input="\n".join(ins for ins, _ in lines) + "\n", capture_output=True, text=True, check=True)
    return int(re.search(r"Total Cycles:\s+(\d+)", out.stdout).group(1)) / iterations


def search(lines, cpu, steps, seed):
    must = constraints(lines)
    body, branch = list(range(len(lines) - 1)), [len(lines) - 1]

    def valid(order):
        at = {v: p for p, v in enumerate(order)}
        return all(at[a] < at[b] for a, b in must if a in at and b in at)

    def score(order):
        return cycles([lines[i] for i in order + branch], cpu)

    rng = random.Random(seed)
    current = best = score(body)
    best_order = body[:]
    print(f"order_search: {cpu}: {best:.2f} cycles an iteration at the start", file=sys.stderr)
    for step in range(steps):
        candidate = body[:]
        candidate.insert(rng.randrange(len(candidate)), candidate.pop(rng.randrange(len(candidate))))
        if not valid(candidate):
            continue
        s = score(candidate)
        temperature = max(0.02, 0.3 * (1 - step / steps))
        if s <= current or rng.random() < math.exp(-(s - current) / temperature):
            body, current = candidate, s
            if s < best:
                best, best_order = s, candidate[:]
                print(f"order_search: step {step}: {best:.2f}", file=sys.stderr)
    return [lines[i] for i in best_order + branch], best


def emit(lines):
    def operands(ins):
        # An offset that is not a multiple of the register's size has no LDR form: LDUR.
        m = re.match(r"ldr ([qds])\d+, \[x\d+, #(\d+)\]", ins)
        if m and int(m.group(2)) % {"q": 16, "d": 8, "s": 4}[m.group(1)]:
            ins = "ldur" + ins[3:]
        ins = re.sub(r"\bx11\b", "%[end]", ins)
        ins = re.sub(r"\bx1\b", "%[w]", ins)
        ins = re.sub(r"\bx0\b", "%[x]", ins)
        return ins.replace("v28.4s", "%[acc].4s")

    loop = [ins for ins, _ in lines[:-1]]
    tail = [ins for ins, is_tail in lines if is_tail]
    # The first iteration's tail finishes a pair of zeros: it adds +0 to the sum, which leaves any
    # sum but -0 as it was (the kernels start from +0), so the loop needs no copy of its head.
    read_by_tail = sorted({r for ins in tail for r in registers(ins)[1] if r.startswith("v") and r != "v28"},
                          key=lambda r: int(r[1:]))
    out = [f"movi d{r[1:]}, #0" for r in read_by_tail] + ["1:"] + loop + ["b.ne 1b"] + tail
    return "\n".join(f'      "{operands(ins)}\\n"' for ins in out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("listing")
    parser.add_argument("--cpu", default="cortex-a55")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--emit", action="store_true", help="print the asm statement's lines and stop")
    args = parser.parse_args()
    lines = parse(args.listing)
    if args.emit:
        print(emit(lines))
        return
    ordered, best = search(lines, args.cpu, args.steps, args.seed)
    with open(args.listing) as f:
        header = [line for line in f if line.startswith("//") and not line.strip().endswith("tail")]
    with open(args.listing, "w") as f:
        f.writelines(header)
        for ins, tail in ordered:
            f.write(f"{ins}{'  // tail' if tail else ''}\n")
    print(f"order_search: {args.cpu}: {best:.2f} cycles an iteration; {args.listing} rewritten", file=sys.stderr)


if __name__ == "__main__":
    main()
