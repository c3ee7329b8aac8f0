//! Reading: ftrace text lines into owned records.
//!
//! The line grammar is formats-spec.md 4.1. The context is located the way
//! Perfetto's importer does it (4.5): the first `-<pid>` that is followed by
//! blanks, an optional `(tgid)` and `[<cpu>]` ends the comm, so comms may
//! contain `-` (`cfs_thread-0-19062`, `memfd:sealed-91-2540`). The optional
//! tgid column is accepted and dropped. The flags column is optional (4 or 5
//! characters). The timestamp must have a decimal point; any number of
//! decimals up to 9 is read exactly into ns.
//!
//! Payloads of the five scheduler events are split by their fixed key
//! sequence (not on spaces), so a raw kernel comm with spaces still parses:
//! each value runs up to the next expected ` key=`.

use std::fmt;
use std::io::BufRead;

use super::owned::{OwnedEvent, OwnedRecord, OwnedTask};

/// A parse failure: `Display` is the one-line message `LINE: problem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number in the input.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// What the header says (all fields optional: `trace_pipe` output has none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FtraceHeader {
    /// `# tracer: NAME`.
    pub tracer: Option<String>,
    /// First number of `entries-in-buffer/entries-written: A/B`.
    pub entries_in_buffer: Option<u64>,
    /// Second number of that line.
    pub entries_written: Option<u64>,
    /// `#P:N`, the number of CPUs.
    pub nr_cpus: Option<u32>,
}

/// Reads the leading `#` lines of a `trace` file.
pub fn parse_ftrace_header(text: &str) -> FtraceHeader {
    let mut h = FtraceHeader::default();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix('#') else {
            if line.trim().is_empty() {
                continue;
            }
            break;
        };
        let rest = rest.trim();
        if let Some(t) = rest.strip_prefix("tracer:") {
            h.tracer = Some(t.trim().to_string());
        } else if let Some(t) = rest.strip_prefix("entries-in-buffer/entries-written:") {
            let (counts, cpus) = t.split_once("#P:").unwrap_or((t, ""));
            if let Some((a, b)) = counts.trim().split_once('/') {
                h.entries_in_buffer = a.trim().parse().ok();
                h.entries_written = b.trim().parse().ok();
            }
            h.nr_cpus = cpus.trim().parse().ok();
        }
    }
    h
}

/// Parses a whole `trace` (or `trace_pipe`) text: `#` lines and blank lines
/// are skipped, every other line must be an event line.
pub fn parse_ftrace_text(text: &str) -> Result<Vec<OwnedRecord>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match parse_ftrace_line(line) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(message) => {
                return Err(ParseError {
                    line: i + 1,
                    message,
                })
            }
        }
    }
    Ok(out)
}

/// Streaming reader: yields one record per event line of `R`.
#[derive(Debug)]
pub struct FtraceLines<R> {
    input: R,
    buf: String,
    line: usize,
}

impl<R: BufRead> FtraceLines<R> {
    /// Reads lines from `input`.
    pub fn new(input: R) -> Self {
        FtraceLines {
            input,
            buf: String::new(),
            line: 0,
        }
    }
}

impl<R: BufRead> Iterator for FtraceLines<R> {
    type Item = Result<OwnedRecord, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            self.line += 1;
            match self.input.read_line(&mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    return Some(Err(ParseError {
                        line: self.line,
                        message: format!("read error: {e}"),
                    }))
                }
            }
            let l = self.buf.strip_suffix('\n').unwrap_or(&self.buf);
            match parse_ftrace_line(l) {
                Ok(Some(r)) => return Some(Ok(r)),
                Ok(None) => continue,
                Err(message) => {
                    return Some(Err(ParseError {
                        line: self.line,
                        message,
                    }))
                }
            }
        }
    }
}

/// Finds the context `-<pid> [(tgid)] [<cpu>]`; returns (comm end, pid,
/// cpu, index after `]`).
fn find_context(line: &str) -> Option<(usize, u32, u32, usize)> {
    let b = line.as_bytes();
    let digits = |mut i: usize| {
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        (s, i)
    };
    let blanks = |mut i: usize| {
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        i
    };
    for (dash, _) in line.match_indices('-') {
        let (ps, pe) = digits(dash + 1);
        if pe == ps || pe >= b.len() || b[pe] != b' ' {
            continue;
        }
        let mut i = blanks(pe);
        if i < b.len() && b[i] == b'(' {
            // Optional tgid: "(%7d) " or "(-------) ".
            let Some(close) = line[i..].find(')') else {
                continue;
            };
            i = blanks(i + close + 1);
        }
        if i >= b.len() || b[i] != b'[' {
            continue;
        }
        let (cs, ce) = digits(i + 1);
        if ce == cs || ce >= b.len() || b[ce] != b']' {
            continue;
        }
        let pid = line[ps..pe].parse().ok()?;
        let cpu = line[cs..ce].parse().ok()?;
        return Some((dash, pid, cpu, ce + 1));
    }
    None
}

/// Parses `secs.frac` into ns (at most 9 decimals).
fn parse_timestamp(t: &str) -> Result<u64, String> {
    let Some((s, f)) = t.split_once('.') else {
        return Err(format!(
            "timestamp '{t}' has no decimal point (counter trace clock?)"
        ));
    };
    let ok = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
    if !ok(s) || !ok(f) || f.len() > 9 {
        return Err(format!("bad timestamp '{t}'"));
    }
    let secs: u64 = s.parse().map_err(|_| format!("bad timestamp '{t}'"))?;
    let frac: u64 = f.parse().map_err(|_| format!("bad timestamp '{t}'"))?;
    let scale = 10u64.pow(9 - f.len() as u32);
    secs.checked_mul(1_000_000_000)
        .and_then(|v| v.checked_add(frac * scale))
        .ok_or_else(|| format!("timestamp '{t}' is too large"))
}

