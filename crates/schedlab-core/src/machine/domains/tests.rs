//! Domain building against the kernel's rules, machine by machine.

use super::*;
use crate::machine::{make_test_machine, preset, presets, CpuTopo};

fn c(i: u32) -> CpuId {
    CpuId(i)
}

/// Level names and span weights of `cpu`'s chain.
fn shape(d: &SchedDomains, cpu: u32) -> Vec<(Level, u32)> {
    d.domains(c(cpu))
        .iter()
        .map(|s| (s.level, s.span_weight))
        .collect()
}

fn group_lists(sd: &SchedDomain) -> Vec<String> {
    sd.groups.iter().map(|g| g.span.to_list()).collect()
}

/// Invariants every machine must satisfy.
fn check_invariants(m: &Machine, d: &SchedDomains, overlap_ok: bool) {
    let n = m.nr_cpus();
    for cpu in 0..n as u32 {
        let doms = d.domains(c(cpu));
        for (k, sd) in doms.iter().enumerate() {
            let f = sd.flags;
            assert_eq!(f.contains(SD_SERIALIZE), f.contains(SD_NUMA), "{}", m.name);
            assert!(!f.contains(SD_BALANCE_WAKE));
            assert!(!(f.contains(SD_NUMA) && f.contains(SD_PREFER_SIBLING)));
            assert!(sd.span.test(c(cpu)));
            assert_eq!(sd.span.weight() as u32, sd.span_weight);
            assert_eq!(sd.child, k.checked_sub(1));
            assert!(sd.groups.len() >= 2, "{} CPU{cpu} {}", m.name, sd.level);
            assert!(sd.groups[0].span.test(c(cpu)), "local group first");
            if k > 0 {
                let child = &doms[k - 1];
                assert!(child.span.is_subset(&sd.span) && child.span != sd.span);
                assert!(child.level < sd.level);
                assert_eq!(sd.groups[0].span, *child.span);
            }
            let mut union = CpuMask::new(n);
            let mut total = 0;
            for g in &sd.groups {
                assert!(g.span.is_subset(&sd.span));
                assert!(g.balance_mask.is_subset(&g.span));
                assert!(g.balance_mask.test(g.balance_cpu));
                assert_eq!(g.weight as usize, g.span.weight());
                total += g.weight;
                for x in g.span.iter() {
                    union.set(x);
                }
            }
            assert_eq!(union, *sd.span);
            if !overlap_ok {
                assert_eq!(total, sd.span_weight, "groups partition the span");
            }
        }
        let s = d.shortcuts(c(cpu));
        if let Some(k) = s.sd_llc {
            assert!(doms[..=k].iter().all(|x| x.flags.contains(SD_SHARE_LLC)));
            assert_eq!(s.sd_llc_size, doms[k].span_weight);
            let l = &d.llc_shared[s.llc_shared.unwrap()];
            assert_eq!(l.id, s.sd_llc_id);
            assert_eq!(l.span, *doms[k].span);
        }
    }
}

