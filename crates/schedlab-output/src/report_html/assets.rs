//! The page's fixed parts: its Content-Security-Policy, style sheet and
//! script.

// ---------------------------------------------------------------- HTML

pub(super) const CSP: &str =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

pub(super) const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:6px 0 12px;font-size:12.5px}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}
th{background:#f2f2f2;white-space:normal}td.l,th.l{text-align:left}
details{margin:6px 0}.wide{max-width:100%;overflow-x:auto}
tr.diff td{background:#fff4d6}
.note{color:#8a5a00;background:#fff8e6;padding:4px 8px;border-left:3px solid #e0a000}
.swatch{display:inline-block;width:11px;height:11px;margin:0 3px 0 10px;vertical-align:-1px}
#timeline canvas{display:block;border:1px solid #bbb;margin:4px 0 10px;cursor:grab;width:100%}
#timeline-tip{position:fixed;pointer-events:none;background:#222;color:#fff;font-size:12px;padding:3px 6px;border-radius:3px;display:none;white-space:pre}
.lat-view{display:none}.lat-view.on{display:block}
svg.plot{max-width:100%;height:auto}
pre{background:#f6f6f6;padding:6px;font-size:12px}
"#;

/// The inline script: draws the timelines and switches the latency views.
pub(super) const SCRIPT: &str = r##"
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const colors = data.policy_colors;
  const root = document.getElementById("timeline");
  const tip = document.getElementById("timeline-tip");
  const LANE = 18, TOP = 20, LEFT = 64;
  const views = [];
  let t0 = Infinity, t1 = -Infinity;
  for (const run of data.runs) {
    if (!run.timeline) continue;
    t0 = Math.min(t0, run.timeline.t0);
    t1 = Math.max(t1, run.timeline.t1);
  }
  const full = [t0, t1 > t0 ? t1 : t0 + 1];
  let view = full.slice();

  function fmt(us) { return (us / 1e6).toFixed(6) + " s"; }
  function tickStep(span) {
    const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 5, 10].map(m => m * p).find(s => s >= raw);
  }
  // First slice of a lane (flat [start, dur, task]*) ending after t.
  function firstAfter(lane, t) {
    let lo = 0, hi = lane.length / 3;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lane[3 * mid] + lane[3 * mid + 1] <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function draw(v) {
    const c = v.canvas, tl = v.run.timeline, dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth, h = TOP + LANE * tl.lanes.length + 4;
    c.width = w * dpr; c.height = h * dpr; c.style.height = h + "px";
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const pw = w - LEFT - 4, k = pw / (view[1] - view[0]);
    const X = t => LEFT + (t - view[0]) * k;
    g.font = "11px sans-serif"; g.fillStyle = "#444"; g.strokeStyle = "#ddd";
    const step = tickStep(view[1] - view[0]);
    for (let t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      if (X(t) < w - 40) g.fillText(fmt(t).replace(/\.?0+ s$/, " s"), X(t) + 2, 12);
      g.beginPath(); g.moveTo(X(t), 14); g.lineTo(X(t), h); g.stroke();
    }
    tl.lanes.forEach((lane, i) => {
      const y = TOP + i * LANE;
      g.fillStyle = "#444"; g.fillText("CPU " + tl.cpus[i], 4, y + 13);
      let lastPx = -1;
      for (let j = firstAfter(lane, view[0]); j < lane.length / 3; j++) {
        const s = lane[3 * j], e = s + lane[3 * j + 1];
        if (s > view[1]) break;
        const x0 = Math.max(LEFT, X(s)), x1 = Math.min(LEFT + pw, X(e));
        if (Math.floor(x1) <= lastPx) continue; // sub-pixel: already covered
        const task = tl.tasks[lane[3 * j + 2]];
        g.fillStyle = colors[task.policy] || colors.other;
        g.fillRect(x0, y + 1, Math.max(1, x1 - x0), LANE - 3);
        if (x1 - x0 > 3 && task.pid !== 0) { g.fillStyle = "#fff"; g.fillRect(x0, y + 1, 1, LANE - 3); }
        if (x1 - x0 > 60 && task.pid !== 0) {
          g.fillStyle = "#fff"; g.save(); g.beginPath(); g.rect(x0, y, x1 - x0, LANE); g.clip();
          g.fillText(task.name, x0 + 3, y + 13); g.restore();
        }
        lastPx = Math.floor(x1);
      }
    });
  }
  function redraw() {
    views.forEach(draw);
    root.setAttribute("data-view", Math.round(view[0]) + "," + Math.round(view[1]));
  }
  function zoom(factor, at) {
    const span = Math.min(full[1] - full[0], Math.max(10, (view[1] - view[0]) * factor));
    let a = at - (at - view[0]) * span / (view[1] - view[0]);
    a = Math.max(full[0], Math.min(a, full[1] - span));
    view = [a, a + span]; redraw();
  }
  function timeAt(v, clientX) {
    const r = v.canvas.getBoundingClientRect();
    return view[0] + (clientX - r.left - LEFT) / (r.width - LEFT - 4) * (view[1] - view[0]);
  }
  function hit(v, ev) {
    const r = v.canvas.getBoundingClientRect(), tl = v.run.timeline;
    const i = Math.floor((ev.clientY - r.top - TOP) / LANE), t = timeAt(v, ev.clientX);
    if (i < 0 || i >= tl.lanes.length || ev.clientX - r.left < LEFT) return null;
    const lane = tl.lanes[i], j = firstAfter(lane, t);
    if (j >= lane.length / 3 || lane[3 * j] > t) return null;
    const task = tl.tasks[lane[3 * j + 2]];
    return task.name + " (pid " + task.pid + ", " + task.policy + ")\nCPU " + tl.cpus[i] + "  " +
      fmt(lane[3 * j]) + " + " + (lane[3 * j + 1] / 1000).toFixed(3) + " ms\n" + v.run.label;
  }

  const names = new Set();
  for (const run of data.runs) {
    if (!run.timeline) continue;
    const h = document.createElement("h3");
    h.textContent = run.label; h.style.color = run.color;
    const c = document.createElement("canvas");
    c.setAttribute("data-run", run.label);
    root.append(h, c);
    const v = { run, canvas: c };
    views.push(v);
    run.timeline.tasks.forEach(t => { if (t.pid !== 0) names.add(t.name); });
    let drag = null;
    c.addEventListener("wheel", ev => {
      ev.preventDefault();
      zoom(ev.deltaY < 0 ? 0.8 : 1.25, timeAt(v, ev.clientX));
    }, { passive: false });
    c.addEventListener("mousedown", ev => { drag = { x: ev.clientX, view: view.slice() }; c.style.cursor = "grabbing"; });
    window.addEventListener("mouseup", () => { drag = null; c.style.cursor = "grab"; });
    c.addEventListener("mousemove", ev => {
      if (drag) {
        const r = c.getBoundingClientRect(), span = drag.view[1] - drag.view[0];
        let a = drag.view[0] - (ev.clientX - drag.x) / (r.width - LEFT - 4) * span;
        a = Math.max(full[0], Math.min(a, full[1] - span));
        view = [a, a + span]; redraw();
      }
      const text = hit(v, ev);
      tip.style.display = text ? "block" : "none";
      if (text) { tip.textContent = text; tip.style.left = ev.clientX + 12 + "px"; tip.style.top = ev.clientY + 12 + "px"; }
    });
    c.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  }
  const mid = () => (view[0] + view[1]) / 2;
  document.getElementById("tl-in").onclick = () => zoom(0.5, mid());
  document.getElementById("tl-out").onclick = () => zoom(2, mid());
  document.getElementById("tl-reset").onclick = () => { view = full.slice(); redraw(); };
  window.addEventListener("resize", redraw);
  redraw();
  root.setAttribute("data-rendered", names.size + " tasks");

  const sel = document.getElementById("latency-task");
  function showLatency() {
    document.querySelectorAll(".lat-view").forEach(d =>
      d.classList.toggle("on", d.getAttribute("data-task") === sel.value));
  }
  sel.addEventListener("change", showLatency);
  showLatency();
  document.getElementById("latency-cdf").setAttribute("data-rendered", "1");
})();
"##;
