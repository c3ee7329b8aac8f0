//! Reference-model test of group shares: `calc_group_shares` for every CPU
//! of a group, against a direct recomputation from the definition over the
//! whole group (kernel-model.md §13):
//!
//! ```text
//! load_i      = max(grq_i.load.weight, grq_i.avg.load_avg)
//! tg_weight_i = Σ_{j≠i} contrib_j + load_i        (tg.load_avg = Σ_j contrib_j)
//! shares_i    = clamp(⌊tg.shares · load_i / tg_weight_i⌋, min(MIN_SHARES, tg.shares), tg.shares)
//! ```
//!
//! and two properties of the recomputation that the kernel's comments
//! promise: with every contribution published (`contrib_j = load_j`) the
//! shares of the CPUs add up to `tg.shares` (less the rounding, at most one
//! unit per CPU, plus the MIN_SHARES floor of empty queues); and a CPU's
//! share never falls when its own load grows while the others stay put.

use proptest::prelude::*;
use schedlab_core::fair::group::{calc_group_shares, MIN_SHARES};

#[derive(Clone, Debug)]
struct Cpu {
    load_weight: u64,
    load_avg: u64,
    contrib: u64,
}

fn cpu() -> impl Strategy<Value = Cpu> {
    (0u64..200_000, 0u64..200_000, 0u64..200_000).prop_map(|(w, a, c)| Cpu {
        load_weight: w,
        load_avg: a,
        contrib: c,
    })
}

/// The definition, over the whole group, in exact integers.
fn reference(tg_shares: u64, cpus: &[Cpu], i: usize) -> u64 {
    let load = cpus[i].load_weight.max(cpus[i].load_avg) as u128;
    let others: u128 = cpus
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .map(|(_, c)| c.contrib as u128)
        .sum();
    let tg_weight = others + load;
    let raw = if tg_weight == 0 {
        tg_shares as u128 * load
    } else {
        tg_shares as u128 * load / tg_weight
    };
    (raw.min(tg_shares as u128) as u64).max(MIN_SHARES.min(tg_shares))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn calc_group_shares_matches_the_definition(
        tg_shares in prop_oneof![Just(3u64), Just(1024u64), 2u64..262_144],
        cpus in proptest::collection::vec(cpu(), 1..16),
    ) {
        let tg_load_avg: u64 = cpus.iter().map(|c| c.contrib).sum();
        for (i, c) in cpus.iter().enumerate() {
            let got = calc_group_shares(tg_shares, c.load_weight, c.load_avg, tg_load_avg, c.contrib);
            prop_assert_eq!(got, reference(tg_shares, &cpus, i), "CPU {} of {:?}", i, cpus);
        }
    }

    #[test]
    fn published_shares_add_up_to_the_group_weight(
        tg_shares in 2u64..262_144,
        loads in proptest::collection::vec(0u64..100_000, 1..16),
    ) {
        let tg_load_avg: u64 = loads.iter().sum();
        let n = loads.len() as u64;
        let total: u64 = loads
            .iter()
            .map(|&l| calc_group_shares(tg_shares, l, l, tg_load_avg, l))
            .sum();
        if tg_load_avg > 0 {
            // Each ⌊S·l_i/T⌋ loses under one unit; each MIN_SHARES floor
            // adds at most MIN_SHARES.
            prop_assert!(total + n >= tg_shares, "{} + {} < {}", total, n, tg_shares);
            prop_assert!(total <= tg_shares + n * MIN_SHARES, "{} > {} + {}·MIN", total, tg_shares, n);
        }
    }

    #[test]
    fn own_load_up_never_lowers_own_share(
        tg_shares in 2u64..262_144,
        load in 0u64..100_000,
        extra in 0u64..100_000,
        others in 0u64..1_000_000,
    ) {
        let a = calc_group_shares(tg_shares, load, 0, others + load, load);
        let b = calc_group_shares(tg_shares, load + extra, 0, others + load, load);
        prop_assert!(b >= a, "{} then {}", a, b);
    }
}
