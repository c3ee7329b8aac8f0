//! `/proc/schedstat` writer and reader (formats-spec.md section 5, kernel-model.md
//! section 14.1).
//!
//! The writer always produces **version 17**:
//!
//! ```text
//! version 17
//! timestamp <jiffies>
//! cpu<N> <9 counters>                       per CPU, in slice order
//! domain<D> <name> <cpumask> <45 counters>  per domain of that CPU, innermost first
//! ```
//!
//! * cpu line (all versions): `yld_count`, legacy `0`, `sched_count`,
//!   `sched_goidle`, `ttwu_count`, `ttwu_local`, `rq_cpu_time`, `run_delay`,
//!   `pcount` (formats-spec.md 5.2).
//! * domain line, v17: three groups of the 11 [`LbIdleCounters`] in idle-type
//!   order **busy, idle, newly idle** ([`IdleType`]), then `alb_count`,
//!   `alb_failed`, `alb_pushed`, `sbe_count`, `sbe_balanced`, `sbe_pushed`,
//!   `sbf_count`, `sbf_balanced`, `sbf_pushed`, `ttwu_wake_remote`,
//!   `ttwu_move_affine`, `ttwu_move_balance` (formats-spec.md 5.3): 45 counters.
//! * `<cpumask>` is the kernel's `%*pb` format ([`format_cpumask`]).
//!
//! The reader ([`parse_schedstat`]) accepts versions 15, 16 and 17:
//!
//! | version | domain line after `domain<D>` | lb groups (in file order) |
//! |---|---|---|
//! | 15 | mask + 36 counters (8 per group) | idle, busy, newly idle |
//! | 16 | mask + 36 counters (8 per group) | busy, idle, newly idle |
//! | 17 | `[name]` mask + 45 counters (11 per group) | busy, idle, newly idle |
//!
//! Whatever the file's version, the parsed [`DomainSchedstat::lb`] is always
//! indexed by [`IdleType`] (v17 order), so v15 groups are reordered.
//!
//! Deviations and choices (documented here, not in formats-spec.md):
//!
//! * The legacy cpu-line field 2 is written as `0`; the reader accepts any
//!   value there and drops it (it has no struct field).
//! * v15/v16 have a single `lb_imbalance` per group. The reader stores it in
//!   `lb_imbalance_load` and leaves the other three imbalance counters 0, so
//!   [`LbIdleCounters::lb_imbalance_total`] gives back the old counter.
//!   Writing such a parsed file produces v17, not the original version.
//! * v17 prints the domain name only with CONFIG_SCHED_DEBUG on some kernels
//!   (kernel-model.md 14.1); the reader accepts v17 domain lines with or
//!   without the name (told apart by the field count) and gives an empty
//!   [`DomainSchedstat::name`] when it is absent. The writer always prints
//!   the name and refuses an empty one or one containing whitespace.
//! * Field meanings for `lb_nobusyq`/`lb_nobusyg` follow kernel-model.md 14.1
//!   (`nobusyg`: no busiest group; `nobusyq`: busiest group but no busiest
//!   queue); formats-spec.md 5.3 words them differently but the order is the same.
//! * Out-of-tree extra fields (the STEAL patch's counter, kernel-model.md 11.4)
//!   are not supported: such lines fail with a field-count error.
//! * Blank lines are ignored by the reader; the kernel never prints any.
//!
//! Implemented from the documentation only; no kernel code was copied.

use std::fmt;
use std::fmt::Write as _;
use std::io::{self, Write};

/// The version [`write_schedstat`] produces.
pub const SCHEDSTAT_VERSION: u32 = 17;

/// The versions [`parse_schedstat`] accepts.
pub const SUPPORTED_VERSIONS: [u32; 3] = [15, 16, 17];

/// Number of counters on a `cpu<N>` line (all supported versions).
pub const CPU_FIELDS: usize = 9;

/// Number of trailing (non-lb) counters on a domain line (all versions).
pub const DOMAIN_TRAILING_FIELDS: usize = 12;

