use schedlab_output::schedstat::*;

use crate::assert_text_eq;

fn write_text(ts: u64, nr_cpus: usize, cpus: &[CpuSchedstat]) -> String {
    let mut out = Vec::new();
    write_schedstat(&mut out, ts, nr_cpus, cpus).unwrap();
    String::from_utf8(out).unwrap()
}

/// Deterministic "random" counters (xorshift), some of them huge.
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        match self.0 % 7 {
            0 => 0,
            1 => u64::MAX - (self.0 % 3),
            _ => self.0 % 100_000,
        }
    }
    fn lb(&mut self) -> LbIdleCounters {
        LbIdleCounters::from_array(std::array::from_fn(|_| self.next()))
    }
    fn domain(&mut self, name: &str, span: Vec<u32>) -> DomainSchedstat {
        DomainSchedstat {
            name: name.into(),
            span_cpus: span,
            lb: [self.lb(), self.lb(), self.lb()],
            alb_count: self.next(),
            alb_failed: self.next(),
            alb_pushed: self.next(),
            sbe_count: self.next(),
            sbe_balanced: self.next(),
            sbe_pushed: self.next(),
            sbf_count: self.next(),
            sbf_balanced: self.next(),
            sbf_pushed: self.next(),
            ttwu_wake_remote: self.next(),
            ttwu_move_affine: self.next(),
            ttwu_move_balance: self.next(),
        }
    }
    fn cpu(&mut self, cpu: u32, domains: Vec<DomainSchedstat>) -> CpuSchedstat {
        CpuSchedstat {
            cpu,
            yld_count: self.next(),
            sched_count: self.next(),
            sched_goidle: self.next(),
            ttwu_count: self.next(),
            ttwu_local: self.next(),
            rq_cpu_time_ns: self.next(),
            run_delay_ns: self.next(),
            pcount: self.next(),
            domains,
        }
    }
}

fn round_trip(ts: u64, nr_cpus: usize, cpus: Vec<CpuSchedstat>) {
    let text = write_text(ts, nr_cpus, &cpus);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        2 + cpus.len() + cpus.iter().map(|c| c.domains.len()).sum::<usize>()
    );
    for l in &lines {
        let n = l.split_whitespace().count();
        match l {
            l if l.starts_with("cpu") => assert_eq!(n, 1 + 9, "{l}"),
            l if l.starts_with("domain") => assert_eq!(n, 1 + 1 + 1 + 45, "{l}"),
            _ => assert_eq!(n, 2, "{l}"),
        }
    }
    let parsed = parse_schedstat(&text).unwrap();
    assert_eq!(parsed.version, 17);
    assert_eq!(parsed.timestamp, ts);
    assert_eq!(parsed.cpus, cpus);
    assert!(parsed.mask_bits >= nr_cpus && parsed.mask_bits < nr_cpus + 4);
    // Writing with the parsed width reproduces the text byte for byte.
    assert_text_eq!(
        write_text(parsed.timestamp, parsed.mask_bits, &parsed.cpus),
        text
    );
}

#[test]
fn round_trip_2_cpus() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let cpus = (0..2)
        .map(|c| {
            let d = vec![g.domain("MC", vec![0, 1])];
            g.cpu(c, d)
        })
        .collect();
    round_trip(4_294_937_296, 2, cpus);
}

#[test]
fn round_trip_160_cpus_3_domains() {
    // kernel-model.md 6.5: 2 sockets x 40 cores x 2 HT; CPU c and c+80 are
    // SMT siblings, socket s holds cores 40s..40s+39 and their siblings.
    let mut g = Gen(12345);
    let cpus: Vec<CpuSchedstat> = (0..160u32)
        .map(|c| {
            let core = c % 80;
            let socket = core / 40;
            let smt = vec![core, core + 80];
            let mut mc: Vec<u32> = (40 * socket..40 * socket + 40).collect();
            mc.extend(80 + 40 * socket..80 + 40 * socket + 40);
            mc.sort();
            let numa: Vec<u32> = (0..160).collect();
            let d = vec![
                g.domain("SMT", smt),
                g.domain("MC", mc),
                g.domain("NUMA", numa),
            ];
            g.cpu(c, d)
        })
        .collect();
    let text = write_text(7, 160, &cpus);
    let line = |p: &str| text.lines().find(|l| l.starts_with(p)).unwrap().to_string();
    assert!(line("domain0 SMT ")
        .starts_with("domain0 SMT 00000000,00000000,00010000,00000000,00000001 "));
    assert!(
        line("domain1 MC ").starts_with("domain1 MC 00000000,00ffffff,ffff0000,000000ff,ffffffff ")
    );
    assert!(line("domain2 NUMA ")
        .starts_with("domain2 NUMA ffffffff,ffffffff,ffffffff,ffffffff,ffffffff "));
    round_trip(7, 160, cpus);
}

