//! `cargo run --release -p schedlab-host --example hostrecord -- WORKLOAD DIR [DURATION_MS]`.
use schedlab_host::{record, RecordOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = &args[1];
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
    let mut opts = RecordOptions::default();
    opts.exec.channels = schedlab_host::ChannelConfig::from_spec(spec);
    opts.exec.duration_ns = args
        .get(3)
        .map(|ms| ms.parse::<u64>().expect("ms") * 1_000_000);
    match record(&w, std::path::Path::new(&args[2]), &opts) {
        Ok(r) => println!(
            "{} lines -> {}; {}",
            r.host.trace.lines,
            r.trace_path.display(),
            r.host_json_path.display()
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
