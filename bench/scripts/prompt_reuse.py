#!/usr/bin/env python3
"""How many prompt tokens the local model's server reads per turn of a long conversation.

Usage: prompt_reuse.py HEARTHD HEARTH [--slack 0,0.5] [--turns N] [--threads N] [--ctx N] [--window N]
                       [--max-tokens N] [--tools]

llama.cpp's server keeps the last prompt it read and reuses the longest prefix the next request
shares with it; everything after the first difference is read again, at ~140 tokens/s on one
core of a small box. This drives a real `hearthd` through one conversation per arm (the same
user messages, `[agent] prune_slack` set to each value) against llama.cpp's server started by
the project's own launcher, through a loopback relay that reads the server's own count of each
request: `timings.prompt_n` (tokens read) and `timings.cache_n` (tokens reused). The daemon runs
with its embedding models (recall injects memories), the source declares the server's window
(4,096 tokens, the embedded default's, unless `--ctx`/`--window` say otherwise), so the working
window prunes as it would at home. The model answers at temperature 0,
capped at 96 tokens (`--max-tokens`) to keep the run short, offered no tools unless `--tools`
asks (the embedded default offers none: the bundled model cannot call them); its answers are its
own, and each arm starts a fresh server and data dir, so no arm reuses another's cache.

Reported per arm, over the turns after the window first pruned: prompt tokens read per turn (p50,
p95, mean), the share of the prompt reused, and the time the server spent reading prompts; and
over every turn, the size of the whole prompts (p50, the largest): how much of the window the
budget filled, and that it never overran it.
Needs `make setup` (the model, the server's venv and the embedding models in the user cache dir).
"""

import argparse
import http.client
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from local_model import start_model

# One person's evening of small requests, a few referring back to earlier ones.
MESSAGES = [
    "Hi! I just moved to Porto last week and I'm still unpacking.",
    "Can you suggest a simple dinner I can cook with rice, eggs and spinach?",
    "My sister Ana is visiting on Saturday. She is vegetarian.",
    "What is a good way to keep basil alive on a windowsill?",
    "I work as a nurse, mostly night shifts, so I sleep during the day.",
    "Any tips for blocking out street noise while sleeping?",
    "Remind me what Ana can't eat?",
    "I want to start running again. I used to do 5 km three times a week.",
    "How should I warm up before a run?",
    "My knee hurt a bit after the last run, should I worry?",
    "What is a cheap way to make my flat feel warmer in winter?",
    "I'm thinking of getting a cat. My landlord allows pets.",
    "What do I need to buy before the cat arrives?",
    "Which vegetables grow well on a balcony in spring?",
    "Ana's birthday is on the 12th of March. Any gift ideas for a book lover?",
    "How long should I boil an egg for a soft yolk?",
    "I keep forgetting to drink water during night shifts. Any tricks?",
    "What's a good podcast for learning Portuguese?",
    "Can you explain the difference between a latte and a flat white?",
    "I spilled coffee on my laptop keyboard. What should I do right now?",
    "The laptop seems fine now. Thanks!",
    "What was the dinner you suggested with rice and eggs?",
    "I'd like to save 200 euros a month. Where should I start?",
    "Is it better to pay off a small credit card debt first or save?",
    "What are some easy stretches for a stiff neck?",
    "My friend Tiago recommended a hiking trail near Gerês. Is it hard?",
    "What should I pack for a day hike?",
    "How do I clean a cast iron pan?",
    "I named the cat Pimenta.",
    "Pimenta scratches the sofa. How do I stop her?",
    "What time of year is best to visit the Douro valley?",
    "Can you help me write a short thank-you note to my neighbour?",
    "How many hours of sleep do night-shift workers need?",
    "What's a quick breakfast with oats?",
    "Remind me what my cat is called and what she does to the sofa.",
    "Good night, talk tomorrow.",
]


class Relay(http.server.BaseHTTPRequestHandler):
    """Forwards each request to the model server, streams the answer back, and keeps the
    server's `timings` of each request."""

    upstream = None
    seen = []

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        self.forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def forward(self, body):
        target = urllib.parse.urlparse(self.upstream)
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=600)
        headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
        conn.request(self.command, self.path, body=body, headers=headers)
        answer = conn.getresponse()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        timings = None
        for line in answer:
            self.wfile.write(line)
            self.wfile.flush()
            if line.startswith(b"data: {") and b'"timings"' in line:
                timings = json.loads(line[6:]).get("timings")
            elif line.startswith(b"{") and b'"timings"' in line:
                timings = json.loads(line).get("timings")
        if body is not None and timings:
            Relay.seen.append(timings)
            if os.environ.get("PROMPT_REUSE_DUMP"):
                with open(os.environ["PROMPT_REUSE_DUMP"], "a", encoding="utf-8") as f:
                    f.write(json.dumps({"timings": timings, "body": json.loads(body)}) + "\n")
        conn.close()

    def log_message(self, *_):
        pass


