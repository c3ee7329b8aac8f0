//! The report's SVG plots: wakeup-latency CDF and histogram, and the
//! per-CPU utilisation and run-queue heat maps.

use super::*;

const PW: f64 = 640.0; // plot area
const PH: f64 = 260.0;
const ML: f64 = 56.0; // margins
const MT: f64 = 28.0;
const MB: f64 = 44.0;
const MR: f64 = 150.0;

fn svg_open(s: &mut String, id: &str, title: &str) {
    let (w, h) = (ML + PW + MR, MT + PH + MB);
    let _ = write!(
        s,
        r##"<svg class="plot" data-plot="{id}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="#fff"/><text x="{ML}" y="16" font-size="13" font-weight="bold">{}</text>"##,
        esc(title)
    );
}

/// Decades of the log latency axis: from 1 µs to `10^decades` µs.
fn decades(max_us: u64) -> u32 {
    let mut d = 1;
    while 10f64.powi(d as i32) < max_us as f64 + 1.0 {
        d += 1;
    }
    d
}

fn lat_x(v: u64, dec: u32) -> f64 {
    ML + (v.max(1) as f64).log10() / dec as f64 * PW
}

fn lat_axis(s: &mut String, dec: u32, y_label: &str, y_max: f64, y_fmt: fn(f64) -> String) {
    let _ = write!(
        s,
        r##"<rect x="{ML}" y="{MT}" width="{PW}" height="{PH}" fill="none" stroke="#999"/>"##
    );
    for d in 0..=dec {
        let x = ML + d as f64 / dec as f64 * PW;
        let v = 10u64.pow(d);
        let label = if v >= 1_000_000 {
            format!("{} s", v / 1_000_000)
        } else if v >= 1000 {
            format!("{} ms", v / 1000)
        } else {
            format!("{v} µs")
        };
        let _ = write!(
            s,
            r##"<line x1="{x}" y1="{MT}" x2="{x}" y2="{}" stroke="#eee"/><text x="{x}" y="{}" text-anchor="middle">{label}</text>"##,
            MT + PH,
            MT + PH + 14.0
        );
    }
    for i in 0..=4 {
        let f = i as f64 / 4.0;
        let y = MT + PH - f * PH;
        let _ = write!(
            s,
            r##"<line x1="{ML}" y1="{y}" x2="{}" y2="{y}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            ML + PW,
            ML - 4.0,
            y + 4.0,
            y_fmt(f * y_max)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">wakeup latency (wu_lat, log scale; 0 µs counted as 1 µs)</text><text transform="translate(14,{}) rotate(-90)" text-anchor="middle">{y_label}</text>"#,
        ML + PW / 2.0,
        MT + PH + 32.0,
        MT + PH / 2.0
    );
}

fn legend(s: &mut String, i: usize, label: &str, n: usize) {
    let y = MT + 12.0 + 16.0 * i as f64;
    let x = ML + PW + 10.0;
    let _ = write!(
        s,
        r#"<rect x="{x}" y="{}" width="12" height="3" fill="{}"/><text x="{}" y="{}">{} (n={n})</text>"#,
        y - 4.0,
        run_color(i),
        x + 16.0,
        y,
        esc(label)
    );
}

/// The wakeup-latency CDF of `task` (pooled for `None`), one curve per run.
pub fn svg_latency_cdf(runs: &[RunData], task: Option<&str>) -> String {
    let names = labels(runs);
    let sets: Vec<Vec<u64>> = runs.iter().map(|r| samples(r, task)).collect();
    let dec = decades(
        sets.iter()
            .filter_map(|v| v.last())
            .copied()
            .max()
            .unwrap_or(1),
    );
    let title = format!(
        "Wakeup latency CDF: {}",
        task.unwrap_or("sleeping tasks pooled")
    );
    let mut s = String::new();
    svg_open(&mut s, "latency-cdf", &title);
    lat_axis(&mut s, dec, "fraction of wakeups ≤ x", 1.0, |f| {
        format!("{f:.2}")
    });
    for (i, v) in sets.iter().enumerate() {
        legend(&mut s, i, &names[i], v.len());
        if v.is_empty() {
            continue;
        }
        // (value, cumulative fraction) at the last sample of each value.
        let n = v.len();
        let mut pts: Vec<(u64, f64)> = Vec::new();
        for (k, &x) in v.iter().enumerate() {
            if k + 1 == n || v[k + 1] != x {
                pts.push((x, (k + 1) as f64 / n as f64));
            }
        }
        if pts.len() > MAX_CDF_POINTS {
            let step = pts.len() as f64 / MAX_CDF_POINTS as f64;
            let last = *pts.last().unwrap();
            pts = (0..MAX_CDF_POINTS)
                .map(|j| pts[(j as f64 * step) as usize])
                .collect();
            pts.push(last);
        }
        let y = |f: f64| MT + PH - f * PH;
        let mut d = format!("M{:.1},{:.1}", lat_x(v[0], dec), y(0.0));
        for (x, f) in pts {
            let _ = write!(d, "H{:.1}V{:.1}", lat_x(x, dec), y(f));
        }
        let _ = write!(
            s,
            r#"<path class="series" data-run="{}" d="{d}" fill="none" stroke="{}" stroke-width="1.8"/>"#,
            esc(&names[i]),
            run_color(i)
        );
    }
    s.push_str("</svg>");
    s
}

/// The wakeup-latency histogram of `task` (pooled for `None`): fraction of
/// the run's samples per log-spaced bin, one outline per run.
pub fn svg_latency_hist(runs: &[RunData], task: Option<&str>) -> String {
    let names = labels(runs);
    let sets: Vec<Vec<u64>> = runs.iter().map(|r| samples(r, task)).collect();
    let dec = decades(
        sets.iter()
            .filter_map(|v| v.last())
            .copied()
            .max()
            .unwrap_or(1),
    );
    let nb = dec as usize * HIST_BINS_PER_DECADE;
    let hists: Vec<Vec<f64>> = sets
        .iter()
        .map(|v| {
            let mut h = vec![0.0; nb];
            for &x in v {
                let b = ((x.max(1) as f64).log10() * HIST_BINS_PER_DECADE as f64).floor() as usize;
                h[b.min(nb - 1)] += 1.0 / v.len() as f64;
            }
            h
        })
        .collect();
    let top = hists
        .iter()
        .flatten()
        .copied()
        .fold(0.0f64, f64::max)
        .max(0.01);
    let y_max = (top * 10.0).ceil() / 10.0;
    let title = format!(
        "Wakeup latency histogram: {}",
        task.unwrap_or("sleeping tasks pooled")
    );
    let mut s = String::new();
    svg_open(&mut s, "latency-hist", &title);
    lat_axis(&mut s, dec, "fraction of wakeups", y_max, |f| {
        format!("{f:.2}")
    });
    let bw = PW / nb as f64;
    for (i, h) in hists.iter().enumerate() {
        legend(&mut s, i, &names[i], sets[i].len());
        if sets[i].is_empty() {
            continue;
        }
        let y = |f: f64| MT + PH - f / y_max * PH;
        let mut d = format!("M{ML:.1},{:.1}", y(0.0));
        for (b, &f) in h.iter().enumerate() {
            let _ = write!(d, "V{:.1}H{:.1}", y(f), ML + (b + 1) as f64 * bw);
        }
        let _ = write!(d, "V{:.1}Z", y(0.0));
        let c = run_color(i);
        let _ = write!(
            s,
            r#"<path class="series" data-run="{}" d="{d}" fill="{c}" fill-opacity="0.12" stroke="{c}" stroke-width="1.5"/>"#,
            esc(&names[i])
        );
    }
    s.push_str("</svg>");
    s
}

/// Busy fraction per CPU and bin: `(bin_ns, rows)`, rows in CPU order.
pub fn utilisation_bins(run: &RunData) -> (u64, Vec<(u32, Vec<f64>)>) {
    let Some(tr) = &run.trace else {
        let rows = run
            .summary
            .cpus
            .iter()
            .map(|c| {
                let tot = c.busy_ns + c.idle_ns;
                let f = if tot == 0 {
                    0.0
                } else {
                    c.busy_ns as f64 / tot as f64
                };
                (c.cpu, vec![f])
            })
            .collect();
        return (run.summary.duration_ns, rows);
    };
    let Grid { bin, nb, end, cpus } = grid(run, tr);
    let rows = cpus
        .into_iter()
        .map(|cpu| {
            let mut busy = vec![0u64; nb];
            for sp in tr.timeline.spans(cpu).iter().filter(|s| s.pid != 0) {
                let (a, b) = (sp.start_ns.min(end), sp.end_ns.min(end));
                let mut t = a;
                while t < b {
                    let k = (t / bin) as usize;
                    let next = ((k as u64 + 1) * bin).min(b);
                    busy[k] += next - t;
                    t = next;
                }
            }
            let row = busy
                .iter()
                .enumerate()
                .map(|(k, &b)| {
                    let width = (end - k as u64 * bin).min(bin);
                    b as f64 / width as f64
                })
                .collect();
            (cpu, row)
        })
        .collect();
    (bin, rows)
}

fn heat_color(f: f64) -> String {
    // white (0) to dark blue (1)
    let f = f.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(247.0, 8.0),
        lerp(251.0, 48.0),
        lerp(255.0, 107.0)
    )
}

