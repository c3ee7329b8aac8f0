use schedlab_core::stats::LogRow;
use schedlab_output::rtapp_log::*;

use crate::{assert_text_eq, read_data};

const LOG: &str = "rtapp_cfs_thread-0_sched_idle_2cpu.log";

#[test]
fn real_log_header_is_the_documented_one() {
    let text = read_data(LOG);
    assert_eq!(text.lines().next().unwrap(), RTAPP_LOG_HEADER);
}

#[test]
fn real_log_round_trips_byte_identical() {
    let text = read_data(LOG);
    let rows = parse_rtapp_log(&text).unwrap();
    assert_eq!(rows.len(), 1245);
    // First row, by hand:
    //    0      205     4452     5163      2503260056      2503265219            2789        641       5333       7777         63
    assert_eq!(
        rows[0],
        LogRow {
            idx: 0,
            perf: 205,
            run: 4452,
            period: 5163,
            start: 2503260056,
            end: 2503265219,
            rel_st: 2789,
            slack: 641,
            c_duration: 5333,
            c_period: 7777,
            wu_lat: 63
        }
    );
    assert!(rows.iter().all(|r| r.idx == 0 && r.end >= r.start));
    assert!(rows
        .iter()
        .all(|r| (r.c_duration, r.c_period) == (5333, 7777)));
    let mut out = Vec::new();
    write_log(&mut out, &rows).unwrap();
    assert_text_eq!(String::from_utf8(out).unwrap(), text);

    let mut w = RtAppLogWriter::new(Vec::new()).unwrap();
    for r in &rows {
        w.row(r).unwrap();
    }
    assert_eq!(w.rows(), 1245);
    assert_eq!(w.finish().unwrap(), text.as_bytes());
}

#[test]
fn formats_md_example_rows_are_reproduced() {
    // formats-spec.md 2.3, "Example rows".
    let want = "\
#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat
   0       20     2012    16004    871200000012    871200016016              12      13981       2000      16000         11
   0       20     2003    15987    871200016027    871200032014           16027      13975       2000      16000          9
";
    let rows = vec![
        LogRow {
            idx: 0,
            perf: 20,
            run: 2012,
            period: 16004,
            start: 871200000012,
            end: 871200016016,
            rel_st: 12,
            slack: 13981,
            c_duration: 2000,
            c_period: 16000,
            wu_lat: 11,
        },
        LogRow {
            idx: 0,
            perf: 20,
            run: 2003,
            period: 15987,
            start: 871200016027,
            end: 871200032014,
            rel_st: 16027,
            slack: 13975,
            c_duration: 2000,
            c_period: 16000,
            wu_lat: 9,
        },
    ];
    let mut out = Vec::new();
    write_log(&mut out, &rows).unwrap();
    assert_text_eq!(String::from_utf8(out).unwrap(), want);
    assert_eq!(parse_rtapp_log(want).unwrap(), rows);
}

#[test]
fn negative_slack_and_overflowing_widths_print_like_printf() {
    let r = LogRow {
        idx: 12345,
        perf: 123456789,
        slack: -2470,
        ..Default::default()
    };
    assert_eq!(
        format_log_row(&r),
        "12345 123456789        0        0               0               0               0      -2470          0          0          0"
    );
    assert_eq!(parse_log_row(&format_log_row(&r)).unwrap(), r);
}

#[test]
fn old_policy_header_lines_and_blank_lines_are_skipped() {
    let text = "# Policy : SCHED_OTHER priority : 0\n#idx perf\n\n   1 2 3 4 5 6 7 -8 9 10 11\n";
    let rows = parse_rtapp_log(text).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].slack, -8);
}

#[test]
fn malformed_rows_give_one_line_errors() {
    let e = parse_rtapp_log("#idx\n   0 1 2 3\n").unwrap_err();
    assert_eq!(e.to_string(), "2: expected 11 columns, found 4");
    let e = parse_rtapp_log("#idx\n\n   0 1 2 3 4 5 6 7 8 9 x\n").unwrap_err();
    assert_eq!(e.to_string(), "3: column wu_lat 'x' is not a valid number");
    let e = parse_rtapp_log("   0 1 2 3 4 5 -6 7 8 9 10\n").unwrap_err();
    assert_eq!(e.to_string(), "1: column rel_st '-6' is not a valid number");
}

#[test]
fn log_file_names_follow_rt_app() {
    assert_eq!(
        log_file_name("rt-app", "cfs_thread-0"),
        "rt-app-cfs_thread-0.log"
    );
}