/// Names of the cpu-line counters, in file order (`legacy` is always 0).
pub const CPU_FIELD_NAMES: [&str; CPU_FIELDS] = [
    "yld_count",
    "legacy",
    "sched_count",
    "sched_goidle",
    "ttwu_count",
    "ttwu_local",
    "rq_cpu_time",
    "run_delay",
    "pcount",
];

/// Names of the per-idle-type counters of version 17, in file order.
pub const LB_FIELD_NAMES_V17: [&str; 11] = [
    "lb_count",
    "lb_balanced",
    "lb_failed",
    "lb_imbalance_load",
    "lb_imbalance_util",
    "lb_imbalance_task",
    "lb_imbalance_misfit",
    "lb_gained",
    "lb_hot_gained",
    "lb_nobusyq",
    "lb_nobusyg",
];

/// Names of the per-idle-type counters of versions 15 and 16, in file order.
pub const LB_FIELD_NAMES_V15: [&str; 8] = [
    "lb_count",
    "lb_balanced",
    "lb_failed",
    "lb_imbalance",
    "lb_gained",
    "lb_hot_gained",
    "lb_nobusyq",
    "lb_nobusyg",
];

/// Names of the 12 trailing domain counters, in file order.
pub const DOMAIN_TRAILING_FIELD_NAMES: [&str; DOMAIN_TRAILING_FIELDS] = [
    "alb_count",
    "alb_failed",
    "alb_pushed",
    "sbe_count",
    "sbe_balanced",
    "sbe_pushed",
    "sbf_count",
    "sbf_balanced",
    "sbf_pushed",
    "ttwu_wake_remote",
    "ttwu_move_affine",
    "ttwu_move_balance",
];

/// Number of counters after the cpumask on a domain line of `version`
/// (36 for 15 and 16, 45 for 17), or `None` for an unsupported version.
pub fn domain_field_count(version: u32) -> Option<usize> {
    lb_fields_per_group(version).map(|n| 3 * n + DOMAIN_TRAILING_FIELDS)
}

fn lb_fields_per_group(version: u32) -> Option<usize> {
    match version {
        15 | 16 => Some(LB_FIELD_NAMES_V15.len()),
        17 => Some(LB_FIELD_NAMES_V17.len()),
        _ => None,
    }
}

/// CPU idle type of a load-balancing attempt; the discriminant is the index
/// into [`DomainSchedstat::lb`] and the group order of versions 16 and 17.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdleType {
    /// `__CPU_NOT_IDLE`: balancing from a busy CPU.
    Busy = 0,
    /// `CPU_IDLE`: balancing from an idle CPU (tick or NOHZ idle balance).
    Idle = 1,
    /// `CPU_NEWLY_IDLE`: newidle balancing.
    NewlyIdle = 2,
}

impl IdleType {
    /// All idle types in v16/v17 file order.
    pub const ALL: [IdleType; 3] = [IdleType::Busy, IdleType::Idle, IdleType::NewlyIdle];

    /// Index into [`DomainSchedstat::lb`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Short name used in error messages (`busy`, `idle`, `newly-idle`).
    pub fn name(self) -> &'static str {
        match self {
            IdleType::Busy => "busy",
            IdleType::Idle => "idle",
            IdleType::NewlyIdle => "newly-idle",
        }
    }

    /// The idle types in the group order of `version`'s domain lines.
    pub fn file_order(version: u32) -> [IdleType; 3] {
        if version == 15 {
            [IdleType::Idle, IdleType::Busy, IdleType::NewlyIdle]
        } else {
            IdleType::ALL
        }
    }
}

