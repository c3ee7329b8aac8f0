//! CPU cost of rt-app's `memrun` event (formats-spec.md 1.7).
//!
//! The simulator has no caches and no memory system, so a `memrun` is
//! lowered to plain CPU work ([`schedlab_core::program::Op::Work`], the op
//! of `mem` / `iorun`: work that rt-app's log does not count as `run`).
//! This module is the one place that decides how much work.
//!
//! **The figures are guesses** for a current x86 or Arm server/desktop core
//! (a few GHz, 32 KiB L1D, about 1 MiB of L2 per core, a few tens of MiB
//! of shared last-level cache, DDR DRAM). They are not measured on any
//! particular machine and do not change with the simulated machine; they
//! only give `memrun` a plausible order of magnitude, with a large step
//! between a buffer that fits a cache and one that does not.
//!
//! The cache level is chosen by the buffer's `size` alone (its footprint):
//!
//! | level | `size` | read, ns/byte | write, ns/byte | chase random, ns/hop | chase sequential, ns/hop |
//! |---|---|---|---|---|---|
//! | L1  | ≤ 32 KiB | 0.1  | 0.15  | 1.5 | 1.5 |
//! | L2  | ≤ 1 MiB  | 0.15 | 0.225 | 5   | 1.9375 |
//! | LLC | ≤ 32 MiB | 0.3  | 0.45  | 20  | 3.8125 |
//! | DRAM | beyond  | 0.6  | 0.9   | 90  | 12.5625 |
//!
//! * **read / write** touch `count` bytes one at a time (wrapping at
//!   `size`): the per-byte figure is the cost of a byte-wide load (store)
//!   in a loop whose lines stream from that level; the lines are used
//!   sequentially, so it is a throughput cost, not a latency. A write
//!   costs 1.5 times a read (the line is read for ownership, then written
//!   back).
//! * **chase** makes `count` dependent loads (pointer hops). With
//!   `"random"` (bit-reversed link order) every hop pays the level's
//!   load-to-use latency: the next address is not known before the load
//!   returns and the prefetcher cannot guess it. With `"sequential"` the
//!   links are in address order, so the hardware prefetcher hides most of
//!   the latency: a hop costs the L1 latency plus one eighth of what the
//!   level adds to it, `L1 + (level − L1) / 8`.
//! * `stride` only places the links (it must be 1..=`size`); `ref` (one
//!   buffer shared by several threads) does not change the cost: the
//!   simulator does not model cache contention, warm-up or coherence
//!   traffic, and each `memrun` is costed as if its buffer already sat in
//!   the level its size fits.
//!
//! The total is rounded **up** to a whole nanosecond, so any `count` above
//! 0 costs at least 1 ns. It is work at the calibration CPU's capacity and
//! frequency, scaled like `run` work on other CPUs.

/// What a `memrun` does (`"type"`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemAccess {
    /// `"read"`: byte loads.
    Read,
    /// `"write"`: byte stores.
    Write,
    /// `"chase"`: dependent pointer loads.
    Chase,
}

impl MemAccess {
    /// The JSON name.
    pub fn name(self) -> &'static str {
        match self {
            MemAccess::Read => "read",
            MemAccess::Write => "write",
            MemAccess::Chase => "chase",
        }
    }
}

/// Cache level a buffer of a given size fits in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// ≤ [`L1_BYTES`].
    L1,
    /// ≤ [`L2_BYTES`].
    L2,
    /// ≤ [`LLC_BYTES`].
    Llc,
    /// Larger: streamed from DRAM.
    Dram,
}

/// L1 data cache size assumed: 32 KiB.
pub const L1_BYTES: u64 = 32 << 10;
/// L2 size assumed: 1 MiB.
pub const L2_BYTES: u64 = 1 << 20;
/// Last-level cache size assumed: 32 MiB.
pub const LLC_BYTES: u64 = 32 << 20;

/// Femtoseconds per nanosecond: the figures are kept in fs so that every
/// one of them (0.225 ns, 1.9375 ns) is an integer.
const FS_PER_NS: u128 = 1_000_000;

impl Level {
    /// The level a buffer of `size` bytes fits in.
    pub fn of(size: u64) -> Level {
        match size {
            s if s <= L1_BYTES => Level::L1,
            s if s <= L2_BYTES => Level::L2,
            s if s <= LLC_BYTES => Level::Llc,
            _ => Level::Dram,
        }
    }

    /// Cost of reading one byte from this level, in fs.
    pub fn read_fs_per_byte(self) -> u64 {
        match self {
            Level::L1 => 100_000,
            Level::L2 => 150_000,
            Level::Llc => 300_000,
            Level::Dram => 600_000,
        }
    }

