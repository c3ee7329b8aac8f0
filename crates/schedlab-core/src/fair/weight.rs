//! Load weights and weighted time (`sched_prio_to_weight`, `calc_delta_fair`).
//!
//! Kernel reference: core.c `sched_prio_to_weight[]` / `sched_prio_to_wmult[]`,
//! sched.h `WEIGHT_IDLEPRIO`, fair.c `calc_delta_fair` (kernel-model.md §1.2–1.3).
//!
//! Weights here are kept at *user* resolution (1024 = nice 0). The kernel's
//! 64-bit resolution (`NICE_0_LOAD = 2^20`) scales numerator and denominator
//! alike, so ratios are identical.
//!
//! Deviations: `calc_delta_fair` divides exactly (`δ·1024/w`) instead of the
//! kernel's multiply-by-inverse; results differ by at most 1 ns per call,
//! which kernel-model.md §1.3 allows.

use crate::program::Policy;
use crate::time::Nanos;

/// Weight of a nice-0 task (`NICE_0_LOAD` at user resolution).
pub const NICE_0_LOAD: u64 = 1024;
/// Weight of a SCHED_IDLE task.
pub const WEIGHT_IDLEPRIO: u64 = 3;

/// `sched_prio_to_weight[]`, nice -20 .. +19: each step is about ×1.25, so
/// neighbouring nice levels differ by about 10 % of CPU share.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, // -20
    29154, 23254, 18705, 14949, 11916, // -15
    9548, 7620, 6100, 4904, 3906, // -10
    3121, 2501, 1991, 1586, 1277, // -5
    1024, 820, 655, 526, 423, // 0
    335, 272, 215, 172, 137, // 5
    110, 87, 70, 56, 45, // 10
    36, 29, 23, 18, 15, // 15
];

/// Load weight of a task with this policy and nice value.
pub fn task_weight(policy: Policy, nice: i32) -> u64 {
    if policy == Policy::Idle {
        return WEIGHT_IDLEPRIO;
    }
    let i = (nice.clamp(-20, 19) + 20) as usize;
    PRIO_TO_WEIGHT[i]
}

/// `2^32 / weight` (`sched_prio_to_wmult`), for tests against the kernel table.
pub fn inv_weight(w: u64) -> u64 {
    (1u64 << 32) / w
}

/// `calc_delta_fair(δ, se)`: wall time δ converted to the entity's virtual
/// time, `δ × NICE_0_LOAD / w` (identity for nice 0).
#[inline]
pub fn calc_delta_fair(delta: Nanos, weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        return delta;
    }
    // Below 2^54 ns (208 days) the product fits 64 bits and one 64-bit
    // division gives the same quotient as the 128-bit one, without the
    // 128-bit division routine (4.8 % of a quota-512 profile, in
    // group entities' charges).
    match delta.checked_mul(NICE_0_LOAD) {
        Some(p) => p / weight,
        None => calc_delta_fair_wide(delta, weight),
    }
}

/// [`calc_delta_fair`] in 128 bits, out of line (kept out of the callers'
/// inlining budget).
#[cold]
#[inline(never)]
fn calc_delta_fair_wide(delta: Nanos, weight: u64) -> u64 {
    ((delta as u128 * NICE_0_LOAD as u128) / weight as u128) as u64
}

/// Inverse of [`calc_delta_fair`]: virtual time to wall time at this weight.
#[inline]
pub fn calc_delta_wall(vdelta: u64, weight: u64) -> Nanos {
    if weight == NICE_0_LOAD {
        return vdelta;
    }
    ((vdelta as u128 * weight as u128) / NICE_0_LOAD as u128) as u64
}

/// Kernel priority shown in traces (`prio`): `120 + nice` for fair tasks.
pub fn kernel_prio(policy: Policy, nice: i32) -> i32 {
    match policy {
        Policy::Normal | Policy::Batch | Policy::Idle => 120 + nice,
        Policy::Fifo | Policy::Rr => 99 - nice,
        Policy::Deadline => -1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_are_about_ten_percent() {
        // Two tasks at nice n and n+1 share a CPU w_n : w_{n+1} ≈ 55 : 45.
        for i in 0..39 {
            let r = PRIO_TO_WEIGHT[i] as f64 / PRIO_TO_WEIGHT[i + 1] as f64;
            assert!((1.2..1.3).contains(&r), "step {i}: ratio {r}");
        }
        assert_eq!(task_weight(Policy::Normal, 0), 1024);
        assert_eq!(task_weight(Policy::Normal, 5), 335);
        assert_eq!(task_weight(Policy::Batch, -20), 88761);
        assert_eq!(task_weight(Policy::Idle, -5), 3);
    }

    #[test]
    fn inverse_weights_match_the_kernel_wmult_table() {
        // sched_prio_to_wmult: 48388 for nice -20, 4194304 for nice 0,
        // 286331153 for nice 19; WMULT_IDLEPRIO 1431655765.
        assert_eq!(inv_weight(88761), 48388);
        assert_eq!(inv_weight(1024), 4194304);
        assert_eq!(inv_weight(15), 286331153);
        assert_eq!(inv_weight(3), 1431655765);
    }

    #[test]
    fn calc_delta_fair_by_hand() {
        // 1 ms at nice 0 is 1 ms of vruntime.
        assert_eq!(calc_delta_fair(1_000_000, 1024), 1_000_000);
        // 1 ms at nice 5 (w=335): 1e6 × 1024 / 335 = 3_056_716.4 -> 3_056_716.
        assert_eq!(calc_delta_fair(1_000_000, 335), 3_056_716);
        // SCHED_IDLE (w=3): 1024/3 times faster.
        assert_eq!(calc_delta_fair(3_000, 3), 1_024_000);
        assert_eq!(calc_delta_wall(1_024_000, 3), 3_000);
    }

    /// The 64-bit path gives the 128-bit quotient, on both sides of the
    /// point where δ × 1024 stops fitting 64 bits.
    #[test]
    fn calc_delta_fair_64_and_128_bit_paths_agree() {
        let edge = u64::MAX / NICE_0_LOAD;
        for delta in [
            0,
            1,
            999,
            1 << 40,
            edge - 1,
            edge,
            edge + 1,
            u64::MAX / 2,
            u64::MAX,
        ] {
            for w in [2, 3, 15, 335, 1023, 1025, 88761, 1 << 20, u64::MAX] {
                let wide = ((delta as u128 * NICE_0_LOAD as u128) / w as u128) as u64;
                assert_eq!(calc_delta_fair(delta, w), wide, "{delta} {w}");
                assert_eq!(calc_delta_fair_wide(delta, w), wide, "{delta} {w}");
            }
        }
    }
}
