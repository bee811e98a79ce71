#!/usr/bin/env python3
"""Decode speed at a KV depth, one session per KV cache type, alternating in one process.

    PYTHONPATH=build/native/python python3 scripts/kv_depth.py MODEL.gguf \\
        [--depth 4096] [--gen 32] [--passes 6] [--threads 2] [--kv f16,q8_0,q4_0]

`bench -d 4096 --kv-type T` refills the cache before every repetition (on a 2-core machine
shared with other work, 4096 positions of TinyLlama took minutes each), and each process
sees the load of its own minutes. Here each session is filled once with the same random
tokens; then every pass times `--gen` decoded tokens on each session in turn (the order
rotating from pass to pass), each after truncating its cache back to the depth, so the
sessions share each pass's load and the ratio to the first type is taken within the pass.
Prints one line per pass and the median of each type's speed and ratio.
"""

import argparse
import random
import statistics
import sys
import time

try:
    import engine
except ImportError:
    sys.exit("kv_depth.py: the engine module is not found; set PYTHONPATH=build/native/python "
             "(the Python binding, built with the native tree)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--depth", type=int, default=4096)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kv", default="f16,q8_0,q4_0", help="comma-separated; ratios are to the first")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    kvs = a.kv.split(",")

    model = engine.Model(a.model)
    rng = random.Random(a.seed)
    fill = [rng.randrange(model.n_vocab) for _ in range(a.depth)]
    gen = [rng.randrange(model.n_vocab) for _ in range(a.gen)]
    sessions = {}
    for kv in kvs:
        s = engine.Session(model, n_ctx=a.depth + a.gen, kv_type=kv, n_threads=a.threads)
        t0 = time.perf_counter()
        s.prefill(fill)
        print(f"{kv}: KV cache {s.kv_bytes / 2**20:.1f} MiB at {a.depth + a.gen} positions; "
              f"filled {a.depth} in {time.perf_counter() - t0:.0f} s", flush=True)
        sessions[kv] = s

    speed = {kv: [] for kv in kvs}
    ratio = {kv: [] for kv in kvs}
    for p in range(a.passes):
        order = kvs[p % len(kvs):] + kvs[:p % len(kvs)]
        this = {}
        for kv in order:
            s = sessions[kv]
            s.truncate(a.depth)
            t0 = time.perf_counter()
            for t in gen:
                s.decode(t)
            this[kv] = a.gen / (time.perf_counter() - t0)
        for kv in kvs:
            speed[kv].append(this[kv])
            ratio[kv].append(this[kv] / this[kvs[0]])
        print(f"pass {p + 1} ({' '.join(order)}): " +
              ", ".join(f"{kv} {this[kv]:.2f} t/s ({this[kv] / this[kvs[0]]:.3f}x)" for kv in kvs), flush=True)
    print("median: " + ", ".join(
        f"{kv} {statistics.median(speed[kv]):.2f} t/s, ratio {statistics.median(ratio[kv]):.3f} "
        f"(range {min(ratio[kv]):.3f}-{max(ratio[kv]):.3f})" for kv in kvs))


if __name__ == "__main__":
    main()
