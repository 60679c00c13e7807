#!/usr/bin/env python3
"""How often the embedded model loops or runs to its token cap, per sampling or request setting.

Usage: embedded_repetition.py HEARTHD HEARTH [--temp T] [--seeds 11,12,13] [--arm NAME=JSON ...]

It captures the request a real `hearthd` sends for a first message (a loopback stand-in for the
model records the body), then sends that request with each of a few ordinary first messages to
llama.cpp's server started by the project's own launcher, once per arm and seed, at Hearth's cap
of 384 tokens. The arm "server-default" sends no sampling field (the launcher's defaults apply,
as for the daemon's requests); every other arm adds its JSON fields to the request
(`--arm no-penalty='{"repeat_penalty": 1.0}'`; a field set to null is left out of the request,
so `--arm no-tools='{"tools": null, "tool_choice": null}'` sends none). Reported per arm:
answers cut at the cap, answers that repeat one sentence three times or more (a loop), the
longest time the server took to read a prompt, and how many of eight plain factual questions
it answered right (the answer matches the expected word). All arms run in one session on the
same server, so they share the machine's load.

Needs `make setup` (the model and the server's venv in the user cache dir).
"""

import argparse
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from local_model import start_model

MESSAGES = [
    "hello",
    "What is the capital of France?",
    "你好",
    "请用一句话介绍一下你自己。",
    "What can you do?",
    "Give me a tip for growing basil indoors.",
]
CAP = 384
# Questions a small model should still get right, with a pattern its answer must match.
FACTS = [
    ("What is the capital of France?", "paris"),
    ("What is the capital of Japan?", "tokyo"),
    ("How many days are in a week?", "seven|7"),
    ("What color is the sky on a clear day?", "blue"),
    ("Which planet do we live on?", "earth"),
    ("What is 2 plus 2?", "four|4"),
    ("Who wrote Romeo and Juliet?", "shakespeare"),
    ("What is the largest ocean?", "pacific"),
]


def capture_request(hearthd, hearth):
    """The body `hearthd` sends to its model for the message "hello"."""
    bodies = []

    class Stand(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                     "choices": [{"index": 0, "delta": {"content": "Hi."}, "finish_reason": "stop"}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n")

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stand)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as data:
        config = os.path.join(data, "hearth.toml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(f'data_dir = "{data}"\nmemory_model = false\nprobe_loopback = false\n'
                    f'[embedded]\nenabled = false\n[[sources]]\nname = "stand"\n'
                    f'base_url = "http://127.0.0.1:{server.server_port}/v1"\nmodel = "m"\nadapter = "openai"\n')
        daemon = subprocess.Popen([hearthd, "--config", config], stderr=subprocess.DEVNULL)
        try:
            env = dict(os.environ, HEARTH_DATA_DIR=data)
            for _ in range(100):
                if os.path.exists(os.path.join(data, "hearth.sock")):
                    break
                time.sleep(0.1)
            subprocess.run([hearth, "send", "hello"], env=env, check=True, capture_output=True, timeout=60)
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    server.shutdown()
    if not bodies:
        sys.exit("hearthd sent no request to the stand-in model")
    return bodies[0]


def loops(text):
    """The most times one sentence of `text` occurs in it."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。！？\n])", text) if len(s.strip()) > 8]
    return max((sentences.count(s) for s in sentences), default=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hearthd")
    parser.add_argument("hearth")
    parser.add_argument("--temp", type=float, default=0.7)
    parser.add_argument("--seeds", default="11,12,13,14,15")
    parser.add_argument("--arm", action="append", default=[], help="NAME=JSON of request fields")
    args = parser.parse_args()
    arms = {"server-default": {}}
    for arm in args.arm:
        name, fields = arm.split("=", 1)
        arms[name] = json.loads(fields)
    seeds = [int(s) for s in args.seeds.split(",")] if args.temp > 0 else [0]

    captured = capture_request(args.hearthd, args.hearth)
    proc, url = start_model()

    def ask(message, seed, fields, cap):
        body = dict(captured, messages=[captured["messages"][0], {"role": "user", "content": message}],
                    max_tokens=cap, temperature=args.temp, stream=False, seed=seed, **fields)
        body.pop("stream_options", None)
        body = {k: v for k, v in body.items() if v is not None}
        request = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        return json.loads(urllib.request.urlopen(request, timeout=600).read())

    try:
        for name, fields in arms.items():
            capped = looped = total = right = asked = 0
            reading = []
            for message in MESSAGES:
                for seed in seeds:
                    answer = ask(message, seed, fields, CAP)
                    reading.append(answer.get("timings", {}).get("prompt_ms", 0) / 1000)
                    choice = answer["choices"][0]
                    total += 1
                    capped += choice["finish_reason"] == "length"
                    looped += loops(choice["message"].get("content") or "") >= 3
            for question, expected in FACTS:
                for seed in seeds:
                    text = ask(question, seed, fields, 128)["choices"][0]["message"].get("content") or ""
                    asked += 1
                    right += bool(re.search(expected, text.lower()))
            print(f"{name:12} temperature {args.temp}: looped {looped} of {total}, cut at {CAP} tokens {capped} of {total}, "
                  f"prompt read in {max(reading):.1f} s at most, facts right {right} of {asked}", flush=True)
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