#[test]
fn domains_smt_llc_numa_test_machine() {
    // 2 nodes x 1 LLC x 4 cores x 2 threads; siblings adjacent.
    let m = make_test_machine(2, 1, 4, 2);
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    for cpu in 0..16 {
        assert_eq!(
            shape(&d, cpu),
            vec![(Level::Smt, 2), (Level::Mc, 8), (Level::Numa(1), 16)]
        );
    }
    let doms = d.domains(c(0));
    let (smt, mc, numa) = (&doms[0], &doms[1], &doms[2]);
    assert_eq!(smt.name, "SMT");
    assert!(smt.flags.contains(SD_SHARE_CPUCAPACITY | SD_SHARE_LLC));
    assert_eq!(smt.imbalance_pct, 110);
    assert_eq!(smt.cache_nice_tries, 0);
    assert_eq!(
        smt.flags,
        DEFAULT_FLAGS | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC
    );
    assert_eq!(mc.flags, DEFAULT_FLAGS | SD_SHARE_LLC);
    assert_eq!((mc.imbalance_pct, mc.cache_nice_tries), (117, 1));
    assert!(numa.flags.contains(SD_NUMA | SD_SERIALIZE));
    assert!(!numa.flags.contains(SD_PREFER_SIBLING));
    assert!(numa.flags.contains(SD_WAKE_AFFINE | SD_BALANCE_FORK)); // 20 <= 30
    assert_eq!((numa.imbalance_pct, numa.cache_nice_tries), (117, 2));
    assert_eq!(numa.numa_distance, Some(20));
    assert_eq!(numa.imb_numa_nr, 1); // one LLC per node: 8 >> 3
    assert_eq!((mc.imb_numa_nr, smt.imb_numa_nr), (0, 0));
    assert_eq!(
        (smt.min_interval_ms, smt.max_interval_ms, smt.busy_factor),
        (2, 4, 16)
    );
    assert_eq!((numa.min_interval_ms, numa.max_interval_ms), (16, 32));
    assert_eq!((numa.parent, numa.child), (None, Some(1)));
    // Groups.
    assert_eq!(group_lists(smt), ["0", "1"]);
    assert_eq!(group_lists(mc), ["0-1", "2-3", "4-5", "6-7"]);
    assert_eq!(group_lists(numa), ["0-7", "8-15"]);
    assert_eq!(mc.groups[1].cores, 1);
    assert_eq!(mc.groups[1].capacity, 2048);
    assert!(mc.groups[1].flags.contains(SD_SHARE_CPUCAPACITY));
    assert_eq!(numa.groups[1].cores, 4);
    assert_eq!(numa.groups[1].balance_cpu, c(8));
    // Local group first, then wrapping from the CPU.
    let d9 = d.domains(c(9));
    assert_eq!(group_lists(&d9[0]), ["9", "8"]);
    assert_eq!(group_lists(&d9[1]), ["8-9", "10-11", "12-13", "14-15"]);
    assert_eq!(group_lists(&d9[2]), ["8-15", "0-7"]);
    // Shortcuts.
    let s = d.shortcuts(c(9));
    assert_eq!((s.sd_llc, s.sd_llc_size, s.sd_llc_id), (Some(1), 8, c(8)));
    assert_eq!(s.sd_share_id, c(8));
    assert_eq!(s.sd_numa, Some(2));
    assert_eq!(s.sd_asym_cpucapacity, None);
    assert_eq!(d.llc_shared.len(), 2);
    assert_eq!(s.llc_shared, Some(1));
    assert!(d.cpus_share_cache(c(8), c(15)));
    assert!(!d.cpus_share_cache(c(7), c(8)));
    assert_eq!(d.max_load_balance_interval, 250 * 16 / 10);
    assert_eq!(d.numa_distances, vec![10, 20]);
}