/// The v17 load-balancing counters of one idle type of one domain, in file
/// order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LbIdleCounters {
    /// `sched_balance_rq()` calls.
    pub lb_count: u64,
    /// Calls that found no need to balance (or were not the designated CPU).
    pub lb_balanced: u64,
    /// Calls that wanted to move tasks but moved nothing.
    pub lb_failed: u64,
    /// Sum of imbalances found when migrating load (v15/v16: all imbalances).
    pub lb_imbalance_load: u64,
    /// Sum of imbalances found when migrating utilisation.
    pub lb_imbalance_util: u64,
    /// Sum of imbalances found when migrating tasks.
    pub lb_imbalance_task: u64,
    /// Sum of imbalances due to misfit tasks.
    pub lb_imbalance_misfit: u64,
    /// Tasks pulled.
    pub lb_gained: u64,
    /// Tasks pulled although cache-hot.
    pub lb_hot_gained: u64,
    /// A busiest group was found but no busiest queue in it.
    pub lb_nobusyq: u64,
    /// No busiest group was found.
    pub lb_nobusyg: u64,
}

impl LbIdleCounters {
    /// The counters in v17 file order.
    pub fn to_array(&self) -> [u64; 11] {
        [
            self.lb_count,
            self.lb_balanced,
            self.lb_failed,
            self.lb_imbalance_load,
            self.lb_imbalance_util,
            self.lb_imbalance_task,
            self.lb_imbalance_misfit,
            self.lb_gained,
            self.lb_hot_gained,
            self.lb_nobusyq,
            self.lb_nobusyg,
        ]
    }

    /// Builds the counters from v17 file order.
    pub fn from_array(a: [u64; 11]) -> Self {
        LbIdleCounters {
            lb_count: a[0],
            lb_balanced: a[1],
            lb_failed: a[2],
            lb_imbalance_load: a[3],
            lb_imbalance_util: a[4],
            lb_imbalance_task: a[5],
            lb_imbalance_misfit: a[6],
            lb_gained: a[7],
            lb_hot_gained: a[8],
            lb_nobusyq: a[9],
            lb_nobusyg: a[10],
        }
    }

    /// Builds the counters from v15/v16 file order (`lb_imbalance` goes to
    /// `lb_imbalance_load`).
    fn from_v15(a: &[u64]) -> Self {
        LbIdleCounters {
            lb_count: a[0],
            lb_balanced: a[1],
            lb_failed: a[2],
            lb_imbalance_load: a[3],
            lb_gained: a[4],
            lb_hot_gained: a[5],
            lb_nobusyq: a[6],
            lb_nobusyg: a[7],
            ..Default::default()
        }
    }

    /// Sum of the four imbalance counters (saturating): the pre-v17
    /// `lb_imbalance`.
    pub fn lb_imbalance_total(&self) -> u64 {
        self.lb_imbalance_load
            .saturating_add(self.lb_imbalance_util)
            .saturating_add(self.lb_imbalance_task)
            .saturating_add(self.lb_imbalance_misfit)
    }
}

/// The counters of one `domain<D>` line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainSchedstat {
    /// Level name (`SMT`, `CLS`, `MC`, `PKG`, `NUMA`, ...); empty when the
    /// file did not print it (v15/v16, or v17 without CONFIG_SCHED_DEBUG).
    pub name: String,
    /// CPUs in the domain span; the reader returns them ascending.
    pub span_cpus: Vec<u32>,
    /// Load-balancing counters indexed by [`IdleType::index`]
    /// (busy, idle, newly idle).
    pub lb: [LbIdleCounters; 3],
    /// Active load balance calls.
    pub alb_count: u64,
    /// Active balances that tried to move a task and failed.
    pub alb_failed: u64,
    /// Active balances that moved a task.
    pub alb_pushed: u64,
    /// Exec balancing calls (always 0 in current kernels).
    pub sbe_count: u64,
    /// Exec balancing: balanced (always 0 in current kernels).
    pub sbe_balanced: u64,
    /// Exec balancing: pushed (always 0 in current kernels).
    pub sbe_pushed: u64,
    /// Fork balancing calls (always 0 in current kernels).
    pub sbf_count: u64,
    /// Fork balancing: balanced (always 0 in current kernels).
    pub sbf_balanced: u64,
    /// Fork balancing: pushed (always 0 in current kernels).
    pub sbf_pushed: u64,
    /// Wake-ups of a task that last ran on another CPU of this domain.
    pub ttwu_wake_remote: u64,
    /// Wake-ups that moved the task to the waking CPU (wake-affine).
    pub ttwu_move_affine: u64,
    /// Wake-ups that started passive balancing (unused in current kernels).
    pub ttwu_move_balance: u64,
}