/// The utilisation heatmap of one run (`index` picks the title colour).
pub fn svg_util_heatmap(run: &RunData, index: usize) -> String {
    let (bin, rows) = utilisation_bins(run);
    let source = if run.trace.is_some() {
        format!("{} ms bins from trace.txt", bin / 1_000_000)
    } else {
        "no trace: whole-run busy/(busy+idle) from summary.json".into()
    };
    svg_heatmap(
        run,
        index,
        &Heatmap {
            plot: "util-heatmap",
            title: format!("CPU utilisation: {} ({source})", run.label),
            bin,
            rows: &rows,
            max: 1.0,
            cell: |f| format!("{:.1}% busy", f * 100.0),
            scale: ("0%".into(), "100% busy".into()),
        },
    )
}

/// Mean runnable tasks (running + queued) per CPU and bin, from the
/// trace ([`crate::ftrace_text::runnable_steps`]): `(bin_ns, rows)`, rows
/// in CPU order; None without a trace.
pub fn runnable_bins(run: &RunData) -> Option<(u64, Vec<(u32, Vec<f64>)>)> {
    let tr = run.trace.as_ref()?;
    let Grid { bin, nb, cpus, .. } = grid(run, tr);
    let rows = cpus
        .into_iter()
        .map(|cpu| {
            let steps = tr.runnable.get(&cpu).map(Vec::as_slice).unwrap_or(&[]);
            let row = (0..nb as u64)
                .map(|k| crate::ftrace_text::mean_over(steps, k * bin, (k + 1) * bin))
                .collect();
            (cpu, row)
        })
        .collect();
    Some((bin, rows))
}

