//! A fixed-size CPU bitmap (`struct cpumask`).

use crate::ids::CpuId;

/// A set of CPUs of one machine, as a bitmap.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CpuMask {
    bits: Vec<u64>,
    nr: usize,
}

impl CpuMask {
    /// An empty mask for a machine of `nr` CPUs.
    pub fn new(nr: usize) -> CpuMask {
        CpuMask {
            bits: vec![0; nr.div_ceil(64)],
            nr,
        }
    }
    /// A mask with every CPU of an `nr`-CPU machine set.
    pub fn full(nr: usize) -> CpuMask {
        // Whole words at once (50 000 tasks x 4 096 CPUs bit by bit was a
        // fifth of the 4096-CPU case's set-up), the last one cut at `nr`.
        let mut m = CpuMask {
            bits: vec![!0u64; nr.div_ceil(64)],
            nr,
        };
        if nr % 64 != 0 {
            *m.bits.last_mut().expect("nr % 64 != 0 means a word") = (1u64 << (nr % 64)) - 1;
        }
        m
    }
    /// Number of CPUs of the machine (the mask's size, not its weight).
    pub fn nr_cpus(&self) -> usize {
        self.nr
    }
    /// Adds a CPU.
    #[inline]
    pub fn set(&mut self, cpu: CpuId) {
        self.bits[cpu.idx() / 64] |= 1 << (cpu.idx() % 64);
    }
    /// Removes a CPU.
    #[inline]
    pub fn clear(&mut self, cpu: CpuId) {
        self.bits[cpu.idx() / 64] &= !(1 << (cpu.idx() % 64));
    }
    /// Is `cpu` in the set?
    #[inline]
    pub fn test(&self, cpu: CpuId) -> bool {
        cpu.idx() < self.nr && self.bits[cpu.idx() / 64] & (1 << (cpu.idx() % 64)) != 0
    }
    /// Number of CPUs set.
    pub fn weight(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// True when no CPU is set.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }
    /// Lowest CPU set.
    pub fn first(&self) -> Option<CpuId> {
        self.iter().next()
    }
    /// CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = CpuId> + '_ {
        self.bits
            .iter()
            .enumerate()
            .flat_map(|(wi, &w)| word_cpus(wi, w))
    }
    /// CPUs in wrapping order starting at `start` (included if set), then
    /// up to the end, then from CPU 0 (`for_each_cpu_wrap(cpu, mask, start)`).
    /// Each word is read once (the two halves split at `start`'s word), so
    /// the walk costs the mask's words, not twice them.
    pub fn iter_wrap(&self, start: CpuId) -> impl Iterator<Item = CpuId> + '_ {
        Self::iter_wrap_words(self.nr, start, |i| self.bits[i])
    }
    /// The wrapping walk of [`Self::iter_wrap`] over the set of an
    /// `nr`-CPU machine whose bit word `i` is `word(i)`: an intersection or
    /// difference of masks (`|i| a.word(i) & b.word(i)`) walked without
    /// building it, so without allocating.
    pub fn iter_wrap_words<F: Fn(usize) -> u64 + Copy>(
        nr: usize,
        start: CpuId,
        word: F,
    ) -> impl Iterator<Item = CpuId> {
        let s = (start.0 as usize).min(nr);
        range_cpus(s, nr, word).chain(range_cpus(0, s, word))
    }
    /// CPUs of `self ∩ other` in increasing order, a word at a time
    /// (`for_each_cpu_and`), without building the intersection.
    pub fn iter_and<'a>(&'a self, other: &'a CpuMask) -> impl Iterator<Item = CpuId> + 'a {
        range_cpus(0, self.nr, move |i| {
            self.bits[i] & other.bits.get(i).copied().unwrap_or(0)
        })
    }
    /// The mask's bit words (word `i`: CPUs `64 i ..= 64 i + 63`).
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.bits
    }
    /// Bit word `i` of the mask (CPUs `64 i ..= 64 i + 63`).
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.bits[i]
    }
    /// Set intersection.
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let mut m = self.clone();
        for (a, b) in m.bits.iter_mut().zip(&other.bits) {
            *a &= *b;
        }
        m
    }
    /// Do the two sets share a CPU?
    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.bits.iter().zip(&other.bits).any(|(a, b)| a & b != 0)
    }
    /// Indices of the 64-CPU words with a CPU set, increasing.
    pub fn word_indices(&self) -> Vec<usize> {
        (0..self.bits.len())
            .filter(|&i| self.bits[i] != 0)
            .collect()
    }
    /// [`Self::intersects`] comparing only the words listed, which must
    /// hold every CPU of `other` (`other.word_indices()`): the cost is
    /// sized by `other`'s occupied words, not by the machine.
    #[inline]
    pub fn intersects_in(&self, other: &CpuMask, words: &[usize]) -> bool {
        words.iter().any(|&i| self.bits[i] & other.bits[i] != 0)
    }
    /// Is every CPU of `self` in `other`?
    pub fn is_subset(&self, other: &CpuMask) -> bool {
        self.bits.iter().zip(&other.bits).all(|(a, b)| a & !b == 0)
    }
    /// Builds a mask from CPU numbers; numbers >= `nr` are an error.
    pub fn from_cpus(nr: usize, cpus: &[u32]) -> Result<CpuMask, u32> {
        let mut m = CpuMask::new(nr);
        for &c in cpus {
            if c as usize >= nr {
                return Err(c);
            }
            m.set(CpuId(c));
        }
        Ok(m)
    }
    /// The kernel's list format (`0-3,8-11`).
    pub fn to_list(&self) -> String {
        let mut out = Vec::new();
        let mut it = self.iter().map(|c| c.0).peekable();
        while let Some(a) = it.next() {
            let mut b = a;
            while it.peek() == Some(&(b + 1)) {
                b = it.next().unwrap();
            }
            out.push(if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            });
        }
        out.join(",")
    }
}

