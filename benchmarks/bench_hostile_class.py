"""Benchmark: one student cannot take the class down.

Starts ``python -m dashboard serve`` (the Dask engine, its embedded local cluster) on 127.0.0.1
and connects ``--students`` browser-less students (the websocket clients of
``benchmarks/bench_classroom.py``) that press Run and stream.  Once every run showed its first
frame, two more visitors arrive:

* an **uploader** opens ``/dashboard`` and sends the largest saved-run file the upload accepts
  (``--upload FILE``, default: the worst file allowed, built by :func:`worst_upload`) through
  the page's file input, exactly as a browser's ``FileInput`` does (base64 in a document
  patch);
* a **sweeper** opens ``/sweep``, types the biggest sweep the class's work limit allows
  (``--sweep-*``) and presses *Run sweep*.

During the watch window the streaming students are watched (frames per second, as
``bench_classroom`` counts them) and each presses Pause ``--pauses`` times (latency from
sending Pause to the patch that says ``paused``).  The targets: every streaming session keeps
at least 1 frame/s and every Pause answers within 1 s, while the upload is read and the sweep
computes.  The report also says what the uploader and the sweeper were told (the upload's
notice, the sweep's status) and counts tracebacks in the server's log.

Usage::

    python benchmarks/bench_hostile_class.py --students 10 --seconds 20
    python benchmarks/bench_hostile_class.py --format json

Every loop is bounded in count and time; the server (a new process group) is always killed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import math
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: What the class must keep while one student uploads and another sweeps.
TARGETS = {"fps_each": 1.0, "pause_max_s": 1.0}


def _classroom() -> Any:
    """``benchmarks/bench_classroom.py`` (its server and websocket students)."""
    import importlib.util

    name = "bench_classroom"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def worst_upload() -> bytes:
    """The largest, most entry-heavy saved-run file the upload accepts (its bytes)."""
    from dashboard.simulation.upload_worst import worst_allowed_upload

    return worst_allowed_upload()


# -------------------------------------------------------------------------------- visitor
class Visitor:
    """A browser-less page of ``path`` that can set a widget's property and press a button.

    It speaks the Bokeh protocol as ``bench_classroom.Student`` does; models are found in the
    pulled document by CSS class or by their ``title``.  It keeps reading the server's patches
    and remembers the last ``text`` each model was sent (notices, status lines)."""

    def __init__(self, port: int, path: str, query: str = "") -> None:
        self.port, self.path, self.query = port, path, query
        self.doc: dict[str, Any] = {}
        self.texts: dict[str, str] = {}
        self.closed = False
        self.error = ""
        self._reader: Any = None

    async def connect(self, timeout: float) -> None:
        from bokeh.client.websocket import WebSocketClientConnectionWrapper
        from bokeh.protocol import Protocol
        from bokeh.protocol.receiver import Receiver
        from bokeh.util.token import generate_jwt_token, generate_session_id
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        token = generate_jwt_token(generate_session_id())
        url = f"ws://127.0.0.1:{self.port}/{self.path}/ws?{self.query}"
        req = HTTPRequest(
            url,
            headers={"Origin": f"http://127.0.0.1:{self.port}"},
            connect_timeout=timeout,
            request_timeout=timeout,
        )
        self.ws = await asyncio.wait_for(
            websocket_connect(req, subprotocols=["bokeh", token], max_message_size=2**28),
            timeout,
        )
        self._conn = WebSocketClientConnectionWrapper(self.ws)
        self._protocol = Protocol()
        self._receiver = Receiver(self._protocol)
        ack = await asyncio.wait_for(self._pop(), timeout)
        if ack is None or ack.msgtype != "ACK":
            raise RuntimeError(f"{self.path}: no ACK")
        await self._protocol.create("PULL-DOC-REQ").send(self._conn)
        while True:
            reply = await asyncio.wait_for(self._pop(), timeout)
            if reply is None:
                raise RuntimeError(f"{self.path}: no document")
            if reply.msgtype == "PULL-DOC-REPLY":
                break
        self.doc = reply.content["doc"]
        self._reader = asyncio.ensure_future(self._read())

    async def _pop(self) -> Any:
        while True:
            fragment = await self.ws.read_message()
            if fragment is None:
                return None
            message = await self._receiver.consume(fragment)
            if message is not None:
                return message

    async def _read(self) -> None:
        try:
            while True:
                message = await self._pop()
                if message is None:
                    break
                for ev in message.content.get("events", []) if message.content else []:
                    if ev.get("kind") == "ModelChanged" and ev.get("attr") == "text":
                        self.texts[(ev.get("model") or {}).get("id", "")] = str(ev.get("new"))
        except Exception as exc:
            if not self.closed:
                self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.closed = True

    def find(self, css: str | None = None, title: str | None = None) -> str:
        """The id of the first model with CSS class ``css`` (or ``title``); KeyError if none."""
        stack: list[Any] = [self.doc]
        while stack:
            o = stack.pop()
            if isinstance(o, dict):
                attrs = o.get("attributes")
                if "id" in o and isinstance(attrs, dict):
                    if css is not None and css in (attrs.get("css_classes") or []):
                        return o["id"]
                    if title is not None and attrs.get("title") == title:
                        return o["id"]
                stack.extend(o.values())
            elif isinstance(o, list):
                stack.extend(o)
        raise KeyError(css or title)

    def find_all(self, css: str) -> list[str]:
        """Every model id with CSS class ``css`` (a Panel pane is a wrapper and its content)."""
        out: list[str] = []
        stack: list[Any] = [self.doc]
        while stack:
            o = stack.pop()
            if isinstance(o, dict):
                attrs = o.get("attributes")
                if "id" in o and isinstance(attrs, dict):
                    if css in (attrs.get("css_classes") or []):
                        out.append(o["id"])
                stack.extend(o.values())
            elif isinstance(o, list):
                stack.extend(o)
        return out

    async def patch(self, changes: list[tuple[str, str, Any]]) -> float:
        """Send ``(model id, attribute, new value)`` changes in one patch (as BokehJS does);
        returns the monotonic send time."""
        from bokeh.protocol.messages.patch_doc import patch_doc

        events = [
            {"kind": "ModelChanged", "model": {"id": mid}, "attr": attr, "new": new}
            for mid, attr, new in changes
        ]
        msg = patch_doc(patch_doc.create_header(), {}, {"events": events})
        sent = time.monotonic()
        await msg.send(self._conn)
        return sent

    async def click(self, model_id: str) -> float:
        from bokeh.protocol.messages.patch_doc import patch_doc

        event = {
            "kind": "MessageSent",
            "msg_type": "bokeh_event",
            "msg_data": {
                "type": "event",
                "name": "button_click",
                "values": {"type": "map", "entries": [["model", {"id": model_id}]]},
            },
        }
        msg = patch_doc(patch_doc.create_header(), {}, {"events": [event]})
        sent = time.monotonic()
        await msg.send(self._conn)
        return sent

    def said(self, ids: list[str]) -> str:
        """The last text the server sent any of ``ids`` (tags stripped, one line)."""
        import html
        import re

        texts = [html.unescape(self.texts[i]) for i in ids if self.texts.get(i)]
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", " ".join(texts))).strip()[:300]

    async def close(self) -> None:
        self.closed = True
        try:
            self.ws.close()
        except Exception:
            pass
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (TimeoutError, Exception):
                self._reader.cancel()


async def upload(visitor: Visitor, data: bytes, name: str, chunk: int = 1_000_000) -> float:
    """Send ``data`` through the page's saved-run file dropper as a browser does: Panel's
    ``FileDropper`` sends ``upload_event`` messages of ``chunk`` bytes each (the bytes in
    Bokeh's gzip + base64 form here, where a browser attaches a binary buffer)."""
    import gzip

    from bokeh.protocol.messages.patch_doc import patch_doc

    mid = visitor.find(css="saved-file")
    total = len(data) // chunk + 1  # (+1 as FilePond counts, for empty files)
    sent = time.monotonic()
    for i in range(total):
        piece = data[i * chunk : (i + 1) * chunk]
        payload = base64.b64encode(gzip.compress(piece, compresslevel=1)).decode("ascii")
        values = [
            ["chunk", i + 1],
            ["data", {"type": "bytes", "data": payload}],
            ["name", name],
            ["total_chunks", total],
            ["type", "application/json"],
        ]
        event = {
            "kind": "MessageSent",
            "msg_type": "bokeh_event",
            "msg_data": {
                "type": "event",
                "name": "upload_event",
                "values": {
                    "type": "map",
                    "entries": [
                        ["model", {"id": mid}],
                        ["data", {"type": "map", "entries": values}],
                    ],
                },
            },
        }
        msg = patch_doc(patch_doc.create_header(), {}, {"events": [event]})
        await msg.send(visitor._conn)
    return sent


async def start_sweep(visitor: Visitor, runs: int, x_values: str, **_: Any) -> float:
    """Type a sweep of the horizon into ``/sweep``'s form and press *Run sweep*."""
    await visitor.patch(
        [
            (visitor.find(title="Runs (repetitions per point)"), "value", runs),
            (visitor.find(css="sweep-values"), "value", x_values),
        ]
    )
    await asyncio.sleep(0.2)
    return await visitor.click(visitor.find(css="sweep-run-button"))


# ----------------------------------------------------------------------------------- class
async def run_class(
    port: int,
    n: int,
    seconds: float,
    pauses: int,
    query: str,
    data: bytes,
    sweep: dict[str, Any],
    seed: int,
    timeout: float,
) -> dict[str, Any]:
    """``n`` students stream; an uploader and a sweeper arrive; measure the streamers."""
    cls = _classroom()
    rng = random.Random(seed)
    students = [cls.Student(port, query, i) for i in range(n)]
    uploader = Visitor(port, "dashboard", query)
    sweeper = Visitor(port, "sweep")
    failures: list[str] = []
    try:
        for s in students:
            try:
                await s.connect(timeout)
            except Exception as exc:
                failures.append(f"connect: {type(exc).__name__}: {exc}"[:200])
        connected = [s for s in students if s.ids]
        sent = await asyncio.gather(*(s.click("run-button") for s in connected))
        await asyncio.gather(
            *(s.wait_first_frame(t, timeout) for s, t in zip(connected, sent, strict=True))
        )
        await uploader.connect(timeout)
        await sweeper.connect(timeout)
        w0 = time.monotonic()
        upload_sent = await upload(uploader, data, "worst-allowed.jsonl")
        sweep_sent = await start_sweep(sweeper, **sweep)
        lat = await asyncio.gather(
            *(
                cls._pause_cycles(s, pauses, random.Random(rng.random()), timeout)
                for s in connected
            ),
            asyncio.sleep(seconds),
        )
        w1 = time.monotonic()
        fps = []
        for s in connected:
            frames, running = s.frames(w0, w1)
            fps.append(frames / running)
        latencies = [x for row in lat[:-1] for x in row]
        upload_note = uploader.said(
            uploader.find_all("saved-note") + uploader.find_all("saved-notice")
        )
        sweep_note = sweeper.said(
            sweeper.find_all("sweep-notice") + sweeper.find_all("sweep-status")
        )
        errors = [f"student {s.index}: {s.error}" for s in connected if s.error]
        errors += [f"{v.path}: {v.error}" for v in (uploader, sweeper) if v.error]
    finally:
        await asyncio.gather(
            *(s.close() for s in students),
            uploader.close(),
            sweeper.close(),
            return_exceptions=True,
        )
    return {
        "students": n,
        "connected": len(connected),
        "upload_bytes": len(data),
        "upload_sent_after_s": round(upload_sent - w0, 2),
        "sweep_sent_after_s": round(sweep_sent - w0, 2),
        "upload_said": upload_note,
        "sweep_said": sweep_note,
        "fps_min": round(min(fps), 2) if fps else math.nan,
        "fps_median": round(statistics.median(fps), 2) if fps else math.nan,
        "pause_samples": len(latencies),
        "pause_max_s": round(max(latencies), 3) if latencies else math.nan,
        "pause_p50_s": round(statistics.median(latencies), 3) if latencies else math.nan,
        "session_errors": errors + failures,
    }


def bench(
    students: int = 10,
    seconds: float = 20.0,
    pauses: int = 3,
    horizon: int = 200_000,
    runs: int = 8,
    upload_file: str | None = None,
    sweep: dict[str, Any] | None = None,
    server_args: list[str] | None = None,
    timeout: float = 60.0,
    seed: int = 0,
) -> dict[str, Any]:
    """Start a server, run one hostile class, stop the server; the measurements."""
    cls = _classroom()
    data = Path(upload_file).read_bytes() if upload_file else worst_upload()
    args = list(server_args or [])
    limit = float(args[args.index("--max-work") + 1]) if "--max-work" in args[:-1] else None
    sweep = dict(sweep or biggest_sweep(limit))
    query = f"horizon={horizon}&runs={runs}&speed=normal"
    log = Path(tempfile.mkdtemp(prefix="bench-hostile-")) / "server.log"
    server = cls.Server(list(server_args or []), log)
    out: dict[str, Any] = {
        "machine": {"cores": os.cpu_count(), "load_at_start": list(os.getloadavg())},
        "settings": {
            "query": query,
            "seconds": seconds,
            "pauses_per_student": pauses,
            "sweep": sweep,
            "server_args": list(server_args or []),
        },
        "server_log": str(log),
    }
    try:
        out["server_ready_s"] = round(server.wait_ready(), 1)
        tb0 = server.tracebacks()
        out["result"] = asyncio.run(
            run_class(server.port, students, seconds, pauses, query, data, sweep, seed, timeout)
        )
        out["result"]["tracebacks"] = server.tracebacks() - tb0
    finally:
        server.stop()
    return out


def biggest_sweep(max_work: float | None = None) -> dict[str, Any]:
    """The biggest sweep ``/sweep`` starts under the class's work limit (its form's values)."""
    from dashboard.ui.sweep_view import largest_sweep

    return largest_sweep(max_work)


def targets(result: dict[str, Any]) -> list[str]:
    r = result["result"]
    return [
        _judge(
            f"every streaming session >= {TARGETS['fps_each']:g} frame/s (slowest "
            f"{r['fps_min']:.2f})",
            r["fps_min"] >= TARGETS["fps_each"],
        ),
        _judge(
            f"every Pause answered within {TARGETS['pause_max_s']:g} s (slowest "
            f"{r['pause_max_s']:.2f} s of {r['pause_samples']})",
            r["pause_samples"] > 0 and r["pause_max_s"] <= TARGETS["pause_max_s"],
        ),
        _judge(f"no tracebacks in the server log ({r['tracebacks']})", r["tracebacks"] == 0),
    ]


def _judge(text: str, ok: bool) -> str:
    return f"- {'met' if ok else 'MISSED'}: {text}"


def to_markdown(result: dict[str, Any]) -> str:
    r, s = result["result"], result["settings"]
    return (
        f"Hostile-class benchmark (`benchmarks/bench_hostile_class.py`): {r['students']} "
        f"students stream `/dashboard?{s['query']}` on {result['machine']['cores']} cores while "
        f"one uploads a {r['upload_bytes'] / 2**20:.1f} MiB saved run and another starts the "
        f"sweep {json.dumps(s['sweep'])}.\n\n"
        "| frames/s per session (min / median) | Pause p50 / max | upload told | sweep told |\n"
        "|---|---|---|---|\n"
        f"| {r['fps_min']:.2f} / {r['fps_median']:.2f} | {r['pause_p50_s']:.2f} / "
        f"{r['pause_max_s']:.2f} s | {r['upload_said'] or '-'} | {r['sweep_said'] or '-'} |\n\n"
        + "\n".join(targets(result))
        + "\n"
    )


def _interrupt(*_: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=10, help="streaming students")
    p.add_argument("--seconds", type=float, default=20.0, help="watch window (s)")
    p.add_argument("--pauses", type=int, default=3, help="Pause presses per student")
    p.add_argument("--horizon", type=int, default=200_000)
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--upload", help="file the uploader sends (default: the worst allowed)")
    p.add_argument("--sweep-runs", type=int, help="the sweep's R (default: biggest allowed)")
    p.add_argument("--sweep-values", help="the swept horizons, comma separated")
    p.add_argument("--server-arg", action="append", default=[], help="extra `serve` argument")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--format", choices=["markdown", "json"], default="markdown")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    sweep = None
    if args.sweep_runs or args.sweep_values:
        sweep = {**biggest_sweep()}
        if args.sweep_runs:
            sweep["runs"] = args.sweep_runs
        if args.sweep_values:
            sweep["x_values"] = args.sweep_values
    result = bench(
        args.students,
        args.seconds,
        args.pauses,
        args.horizon,
        args.runs,
        args.upload,
        sweep,
        args.server_arg,
        args.timeout,
    )
    print(
        json.dumps(result, indent=1, default=str) if args.format == "json" else to_markdown(result)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
