#!/usr/bin/env python3
"""The expected prefill and decode speed of a model on a phone's cores, without the phone.

    estimate.py --soc sd8gen2 --threads 5 --prefill-threads 8 -- build/aarch64/bin/run -m M.gguf
    estimate.py --soc sd8gen2 --threads 5 --driver llama -- insn_driver M.gguf      # llama.cpp's, the same way

A token's instructions are profiled under qemu-aarch64, with the CPU features the SoC has, by
translation block (bench/insn_profile/insnprofile.c): decode = (a run of 24 generated tokens - a
run of 8) / 16, prefill = (a 98-token prompt - a 34-token prompt) / 64, one thread. Each hot
block goes through llvm-mca for the LLVM model of each kind of core in the SoC (cycle_table.py's
method), which gives the cycles a token takes on one core of that kind. With threads on several
cores (the engine hands out work in chunks until none is left, so a faster core does more of
it), a token's compute takes 1 / sum over the cores of (clock / cycles per token). Decode also
reads every weight once per token: it cannot be faster than the weights' bytes over the memory
bandwidth, taken as --bandwidth-share of the SoC's peak. The result is printed with the inputs it
came from; `--published PP,TG` adds the ratio to a published figure.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cycle_table as ct  # noqa: E402

# SoCs: their cores (LLVM model, GHz, count) fastest first, the qemu -cpu that has their
# features (no SVE on Snapdragon: Qualcomm leaves it off), and the peak bandwidth of their
# memory in GB/s (LPDDR5X: transfers per second x 8 bytes). Sources in docs/estimate.md.
SOCS = {
    "sd8gen3": {"name": "Snapdragon 8 Gen 3", "qemu": "max,sve=off,sme=off", "gbs": 76.8,
                "cores": [("Cortex-X4", "neoverse-v2", 3.30, 1), ("Cortex-A720", "neoverse-n2", 3.15, 3),
                          ("Cortex-A720", "neoverse-n2", 2.96, 2), ("Cortex-A520", "cortex-a510", 2.27, 2)]},
    "sd8gen2": {"name": "Snapdragon 8 Gen 2", "qemu": "max,sve=off,sme=off", "gbs": 67.2,
                "cores": [("Cortex-X3", "neoverse-v2", 3.19, 1), ("Cortex-A715", "neoverse-n2", 2.80, 2),
                          ("Cortex-A710", "neoverse-n2", 2.80, 2), ("Cortex-A510", "cortex-a510", 2.02, 3)]},
    "tensor-g3": {"name": "Google Tensor G3", "qemu": "max,sve-default-vector-length=16,sme=off", "gbs": 68.3,
                  "cores": [("Cortex-X3", "neoverse-v2", 2.91, 1), ("Cortex-A715", "neoverse-n2", 2.37, 4),
                            ("Cortex-A510", "cortex-a510", 1.70, 4)]},
}


def token_blocks(args, elf, kind, workdir):
    """{block: (instructions, executions per token)} of one decode or prefill token."""
    if kind == "decode":
        runs, divisor = [("24", 24), ("8", 8)], 16
    else:
        runs, divisor = [("98", 98), ("34", 34)], 64
    counts = []
    for label, tokens in runs:
        if args.driver == "llama":  # tests/reference/llamacpp/insn_driver.cpp: MODEL N_PROMPT N_GEN
            argv = args.command + ([str(1), str(tokens)] if kind == "decode" else [str(tokens), "1"])
        elif kind == "decode":
            argv = args.command + ["--temp", "0", "-t", "1", "-n", str(tokens), "--ignore-eos"]
        else:  # the BOS and tokens - 2 x's, one generated: as run tokenizes a prompt of x's
            argv = args.command + ["--temp", "0", "-t", "1", "-p", "x" * (tokens - 2), "-n", "1"]
        counts.append(ct.block_counts(args.qemu, args.soc["qemu"], args.plugin, argv,
                                      os.path.join(workdir, f"{kind}-{label}.txt")))
    return ct.joined(ct.difference(counts[0], counts[1], divisor), elf)


def cycles_per_token(args, elf, blocks):
    """{LLVM model: cycles per token on one core}, and the token's instructions."""
    kept, total = ct.hot(blocks, 0.99)
    asm = ct.disassemble(args.llvm_mc, elf, kept)
    per_model = {}
    for _, model, _, _ in args.soc["cores"]:
        if model not in per_model:
            per_block = ct.mca(args.llvm_mca, model, asm)
            # The 1% of instructions left out is counted at the kept blocks' cycles per instruction.
            kept_insns = sum(size * execs for _, size, execs in kept)
            cycles, _ = ct.block_sums(kept, per_block)
            per_model[model] = cycles * total / kept_insns
    return per_model, total


