#!/usr/bin/env python3
"""Writes llama.cpp's token ids for the tokenizer tests (see COMMANDS.md).

For each vocabulary (the family-shaped ones write_family_vocabs writes, and
the ggml-vocab-*.gguf files of ../shared/models/vocab when --shared is given),
each text of inputs.txt is tokenized by llama.cpp's llama-tokenize twice:

  special: llama-tokenize -m V -f TEXT --no-escape --ids --log-disable
           (the model's BOS default, special tokens parsed)
  plain:   the same with --no-bos --no-parse-special

and the end-of-generation set is what llama_vocab_is_eog() says for each id
(eog_dump.cpp, compiled here against llama.h). The output
is <name>.expected: "vocab", "eog" and "case <i> <mode>: <ids>" lines.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SEP = "\n__ggml_vocab_test__\n"
SHARED_VOCABS = ["llama-spm", "phi-3", "gpt-2", "falcon", "starcoder", "deepseek-llm"]


def read_inputs(path):
    with open(path, encoding="utf-8", newline="") as f:
        data = f.read()
    texts = data.split(SEP)
    if texts and texts[-1] == "":
        texts.pop()
    return texts


def tokenize(tool, vocab, text_path, plain):
    cmd = [tool, "-m", vocab, "-f", text_path, "--no-escape", "--ids", "--log-disable"]
    if plain:
        cmd += ["--no-bos", "--no-parse-special"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()
    if not (out.startswith("[") and out.endswith("]")):
        sys.exit(f"unexpected output of {' '.join(cmd)}: {out!r}")
    return [int(x) for x in out[1:-1].split(",") if x.strip()]


def end_of_generation(eog_dump, vocab):
    # llama_vocab_is_eog() over the vocabulary (eog_dump.cpp).
    out = subprocess.run([eog_dump, vocab], check=True, capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def build_eog_dump(llama_dir, out):
    here = os.path.dirname(os.path.abspath(__file__))
    lib = os.path.join(llama_dir, "build", "bin")
    subprocess.run(["g++", "-O2", "-std=c++17", os.path.join(here, "eog_dump.cpp"),
                    "-I" + os.path.join(llama_dir, "include"), "-I" + os.path.join(llama_dir, "ggml", "include"),
                    "-L" + lib, "-lllama", "-lggml", "-lggml-base", "-Wl,-rpath," + lib, "-o", out], check=True)


def write_expected(path, tool, eog_dump, vocabs, texts, tmp):
    text_paths = []
    for i, t in enumerate(texts):
        p = os.path.join(tmp, f"input{i}.txt")
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(t)
        text_paths.append(p)
    with open(path, "w", encoding="utf-8") as out:
        out.write("# llama.cpp's ids, written by make_family_expected.py (see COMMANDS.md)\n")
        for name, vocab in vocabs:
            out.write(f"vocab {name}\n")
            out.write("eog " + " ".join(map(str, end_of_generation(eog_dump, vocab))) + "\n")
            for i, p in enumerate(text_paths):
                for mode, plain in (("special", False), ("plain", True)):
                    ids = tokenize(tool, vocab, p, plain)
                    out.write(f"case {i} {mode}: " + " ".join(map(str, ids)) + "\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-dir", required=True, help="llama.cpp's source folder, built in build/")
    ap.add_argument("--writer", required=True, help="the write_family_vocabs program")
    ap.add_argument("--shared", help="the ../shared folder (adds shared_vocabs.expected)")
    args = ap.parse_args()
    texts = read_inputs(os.path.join(here, "inputs.txt"))
    tool = os.path.join(args.llama_dir, "build", "bin", "llama-tokenize")
    with tempfile.TemporaryDirectory() as tmp:
        eog_dump = os.path.join(tmp, "eog_dump")
        build_eog_dump(args.llama_dir, eog_dump)
        written = subprocess.run([args.writer, tmp], check=True, capture_output=True, text=True).stdout.split()
        families = [(os.path.basename(p)[: -len(".gguf")], p) for p in written]
        write_expected(os.path.join(here, "family_vocabs.expected"), tool, eog_dump, families, texts, tmp)
        if args.shared:
            shared = [(n, os.path.join(args.shared, "models", "vocab", f"ggml-vocab-{n}.gguf")) for n in SHARED_VOCABS]
            write_expected(os.path.join(here, "shared_vocabs.expected"), tool, eog_dump, shared, texts, tmp)


if __name__ == "__main__":
    main()