/// Parses one line. `Ok(None)` for comment and blank lines; `Err` is the
/// problem without the line number.
pub fn parse_ftrace_line(line: &str) -> Result<Option<OwnedRecord>, String> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.trim().is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let (comm_end, ctx_pid, cpu, after) = find_context(line)
        .ok_or_else(|| "no 'COMM-PID [CPU]' context at the start of the line".to_string())?;
    let ctx_comm = line[..comm_end].trim_start().to_string();
    let mut rest = line[after..].trim_start_matches(' ');
    // Optional flags, then the timestamp followed by ':'.
    let mut flags = String::new();
    let tok_end = rest.find(' ').unwrap_or(rest.len());
    let tok = &rest[..tok_end];
    if !tok.ends_with(':') {
        let valid = (4..=5).contains(&tok.len())
            && tok.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'.');
        if !valid {
            return Err(format!("bad flags field '{tok}'"));
        }
        flags = tok.to_string();
        rest = rest[tok_end..].trim_start_matches(' ');
    }
    let ts_end = rest
        .find(": ")
        .or_else(|| rest.strip_suffix(':').map(|r| r.len()))
        .ok_or_else(|| "missing ': ' after the timestamp".to_string())?;
    let time_ns = parse_timestamp(&rest[..ts_end])?;
    rest = rest[ts_end + 1..].trim_start_matches(' ');
    let name_end = rest
        .find(':')
        .ok_or_else(|| "missing ':' after the event name".to_string())?;
    let name = &rest[..name_end];
    if name.is_empty() || name.contains(' ') {
        return Err(format!("bad event name '{name}'"));
    }
    let payload = rest[name_end + 1..]
        .strip_prefix(' ')
        .unwrap_or(&rest[name_end + 1..]);
    let event = parse_payload(name, payload).map_err(|e| format!("{name}: {e}"))?;
    Ok(Some(OwnedRecord {
        time_ns,
        cpu,
        ctx_comm,
        ctx_pid,
        flags,
        event,
    }))
}

/// Splits `payload` by the expected key sequence: `keys[0]` must start it,
/// and value `i` ends where ` keys[i+1]` begins (the last runs to the end).
fn split_keys<'a, const N: usize>(
    payload: &'a str,
    keys: [&str; N],
) -> Result<[&'a str; N], String> {
    let mut vals = [""; N];
    let Some(mut rest) = payload.strip_prefix(keys[0]) else {
        return Err(format!(
            "expected '{}' at the start of the payload",
            keys[0]
        ));
    };
    for i in 0..N {
        if i + 1 == N {
            vals[i] = rest.trim_end();
        } else {
            let pos = rest
                .find(keys[i + 1])
                .ok_or_else(|| format!("missing '{}'", keys[i + 1].trim_start()))?;
            vals[i] = &rest[..pos];
            rest = &rest[pos + keys[i + 1].len()..];
        }
    }
    Ok(vals)
}

fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{key}: '{v}' is not a number"))
}

fn parse_payload(name: &str, p: &str) -> Result<OwnedEvent, String> {
    let task = |v: [&str; 3]| -> Result<OwnedTask, String> {
        Ok(OwnedTask {
            comm: v[0].to_string(),
            pid: num("pid", v[1])?,
            prio: num("prio", v[2])?,
        })
    };
    Ok(match name {
        "sched_switch" => {
            let v = split_keys(
                p,
                [
                    "prev_comm=",
                    " prev_pid=",
                    " prev_prio=",
                    " prev_state=",
                    " ==> next_comm=",
                    " next_pid=",
                    " next_prio=",
                ],
            )?;
            OwnedEvent::SchedSwitch {
                prev: OwnedTask {
                    comm: v[0].to_string(),
                    pid: num("prev_pid", v[1])?,
                    prio: num("prev_prio", v[2])?,
                },
                prev_state: v[3].to_string(),
                next: OwnedTask {
                    comm: v[4].to_string(),
                    pid: num("next_pid", v[5])?,
                    prio: num("next_prio", v[6])?,
                },
            }
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let v = split_keys(p, ["comm=", " pid=", " prio=", " target_cpu="])?;
            let task = task([v[0], v[1], v[2]])?;
            let target_cpu = num("target_cpu", v[3])?;
            match name {
                "sched_waking" => OwnedEvent::SchedWaking { task, target_cpu },
                "sched_wakeup" => OwnedEvent::SchedWakeup { task, target_cpu },
                _ => OwnedEvent::SchedWakeupNew { task, target_cpu },
            }
        }
        "sched_migrate_task" => {
            let v = split_keys(p, ["comm=", " pid=", " prio=", " orig_cpu=", " dest_cpu="])?;
            OwnedEvent::SchedMigrateTask {
                task: task([v[0], v[1], v[2]])?,
                orig_cpu: num("orig_cpu", v[3])?,
                dest_cpu: num("dest_cpu", v[4])?,
            }
        }
        _ => OwnedEvent::Other {
            name: name.to_string(),
            payload: p.trim_end().to_string(),
        },
    })
}