/// formats-spec.md 5.3, the v17 example (4 CPUs, 2 cores x 2 SMT threads).
const DOC_EXAMPLE: &str = "\
version 17
timestamp 4295012345
cpu0 12 0 90213 40111 61234 30211 812345678901 12345678901 50102
domain0 SMT 3 101 99 0 0 0 0 0 2 0 0 0 55 50 1 0 0 0 0 5 0 0 0 300 280 3 0 0 0 0 20 0 1 0 0 0 0 0 0 0 0 0 0 812 0 0
domain1 MC f 80 70 2 5 0 1 0 8 0 1 0 40 31 4 2 0 2 0 12 1 0 0 150 120 10 9 0 3 0 30 2 1 0 1 0 1 0 0 0 0 0 0 310 12 0
";

/// The doc example decoded by hand, field by field.
fn doc_example_cpu() -> CpuSchedstat {
    let lb = |a: [u64; 11]| LbIdleCounters::from_array(a);
    CpuSchedstat {
        cpu: 0,
        yld_count: 12,
        sched_count: 90213,
        sched_goidle: 40111,
        ttwu_count: 61234,
        ttwu_local: 30211,
        rq_cpu_time_ns: 812345678901,
        run_delay_ns: 12345678901,
        pcount: 50102,
        domains: vec![
            DomainSchedstat {
                name: "SMT".into(),
                span_cpus: vec![0, 1],
                lb: [
                    // busy
                    LbIdleCounters {
                        lb_count: 101,
                        lb_balanced: 99,
                        lb_gained: 2,
                        ..Default::default()
                    },
                    // idle
                    LbIdleCounters {
                        lb_count: 55,
                        lb_balanced: 50,
                        lb_failed: 1,
                        lb_gained: 5,
                        ..Default::default()
                    },
                    // newly idle
                    LbIdleCounters {
                        lb_count: 300,
                        lb_balanced: 280,
                        lb_failed: 3,
                        lb_gained: 20,
                        lb_nobusyq: 1,
                        ..Default::default()
                    },
                ],
                ttwu_wake_remote: 812,
                ..Default::default()
            },
            DomainSchedstat {
                name: "MC".into(),
                span_cpus: vec![0, 1, 2, 3],
                lb: [
                    lb([80, 70, 2, 5, 0, 1, 0, 8, 0, 1, 0]),
                    lb([40, 31, 4, 2, 0, 2, 0, 12, 1, 0, 0]),
                    lb([150, 120, 10, 9, 0, 3, 0, 30, 2, 1, 0]),
                ],
                alb_count: 1,
                alb_pushed: 1,
                ttwu_wake_remote: 310,
                ttwu_move_affine: 12,
                ..Default::default()
            },
        ],
    }
}

