#!/usr/bin/env python3
"""Orders the instructions of a hand-written loop for an in-order core, by llvm-mca's model of it.

    order_search.py LISTING [--cpu cortex-a55] [--steps 3000] [--seed 1]   # improves LISTING in place
    order_search.py LISTING --schedule 4 --steps 0 --cpu cortex-a510        # list scheduling first
    order_search.py LISTING --emit                                          # the C++ asm strings

An in-order core (Cortex-A53/A55/A510/A520) issues instructions in the order written and waits on any
result that is not ready, so a loop's order is its speed there. LISTING is one iteration of a software
pipelined loop in llvm-mc syntax: the lines ending in `// tail` finish the previous iteration's blocks
(their registers come from it), the others start this iteration's; the last line is the loop's branch.
The search moves one instruction at a time to a place where every register still carries the value it
carried before (reads after their writes, writes after the reads of the old value), and keeps the order
when llvm-mca's cycles per iteration do not grow (a little annealing lets it leave a local minimum).
A search from a poor order stays near it; --schedule first rebuilds the order by list scheduling (each
next instruction the one the model starts earliest) and then gives every value the register free the
longest (rename()), which frees the next round from the old order's reuse of registers: the i8mm Q4_K
loop went from GCC's order at 341 cycles an iteration on the Cortex-A510 model to 135 in 4 rounds,
where the moves alone stopped at 178.

--emit prints the loop as the lines of a GCC asm statement: the tail's registers cleared, the loop (the
tail of the previous pair, the head of the next), then the last tail. x1 is the weights' pointer (operand
w), x0 the activations' (x), x11 their end (end), v28 the float accumulator (acc); x9 is free for an
address. The kernels that use it: kernels/arm/dotprod/matmul_q4_0.cpp, matmul_q8_0.cpp and
matmul_q4_k_q5_k.cpp (Cortex-A55), kernels/arm/i8mm/matmul_q4_0.cpp, matmul_q8_0.cpp,
matmul_q4_k_q5_k.cpp and matmul_q6_k.cpp (--cpu cortex-a510); their listings are in
bench/cycles/in_order/.
"""
import argparse
import math
import random
import re
import subprocess
import sys

LLVM_MCA = "/usr/lib/llvm-19/bin/llvm-mca"
REG_RE = re.compile(r"\b([vqdsx])(\d+)\b")
ACCUMULATES = ("sdot", "udot", "ssra", "usra", "mla", "mls", "fmla", "fmls", "smmla", "smlal", "smlal2", "sli", "sri",
               "bit", "bif", "bsl")


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
    if op.startswith("ld") and "{" in operands:  # LD1-LD4 and their R forms: every register of the list
        listed, address = operands.split("}", 1)
        first, *last = re.findall(r"v(\d+)", listed)
        written = [f"v{(int(first) + i) % 32}" for i in range(1 + (int(last[-1]) - int(first)) % 32 if " - " in listed
                                                          else 1 + len(last))]
        return written, ["x" + num for kind, num in REG_RE.findall(address) if kind == "x"]
    written, read = names[:2 if op == "ldp" else 1], names[2 if op == "ldp" else 1:]
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


