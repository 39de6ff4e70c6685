"""Language-server latency: from a change sent by the editor to the diagnostics for that change.

    python benchmarks/bench_lsp.py SCRIPT.py [--changes 20] [--interval 0.5]

Starts ``npu-audit lsp`` over stdio as an editor would, opens SCRIPT.py, then sends ``--changes``
edits (a comment line appended, one at a time, ``--interval`` seconds apart, as a typist pausing) and
measures, for each, the time until ``textDocument/publishDiagnostics`` arrives for that document
version, debounce included. Prints min/median/max in milliseconds. Never fails on time.
Target (issue "Scale"): median <= 150 ms on a ~900-line real script (e.g. the 932-line
``run_ner.py`` of Ascend/ModelZoo-TensorFlow's Bert_Nv_Finetune_MPRC_ID1641_for_TensorFlow).
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


class Client:
    def __init__(self, command: list[str]):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.messages: queue.Queue = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            if length is None:
                continue
            self.messages.put((time.perf_counter(), json.loads(stream.read(length))))

    def send(self, payload: dict) -> None:
        body = json.dumps(payload).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self._next_id += 1
        ident = self._next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            _, message = self.messages.get(timeout=60)
            if message.get("id") == ident and "method" not in message:
                return message
            self._answer_server_request(message)

    def _answer_server_request(self, message: dict) -> None:
        if "id" in message and "method" in message:  # e.g. workspace/configuration
            result = [None] * len(message.get("params", {}).get("items", [])) if message["method"] == "workspace/configuration" else None
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diagnostics(self, uri: str, version: int, timeout: float = 60) -> float:
        deadline = time.perf_counter() + timeout
        while True:
            arrived, message = self.messages.get(timeout=max(0.01, deadline - time.perf_counter()))
            self._answer_server_request(message)
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                if params["uri"] == uri and params.get("version") == version:
                    return arrived


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between edits")
    args = parser.parse_args()
    path = args.script.resolve()
    text = path.read_text(encoding="utf-8", errors="replace")
    uri = path.as_uri()
    client = Client([sys.executable, "-m", "npu_audit", "lsp"])
    client.request("initialize", {"processId": None, "rootUri": path.parent.as_uri(), "capabilities": {},
                                  "workspaceFolders": [{"uri": path.parent.as_uri(), "name": "bench"}]})
    client.notify("initialized", {})
    started = time.perf_counter()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    first = client.wait_diagnostics(uri, 1) - started
    lines = text.count("\n")
    latencies = []
    for i in range(args.changes):
        version = i + 2
        edit = {"range": {"start": {"line": lines + i, "character": 0}, "end": {"line": lines + i, "character": 0}},
                "text": f"# edit {i}\n"}
        sent = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]})
        latencies.append((client.wait_diagnostics(uri, version) - sent) * 1000)
        time.sleep(args.interval)
    client.request("shutdown", {})
    client.notify("exit", {})
    try:
        client.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        client.proc.kill()
    print(f"{path.name}: {lines} lines; first diagnostics after open {first * 1000:.0f} ms")
    print(f"change -> diagnostics over {len(latencies)} edits: min {min(latencies):.0f} ms, "
          f"median {statistics.median(latencies):.0f} ms, max {max(latencies):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