#[test]
fn domains_icx_matches_worked_example() {
    let m = preset("icx-2s-80c-ht").unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    assert_eq!(
        shape(&d, 0),
        vec![(Level::Smt, 2), (Level::Mc, 80), (Level::Numa(1), 160)]
    );
    let doms = d.domains(c(0));
    assert_eq!(doms[0].span.to_list(), "0,80");
    assert_eq!(doms[1].span.to_list(), "0-39,80-119");
    let table: Vec<(u32, u64, u64)> = doms
        .iter()
        .map(|s| (s.imbalance_pct, s.min_interval_ms, s.max_interval_ms))
        .collect();
    assert_eq!(table, vec![(110, 2, 4), (117, 80, 160), (117, 160, 320)]);
    assert_eq!(doms[1].groups.len(), 40);
    assert_eq!(doms[1].groups[39].span.to_list(), "39,119");
    assert_eq!(doms[2].groups.len(), 2);
    assert_eq!(doms[2].groups[1].cores, 40);
    assert_eq!(doms[2].imb_numa_nr, 10); // 80 >> 3, one LLC per package
                                         // Groups of CPU 120's MC start at its core {40,120}.
    assert_eq!(d.domains(c(120))[1].groups[0].span.to_list(), "40,120");
    // max_load_balance_interval: 160 CPUs -> 16 s.
    assert_eq!(d.max_load_balance_interval, 4000);
    // Busy SMT interval: 2 ms x 16 = 32 ms = 8 jiffies at HZ=250, -1.
    assert_eq!(d.balance_interval_jiffies(&doms[0], 2, true), 7);
    assert_eq!(d.balance_interval_jiffies(&doms[0], 2, false), 1);
    assert_eq!(d.balance_interval_jiffies(&doms[2], 320, true), 1279);
    // Before 5.10: busy_factor 32, no jiffy off, 125 % above the LLC.
    let mut old = d.clone();
    old.apply_release("5.4");
    let od = old.domains(c(0));
    assert_eq!(
        od.iter()
            .map(|s| (s.busy_factor, s.imbalance_pct))
            .collect::<Vec<_>>(),
        vec![(32, 110), (32, 117), (32, 125)]
    );
    // 2 ms x 32 = 64 ms = 16 jiffies; 320 ms x 32 = 2560 jiffies.
    assert_eq!(old.balance_interval_jiffies(&od[0], 2, true), 16);
    assert_eq!(old.balance_interval_jiffies(&od[0], 2, false), 1);
    assert_eq!(old.balance_interval_jiffies(&od[2], 320, true), 2560);
    let mut same = d.clone();
    same.apply_release("5.10");
    assert_eq!(same.domains(c(0)), d.domains(c(0)));
    assert!(same.busy_interval_less_one);
    let s = d.shortcuts(c(159));
    assert_eq!((s.sd_llc_size, s.sd_llc_id), (80, c(40)));
    assert_eq!(d.llc_shared.len(), 2);
}

#[test]
fn domains_gnr_snc3_two_numa_levels() {
    let m = preset("gnr-2s-snc3").unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    assert_eq!(
        shape(&d, 0),
        vec![
            (Level::Smt, 2),
            (Level::Mc, 64),
            (Level::Numa(1), 192),
            (Level::Numa(2), 384)
        ]
    );
    let doms = d.domains(c(0));
    assert_eq!(doms[1].span.to_list(), "0-31,192-223");
    assert_eq!(doms[2].span.to_list(), "0-95,192-287");
    assert!(doms[2].flags.contains(SD_NUMA | SD_SERIALIZE));
    assert!(doms[3].flags.contains(SD_NUMA | SD_SERIALIZE));
    assert_eq!(
        (doms[2].numa_distance, doms[3].numa_distance),
        (Some(12), Some(21))
    );
    assert_eq!(
        group_lists(&doms[2]),
        ["0-31,192-223", "32-63,224-255", "64-95,256-287"]
    );
    assert_eq!(group_lists(&doms[3]), ["0-95,192-287", "96-191,288-383"]);
    // imb_numa_nr is computed on the chain before NODE degenerates:
    // NODE(64) over one LLC -> 64 >> 3 = 8; NUMA(384) scales by 384/192.
    assert_eq!((doms[2].imb_numa_nr, doms[3].imb_numa_nr), (8, 16));
    assert!(d
        .per_cpu
        .iter()
        .flatten()
        .all(|s| s.level != Level::Pkg && s.level != Level::Node));
    let s = d.shortcuts(c(300));
    // CPU 300 is thread 1 of core 108, in node 3 (CPUs 96-127, 288-319).
    assert_eq!((s.sd_llc_size, s.sd_llc_id), (64, c(96)));
    assert_eq!(s.sd_numa, Some(2));
    assert_eq!(d.llc_shared.len(), 6);
    assert_eq!(d.numa_distances, vec![10, 12, 21]);
}