#[test]
fn formats_md_example_is_reproduced_exactly() {
    // Field counts per formats-spec.md 5: cpu line = 9 counters; v17 domain line
    // = name + mask + 45 counters (33 lb + 12 trailing).
    let counts: Vec<usize> = DOC_EXAMPLE
        .lines()
        .map(|l| l.split_whitespace().count())
        .collect();
    assert_eq!(counts, [2, 2, 1 + 9, 1 + 2 + 45, 1 + 2 + 45]);
    assert_eq!(domain_field_count(17), Some(45));
    assert_eq!(domain_field_count(16), Some(36));
    assert_eq!(domain_field_count(15), Some(36));
    assert_eq!(domain_field_count(14), None);

    let cpu = doc_example_cpu();
    assert_text_eq!(
        write_text(4295012345, 4, std::slice::from_ref(&cpu)),
        DOC_EXAMPLE
    );
    let parsed = parse_schedstat(DOC_EXAMPLE).unwrap();
    assert_eq!(
        parsed,
        Schedstat {
            version: 17,
            timestamp: 4295012345,
            mask_bits: 4,
            cpus: vec![cpu]
        }
    );
    let mc = &parsed.cpus[0].domains[1];
    assert_eq!(mc.lb[IdleType::Idle.index()].lb_hot_gained, 1);
    assert_eq!(mc.lb[IdleType::NewlyIdle.index()].lb_imbalance_total(), 12);
}

#[test]
fn small_hand_written_example() {
    // 1 CPU line + 2 domain lines, 8-CPU machine, counters 1..=45 per line so
    // every position is checked.
    let seq = |start: u64| -> DomainSchedstat {
        let v: Vec<u64> = (start..start + 45).collect();
        let lb = |g: usize| LbIdleCounters::from_array(v[g * 11..g * 11 + 11].try_into().unwrap());
        DomainSchedstat {
            name: String::new(),
            span_cpus: vec![],
            lb: [lb(0), lb(1), lb(2)],
            alb_count: v[33],
            alb_failed: v[34],
            alb_pushed: v[35],
            sbe_count: v[36],
            sbe_balanced: v[37],
            sbe_pushed: v[38],
            sbf_count: v[39],
            sbf_balanced: v[40],
            sbf_pushed: v[41],
            ttwu_wake_remote: v[42],
            ttwu_move_affine: v[43],
            ttwu_move_balance: v[44],
        }
    };
    let cpu = CpuSchedstat {
        cpu: 5,
        yld_count: 1,
        sched_count: 3,
        sched_goidle: 4,
        ttwu_count: 5,
        ttwu_local: 6,
        rq_cpu_time_ns: 7,
        run_delay_ns: 8,
        pcount: 9,
        domains: vec![
            DomainSchedstat {
                name: "SMT".into(),
                span_cpus: vec![4, 5],
                ..seq(1)
            },
            DomainSchedstat {
                name: "PKG".into(),
                span_cpus: (0..8).collect(),
                ..seq(101)
            },
        ],
    };
    let want = "\
version 17
timestamp 0
cpu5 1 0 3 4 5 6 7 8 9
domain0 SMT 30 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45
domain1 PKG ff 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145
";
    assert_text_eq!(write_text(0, 8, std::slice::from_ref(&cpu)), want);
    assert_eq!(parse_schedstat(want).unwrap().cpus, vec![cpu]);
}

#[test]
fn cpumask_formatting() {
    let all = |n: u32| (0..n).collect::<Vec<u32>>();
    let cases: Vec<(Vec<u32>, usize, String)> = vec![
        (all(8), 8, "ff".into()),
        (vec![0, 1], 8, "03".into()),
        (vec![5], 6, "20".into()),
        (all(4), 4, "f".into()),
        (vec![], 8, "00".into()),
        (all(36), 36, "f,ffffffff".into()),
        (vec![0, 1], 64, "00000000,00000003".into()),
        (vec![63], 64, "80000000,00000000".into()),
        (all(64), 64, "ffffffff,ffffffff".into()),
        (
            vec![0, 80],
            160,
            "00000000,00000000,00010000,00000000,00000001".into(),
        ),
        (
            vec![159, 32],
            160,
            "80000000,00000000,00000000,00000001,00000000".into(),
        ),
        (
            vec![511],
            512,
            format!("80000000{}", ",00000000".repeat(15)),
        ),
        (
            vec![0, 256],
            512,
            format!(
                "{},00000001{},00000001",
                ["00000000"; 7].join(","),
                ",00000000".repeat(7)
            ),
        ),
        (all(512), 512, ["ffffffff"; 16].join(",")),
        (vec![], 0, String::new()),
    ];
    for (cpus, n, want) in cases {
        let got = format_cpumask(&cpus, n);
        assert_eq!(got, want, "{cpus:?} / {n}");
        let mut sorted = cpus.clone();
        sorted.sort();
        assert_eq!(parse_cpumask(&got).unwrap(), sorted, "{got}");
    }
}