/// CPUs `lo <= cpu < hi` in increasing order of the set whose bit word
/// `i` is `word(i)`.
fn range_cpus<F: Fn(usize) -> u64>(lo: usize, hi: usize, word: F) -> impl Iterator<Item = CpuId> {
    let words = if lo < hi {
        lo / 64..hi.div_ceil(64)
    } else {
        0..0
    };
    words.flat_map(move |wi| {
        let mut w = word(wi);
        if wi == lo / 64 {
            w &= !0u64 << (lo % 64);
        }
        if wi == hi / 64 {
            // hi is not a multiple of 64 here (else this word is past the
            // range): keep the bits below it.
            w &= (1u64 << (hi % 64)) - 1;
        }
        word_cpus(wi, w)
    })
}

/// The CPUs of bit word `wi` whose set bits are `w`, in increasing order.
#[inline]
fn word_cpus(wi: usize, mut w: u64) -> impl Iterator<Item = CpuId> {
    std::iter::from_fn(move || {
        if w == 0 {
            return None;
        }
        let b = w.trailing_zeros();
        w &= w - 1;
        Some(CpuId(wi as u32 * 64 + b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step of the tests' xorshift64 generator.
    fn xorshift(x: &mut u64) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
    }

    #[test]
    fn list_format_and_wrap() {
        let m = CpuMask::from_cpus(70, &[0, 1, 2, 3, 8, 65]).unwrap();
        assert_eq!(m.to_list(), "0-3,8,65");
        assert_eq!(m.weight(), 6);
        let w: Vec<u32> = m.iter_wrap(CpuId(3)).map(|c| c.0).collect();
        assert_eq!(w, vec![3, 8, 65, 0, 1, 2]);
        assert!(CpuMask::from_cpus(4, &[4]).is_err());
    }

    /// The word-wise wrapping walk of an intersection equals the walk of
    /// the built intersection.
    #[test]
    fn iter_wrap_words_of_an_intersection() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for nr in [1usize, 63, 64, 65, 130, 4096] {
            let mut a = CpuMask::new(nr);
            let mut b = CpuMask::new(nr);
            for c in 0..nr {
                xorshift(&mut x);
                if x % 3 == 0 {
                    a.set(CpuId(c as u32));
                }
                if x % 5 < 3 {
                    b.set(CpuId(c as u32));
                }
            }
            for start in [0, 1, 63, 64, nr / 2, nr - 1, nr] {
                let s = CpuId(start as u32);
                let want: Vec<CpuId> = a.and(&b).iter_wrap(s).collect();
                let got: Vec<CpuId> =
                    CpuMask::iter_wrap_words(nr, s, |i| a.word(i) & b.word(i)).collect();
                assert_eq!(got, want, "nr {nr} start {start}");
                let and: Vec<CpuId> = a.iter_and(&b).collect();
                assert_eq!(and, a.and(&b).iter().collect::<Vec<_>>(), "nr {nr}");
            }
        }
    }

    /// `full` sets exactly CPUs 0..nr.
    #[test]
    fn full_is_every_cpu_and_no_more() {
        for nr in [0usize, 1, 63, 64, 65, 128, 4095, 4096] {
            let m = CpuMask::full(nr);
            let mut want = CpuMask::new(nr);
            for c in 0..nr {
                want.set(CpuId(c as u32));
            }
            assert_eq!(m, want, "nr {nr}");
            assert_eq!(m.weight(), nr);
        }
    }

    /// `intersects_in` over `other`'s occupied words equals `intersects`.
    #[test]
    fn intersects_in_matches_intersects() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for nr in [1usize, 64, 65, 200, 4096] {
            for _ in 0..50 {
                let mut a = CpuMask::new(nr);
                let mut b = CpuMask::new(nr);
                for c in 0..nr {
                    xorshift(&mut x);
                    if x % 97 == 0 {
                        a.set(CpuId(c as u32));
                    }
                    if x % 89 == 1 {
                        b.set(CpuId(c as u32));
                    }
                }
                let words = b.word_indices();
                assert!(words.iter().all(|&i| b.bits[i] != 0));
                assert_eq!(words.len(), b.bits.iter().filter(|&&w| w != 0).count());
                assert_eq!(a.intersects_in(&b, &words), a.intersects(&b), "nr {nr}");
            }
        }
    }

    /// The word-at-a-time wrap walk against its definition (every CPU from
    /// `start` up, then every CPU below it), on masks of 1-300 CPUs with
    /// starts on and off word boundaries and past the end.
    #[test]
    fn iter_wrap_matches_the_definition() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for nr in [1usize, 2, 63, 64, 65, 127, 128, 129, 200, 300] {
            for _ in 0..20 {
                let mut m = CpuMask::new(nr);
                for c in 0..nr {
                    xorshift(&mut x);
                    if x % 3 == 0 {
                        m.set(CpuId(c as u32));
                    }
                }
                for start in [0, 1, 63, 64, 65, 128, nr / 2, nr - 1, nr, nr + 5] {
                    let s = start as u32;
                    let want: Vec<CpuId> = m
                        .iter()
                        .filter(|c| c.0 >= s)
                        .chain(m.iter().filter(|c| c.0 < s))
                        .collect();
                    let got: Vec<CpuId> = m.iter_wrap(CpuId(s)).collect();
                    assert_eq!(got, want, "nr {nr} start {start} mask {}", m.to_list());
                }
            }
        }
    }
}
