"""How many MCP calls a second `trove serve` answers over streamable HTTP, and at what cost.

    python bench/bench_http.py [--clients 16] [--seconds 10] [--config trove.toml]
        [--workdir /tmp/trove-bench-http] [--tool search_reports]

It starts `trove serve --port 0` (on a copy of the sample data in data/, or on
``--config``), waits until the daemon watches, then runs ``--clients`` clients, each in
its own process. Each client opens an MCP session (``initialize``, then
``notifications/initialized``; the session id if the server gives one) and calls one
tool in a loop for ``--seconds``, rotating over a few queries. It reports calls/s,
latency p50/p95/p99 per call, and the server's CPU time per call (user + system, read
from /proc before and after the run; the daemon idles meanwhile). The clients speak
JSON-RPC over httpx directly, not through the SDK's client, so that 16 of them on two
cores leave the server most of the CPU; they read both answer forms, a JSON body and an
event stream.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcp_start import prepare  # bench/ is not a package: its folder is on the path

REPO = Path(__file__).resolve().parent.parent
QUERIES = {
    "search_reports": [{"query": q} for q in ("proxy", "timeout", "websocket", "token")],
    "search_commands": [{"query": q} for q in ("proxy", "meeting", "decode", "log")],
    "search_workspace": [{"query": q} for q in ("proxy", "captions", "pac", "auth")],
}
PROTOCOL = "2025-06-18"
START_S = 120.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a POST: a JSON body, or the last message of an event stream."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return dict(response.json())
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return dict(json.loads(data[-1]))


def client(url: str, tool: str, seconds: float, start_at: float, out: Any) -> None:
    """One client process: a session, then calls until the time is up; sends latencies."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    latencies: list[float] = []
    errors = 0
    with httpx.Client(timeout=60, headers=headers) as http:
        init = http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "bench_http", "version": "1"},
                },
            },
        )
        init.raise_for_status()
        session = init.headers.get("mcp-session-id")
        if session:
            http.headers["mcp-session-id"] = session
        http.headers["mcp-protocol-version"] = PROTOCOL
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        while time.time() < start_at:
            time.sleep(0.001)
        end = start_at + seconds
        i = 0
        queries = QUERIES[tool]
        while time.time() < end:
            i += 1
            body = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": tool, "arguments": queries[i % len(queries)]},
            }
            t0 = time.perf_counter()
            response = http.post(url, json=body)
            answer = answer_of(response)
            latencies.append(time.perf_counter() - t0)
            if response.status_code != 200 or answer.get("result", {}).get("isError", True):
                errors += 1
    out.put((latencies, errors))


def start_server(config: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "query.cli", "--config", str(config), "serve", "--port", "0"],
        cwd=str(config.parent),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)},
    )
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            m = re.search(r"MCP at (http://\S+/mcp)", line)
            if m and not found:
                found.append(m.group(1))
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(START_S):
        proc.kill()
        raise SystemExit("trove serve did not start")
    url = found[0]
    health = url.removesuffix("/mcp") + "/health"
    deadline = time.time() + START_S
    while time.time() < deadline:  # the daemon watches: its start-up reconcile is done
        try:
            body = httpx.get(health, timeout=5).json()
            if (body.get("watcher") or {}).get("state") == "watching":
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the daemon of trove serve never started watching")


def pct(xs: list[float], p: float) -> float:
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))] if xs else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--config", type=Path, default=None, help="default: a copy of data/")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/trove-bench-http"))
    ap.add_argument("--tool", choices=sorted(QUERIES), default="search_reports")
    args = ap.parse_args(argv)

    config = args.config.resolve() if args.config else prepare(args.workdir)
    proc, url = start_server(config)
    try:
        queue: Any = mp.get_context("spawn").Queue()
        start_at = time.time() + 3.0  # every client has its session by then
        workers = [
            mp.get_context("spawn").Process(
                target=client, args=(url, args.tool, args.seconds, start_at, queue)
            )
            for _ in range(args.clients)
        ]
        for w in workers:
            w.start()
        while time.time() < start_at:
            time.sleep(0.001)
        cpu_before = cpu_seconds(proc.pid)
        results = [queue.get(timeout=args.seconds + START_S) for _ in workers]
        cpu_after = cpu_seconds(proc.pid)
        for w in workers:
            w.join()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    latencies = sorted(x for lat, _ in results for x in lat)
    errors = sum(e for _, e in results)
    calls = len(latencies)
    cpu_ms = (cpu_after - cpu_before) * 1000 / calls if calls else float("nan")
    print(f"trove serve, {args.tool} over streamable HTTP, {args.clients} client processes, ")
    print(
        f"{args.seconds:.0f} s, on {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f})"
    )
    print(f"  calls           {calls} ({errors} errors)")
    print(f"  calls/s         {calls / args.seconds:.0f}")
    print(
        "  latency ms      p50 {:.1f}  p95 {:.1f}  p99 {:.1f}".format(
            *(pct(latencies, p) * 1000 for p in (0.5, 0.95, 0.99))
        )
    )
    print(f"  server CPU/call {cpu_ms:.2f} ms")
    if calls:
        print(f"  mean latency    {statistics.fmean(latencies) * 1000:.1f} ms")
    return 0 if calls and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