/// The bins both heat maps of a traced run share.
struct Grid {
    /// Bin width, ns.
    bin: u64,
    /// Bins.
    nb: usize,
    /// End of the run or of the trace, whichever is later.
    end: u64,
    /// The machine's CPUs and any the trace names.
    cpus: BTreeSet<u32>,
}

/// [`Grid`] of a run with a trace: [`HEATMAP_BIN_NS`] bins, widened to
/// whole ms to stay within [`MAX_HEATMAP_BINS`].
fn grid(run: &RunData, tr: &TraceData) -> Grid {
    let trace_end = tr
        .timeline
        .cpus
        .values()
        .filter_map(|v| v.last().map(|s| s.end_ns))
        .max()
        .unwrap_or(0);
    let end = run.summary.duration_ns.max(trace_end).max(1);
    let mut bin = HEATMAP_BIN_NS;
    if end.div_ceil(bin) > MAX_HEATMAP_BINS {
        bin = end.div_ceil(MAX_HEATMAP_BINS).div_ceil(1_000_000) * 1_000_000;
    }
    let nb = end.div_ceil(bin) as usize;
    let cpus = (0..run.summary.machine.cpus)
        .chain(tr.timeline.cpus.keys().copied())
        .collect();
    Grid { bin, nb, end, cpus }
}

/// The run-queue heatmap of one run: mean runnable tasks per CPU and bin,
/// coloured up to the 99th percentile of the bins. Where every CPU is busy the
/// utilisation map is uniform; this one shows how evenly the load is
/// spread. None without a trace.
pub fn svg_runnable_heatmap(run: &RunData, index: usize) -> Option<String> {
    let (bin, rows) = runnable_bins(run)?;
    // The darkest colour at the cells' 99th percentile, so that a start-up
    // pile (hundreds of forked tasks on one CPU for a few ms) does not
    // wash out the rest; the tooltips give every cell's value.
    let mut all: Vec<f64> = rows.iter().flat_map(|(_, r)| r.iter().copied()).collect();
    all.sort_by(f64::total_cmp);
    let max = all
        .get((all.len() * 99 / 100).min(all.len().saturating_sub(1)))
        .copied()
        .unwrap_or(1.0)
        .max(1.0);
    Some(svg_heatmap(
        run,
        index,
        &Heatmap {
            plot: "runnable-heatmap",
            title: format!(
                "Runnable tasks per CPU: {} ({} ms bins from trace.txt, running + queued)",
                run.label,
                bin / 1_000_000
            ),
            bin,
            rows: &rows,
            max,
            cell: |f| format!("{f:.1} runnable"),
            scale: ("0".into(), format!("{max:.1}+ runnable")),
        },
    ))
}

