#!/usr/bin/env python3
"""Instructions per function under qemu, from insnprofile.c's block counts.

    insn_profile.py BINARY COUNTS [TOP]                 functions of one run
    insn_profile.py BINARY COUNTS_A COUNTS_B DIVISOR     (B - A) / DIVISOR per function

The second form gives a per-token breakdown from two runs that differ only in
the number of tokens (say a 96- and a 32-token prompt at -n 1, divisor 64).
BINARY must be the static aarch64 binary that ran (its symbols are read with
aarch64-linux-gnu-nm)."""
import bisect
import collections
import subprocess
import sys


def functions(binary):
    out = subprocess.run(["aarch64-linux-gnu-nm", "-C", "--defined-only", "-n", binary],
                         capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    return syms


def per_function(syms, counts_file):
    addrs = [a for a, _ in syms]
    per = collections.Counter()
    with open(counts_file) as f:
        for line in f:
            addr, count = line.split()[:2]
            i = bisect.bisect_right(addrs, int(addr, 16)) - 1
            per[syms[i][1] if i >= 0 else "?"] += int(count)
    return per


def main():
    if len(sys.argv) not in (3, 4, 5):
        sys.exit(__doc__)
    syms = functions(sys.argv[1])
    if len(sys.argv) == 5:
        a, b = per_function(syms, sys.argv[2]), per_function(syms, sys.argv[3])
        divisor = float(sys.argv[4])
        diff = {k: (b[k] - a[k]) / divisor for k in set(a) | set(b)}
        total = sum(diff.values())
        for name, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:30]:
            print(f"{v:14,.0f} {100 * v / total:6.2f}%  {name[:140]}")
        print(f"{total:14,.0f} total per unit")
        return
    per = per_function(syms, sys.argv[2])
    total = sum(per.values())
    for name, c in per.most_common(int(sys.argv[3]) if len(sys.argv) == 4 else 30):
        print(f"{c:14,} {100 * c / total:6.2f}%  {name[:140]}")
    print(f"{total:14,} total")


if __name__ == "__main__":
    main()
