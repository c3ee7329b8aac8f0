//! schedlab-output integration tests (one binary, one module per output).

mod compare;
mod ftrace;
mod outdir;
mod pftrace;
mod report_html;
mod rtapp;
mod schedstat;
mod summary;
mod table;
mod trace_dat;

/// Path of a file under `tests/data/`.
pub fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Reads a file under `tests/data/`.
pub fn read_data(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// Asserts two texts are equal, printing the first differing line.
#[macro_export]
macro_rules! assert_text_eq {
    ($left:expr, $right:expr) => {{
        let (l, r): (&str, &str) = (&$left, &$right);
        if l != r {
            for (i, (a, b)) in l.lines().zip(r.lines()).enumerate() {
                if a != b {
                    panic!("line {} differs:\n  left:  {a:?}\n  right: {b:?}", i + 1);
                }
            }
            panic!(
                "texts differ in length: {} vs {} lines, {} vs {} bytes",
                l.lines().count(),
                r.lines().count(),
                l.len(),
                r.len()
            );
        }
    }};
}
