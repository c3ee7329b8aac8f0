#!/usr/bin/env python3
"""Open a schedlab report.html in headless Chromium and check it.

Usage: browser_check.py REPORT.html OUT_DIR [--expect-task NAME]... [--width PX]

Chromium is driven through its DevTools protocol (stdlib only: a minimal
websocket client below). The page is loaded from file://, then:

* every request the page makes is recorded (Network.requestWillBeSent);
  anything but the report's own file:// URL and data: URLs is a failure;
* console errors/warnings, uncaught exceptions and browser log entries
  (CSP violations land there) are failures;
* the DOM is inspected: #timeline must carry data-rendered="N tasks" with
  N > 0 and data-tasks naming every --expect-task, #latency-cdf and
  #latency-hist must exist and list the tasks, #util-heatmap must hold an SVG;
* a wheel event over the timeline must change its data-view (zoom works),
  and hovering a slice must show a tooltip;
* layout at a window of --width px (default 1400): no table (the per-thread
  table opened too) reaches past the window's right edge and the page does
  not scroll sideways; the profile table lists each path once;
* the pooled latency plots hold only sleeping tasks: for each run, the n of
  the pooled CDF's and histogram's legend equals the sum of the task
  table's `wu_lat n` column (timer samples; tasks that never sleep add 0),
  and #latency-pool says how many threads were pooled;
* a full-page screenshot is written to OUT_DIR/report.png.

Prints a JSON result on stdout; exit status 0 when every check passed,
1 when one failed, 2 when Chromium could not be started.
Environment: CHROMIUM (browser binary, default: chromium, chromium-browser,
google-chrome on PATH).
"""

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TIMEOUT = 30.0


