//! `cargo run --release -p schedlab-host --example hostvalidate -- RECORDING SIMDIR...`:
//! prints the validation table of a recording against simulated run directories.
fn main() {
    let args: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    match schedlab_host::validate::validate(&args[0], &args[1..]) {
        Ok(r) => print!("{}", r.to_text()),
        Err(e) => {
            eprintln!("schedlab: error: {e}");
            std::process::exit(2);
        }
    }
}