impl DomainSchedstat {
    /// The 12 trailing counters in file order.
    pub fn trailing_array(&self) -> [u64; DOMAIN_TRAILING_FIELDS] {
        [
            self.alb_count,
            self.alb_failed,
            self.alb_pushed,
            self.sbe_count,
            self.sbe_balanced,
            self.sbe_pushed,
            self.sbf_count,
            self.sbf_balanced,
            self.sbf_pushed,
            self.ttwu_wake_remote,
            self.ttwu_move_affine,
            self.ttwu_move_balance,
        ]
    }

    fn set_trailing(&mut self, a: &[u64]) {
        self.alb_count = a[0];
        self.alb_failed = a[1];
        self.alb_pushed = a[2];
        self.sbe_count = a[3];
        self.sbe_balanced = a[4];
        self.sbe_pushed = a[5];
        self.sbf_count = a[6];
        self.sbf_balanced = a[7];
        self.sbf_pushed = a[8];
        self.ttwu_wake_remote = a[9];
        self.ttwu_move_affine = a[10];
        self.ttwu_move_balance = a[11];
    }
}

/// The counters of one `cpu<N>` line plus its domain lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSchedstat {
    /// CPU number N of `cpu<N>`.
    pub cpu: u32,
    /// Field 1: `sched_yield()` calls.
    pub yld_count: u64,
    // Field 2 is the legacy always-zero counter; it has no field.
    /// Field 3: `schedule()` calls.
    pub sched_count: u64,
    /// Field 4: `schedule()` calls that left the CPU idle.
    pub sched_goidle: u64,
    /// Field 5: `try_to_wake_up()` calls made by this CPU.
    pub ttwu_count: u64,
    /// Field 6: of those, wake-ups onto this (the waking) CPU.
    pub ttwu_local: u64,
    /// Field 7: ns tasks ran on this CPU.
    pub rq_cpu_time_ns: u64,
    /// Field 8: ns tasks waited on this runqueue.
    pub run_delay_ns: u64,
    /// Field 9: timeslices run on this CPU.
    pub pcount: u64,
    /// Domain lines, innermost first (`domain0`, `domain1`, ...).
    pub domains: Vec<DomainSchedstat>,
}

/// A parsed `/proc/schedstat`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedstat {
    /// The `version` line (15, 16 or 17).
    pub version: u32,
    /// The `timestamp` line (jiffies).
    pub timestamp: u64,
    /// Width in bits implied by the cpumasks (4 × hex digits, a multiple of
    /// 4, at least the machine's CPU count); 0 when there is no domain line.
    /// Passing it as `nr_cpus` to [`write_schedstat`] reproduces the masks.
    pub mask_bits: usize,
    /// The CPU lines in file order, each with its domains.
    pub cpus: Vec<CpuSchedstat>,
}

/// A malformed `/proc/schedstat`; `Display` is `LINE: problem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedstatError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong (one line).
    pub message: String,
}

impl fmt::Display for SchedstatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line, self.message)
    }
}

impl std::error::Error for SchedstatError {}

/// Formats a CPU set in the kernel's `%*pb` bitmap format for a bitmap of
/// `nr_cpus` bits: hex, 32-bit chunks separated by commas, most significant
/// chunk first, every chunk 8 digits except the first, which has just enough
/// digits for the remaining bits. `nr_cpus == 0` gives an empty string.
///
/// # Panics
///
/// If a CPU in `cpus` is `>= nr_cpus`.
pub fn format_cpumask(cpus: &[u32], nr_cpus: usize) -> String {
    let nchunks = nr_cpus.div_ceil(32);
    let mut words = vec![0u32; nchunks];
    for &c in cpus {
        let c = c as usize;
        assert!(c < nr_cpus, "cpu {c} outside a {nr_cpus}-bit cpumask");
        words[c / 32] |= 1 << (c % 32);
    }
    let mut s = String::with_capacity(nchunks * 9);
    for (i, w) in words.iter().enumerate().rev() {
        if i == nchunks - 1 {
            let width = ((nr_cpus - 1) % 32) / 4 + 1;
            let _ = write!(s, "{w:0width$x}");
        } else {
            let _ = write!(s, ",{w:08x}");
        }
    }
    s
}