def on_cores(soc, per_model, threads):
    """Seconds of compute per token on the first `threads` cores, fastest first."""
    rate, left = 0.0, threads
    for _, model, ghz, count in soc["cores"]:
        used = min(count, left)
        rate += used * ghz * 1e9 / per_model[model]
        left -= used
        if left == 0:
            break
    if left:
        sys.exit(f"estimate: {soc['name']} has fewer than {threads} cores")
    return 1.0 / rate


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, choices=sorted(SOCS))
    parser.add_argument("--threads", type=int, required=True, help="decode threads, on the fastest cores")
    parser.add_argument("--prefill-threads", type=int, default=None, help="prefill threads (default: --threads)")
    parser.add_argument("--weights-gb", type=float, required=True,
                        help="bytes read per decode token, GB (the weights: gguf-info's total less the embedding table when it is not tied)")
    parser.add_argument("--bandwidth-share", type=float, default=0.6,
                        help="share of the peak bandwidth a decode sustains (default 0.6)")
    parser.add_argument("--published", default=None, help="PP,TG: a published figure to compare with")
    parser.add_argument("--driver", choices=["run", "llama"], default="run")
    parser.add_argument("--plugin", default=None)
    parser.add_argument("--qemu", default="qemu-aarch64")
    parser.add_argument("--llvm-mc", default="/usr/lib/llvm-19/bin/llvm-mc")
    parser.add_argument("--llvm-mca", default="/usr/lib/llvm-19/bin/llvm-mca")
    parser.add_argument("command", nargs="+", help="the static aarch64 program and its model arguments")
    args = parser.parse_args()
    args.soc = SOCS[args.soc]
    elf = ct.Elf(args.command[0])
    with tempfile.TemporaryDirectory() as workdir:
        if args.plugin is None:
            args.plugin = ct.build_plugin(workdir)
        figures = {}
        for kind in ("prefill", "decode"):
            per_model, insns = cycles_per_token(args, elf, token_blocks(args, elf, kind, workdir))
            figures[kind] = (per_model, insns)
    soc = args.soc
    print(f"{soc['name']}: " + ", ".join(f"{n} x {c} {g:.2f} GHz ({m} model)" for c, m, g, n in soc["cores"]))
    for kind, threads in (("prefill", args.prefill_threads or args.threads), ("decode", args.threads)):
        per_model, insns = figures[kind]
        compute = on_cores(soc, per_model, threads)
        line = f"{kind}: {insns / 1e6:.1f} M instructions per token; cycles per token on one core: " + \
            ", ".join(f"{m} {c / 1e6:.1f} M" for m, c in per_model.items())
        print(line)
        if kind == "decode":
            memory = args.weights_gb / (soc["gbs"] * args.bandwidth_share)
            print(f"decode: {threads} threads compute {1 / compute:.1f} t/s, memory {1 / memory:.1f} t/s "
                  f"({args.weights_gb:.2f} GB per token at {args.bandwidth_share:.0%} of {soc['gbs']} GB/s) "
                  f"-> {1 / max(compute, memory):.1f} t/s")
            figures[kind] = 1 / max(compute, memory)
        else:
            print(f"prefill: {threads} threads -> {1 / compute:.1f} t/s")
            figures[kind] = 1 / compute
    if args.published:
        pp, tg = (float(x) for x in args.published.split(","))
        print(f"against the published figure: prefill {figures['prefill']:.1f} / {pp} = {figures['prefill'] / pp:.2f}x, "
              f"decode {figures['decode']:.1f} / {tg} = {figures['decode'] / tg:.2f}x")


if __name__ == "__main__":
    main()