def run_arm(args, slack):
    """The server's timings of every request of one conversation with `prune_slack = slack`,
    and the index of the first turn whose window had pruned."""
    proc, url = start_model(args.threads, args.ctx)
    Relay.upstream, Relay.seen = url, []
    relay = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    per_turn = []
    first_pruned = None
    try:
        with tempfile.TemporaryDirectory() as data:
            config = os.path.join(data, "hearth.toml")
            with open(config, "w", encoding="utf-8") as f:
                f.write(f'data_dir = "{data}"\nprobe_loopback = false\n'
                        f'[agent]\nprune_slack = {slack}\n[embedded]\nenabled = false\n'
                        f'[[sources]]\nname = "local"\nbase_url = "http://127.0.0.1:{relay.server_port}/v1"\n'
                        f'model = "smollm2"\nadapter = "openai"\ncontext_window = {args.window or args.ctx}\n'
                        f'max_tokens = {args.max_tokens}\ntemperature = 0\n'
                        f'no_tools = {"false" if args.tools else "true"}\n')
            daemon = subprocess.Popen([args.hearthd, "--config", config], stderr=subprocess.DEVNULL)
            env = dict(os.environ, HEARTH_DATA_DIR=data)
            try:
                for _ in range(300):
                    if os.path.exists(os.path.join(data, "hearth.sock")):
                        break
                    time.sleep(0.1)
                for i, message in enumerate(MESSAGES[: args.turns]):
                    before = len(Relay.seen)
                    subprocess.run([args.hearth, "send", message], env=env, check=True,
                                   capture_output=True, timeout=900)
                    per_turn.append(Relay.seen[before:])
                    if first_pruned is None and archived(data) > 0:
                        first_pruned = i + 1
                    print(f"  slack {slack}: turn {i + 1}, prompt read "
                          f"{sum(t.get('prompt_n', 0) for t in per_turn[-1])} tokens", file=sys.stderr, flush=True)
            finally:
                daemon.terminate()
                daemon.wait(timeout=60)
    finally:
        relay.shutdown()
        proc.terminate()
        proc.wait(timeout=30)
    return per_turn, first_pruned


def archived(data):
    """Cold entries in the data dir's store (the window has pruned once there are any)."""
    import sqlite3

    try:
        db = sqlite3.connect(f"file:{os.path.join(data, 'memory.db')}?mode=ro", uri=True)
        return db.execute("SELECT count(*) FROM cold").fetchone()[0]
    except sqlite3.Error:
        return 0


def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p * len(ordered)) - 1))] if ordered else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hearthd")
    parser.add_argument("hearth")
    parser.add_argument("--slack", default="0,0.5")
    parser.add_argument("--turns", type=int, default=len(MESSAGES))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=4096, help="the server's context window")
    parser.add_argument("--window", type=int, default=0,
                        help="the window the source declares to the daemon (default: --ctx); a larger one "
                             "shapes prompts as for a model with that window, as long as they fit --ctx")
    parser.add_argument("--max-tokens", type=int, default=96, help="cap of each answer")
    parser.add_argument("--tools", action="store_true",
                        help="offer the kernel's tools, as to a capable model")
    args = parser.parse_args()
    results = {}
    for slack in args.slack.split(","):
        results[slack] = run_arm(args, slack)
    # Compare the same turns in every arm: from the first turn any arm had pruned (all of them
    # when none did: the conversation was too short to fill the window).
    pruned = [first for _, first in results.values() if first is not None]
    start = min(pruned) if pruned else 0
    for slack, (per_turn, first) in results.items():
        turns = per_turn[start:]
        read = [sum(t.get("prompt_n", 0) for t in turn) for turn in turns]
        reused = [sum(t.get("cache_n", 0) for t in turn) for turn in turns]
        seconds = sum(t.get("prompt_ms", 0) for turn in turns for t in turn) / 1000
        total = sum(read) + sum(reused)
        # The whole prompt of each request, as the server counted it: what the budget filled.
        size = [t.get("prompt_n", 0) + t.get("cache_n", 0) for turn in per_turn for t in turn]
        print(f"prune_slack {slack}: turns {start + 1}-{len(per_turn)} (window first pruned at turn {first}): "
              f"prompt tokens read per turn p50 {pct(read, 0.5)} / p95 {pct(read, 0.95)} / mean "
              f"{statistics.mean(read) if read else 0:.0f}, reused {sum(reused) / max(total, 1):.1%} of the prompt, "
              f"{seconds:.1f} s reading prompts; whole prompts p50 {pct(size, 0.5)} / largest {max(size, default=0)} "
              f"tokens of the server's {args.ctx}", flush=True)


if __name__ == "__main__":
    main()