/// Parses a `%*pb` cpumask into the ascending list of set CPUs.
///
/// Every chunk but the first must have exactly 8 hex digits; the first has 1
/// to 8. The empty string is the empty mask of a 0-bit bitmap.
pub fn parse_cpumask(s: &str) -> Result<Vec<u32>, String> {
    parse_cpumask_bits(s).map(|(cpus, _)| cpus)
}

/// Like [`parse_cpumask`], also returning the bitmap width the text implies
/// (4 × number of hex digits).
fn parse_cpumask_bits(s: &str) -> Result<(Vec<u32>, usize), String> {
    if s.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let chunks: Vec<&str> = s.split(',').collect();
    let n = chunks.len();
    let mut cpus = Vec::new();
    let mut digits = 0;
    for (k, chunk) in chunks.iter().enumerate() {
        let ok_len = if k == 0 {
            (1..=8).contains(&chunk.len())
        } else {
            chunk.len() == 8
        };
        if !ok_len || !chunk.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "cpumask '{s}': chunk {} '{chunk}' is not {} hex digits",
                k + 1,
                if k == 0 { "1 to 8" } else { "8" }
            ));
        }
        digits += chunk.len();
        let w = u32::from_str_radix(chunk, 16).expect("checked hex digits");
        let base = 32 * (n - 1 - k) as u32;
        for b in 0..32 {
            if w & (1 << b) != 0 {
                cpus.push(base + b);
            }
        }
    }
    cpus.sort_unstable();
    Ok((cpus, 4 * digits))
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Writes a version-17 `/proc/schedstat`: `version 17`, `timestamp
/// <timestamp_jiffies>`, then per CPU its cpu line and its domain lines
/// (`domain<D> <name> <cpumask> <45 counters>`), cpumasks `nr_cpus` bits wide.
///
/// Fails with [`io::ErrorKind::InvalidInput`] (before writing that CPU's
/// lines) if a domain name is empty or contains whitespace, or a span CPU is
/// `>= nr_cpus`.
pub fn write_schedstat<W: Write>(
    out: &mut W,
    timestamp_jiffies: u64,
    nr_cpus: usize,
    cpus: &[CpuSchedstat],
) -> io::Result<()> {
    writeln!(out, "version {SCHEDSTAT_VERSION}")?;
    writeln!(out, "timestamp {timestamp_jiffies}")?;
    let mut buf = String::new();
    for c in cpus {
        buf.clear();
        let _ = writeln!(
            buf,
            "cpu{} {} 0 {} {} {} {} {} {} {}",
            c.cpu,
            c.yld_count,
            c.sched_count,
            c.sched_goidle,
            c.ttwu_count,
            c.ttwu_local,
            c.rq_cpu_time_ns,
            c.run_delay_ns,
            c.pcount
        );
        for (d, dom) in c.domains.iter().enumerate() {
            if dom.name.is_empty() || dom.name.contains(char::is_whitespace) {
                return Err(invalid(format!(
                    "cpu{} domain{d}: name {:?} must be non-empty without whitespace",
                    c.cpu, dom.name
                )));
            }
            if let Some(bad) = dom.span_cpus.iter().find(|&&x| x as usize >= nr_cpus) {
                return Err(invalid(format!(
                    "cpu{} domain{d}: span cpu {bad} >= nr_cpus {nr_cpus}",
                    c.cpu
                )));
            }
            let _ = write!(
                buf,
                "domain{d} {} {}",
                dom.name,
                format_cpumask(&dom.span_cpus, nr_cpus)
            );
            for t in IdleType::ALL {
                for v in dom.lb[t.index()].to_array() {
                    let _ = write!(buf, " {v}");
                }
            }
            for v in dom.trailing_array() {
                let _ = write!(buf, " {v}");
            }
            buf.push('\n');
        }
        out.write_all(buf.as_bytes())?;
    }
    Ok(())
}