#[test]
fn domains_imb_numa_nr_by_release() {
    // icx: one LLC per package. 6.0 on an eighth of the package (10),
    // 5.18-5.19 a quarter (20), before 5.18 no such field.
    let m = preset("icx-2s-80c-ht").unwrap();
    let imb = |k| SchedDomains::for_release(&m, 250, k).domains(c(0))[2].imb_numa_nr;
    // (Listed releases: "5.18" would be read as 5.15, "6.0" as 5.19.)
    assert_eq!(
        (imb("5.15"), imb("5.19"), imb("6.1"), imb("6.18")),
        (0, 20, 10, 10)
    );
    assert_eq!(
        SchedDomains::for_release(&m, 250, "6.18").domains(c(0)),
        SchedDomains::build(&m, 250).domains(c(0))
    );
    // gnr-snc3: NODE over one LLC, 64 >> 2 = 16 in 5.19, the top
    // NUMA level scaled by 384 / 192 as in 6.0 (8, 16).
    let g = preset("gnr-2s-snc3").unwrap();
    let d = SchedDomains::for_release(&g, 250, "5.19");
    let doms = d.domains(c(0));
    assert_eq!((doms[2].imb_numa_nr, doms[3].imb_numa_nr), (16, 32));
    // Nodes of two single-thread cores, one LLC each: 2 >> 2 = 0 in
    // 5.19 (no minimum), at least 1 from 6.0 (6.1 listed).
    let small = make_test_machine(2, 1, 2, 1);
    let top = |k| {
        let d = SchedDomains::for_release(&small, 250, k);
        let sd = d.domains(c(0)).last().unwrap().clone();
        (sd.level, sd.imb_numa_nr)
    };
    assert_eq!(top("5.19"), (Level::Numa(1), 0));
    assert_eq!(top("6.1"), (Level::Numa(1), 1));
}

#[test]
fn domains_cwf_cluster_levels() {
    let m = preset("cwf-2s-240c").unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    assert_eq!(
        shape(&d, 5),
        vec![(Level::Cls, 4), (Level::Mc, 120), (Level::Numa(1), 240)]
    );
    let doms = d.domains(c(5));
    assert_eq!(doms[0].flags, DEFAULT_FLAGS | SD_CLUSTER | SD_SHARE_LLC);
    assert_eq!((doms[0].imbalance_pct, doms[0].cache_nice_tries), (117, 1));
    assert_eq!(group_lists(&doms[0]), ["5", "6", "7", "4"]);
    assert_eq!(doms[1].groups.len(), 30);
    assert_eq!(doms[1].groups[0].span.to_list(), "4-7");
    assert_eq!(doms[1].groups[0].cores, 4);
    assert!(doms[1].groups[0].flags.contains(SD_CLUSTER));
    assert_eq!(doms[2].imb_numa_nr, 15);
    let s = d.shortcuts(c(5));
    assert_eq!((s.sd_llc, s.sd_llc_size, s.sd_llc_id), (Some(1), 120, c(0)));
    assert_eq!(s.sd_share_id, c(4));
    assert!(d.cpus_share_resources(c(4), c(7)));
    assert!(!d.cpus_share_resources(c(3), c(4)));
    assert!(d.cpus_share_cache(c(3), c(4)));
}

#[test]
fn domains_a7_octa_cluster_is_llc() {
    // The machine model gives a7-octa clusters equal to its LLCs (the
    // cluster's L2 is the last-level cache). A cluster spanning the whole
    // coregroup is no separate level (arch_topology), so CLS collapses to
    // the SMT mask (one CPU) and degenerates; MC is the 4-CPU cluster/LLC
    // and PKG the 8-CPU board. One node: no NODE/NUMA levels.
    let m = preset("a7-octa").unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    for cpu in 0..8 {
        assert_eq!(shape(&d, cpu), vec![(Level::Mc, 4), (Level::Pkg, 8)]);
    }
    let doms = d.domains(c(6));
    assert_eq!(group_lists(&doms[0]), ["6", "7", "4", "5"]);
    assert_eq!(group_lists(&doms[1]), ["4-7", "0-3"]);
    assert_eq!(doms[1].flags, DEFAULT_FLAGS);
    assert_eq!((doms[1].imbalance_pct, doms[1].cache_nice_tries), (117, 1));
    let s = d.shortcuts(c(6));
    assert_eq!((s.sd_llc, s.sd_llc_size, s.sd_llc_id), (Some(0), 4, c(4)));
    assert_eq!(s.sd_share_id, c(4));
    assert_eq!(s.sd_numa, None);
    assert_eq!(d.numa_distances, vec![10]);
}

