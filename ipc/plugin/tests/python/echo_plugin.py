#!/usr/bin/env python3
"""A Hearth plugin in Python, standard library only, written from ipc/PROTOCOL.md.

It registers one tool, `py_echo`, which asks the kernel for a setting (a reverse call carrying
the call context) and returns its text argument with that setting.
"""

import json
import os
import sys

NAME = "py-echo"
SUPPORTED = [1]
FRAME_LIMIT = 1 << 20

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer
next_id = 1
# Kernel requests that arrive while we wait for the answer to one of our own calls.
queued = []


def send(message):
    message["jsonrpc"] = "2.0"
    stdout.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
    stdout.flush()


def error(code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return err


def read_frame():
    """The next message (a dict), None at end of file; bad frames are answered and skipped."""
    while True:
        line = stdin.readline(FRAME_LIMIT + 1)
        if not line:
            return None
        if len(line) > FRAME_LIMIT and not line.endswith(b"\n"):
            skipped = len(line)
            while True:
                rest = stdin.readline(FRAME_LIMIT)
                skipped += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            skipped -= 1 if rest.endswith(b"\n") else 0
            send({"id": None, "error": error(-32006, "frame of %d bytes exceeds the frame limit of %d bytes" % (skipped, FRAME_LIMIT), {"len": skipped, "limit": FRAME_LIMIT})})
            continue
        line = line.rstrip(b"\r\n")
        if not line.strip():
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            send({"id": None, "error": error(-32700, "frame is not JSON: %s" % e)})
            continue
        if not isinstance(message, dict):
            send({"id": None, "error": error(-32600, "frame is not a JSON-RPC message")})
            continue
        return message


def call(method, params):
    """A reverse call: send, then read until its answer, queueing kernel requests meanwhile."""
    global next_id
    my_id = next_id
    next_id += 1
    send({"id": my_id, "method": method, "params": params})
    while True:
        message = read_frame()
        if message is None:
            sys.exit(0)
        if "method" in message:
            queued.append(message)
            continue
        if message.get("id") == my_id:
            if "error" in message:
                raise RuntimeError("%s: %s" % (method, message["error"]["message"]))
            return message.get("result")
        # An unknown id (a late answer) or an id-null complaint: drop it.


def handle(method, params):
    """The result of a kernel request, or raises KernelError."""
    if method == "handshake":
        offered = params.get("protocol_versions", [])
        common = [v for v in offered if v in SUPPORTED]
        if not common:
            raise KernelError(-32007, "the kernel offers protocol versions %s, plugin %s speaks %s" % (offered, NAME, SUPPORTED), exit_after=True, data={"offered": offered, "supported": SUPPORTED})
        return {"protocol": max(common), "sdk_version": "python-stdlib 1", "plugin_name": NAME, "pid": os.getpid()}
    if method == "plugin.init":
        return {}
    if method == "plugin.start":
        call("tool.register", {"name": "py_echo", "def": {"name": "py_echo", "description": "Repeats its text with a greeting.", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}})
        return {}
    if method == "tool.invoke":
        if params.get("name") != "py_echo":
            raise KernelError(-32602, "plugin %s has no tool named %r" % (NAME, params.get("name")))
        args = params.get("args") or {}
        if not isinstance(args.get("text"), str):
            raise KernelError(-32602, "text must be a string")
        ctx = params.get("ctx") or {}
        setting = call("settings.get", {"key": "greeting", "ctx": ctx})
        return {"result": {"text": args["text"], "greeting": setting.get("value"), "task": ctx.get("task_id", "")}}
    if method == "plugin.stop":
        send({"method": "log", "params": {"level": "info", "message": "py-echo: stopping"}})
        raise Stop()
    raise KernelError(-32601, "unknown method %s" % method)


class KernelError(Exception):
    def __init__(self, code, message, exit_after=False, data=None):
        super().__init__(message)
        self.code, self.message, self.exit_after, self.data = code, message, exit_after, data


class Stop(Exception):
    pass


def serve(message):
    method, params, msg_id = message["method"], message.get("params") or {}, message.get("id")
    if method == "$/cancel":
        return  # every request here finishes at once; nothing to stop
    try:
        result = handle(method, params)
    except Stop:
        send({"id": msg_id, "result": {}})
        sys.exit(0)
    except KernelError as e:
        if msg_id is not None:
            send({"id": msg_id, "error": error(e.code, e.message, e.data)})
        if e.exit_after:
            sys.stderr.write(e.message + "\n")
            sys.exit(1)
        return
    except Exception as e:  # a failing handler must not take the plugin down
        if msg_id is not None:
            send({"id": msg_id, "error": error(-32000, str(e))})
        return
    if msg_id is not None:
        send({"id": msg_id, "result": result})


def main():
    while True:
        message = queued.pop(0) if queued else read_frame()
        if message is None:
            return
        if "method" in message:
            serve(message)
        # Responses outside a call are late answers: dropped.


if __name__ == "__main__":
    main()