#[test]
fn cpumask_parse_errors() {
    for bad in [
        "g",
        "1,2",
        "123456789",
        ",00000000",
        "ff,",
        "+f",
        "ff,0000000g",
    ] {
        let e = parse_cpumask(bad).unwrap_err();
        assert!(e.contains(bad), "{bad}: {e}");
    }
    assert_eq!(parse_cpumask("F,FFFFFFFF").unwrap().len(), 36);
}

/// One domain line with group values 11.., 21.., 31.. (8 per group) and
/// trailing 1..=12, in the v15/v16 layout.
fn old_domain_line() -> String {
    let mut f: Vec<String> = vec!["domain0".into(), "3".into()];
    for g in [10u64, 20, 30] {
        f.extend((1..=8).map(|k| (g + k).to_string()));
    }
    f.extend((1..=12).map(|k| (100 + k).to_string()));
    f.join(" ")
}

#[test]
fn version_15_and_16_sample_lines_parse() {
    let line = old_domain_line();
    assert_eq!(line.split_whitespace().count(), 2 + 36);
    for version in [15u32, 16] {
        let text = format!(
            "version {version}\ntimestamp 100\ncpu0 1 0 2 3 4 5 6 7 8\n{line}\ncpu1 0 0 0 0 0 0 0 0 0\n"
        );
        let s = parse_schedstat(&text).unwrap();
        assert_eq!((s.version, s.timestamp, s.mask_bits), (version, 100, 4));
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.cpus[0].pcount, 8);
        assert!(s.cpus[1].domains.is_empty());
        let d = &s.cpus[0].domains[0];
        assert_eq!(d.name, "");
        assert_eq!(d.span_cpus, [0, 1]);
        // v15 prints the idle group first, v16 the busy group first.
        let (busy, idle) = if version == 15 { (20, 10) } else { (10, 20) };
        let want = |g: u64| LbIdleCounters {
            lb_count: g + 1,
            lb_balanced: g + 2,
            lb_failed: g + 3,
            lb_imbalance_load: g + 4,
            lb_imbalance_util: 0,
            lb_imbalance_task: 0,
            lb_imbalance_misfit: 0,
            lb_gained: g + 5,
            lb_hot_gained: g + 6,
            lb_nobusyq: g + 7,
            lb_nobusyg: g + 8,
        };
        assert_eq!(d.lb[IdleType::Busy.index()], want(busy));
        assert_eq!(d.lb[IdleType::Idle.index()], want(idle));
        assert_eq!(d.lb[IdleType::NewlyIdle.index()], want(30));
        assert_eq!(d.lb[IdleType::Busy.index()].lb_imbalance_total(), busy + 4);
        assert_eq!(d.trailing_array(), std::array::from_fn(|k| 101 + k as u64));
    }
}

#[test]
fn version_17_without_domain_name_parses() {
    let with_name = DOC_EXAMPLE;
    let without = with_name.replace(" SMT ", " ").replace(" MC ", " ");
    let s = parse_schedstat(&without).unwrap();
    let mut want = doc_example_cpu();
    for d in &mut want.domains {
        d.name.clear();
    }
    assert_eq!(s.cpus, vec![want.clone()]);
    // The writer needs a name.
    let e = write_schedstat(&mut Vec::new(), 0, 4, &[want]).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn writer_rejects_span_outside_the_mask() {
    let mut cpu = doc_example_cpu();
    cpu.domains[1].span_cpus.push(4);
    let e = write_schedstat(&mut Vec::new(), 0, 4, &[cpu]).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("span cpu 4"), "{e}");
}

fn err(text: &str) -> String {
    let e = parse_schedstat(text).unwrap_err();
    let s = e.to_string();
    assert!(!s.contains('\n'), "multi-line error: {s:?}");
    assert!(s.starts_with(&format!("{}: ", e.line)), "{s}");
    s
}