#[test]
fn domains_vm_single_mc() {
    let m = preset("vm-2cpu").unwrap();
    let d = SchedDomains::build(&m, 1000);
    check_invariants(&m, &d, false);
    assert_eq!(shape(&d, 0), vec![(Level::Mc, 2)]);
    assert_eq!(shape(&d, 1), vec![(Level::Mc, 2)]);
    assert_eq!(group_lists(&d.domains(c(1))[0]), ["1", "0"]);
    assert_eq!(d.shortcuts(c(1)).sd_llc_size, 2);
    assert_eq!(d.max_load_balance_interval, 200);
}

#[test]
fn domains_epyc_ccx_pkg_numa() {
    let m = preset("epyc-2s-256c-smt").unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    assert_eq!(
        shape(&d, 0),
        vec![
            (Level::Smt, 2),
            (Level::Mc, 16),
            (Level::Pkg, 256),
            (Level::Numa(1), 512)
        ]
    );
    let doms = d.domains(c(9));
    assert_eq!(doms[1].span.to_list(), "8-15,264-271");
    assert_eq!(doms[2].groups.len(), 16);
    assert_eq!(doms[2].flags, DEFAULT_FLAGS);
    // SLIT 32 > node_reclaim_distance: no exec/fork balance, no affine.
    let numa = &doms[3];
    assert_eq!(numa.flags, SD_BALANCE_NEWIDLE | SD_SERIALIZE | SD_NUMA);
    assert_eq!(numa.imb_numa_nr, 16); // 16 CCXs per package
    assert_eq!(doms[2].imb_numa_nr, 16);
    let s = d.shortcuts(c(9));
    assert_eq!((s.sd_llc, s.sd_llc_size, s.sd_llc_id), (Some(1), 16, c(8)));
    assert_eq!(d.shortcuts(c(264)).sd_llc_id, c(8));
    assert_eq!(d.llc_shared.len(), 32);
    assert_eq!(d.llc_shared[1].id, c(8));
}

#[test]
fn domains_no_domains_on_one_cpu() {
    let m = make_test_machine(1, 1, 1, 1);
    let d = SchedDomains::build(&m, 250);
    assert!(d.domains(c(0)).is_empty());
    let s = d.shortcuts(c(0));
    assert_eq!((s.sd_llc, s.sd_llc_size, s.sd_llc_id), (None, 1, c(0)));
    assert!(d.llc_shared.is_empty());
    let text = describe_domains(&m, &d, None);
    assert!(text.contains("CPU0 attaching NULL sched-domain."), "{text}");
}

#[test]
fn domains_asym_capacity() {
    // big.LITTLE board: CPUs 0-3 little (512), 4-7 big (1024), a cluster
    // (= LLC) each.
    let cpus: Vec<CpuTopo> = (0..8)
        .map(|i| CpuTopo {
            package: 0,
            node: 0,
            llc: i / 4,
            cluster: i / 4,
            core: i,
            capacity: if i < 4 { 512 } else { 1024 },
        })
        .collect();
    let m = Machine::new(
        "bl",
        "big.LITTLE",
        cpus,
        vec![vec![10]],
        presets::default_costs(),
        presets::default_idle_states(),
    )
    .unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    let doms = d.domains(c(0));
    assert_eq!(shape(&d, 0), vec![(Level::Mc, 4), (Level::Pkg, 8)]);
    assert!(doms[1]
        .flags
        .contains(SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL));
    assert!(!doms[0].flags.contains(SD_ASYM_CPUCAPACITY));
    // The parent's asymmetry strips PREFER_SIBLING from the child.
    assert!(!doms[0].flags.contains(SD_PREFER_SIBLING));
    assert_eq!(d.shortcuts(c(0)).sd_asym_cpucapacity, Some(1));
    assert_eq!(doms[1].groups[1].capacity, 4096);
    assert_eq!(doms[1].groups[0].capacity, 2048);
}