    /// Cost of writing one byte to this level, in fs: 1.5 × a read.
    pub fn write_fs_per_byte(self) -> u64 {
        self.read_fs_per_byte() * 3 / 2
    }

    /// Load-to-use latency of this level, in fs.
    pub fn latency_fs(self) -> u64 {
        match self {
            Level::L1 => 1_500_000,
            Level::L2 => 5_000_000,
            Level::Llc => 20_000_000,
            Level::Dram => 90_000_000,
        }
    }

    /// One pointer hop in this level, in fs: the full latency when the
    /// chain is in random order, `L1 + (latency − L1) / 8` when it is
    /// sequential (prefetched).
    pub fn hop_fs(self, random: bool) -> u64 {
        let l1 = Level::L1.latency_fs();
        if random {
            self.latency_fs()
        } else {
            l1 + (self.latency_fs() - l1) / 8
        }
    }
}

/// Cost of one unit (a byte for read/write, a hop for chase), in fs.
pub fn unit_fs(access: MemAccess, size: u64, random: bool) -> u64 {
    let level = Level::of(size);
    match access {
        MemAccess::Read => level.read_fs_per_byte(),
        MemAccess::Write => level.write_fs_per_byte(),
        MemAccess::Chase => level.hop_fs(random),
    }
}

/// CPU work of a whole `memrun`, in ns, rounded up. `u128` so that any
/// `count` the reader accepts fits; the caller bounds it.
pub fn work_ns(access: MemAccess, size: u64, count: u64, random: bool) -> u128 {
    let fs = count as u128 * unit_fs(access, size, random) as u128;
    fs.div_ceil(FS_PER_NS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;

    #[test]
    fn levels_by_size() {
        assert_eq!(Level::of(1), Level::L1);
        assert_eq!(Level::of(32 * KIB), Level::L1);
        assert_eq!(Level::of(32 * KIB + 1), Level::L2);
        assert_eq!(Level::of(MIB), Level::L2);
        assert_eq!(Level::of(MIB + 1), Level::Llc);
        assert_eq!(Level::of(32 * MIB), Level::Llc);
        assert_eq!(Level::of(32 * MIB + 1), Level::Dram);
    }

    #[test]
    fn read_and_write_per_byte() {
        use MemAccess::*;
        // 1000 bytes: 100, 150, 300, 600 ns read; 1.5x that written.
        let read: Vec<_> = [KIB, 64 * KIB, 4 * MIB, 64 * MIB]
            .iter()
            .map(|&s| work_ns(Read, s, 1000, true))
            .collect();
        assert_eq!(read, [100, 150, 300, 600]);
        let write: Vec<_> = [KIB, 64 * KIB, 4 * MIB, 64 * MIB]
            .iter()
            .map(|&s| work_ns(Write, s, 1000, true))
            .collect();
        assert_eq!(write, [150, 225, 450, 900]);
        // The pattern does not matter to read/write.
        assert_eq!(work_ns(Read, 64 * MIB, 1000, false), 600);
    }

    #[test]
    fn chase_random_pays_the_latency() {
        use MemAccess::Chase;
        // 64 MiB does not fit the 32 MiB LLC: 1000 hops x 90 ns = 90 µs.
        assert_eq!(work_ns(Chase, 64 * MIB, 1000, true), 90_000);
        assert_eq!(work_ns(Chase, 16 * MIB, 1000, true), 20_000);
        assert_eq!(work_ns(Chase, 512 * KIB, 1000, true), 5_000);
        assert_eq!(work_ns(Chase, 4 * KIB, 1000, true), 1_500);
    }

    #[test]
    fn chase_sequential_is_prefetched() {
        use MemAccess::Chase;
        // L1 + (level - L1)/8: 1.5, 1.5 + 3.5/8, 1.5 + 18.5/8, 1.5 + 88.5/8.
        assert_eq!(work_ns(Chase, 4 * KIB, 1000, false), 1_500);
        assert_eq!(work_ns(Chase, 512 * KIB, 1000, false), 1_938); // 1937.5 up
        assert_eq!(work_ns(Chase, 16 * MIB, 1000, false), 3_813); // 3812.5 up
        assert_eq!(work_ns(Chase, 64 * MIB, 8000, false), 100_500); // 12.5625 x 8000
    }

    #[test]
    fn rounding_up_and_zero() {
        use MemAccess::*;
        assert_eq!(work_ns(Read, 64, 0, true), 0);
        assert_eq!(work_ns(Read, 64, 1, true), 1); // 0.1 ns -> 1 ns
        assert_eq!(work_ns(Read, 64, 10, true), 1);
        assert_eq!(work_ns(Read, 64, 11, true), 2);
        // The largest count the reader can pass does not overflow.
        assert!(work_ns(Chase, u64::MAX, u64::MAX, true) > u64::MAX as u128);
    }
}