/// What [`svg_heatmap`] draws.
struct Heatmap<'a, F: Fn(f64) -> String> {
    plot: &'static str,
    title: String,
    bin: u64,
    rows: &'a [(u32, Vec<f64>)],
    /// The value drawn darkest.
    max: f64,
    /// A cell's tooltip value.
    cell: F,
    /// The colour scale's two ends.
    scale: (String, String),
}

/// One CPU per lane, one cell per bin, white (0) to dark blue (`max`).
fn svg_heatmap<F: Fn(f64) -> String>(run: &RunData, index: usize, hm: &Heatmap<F>) -> String {
    let (bin, rows) = (hm.bin, hm.rows);
    let nb = rows.first().map_or(1, |r| r.1.len()).max(1);
    let lane = 16.0;
    let h = MT + lane * rows.len() as f64 + MB;
    let w = ML + PW + MR;
    let cw = PW / nb as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg class="plot" data-plot="{}" data-run="{}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="#fff"/><text x="{ML}" y="16" font-size="13" font-weight="bold" fill="{}">{}</text>"##,
        hm.plot,
        esc(&run.label),
        run_color(index),
        esc(&hm.title),
    );
    for (r, (cpu, row)) in rows.iter().enumerate() {
        let y = MT + r as f64 * lane;
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">CPU {cpu}</text>"#,
            ML - 4.0,
            y + lane - 4.0
        );
        for (k, &f) in row.iter().enumerate() {
            let t0 = k as u64 * bin;
            let _ = write!(
                s,
                r#"<rect x="{:.2}" y="{y}" width="{:.2}" height="{}" fill="{}"><title>CPU {cpu} {}–{} ms: {}</title></rect>"#,
                ML + k as f64 * cw,
                cw + 0.05,
                lane - 1.0,
                heat_color(f / hm.max),
                t0 / 1_000_000,
                (t0 + bin) / 1_000_000,
                (hm.cell)(f)
            );
        }
    }
    let ya = MT + lane * rows.len() as f64;
    let end_s = (bin * nb as u64) as f64 / 1e9;
    for i in 0..=4 {
        let x = ML + i as f64 / 4.0 * PW;
        let _ = write!(
            s,
            r#"<text x="{x}" y="{}" text-anchor="middle">{:.3} s</text>"#,
            ya + 14.0,
            end_s * i as f64 / 4.0
        );
    }
    // colour scale
    let lx = ML + PW + 12.0;
    for i in 0..=10 {
        let f = i as f64 / 10.0;
        let _ = write!(
            s,
            r#"<rect x="{}" y="{MT}" width="11" height="12" fill="{}"/>"#,
            lx + i as f64 * 11.0,
            heat_color(f)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{lx}" y="{}">{}</text><text x="{}" y="{}" text-anchor="end">{}</text></svg>"#,
        MT + 24.0,
        esc(&hm.scale.0),
        lx + 121.0,
        MT + 24.0,
        esc(&hm.scale.1)
    );
    s
}

/// Writes the plots as standalone SVG files into `out_dir` (created if
/// missing): `latency-cdf.svg`, `latency-hist.svg` (pooled per run) and
/// `util-heatmap-<i>.svg` per run. Returns the paths written.
pub fn write_plots_svg(runs: &[RunData], out_dir: &Path) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out_dir)?;
    let mut files = vec![
        ("latency-cdf.svg".to_owned(), svg_latency_cdf(runs, None)),
        ("latency-hist.svg".to_owned(), svg_latency_hist(runs, None)),
    ];
    for (i, r) in runs.iter().enumerate() {
        files.push((format!("util-heatmap-{i}.svg"), svg_util_heatmap(r, i)));
        if let Some(svg) = svg_runnable_heatmap(r, i) {
            files.push((format!("runnable-heatmap-{i}.svg"), svg));
        }
    }
    let mut out = Vec::new();
    for (name, body) in files {
        let path = out_dir.join(name);
        std::fs::write(
            &path,
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n",
                body.replacen("<svg ", &format!("<svg xmlns=\"{SVG_NS}\" "), 1)
            ),
        )?;
        out.push(path);
    }
    Ok(out)
}