#[test]
fn domains_overlapping_numa_ring() {
    // 4 nodes of 2 CPUs in a ring: neighbours at 20, opposite at 30.
    let cpus: Vec<CpuTopo> = (0..8)
        .map(|i| CpuTopo {
            package: i / 2,
            node: i / 2,
            llc: i / 2,
            cluster: i,
            core: i,
            capacity: 1024,
        })
        .collect();
    let dist = (0..4)
        .map(|a: i32| {
            (0..4)
                .map(|b: i32| match (a - b).rem_euclid(4) {
                    0 => 10,
                    2 => 30,
                    _ => 20,
                })
                .collect()
        })
        .collect();
    let m = Machine::new(
        "ring",
        "ring",
        cpus,
        dist,
        presets::default_costs(),
        presets::default_idle_states(),
    )
    .unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, true);
    assert_eq!(
        shape(&d, 0),
        vec![(Level::Mc, 2), (Level::Numa(1), 6), (Level::Numa(2), 8)]
    );
    let top = &d.domains(c(0))[2];
    // Node 0's NUMA(1) span, then node 2's (overlapping at nodes 1, 3).
    assert_eq!(group_lists(top), ["0-3,6-7", "2-7"]);
    assert_eq!(top.groups[1].balance_mask.to_list(), "4-5");
    assert_eq!(top.groups[1].balance_cpu, c(4));
    let text = describe_domains(&m, &d, Some(&[c(0)]));
    assert!(text.contains("2:{ span=2-7 mask=4-5 cap=6144 }"), "{text}");
}

#[test]
fn domains_describe_output() {
    let m = preset("icx-2s-80c-ht").unwrap();
    let d = SchedDomains::build(&m, 250);
    let text = describe_domains(&m, &d, None);
    assert!(text.contains("CPU0 attaching sched-domain(s):\n domain-0: span=0,80 level=SMT flags=SD_BALANCE_NEWIDLE|"), "{text}");
    assert!(
        text.contains("\n  groups: 0:{ span=0 }, 80:{ span=80 }\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  domain-1: span=0-39,80-119 level=MC "),
        "{text}"
    );
    assert!(text.contains("   groups: 0:{ span=0,80 cap=2048 }, 1:{ span=1,81 cap=2048 }"));
    assert!(text.contains("CPU159 attaching sched-domain(s):"));
    assert!(!text.contains("CPU1 attaching"));
    assert!(text.contains("max_load_balance_interval=4000 jiffies = 16000 ms"));
    // Summary: one line per level.
    let smt = text.lines().find(|l| l.starts_with("SMT ")).unwrap();
    assert!(
        smt.contains(" 80 ") && smt.contains("110") && smt.contains("32-64"),
        "{smt}"
    );
    let numa = text.lines().find(|l| l.starts_with("NUMA(1)")).unwrap();
    assert!(
        numa.contains("SD_SERIALIZE") && numa.contains("2560-5120"),
        "{numa}"
    );
    let small = describe_domains(
        &preset("a7-octa").unwrap(),
        &SchedDomains::build(&preset("a7-octa").unwrap(), 250),
        None,
    );
    assert!(small.contains("CPU7 attaching sched-domain(s):"));
}

