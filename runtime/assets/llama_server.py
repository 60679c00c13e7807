"""Launcher for Hearth's embedded LLM: llama.cpp's HTTP server (xllamacpp) on a free loopback port.

Run with the venv's interpreter that `make setup` created:

    python llama_server.py --model PATH --threads N --ctx N --alias NAME [--chat-template-file PATH]

Prints exactly one JSON line on stdout once the server is bound, {"listening": "http://127.0.0.1:PORT"},
then serves until SIGTERM or SIGINT, or until its parent process goes away (the daemon cannot ask
the kernel for a parent-death signal without unsafe code, so this side watches instead). Every log
line goes to stderr.
"""

import argparse
import json
import os
import signal
import sys
import threading

# ChatML with tool support, in the Hermes / Qwen2.5 shape: tools are listed inside <tools></tools> in
# the system block, calls come back as <tool_call>{...}</tool_call>, results go in as <tool_response>
# inside a user turn. The model's own template is plain ChatML and drops `tools`; with this one the
# server reports tool support and parses calls into OpenAI `tool_calls`.
CHATML_TOOLS_TEMPLATE = r"""
{%- set default_system = 'You are a helpful AI assistant named SmolLM, trained by Hugging Face' -%}
{%- if messages and messages[0]['role'] == 'system' -%}
    {%- set system_text = messages[0]['content'] if messages[0]['content'] is string else '' -%}
{%- else -%}
    {%- set system_text = default_system -%}
{%- endif -%}
{%- if tools -%}
    {{- '<|im_start|>system\n' + system_text -}}
    {{- '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' -}}
    {%- for tool in tools -%}
        {{- '\n' + (tool | tojson) -}}
    {%- endfor -%}
    {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- else -%}
    {{- '<|im_start|>system\n' + system_text + '<|im_end|>\n' -}}
{%- endif -%}
{%- for message in messages -%}
    {%- set content = message['content'] if message['content'] is string else '' -%}
    {%- if message['role'] == 'system' -%}
        {%- if not loop.first -%}
            {{- '<|im_start|>system\n' + content + '<|im_end|>\n' -}}
        {%- endif -%}
    {%- elif message['role'] == 'user' or (message['role'] == 'assistant' and not message['tool_calls']) -%}
        {{- '<|im_start|>' + message['role'] + '\n' + content + '<|im_end|>\n' -}}
    {%- elif message['role'] == 'assistant' -%}
        {{- '<|im_start|>assistant' -}}
        {%- if content -%}
            {{- '\n' + content -}}
        {%- endif -%}
        {%- for tool_call in message['tool_calls'] -%}
            {%- if tool_call['function'] is defined -%}
                {%- set tool_call = tool_call['function'] -%}
            {%- endif -%}
            {{- '\n<tool_call>\n{"name": "' + tool_call['name'] + '", "arguments": ' -}}
            {%- if tool_call['arguments'] is string -%}
                {{- tool_call['arguments'] -}}
            {%- else -%}
                {{- tool_call['arguments'] | tojson -}}
            {%- endif -%}
            {{- '}\n</tool_call>' -}}
        {%- endfor -%}
        {{- '<|im_end|>\n' -}}
    {%- elif message['role'] == 'tool' -%}
        {%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' -%}
            {{- '<|im_start|>user' -}}
        {%- endif -%}
        {{- '\n<tool_response>\n' + content + '\n</tool_response>' -}}
        {%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' -%}
            {{- '<|im_end|>\n' -}}
        {%- endif -%}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
{%- endif -%}
"""


def log(message):
    print(f"llama_server: {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="path of the GGUF model")
    parser.add_argument("--threads", type=int, required=True, help="CPU threads for decode and prompt")
    parser.add_argument("--ctx", type=int, required=True, help="context window in tokens")
    parser.add_argument("--alias", required=True, help="model name reported by /v1/models")
    parser.add_argument("--chat-template-file", help="Jinja chat template replacing the built-in one")
    return parser.parse_args(argv)


def build_params(xllamacpp, args):
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the kernel picks a free port; it is reported on stdout
    params.n_ctx = args.ctx
    params.n_parallel = 1  # one conversation at a time keeps the whole context for it
    params.use_jinja = True
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.model_alias = {args.alias}
    params.ui = False
    # The host-memory prompt cache defaults to 8 GiB; a home box has less to spare.
    params.cache_ram_mib = 256
    # Ollama's default repeat penalty (1.1 over the last 64 tokens) as the server's default for
    # requests that set none: without it the small model loops on one sentence until the
    # token limit (bench/scripts/embedded_repetition.py: 8 of 30 first answers at temperature
    # 0.7 without it, 0 or 1 of 30 with it; ARCHITECTURE, "Embedded model").
    params.sampling.penalty_repeat = 1.1
    params.sampling.penalty_last_n = 64
    if args.chat_template_file:
        with open(args.chat_template_file, encoding="utf-8") as f:
            params.chat_template = f.read()
    else:
        params.chat_template = CHATML_TOOLS_TEMPLATE
    return params


def watch_parent(stop):
    """Sets `stop` once the process that started us is gone (we get re-parented).

    The daemon passes its pid in HEARTH_PARENT_PID, so a parent that died before this thread first
    looked is noticed too.
    """
    try:
        parent = int(os.environ["HEARTH_PARENT_PID"])
    except (KeyError, ValueError):
        parent = os.getppid()
    while not stop.wait(0.5):
        if os.getppid() != parent:
            log(f"parent {parent} is gone; stopping")
            stop.set()


def main(argv):
    args = parse_args(argv)
    stop = threading.Event()

    def on_signal(signum, _frame):
        log(f"{signal.Signals(signum).name}: stopping")
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # hearthd blocks SIGTERM/SIGINT in all its threads to take them synchronously, and a blocked
    # mask survives exec: unblock them here or the daemon's stop request would go unheard.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    threading.Thread(target=watch_parent, args=(stop,), name="parent-watch", daemon=True).start()

    import xllamacpp  # after the handlers, so a slow import cannot swallow an early stop

    server = xllamacpp.Server(build_params(xllamacpp, args))
    address = server.listening_address
    if not address:
        log("server did not bind an address")
        return 1
    if not address.startswith("http"):
        address = "http://" + address
    sys.stdout.write(json.dumps({"listening": address}) + "\n")
    sys.stdout.flush()
    log(f"serving {args.alias} from {args.model} on {address}")

    # A timed wait keeps the main thread returning to the interpreter, where signal handlers run.
    while not stop.wait(0.5):
        pass
    del server
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