/// Parses a `/proc/schedstat` of version 15, 16 or 17 (see the module
/// documentation for the layouts and how older versions are mapped).
pub fn parse_schedstat(text: &str) -> Result<Schedstat, SchedstatError> {
    let mut version: Option<u32> = None;
    let mut timestamp: Option<u64> = None;
    let mut mask_bits: Option<usize> = None;
    let mut cpus: Vec<CpuSchedstat> = Vec::new();
    let mut last_line = 0;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        last_line = lineno;
        let err = |message: String| SchedstatError {
            line: lineno,
            message,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(&head) = fields.first() else {
            continue;
        };
        let Some(v) = version else {
            if head != "version" {
                return Err(err(format!(
                    "expected 'version <N>' first, found '{}'",
                    short(line)
                )));
            }
            if fields.len() != 2 {
                return Err(err("'version' needs exactly one value".into()));
            }
            let n: u32 = number(fields[1], "version").map_err(err)?;
            if !SUPPORTED_VERSIONS.contains(&n) {
                return Err(err(format!(
                    "unsupported schedstat version {n} (supported: 15, 16, 17)"
                )));
            }
            version = Some(n);
            continue;
        };
        if timestamp.is_none() {
            if head != "timestamp" || fields.len() != 2 {
                return Err(err(format!(
                    "expected 'timestamp <jiffies>' after the version, found '{}'",
                    short(line)
                )));
            }
            timestamp = Some(number(fields[1], "timestamp").map_err(err)?);
            continue;
        }
        if let Some(n) = head.strip_prefix("cpu").filter(|n| is_decimal(n)) {
            let cpu: u32 = number(n, "cpu number").map_err(err)?;
            if let Some(prev) = cpus.last() {
                if cpu <= prev.cpu {
                    return Err(err(format!(
                        "cpu{cpu} after cpu{}: cpu numbers must increase",
                        prev.cpu
                    )));
                }
            }
            cpus.push(parse_cpu_line(cpu, &fields[1..]).map_err(err)?);
        } else if let Some(n) = head.strip_prefix("domain").filter(|n| is_decimal(n)) {
            let Some(cpu) = cpus.last_mut() else {
                return Err(err(format!("{head} before any cpu line")));
            };
            let want = cpu.domains.len();
            if n.parse::<usize>().ok() != Some(want) {
                return Err(err(format!(
                    "expected domain{want} of cpu{}, found {head}",
                    cpu.cpu
                )));
            }
            let (dom, bits) = parse_domain_line(v, head, &fields[1..]).map_err(err)?;
            match mask_bits {
                None => mask_bits = Some(bits),
                Some(b) if b != bits => {
                    return Err(err(format!(
                        "{head}: cpumask is {bits} bits wide, earlier masks are {b}"
                    )))
                }
                Some(_) => {}
            }
            cpu.domains.push(dom);
        } else {
            return Err(err(format!("unexpected line '{}'", short(line))));
        }
    }
    let Some(version) = version else {
        return Err(SchedstatError {
            line: last_line.max(1),
            message: "missing 'version <N>' line".into(),
        });
    };
    let Some(timestamp) = timestamp else {
        return Err(SchedstatError {
            line: last_line.max(1),
            message: "missing 'timestamp <jiffies>' line".into(),
        });
    };
    Ok(Schedstat {
        version,
        timestamp,
        mask_bits: mask_bits.unwrap_or(0),
        cpus,
    })
}

fn parse_cpu_line(cpu: u32, f: &[&str]) -> Result<CpuSchedstat, String> {
    if f.len() != CPU_FIELDS {
        return Err(format!(
            "cpu{cpu} has {} counters, expected {CPU_FIELDS}",
            f.len()
        ));
    }
    let mut v = [0u64; CPU_FIELDS];
    for (k, tok) in f.iter().enumerate() {
        v[k] = number(
            tok,
            &format!("cpu{cpu} field {} ({})", k + 1, CPU_FIELD_NAMES[k]),
        )?;
    }
    Ok(CpuSchedstat {
        cpu,
        yld_count: v[0],
        sched_count: v[2],
        sched_goidle: v[3],
        ttwu_count: v[4],
        ttwu_local: v[5],
        rq_cpu_time_ns: v[6],
        run_delay_ns: v[7],
        pcount: v[8],
        domains: Vec::new(),
    })
}