/// The 4096-CPU preset (big-8s-4096): SMT, the 16-core CCX, the socket, then
/// the two NUMA levels of its distance table (board of 4 sockets at 21,
/// the machine at 31).
#[test]
fn domains_big_4096_board_and_machine_levels() {
    let m = preset("big-8s-4096").unwrap();
    let d = SchedDomains::build(&m, 250);
    check_invariants(&m, &d, false);
    let want = vec![
        (Level::Smt, 2),
        (Level::Mc, 32),
        (Level::Pkg, 512),
        (Level::Numa(1), 2048),
        (Level::Numa(2), 4096),
    ];
    assert_eq!(shape(&d, 0), want);
    assert_eq!(shape(&d, 4095), want);
    let doms = d.domains(c(0));
    assert_eq!(doms[1].span.to_list(), "0-15,2048-2063");
    assert_eq!(doms[3].span.to_list(), "0-1023,2048-3071");
    assert_eq!(
        (doms[3].numa_distance, doms[4].numa_distance),
        (Some(21), Some(31))
    );
    assert_eq!(doms[3].groups.len(), 4);
    assert_eq!(
        group_lists(&doms[4]),
        ["0-1023,2048-3071", "1024-2047,3072-4095"]
    );
    assert_eq!(d.llc_shared.len(), 128);
    assert_eq!(d.numa_distances, vec![10, 21, 31]);
    let s = d.shortcuts(c(2100));
    // CPU 2100 is thread 1 of core 52, in CCX 3 (cores 48-63).
    assert_eq!((s.sd_llc_size, s.sd_llc_id), (32, c(48)));
}

/// Every preset builds, keeps the invariants and builds the same twice.
/// (The build time is not asserted: with the 4096-CPU preset a 100 ms
/// limit here fails under load.)
#[test]
fn domains_all_presets_build_and_are_deterministic() {
    for name in presets::PRESET_NAMES {
        let m = preset(name).unwrap();
        let d = SchedDomains::build(&m, 250);
        check_invariants(&m, &d, false);
        assert_eq!(d, SchedDomains::build(&m, 250), "{name}");
    }
}

/// Group lists are shared, one per distinct domain, so the
/// builder's memory grows with CPUs x levels. Every CPU still sees its
/// own walk's groups in its own order (local group first).
#[test]
fn domains_group_lists_are_shared_and_keep_each_cpus_order() {
    use std::collections::BTreeSet;
    let mut machines: Vec<Machine> = crate::machine::PRESET_NAMES
        .iter()
        .map(|n| preset(n).unwrap())
        .collect();
    machines.push(make_test_machine(2, 2, 3, 2));
    for m in &machines {
        let d = SchedDomains::build(m, 250);
        let n = m.nr_cpus();
        let mut lists = BTreeSet::new();
        let mut domains = 0;
        for cpu in 0..n as u32 {
            for sd in d.domains(c(cpu)) {
                domains += 1;
                lists.insert(Arc::as_ptr(&sd.groups.list) as *const SchedGroup as usize);
                // The walk of step 7 from this CPU, written out.
                let mut covered = CpuMask::new(n);
                let mut want = Vec::new();
                for i in sd.span.iter_wrap(c(cpu)) {
                    if covered.test(i) {
                        continue;
                    }
                    let g = sd.groups.iter().find(|g| g.span.test(i)).unwrap();
                    for x in g.span.iter() {
                        covered.set(x);
                    }
                    want.push(g.span.to_list());
                }
                assert_eq!(group_lists(sd), want, "{} CPU{cpu} {}", m.name, sd.level);
            }
        }
        let levels = d.domains(c(0)).len().max(1);
        assert!(
            lists.len() <= levels * n.div_ceil(2).max(1) && lists.len() < domains.max(2),
            "{}: {} lists for {domains} domains",
            m.name,
            lists.len()
        );
    }
    // A flat machine: one list for every CPU.
    let flat = make_test_machine(1, 1, 64, 1);
    let d = SchedDomains::build(&flat, 250);
    let ptrs: BTreeSet<usize> = (0..64)
        .map(|i| Arc::as_ptr(&d.domains(c(i))[0].groups.list) as *const SchedGroup as usize)
        .collect();
    assert_eq!(ptrs.len(), 1);
}