#[test]
fn broken_input_gives_one_line_errors() {
    let doc = DOC_EXAMPLE;
    let lines: Vec<&str> = doc.lines().collect();
    let with = |i: usize, new: &str| {
        let mut l = lines.clone();
        l[i] = new;
        l.join("\n")
    };

    // Missing version.
    let e = err(&lines[1..].join("\n"));
    assert!(e.starts_with("1: expected 'version <N>' first"), "{e}");
    assert!(err("").starts_with("1: missing 'version <N>'"));
    assert!(err("version 17\n").starts_with("1: missing 'timestamp"));
    // Unknown versions.
    for v in ["14", "18"] {
        let e = err(&with(0, &format!("version {v}")));
        assert_eq!(
            e,
            format!("1: unsupported schedstat version {v} (supported: 15, 16, 17)")
        );
    }
    assert!(err(&with(0, "version x")).starts_with("1: version 'x' is not"));
    // Wrong field counts.
    let e = err(&with(2, "cpu0 1 2 3"));
    assert_eq!(e, "3: cpu0 has 3 counters, expected 9");
    let short_domain = lines[3].rsplit_once(' ').unwrap().0;
    let e = err(&with(3, short_domain));
    assert!(
        e == "4: domain0: version 17 expects name, cpumask and 45 counters (47 fields) \
              after domain0, found 46",
        "{e}"
    );
    let e = err(&with(3, "domain0 SMT 3 1 2"));
    assert_eq!(
        e,
        "4: domain0: version 17 expects [name] cpumask and 45 counters (46 or 47 fields) \
         after domain0, found 4"
    );
    assert!(err(&with(3, "domain0")).ends_with("found 0"));
    let v16_in_v17 = format!(
        "version 17\ntimestamp 1\ncpu0 0 0 0 0 0 0 0 0 0\n{}",
        old_domain_line()
    );
    assert!(err(&v16_in_v17).ends_with("(version 15/16 layout?)"));
    let e = err(&with(0, "version 16"));
    assert!(
        e.starts_with("4: domain0: version 16 expects cpumask and 36 counters"),
        "{e}"
    );
    assert!(e.ends_with("(version 17 layout?)"), "{e}");
    // Non-numeric fields.
    let e = err(&with(2, &lines[2].replace("90213", "9x213")));
    assert_eq!(
        e,
        "3: cpu0 field 3 (sched_count) '9x213' is not a non-negative integer"
    );
    let e = err(&with(4, &lines[4].replace(" 310 ", " -310 ")));
    assert_eq!(
        e,
        "5: domain1 field 43 (ttwu_wake_remote) '-310' is not a non-negative integer"
    );
    let e = err(&with(
        4,
        &lines[4].replace("MC f 80 70 2 5", "MC f 80 70 2 five"),
    ));
    assert_eq!(
        e,
        "5: domain1 field 4 (lb_imbalance_load, busy) 'five' is not a non-negative integer"
    );
    let e = err(&with(2, &lines[2].replace("50102", "99999999999999999999")));
    assert!(e.ends_with("is out of range"), "{e}");
    // Bad masks, structure.
    let e = err(&with(3, &lines[3].replace("SMT 3", "SMT 3z")));
    assert_eq!(
        e,
        "4: domain0: cpumask '3z': chunk 1 '3z' is not 1 to 8 hex digits"
    );
    assert!(err(&with(4, &lines[4].replace("MC f", "MC 0f"))).contains("cpumask is 8 bits wide"));
    assert_eq!(err(&with(2, "bogus")), "3: unexpected line 'bogus'");
    assert_eq!(
        err(&with(4, &lines[4].replace("domain1", "domain2"))),
        "5: expected domain1 of cpu0, found domain2"
    );
    let e = err("version 17\ntimestamp 1\ndomain0 SMT 3 0");
    assert_eq!(e, "3: domain0 before any cpu line");
    let e = err("version 17\ntimestamp 1\ncpu1 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0");
    assert_eq!(e, "4: cpu1 after cpu1: cpu numbers must increase");
}