/// `f` is everything after `domain<D>`.
fn parse_domain_line(
    version: u32,
    head: &str,
    f: &[&str],
) -> Result<(DomainSchedstat, usize), String> {
    let per_group = lb_fields_per_group(version).expect("supported version");
    let want = domain_field_count(version).expect("supported version");
    let (name, rest) = if version >= 17 && f.len() == want + 2 {
        (f[0], &f[1..])
    } else {
        ("", f)
    };
    let name_missing_counter = version >= 17
        && name.is_empty()
        && rest.len() == want + 1
        && parse_cpumask_bits(rest[0]).is_err();
    if rest.len() != want + 1 || name_missing_counter {
        let expected = if name_missing_counter {
            format!("name, cpumask and {want} counters ({} fields)", want + 2)
        } else if version >= 17 {
            format!(
                "[name] cpumask and {want} counters ({} or {} fields)",
                want + 1,
                want + 2
            )
        } else {
            format!("cpumask and {want} counters ({} fields)", want + 1)
        };
        let v15_len = domain_field_count(15).expect("supported") + 1;
        let v17_len = domain_field_count(17).expect("supported") + 1;
        let hint = if version >= 17 && f.len() == v15_len {
            " (version 15/16 layout?)"
        } else if version < 17 && (f.len() == v17_len || f.len() == v17_len + 1) {
            " (version 17 layout?)"
        } else {
            ""
        };
        return Err(format!(
            "{head}: version {version} expects {expected} after {head}, found {}{hint}",
            f.len()
        ));
    }
    let (span_cpus, bits) = parse_cpumask_bits(rest[0]).map_err(|e| format!("{head}: {e}"))?;
    let counters = &rest[1..];
    let mut v = Vec::with_capacity(want);
    for (k, tok) in counters.iter().enumerate() {
        v.push(number(tok, &domain_field_label(version, head, k))?);
    }
    let mut dom = DomainSchedstat {
        name: name.to_string(),
        span_cpus,
        ..Default::default()
    };
    for (g, t) in IdleType::file_order(version).into_iter().enumerate() {
        let group = &v[g * per_group..(g + 1) * per_group];
        dom.lb[t.index()] = if per_group == 11 {
            LbIdleCounters::from_array(group.try_into().expect("11 counters"))
        } else {
            LbIdleCounters::from_v15(group)
        };
    }
    dom.set_trailing(&v[3 * per_group..]);
    Ok((dom, bits))
}

/// `domain0 field 5 (lb_imbalance_util, busy)` for counter index `k`.
fn domain_field_label(version: u32, head: &str, k: usize) -> String {
    let per_group = lb_fields_per_group(version).expect("supported version");
    let what = if k < 3 * per_group {
        let names: &[&str] = if per_group == 11 {
            &LB_FIELD_NAMES_V17
        } else {
            &LB_FIELD_NAMES_V15
        };
        let t = IdleType::file_order(version)[k / per_group];
        format!("{}, {}", names[k % per_group], t.name())
    } else {
        DOMAIN_TRAILING_FIELD_NAMES[k - 3 * per_group].to_string()
    };
    format!("{head} field {} ({what})", k + 1)
}

fn number<T: std::str::FromStr>(tok: &str, what: &str) -> Result<T, String> {
    if !is_decimal(tok) {
        return Err(format!("{what} '{tok}' is not a non-negative integer"));
    }
    tok.parse()
        .map_err(|_| format!("{what} '{tok}' is out of range"))
}

fn is_decimal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The line, cut to 40 characters for error messages.
fn short(line: &str) -> String {
    let t = line.trim();
    match t.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t.to_string(),
    }
}
