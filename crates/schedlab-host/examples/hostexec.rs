//! `cargo run --release -p schedlab-host --example hostexec -- WORKLOAD [DURATION_MS]`:
//! runs a workload (rt-app JSON or generator spec) on this host and prints
//! per-thread wake-up latency percentiles and /proc figures.
use schedlab_host::{exec, ExecOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).expect("usage: hostexec WORKLOAD [DURATION_MS]");
    let ncpu = schedlab_host::sys::online_cpus().len();
    let w = match schedlab_workload::generators::generator(spec, ncpu) {
        Some(r) => r.expect("generator").workload,
        None => {
            let text = std::fs::read_to_string(spec).expect("read workload");
            schedlab_workload::load_rtapp(spec, &text, ncpu)
                .expect("load")
                .workload
        }
    };
    let opts = ExecOptions {
        channels: schedlab_host::ChannelConfig::from_spec(spec),
        duration_ns: args
            .get(2)
            .map(|ms| ms.parse::<u64>().expect("ms") * 1_000_000),
        ..Default::default()
    };
    let r = match exec(&w, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "calibration: {:.3} ns/loop on CPU {:?}",
        r.calibration.ns_per_loop, r.calibration.cpu
    );
    println!(
        "wall: {:.3} s from T0, {:.3} s from the barrier's release to the last exit",
        (r.last_exit_ns - r.t0_ns) as f64 / 1e9,
        (r.last_exit_ns - r.released_ns) as f64 / 1e9
    );
    println!(
        "{:<16} {:>7} {:>10} {:>6} {:>6} {:>6} {:>6} {:>9} {:>9} {:>6} {:>6} {:>5}",
        "thread",
        "tid",
        "rows(miss)",
        "p50",
        "p90",
        "p99",
        "max",
        "run_ms",
        "wait_ms",
        "vol",
        "invol",
        "migr"
    );
    for t in &r.threads {
        let p = schedlab_host::exec::wu_lat_percentiles(&t.log).unwrap_or([0; 4]);
        println!(
            "{:<16} {:>7} {:>10} {:>6} {:>6} {:>6} {:>6} {:>9.1} {:>9.1} {:>6} {:>6} {:>5}",
            t.name,
            t.tid,
            format!(
                "{}({})",
                t.log.len(),
                t.log.iter().filter(|r| r.slack < 0).count()
            ),
            p[0],
            p[1],
            p[2],
            p[3],
            t.stats.run_ns as f64 / 1e6,
            t.stats.wait_ns as f64 / 1e6,
            t.stats.voluntary_switches,
            t.stats.involuntary_switches,
            t.stats
                .migrations
                .map_or("-".to_string(), |m| m.to_string())
        );
        if std::env::var_os("ROWS").is_some() {
            for row in t.log.iter().take(5) {
                println!("   {row:?}");
            }
        }
    }
    for g in &r.groups {
        println!("group {} before {:?} after {:?}", g.path, g.before, g.after);
    }
    for w in &r.warnings {
        println!("warning: {w}");
    }
}
