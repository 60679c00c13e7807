"""The embedded default model's server for the bench scripts: llama.cpp's server (xllamacpp)
started by the project's own launcher with the model `make setup` installed."""

import os
import re
import subprocess
import sys

CACHE = os.path.join(os.path.expanduser("~"), ".cache", "hearth", "llm")
LAUNCHER = os.path.join(os.path.dirname(__file__), "..", "..", "runtime", "assets", "llama_server.py")


def start_model(threads=1, ctx=4096):
    """The server process and its base URL, once it is bound; exits when it does not start."""
    python = os.path.join(CACHE, "venv", "bin", "python")
    model = os.path.join(CACHE, "SmolLM2-135M-Instruct.Q4_1.gguf")
    proc = subprocess.Popen([python, LAUNCHER, "--model", model, "--threads", str(threads), "--ctx", str(ctx),
                             "--alias", "smollm2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        if found:
            return proc, found.group(0)
    sys.exit("the model server did not start (run `make setup`)")