def issue_cycle(lines, cpu):
    """The cycle in which llvm-mca's model starts the last of `lines` (one pass, from an idle core)."""
    out = subprocess.run([LLVM_MCA, "-mtriple=aarch64", f"-mcpu={cpu}", "-iterations=1", "-timeline",
                          "-timeline-max-cycles=4000", "-instruction-info=0", "-resource-pressure=0"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout
    row = [line for line in out.splitlines() if line.startswith(f"[0,{len(lines) - 1}]")][0]
    start = re.search(r"[eE]", row[row.index("]") + 1:])
    return start.start() if start else 10**9


def list_schedule(lines, cpu, width=8):
    """The listing in the order a list scheduler gives: of the instructions whose predecessors are
    placed, the `width` with the longest latency path to the end are tried, and the one llvm-mca starts
    earliest after those placed goes next (ties: the longer path)."""
    body, branch = lines[:-1], lines[-1]
    n = len(body)
    preds, succs = [set() for _ in range(n)], [set() for _ in range(n)]
    for i, j in constraints(body):
        preds[j].add(i)
        succs[i].add(j)
    table = subprocess.run([LLVM_MCA, "-mtriple=aarch64", f"-mcpu={cpu}", "--instruction-tables"],
                           input="\n".join(ins for ins, _ in body) + "\n", capture_output=True, text=True,
                           check=True).stdout
    latency = [int(m.group(1)) for m in re.finditer(r"^\s*\d+\s+(\d+)\s+[\d.]+", table.split("Instructions:")[1],
                                                     re.MULTILINE)][:n]
    path = [0] * n
    for i in reversed(range(n)):
        path[i] = latency[i] + max((path[j] for j in succs[i]), default=0)
    order, placed = [], set()
    while len(order) < n:
        ready = sorted((j for j in range(n) if j not in placed and preds[j] <= placed), key=lambda j: -path[j])
        best = min(ready[:width], key=lambda j: (issue_cycle([body[i][0] for i in order + [j]], cpu), -path[j], j))
        order.append(best)
        placed.add(best)
    return [body[i] for i in order] + [branch]


def rename(lines):
    """The listing with each vector value in the register that has been free the longest, so that no
    two values share a register by chance and the next scheduling has room; a copy (MOV) whose source
    is read no more is dropped. A value read before it is written comes from the previous iteration
    (the tail's inputs, the sum): it keeps a register from its write in the head to its last read in
    the next iteration's tail. v28 (the sum) stays v28, the registers of a list (LD2) stay theirs
    (they must be consecutive), and the by-element operand of a .h form stays in v0-v15 (the
    encoding has 4 bits for it)."""
    body, branch = lines[:-1], lines[-1]
    n = len(body)
    values, current, ops = [], {}, []  # value: {"defs", "uses", "top"}; current: register -> value

    def new_value():
        values.append({"defs": [], "uses": [], "top": [], "low": False})
        return len(values) - 1

    for pos, (ins, _) in enumerate(body):
        written, read = (
            [r for r in regs if r.startswith("v")] for regs in registers(ins))
        low = {"v" + m for m in re.findall(r"\bv(\d+)\.h\[", ins)}
        uses = {}
        for r in read:
            if r not in current:
                current[r] = new_value()
                values[current[r]]["top"].append(-1)
            v = current[r]
            values[v]["uses"].append(pos)
            uses[r] = v
        defs = {}
        op = ins.split()[0]
        for r in written:
            if op not in ACCUMULATES or r not in current:
                current[r] = new_value()
            defs[r] = current[r]
            values[current[r]]["defs"].append(pos)
        for r in low:
            values[(uses | defs)[r]]["low"] = True
        if "{" in ins and len(written) > 1:
            for r, v in defs.items():
                values[v]["listed"] = r
        ops.append((ins, written, uses, defs))
    # A value read at the top continues the value its register holds at the bottom: one root.
    parent = list(range(len(values)))

    def root(v):
        while parent[v] != v:
            v = parent[v]
        return v

    fixed = {}
    for pos, (ins, written, uses, defs) in enumerate(ops):
        for r, v in uses.items():
            if values[v]["top"] and not values[v]["defs"]:
                bottom = current[r]
                if bottom != v:
                    parent[root(v)] = root(bottom)
                else:
                    fixed[root(v)] = r  # read and never written: a register set before the loop
    if "v28" in current:  # the sum: the asm statement's operand
        fixed[root(current["v28"])] = "v28"
    # A copy whose source is read no more: dropped, its value kept in the source's register.
    dropped = set()
    for pos, (ins, written, uses, defs) in enumerate(ops):
        m = re.fullmatch(r"mov v(\d+)\.16b, v(\d+)\.16b", ins)
        if m:
            source = uses[f"v{m.group(2)}"]
            if max(values[source]["uses"]) == pos and values[source]["defs"] and not values[source]["top"]:
                parent[root(defs[f"v{m.group(1)}"])] = root(source)
                dropped.add(pos)
    whole = dict(fixed)  # registers kept through the whole loop
    for v, value in enumerate(values):
        if "listed" in value:
            fixed[root(v)] = value["listed"]
    spans, low = {}, set()
    for v, value in enumerate(values):
        s = spans.setdefault(root(v), {"defs": [], "uses": [], "top": []})
        s["defs"] += value["defs"]
        (s["top"] if value["top"] else s["uses"]).extend(value["uses"])
        if value["low"]:
            low.add(root(v))
    intervals = {}
    for v, s in spans.items():
        if v in whole:
            continue
        first = min(s["defs"])
        if s["top"]:  # carried: from its write to the end, and at the top to the tail's last read
            intervals[v] = [(-1, max(s["top"])), (first, n + 1)]
        else:
            intervals[v] = [(first, max(s["uses"]) if s["uses"] else first + 0.5)]
    busy = {f"v{i}": [] for i in range(32) if f"v{i}" not in whole.values()}
    for v, r in fixed.items():
        if v not in whole:
            busy[r] += intervals.pop(v)

    def overlaps(r, pieces, strict):
        return any((c <= b and a <= d) if strict else (c < b and a < d) for a, b in busy[r] for c, d in pieces)

    assign = dict(fixed)
    for v in sorted(intervals, key=lambda v: (-len(intervals[v]), intervals[v][-1][0])):
        pieces = intervals[v]
        pool = [r for r in busy if v not in low or int(r[1:]) < 16]
        free = [r for r in pool if not overlaps(r, pieces, True)] or [r for r in pool if not overlaps(r, pieces, False)]
        if not free:
            raise ValueError(f"rename: no free vector register for the value written at line {pieces[-1][0] + 1}")
        r = min(free, key=lambda r: max((b for a, b in busy[r] if b <= pieces[-1][0]), default=-2))
        assign[v] = r
        busy[r] += pieces
    out = []
    for pos, ((ins, written, uses, defs), (_, tail)) in enumerate(zip(ops, body)):
        if pos in dropped:
            continue
        op, _, operands = ins.partition(" ")
        if "{" in operands and len(written) > 1:  # a list keeps its registers
            out.append((ins, tail))
            continue
        names = iter([root(defs[f"v{num}"]) if k < len(written) else root(uses[f"v{num}"])
                      for k, (kind, num) in enumerate(m for m in REG_RE.findall(operands) if m[0] != "x")])
        operands = REG_RE.sub(lambda m: m.group(0) if m.group(1) == "x" else m.group(1) + assign[next(names)][1:],
                              operands)
        out.append((f"{op} {operands}", tail))
    return out + [branch]


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
        # An offset that is negative or not a multiple of the register's size has no LDR form: LDUR.
        m = re.match(r"ldr ([qds])\d+, \[x\d+, #(-?\d+)\]", ins)
        if m and (int(m.group(2)) < 0 or int(m.group(2)) % {"q": 16, "d": 8, "s": 4}[m.group(1)]):
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
    parser.add_argument("--schedule", type=int, default=0, metavar="ROUNDS",
                        help="first ROUNDS rounds of list scheduling and renaming (the best order kept)")
    parser.add_argument("--emit", action="store_true", help="print the asm statement's lines and stop")
    args = parser.parse_args()
    lines = parse(args.listing)
    if args.emit:
        print(emit(lines))
        return
    best_lines, best = lines, cycles(lines, args.cpu)
    for round_ in range(args.schedule):
        try:
            lines = rename(list_schedule(lines, args.cpu))
        except ValueError as e:  # the order needs more registers than there are: keep the best so far
            print(f"order_search: schedule round {round_ + 1}: {e}", file=sys.stderr)
            break
        now = cycles(lines, args.cpu)
        print(f"order_search: schedule round {round_ + 1}: {now:.2f}", file=sys.stderr)
        if now < best:
            best_lines, best = lines, now
    ordered, best = search(best_lines, args.cpu, args.steps, args.seed)
    with open(args.listing) as f:
        header = [line for line in f if line.startswith("//") and not line.strip().endswith("tail")]
    with open(args.listing, "w") as f:
        f.writelines(header)
        for ins, tail in ordered:
            f.write(f"{ins}{'  // tail' if tail else ''}\n")
    print(f"order_search: {args.cpu}: {best:.2f} cycles an iteration; {args.listing} rewritten", file=sys.stderr)


if __name__ == "__main__":
    main()