def find_browser():
    env = os.environ.get("CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class WebSocket:
    """Just enough RFC 6455 for DevTools: text frames, client masking."""

    def __init__(self, url):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("websocket handshake failed: " + head.decode(errors="replace"))

    def _recv(self):
        data = self.sock.recv(1 << 16)
        if not data:
            raise RuntimeError("DevTools connection closed")
        return data

    def _take(self, n):
        while len(self.buf) < n:
            self.buf += self._recv()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text):
        payload = text.encode()
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._take(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._take(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._take(8))
            data = self._take(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise RuntimeError("DevTools connection closed")
            if opcode in (0x9, 0xA):  # ping/pong: ignore
                continue
            message += data
            if b0 & 0x80:
                return message.decode()


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout=TIMEOUT):
        deadline = time.time() + timeout
        seen = 0
        while time.time() < deadline:
            for ev in self.events[seen:]:
                if ev["method"] == method:
                    return ev
            seen = len(self.events)
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
        raise RuntimeError(f"timed out waiting for {method}")

    def drain(self, seconds):
        """Collects events for a while (late requests, async errors)."""
        self.ws.sock.settimeout(0.1)
        end = time.time() + seconds
        try:
            while time.time() < end:
                try:
                    msg = json.loads(self.ws.recv())
                except socket.timeout:
                    continue
                if "method" in msg:
                    self.events.append(msg)
        finally:
            self.ws.sock.settimeout(TIMEOUT)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")


DOM_PROBE = """(() => {
  const at = (id, a) => { const e = document.getElementById(id); return e ? e.getAttribute(a) : null; };
  const tl = document.getElementById("timeline");
  const canvas = tl && tl.querySelector("canvas");
  const r = canvas ? canvas.getBoundingClientRect() : null;
  return {
    timeline: !!tl,
    rendered: at("timeline", "data-rendered"),
    timeline_tasks: at("timeline", "data-tasks"),
    view: at("timeline", "data-view"),
    canvases: tl ? tl.querySelectorAll("canvas").length : 0,
    canvas_box: r ? [r.left, r.top, r.width, r.height] : null,
    cdf_tasks: at("latency-cdf", "data-tasks"),
    hist_tasks: at("latency-hist", "data-tasks"),
    cdf_visible_series: document.querySelectorAll("#latency-cdf .lat-view.on path.series").length,
    heatmaps: document.querySelectorAll("#util-heatmap svg").length,
    tables: ["task-table", "profile-table"].filter(id => document.getElementById(id)),
  };
})()"""


LAYOUT_PROBE = """(() => {
  const d = document.getElementById("task-threads");
  if (d) d.open = true;
  const W = window.innerWidth;
  const tables = [...document.querySelectorAll("table")].map(t => {
    const r = t.getBoundingClientRect();
    return {id: t.id || "(no id)", right: Math.round(r.right), width: Math.round(r.width)};
  });
  const legendN = (sel) => [...document.querySelectorAll(sel + ' .lat-view[data-task=""] text')]
    .map(e => e.textContent).filter(t => /\\(n=\\d+\\)$/.test(t))
    .map(t => { const m = t.match(/^(.*) \\(n=(\\d+)\\)$/); return [m[1], +m[2]]; });
  const heads = [...document.querySelectorAll("#task-table thead th")].map(th => th.textContent);
  const runCol = heads.indexOf("run"), nCol = heads.indexOf("wu_lat n");
  const tableN = {};
  for (const tr of document.querySelectorAll("#task-table tbody tr")) {
    const c = [...tr.children].map(td => td.textContent);
    tableN[c[runCol]] = (tableN[c[runCol]] || 0) + (+c[nCol] || 0);
  }
  const paths = [...document.querySelectorAll("#profile-table tbody tr")].map(tr => tr.children[0].textContent);
  const pool = document.getElementById("latency-pool");
  const r = {
    window: W,
    page_width: document.documentElement.scrollWidth,
    tables,
    cdf_pooled: legendN("#latency-cdf"),
    hist_pooled: legendN("#latency-hist"),
    task_table_wu_lat_n: tableN,
    profile_paths: paths,
    pool: pool ? [pool.getAttribute("data-sleeping"), pool.getAttribute("data-threads")] : null,
  };
  if (d) d.open = false;
  return r;
})()"""


def check_layout(lay, errors):
    w = lay["window"]
    if lay["page_width"] > w:
        errors.append(f"the page scrolls sideways at {w} px: {lay['page_width']} px wide")
    for t in lay["tables"]:
        if t["right"] > w:
            errors.append(f"table {t['id']} ends at {t['right']} px, past the {w} px window")
    paths = lay["profile_paths"]
    if len(paths) != len(set(paths)):
        errors.append(f"profile table lists a path twice: {paths}")
    for key in ("cdf_pooled", "hist_pooled"):
        if not lay[key]:
            errors.append(f"{key}: no legend with n= in the pooled view")
        for label, n in lay[key]:
            want = lay["task_table_wu_lat_n"].get(label)
            if want is not None and n != want:
                errors.append(f"{key}: run {label!r} pools n={n} samples, the task table's timer samples sum to {want}")


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    report = Path(args[0]).resolve()
    out_dir = Path(args[1])
    expect = [args[i + 1] for i, a in enumerate(args) if a == "--expect-task"]
    width = int(next((args[i + 1] for i, a in enumerate(args) if a == "--width"), "1400"))
    out_dir.mkdir(parents=True, exist_ok=True)
    browser = find_browser()
    if not browser:
        print(json.dumps({"ok": False, "errors": ["chromium not found"]}))
        return 2

    profile = tempfile.mkdtemp(prefix="schedlab-chromium-")
    cmd = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
        f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(out_dir / "chromium.log", "wb"))
    errors = []
    result = {"report": str(report), "errors": errors}
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.time() + TIMEOUT
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if proc.poll() is not None or time.time() > deadline:
                print(json.dumps({"ok": False, "errors": ["chromium did not start; see chromium.log"]}))
                return 2
            time.sleep(0.05)
        port = int(port_file.read_text().split("\n")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=TIMEOUT) as r:
            targets = json.load(r)
        target = next(t for t in targets if t.get("type") == "page")
        page = Page(WebSocket(target["webSocketDebuggerUrl"]))
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(f"{domain}.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
                  deviceScaleFactor=1, mobile=False)
        url = report.as_uri()
        page.call("Page.navigate", url=url)
        page.wait_event("Page.loadEventFired")
        page.drain(0.5)

        dom = page.eval(DOM_PROBE)
        result["dom"] = dom
        rendered = dom.get("rendered") or ""
        if not dom["timeline"]:
            errors.append("no #timeline element")
        elif not rendered.endswith(" tasks") or int(rendered.split()[0] or 0) <= 0:
            errors.append(f"#timeline not rendered by the script: data-rendered={rendered!r}")
        for task in expect:
            for key in ("timeline_tasks", "cdf_tasks", "hist_tasks"):
                if task not in (dom.get(key) or "").split():
                    errors.append(f"task {task!r} missing from {key}")
        if dom["cdf_visible_series"] == 0:
            errors.append("latency CDF shows no curve")
        if dom["heatmaps"] == 0:
            errors.append("no utilisation heatmap")
        layout = page.eval(LAYOUT_PROBE)
        result["layout"] = layout
        check_layout(layout, errors)

        # Interaction: wheel-zoom over the first canvas, then hover a slice.
        if dom["canvas_box"]:
            left, top, width, height = dom["canvas_box"]
            x, y = left + width * 0.5, top + 20 + 9  # middle of the first lane
            page.call("Page.bringToFront")
            page.eval("window.scrollTo(0, 0)")
            before = page.eval('document.getElementById("timeline").getAttribute("data-view")')
            page.call("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0, deltaY=-300)
            page.drain(0.2)
            after = page.eval('document.getElementById("timeline").getAttribute("data-view")')
            result["zoom"] = [before, after]
            if before == after:
                errors.append(f"wheel over the timeline did not zoom (data-view {before})")
            page.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
            page.drain(0.2)
            tip = page.eval('document.getElementById("timeline-tip").textContent')
            result["tooltip"] = tip
            if not tip or "pid" not in tip:
                errors.append(f"hover over the timeline shows no task: {tip!r}")
            page.call("Input.dispatchMouseEvent", type="mouseMoved", x=1, y=1)
            page.eval('document.getElementById("tl-reset").click()')

        metrics = page.call("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        shot = page.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": size["width"],
                               "height": min(size["height"], 8000), "scale": 1})
        png = out_dir / "report.png"
        png.write_bytes(base64.b64decode(shot["data"]))
        result["screenshot"] = str(png)
        page.drain(0.3)

        # Requests, console, exceptions, browser log (CSP reports land here).
        requests, console = [], []
        for ev in page.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Network.requestWillBeSent":
                u = p["request"]["url"]
                requests.append(u)
                if u != url and not u.startswith("data:"):
                    errors.append(f"network request: {u}")
            elif m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                text = d.get("exception", {}).get("description") or d.get("text")
                errors.append(f"uncaught exception: {text}")
            elif m == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                console.append(f"{p['type']}: {text}")
                if p["type"] in ("error", "warning", "assert"):
                    errors.append(f"console {p['type']}: {text}")
            elif m == "Log.entryAdded":
                e = p["entry"]
                console.append(f"log {e['level']} {e.get('source')}: {e['text']}")
                if e["level"] in ("error", "warning"):
                    errors.append(f"browser log {e['level']} ({e.get('source')}): {e['text']} {e.get('url', '')}")
            elif m == "Network.loadingFailed":
                errors.append(f"load failed: {p.get('errorText')} {p.get('blockedReason', '')}")
        result["requests"] = requests
        result["console"] = console
    except Exception as e:  # noqa: BLE001 - report any driver failure as a check failure
        errors.append(f"driver error: {type(e).__name__}: {e}")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
    result["ok"] = not errors
    print(json.dumps(result, indent=1))
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
