//! The waste sampler's table of the domains' spans: per CPU and level the
//! index of its span among the distinct spans, so that a sample tests each
//! span once (the scale13 bench case). Its own file so that the accounting
//! (`stats.rs`) can hold it without importing the sampler.

use crate::machine::CpuMask;
use std::sync::Arc;

/// No domain at this level (the CPU has fewer levels than the deepest).
const NO_SPAN: u32 = u32::MAX;

/// The domains' spans as the sampler reads them, built at the first
/// sample (the domains are fixed for the run): per CPU and level the index
/// of its span among the distinct spans (the domains share their spans as
/// `Arc`s; one index per `Arc`), in one dense array, and per distinct span
/// whether the current sample found a helpable CPU in it. An idle CPU's
/// level is then the first of its row whose span hits, each span tested
/// once per sample: what the walk of its `SchedDomain`s computed (one
/// `intersects` per span and level, reused for a span shared with the
/// previous idle CPU), without reading each CPU's domain structures
/// (scale13: ~3 000 idle CPUs x 5 levels every 250 µs at 4096
/// CPUs).
#[derive(Clone, Debug, Default)]
pub(crate) struct WasteSpans {
    levels: usize,
    /// `ids[c * levels + l]`: CPU c's level-l span, or [`NO_SPAN`].
    ids: Vec<u32>,
    /// The distinct spans.
    spans: Vec<Arc<CpuMask>>,
    /// Per distinct span, in the current sample: 0 not tested yet, 1 no
    /// helpable CPU in it, 2 one.
    hit: Vec<u8>,
}

impl WasteSpans {
    /// The table of `domains` (`levels`: the most levels of any CPU).
    pub(crate) fn build(domains: &crate::machine::domains::SchedDomains, levels: usize) -> Self {
        let n = domains.per_cpu.len();
        let mut index: std::collections::HashMap<*const CpuMask, u32> = Default::default();
        let mut spans = Vec::new();
        let mut ids = vec![NO_SPAN; n * levels];
        for (c, doms) in domains.per_cpu.iter().enumerate() {
            for (l, sd) in doms.iter().enumerate() {
                let id = *index.entry(Arc::as_ptr(&sd.span)).or_insert_with(|| {
                    spans.push(sd.span.clone());
                    (spans.len() - 1) as u32
                });
                ids[c * levels + l] = id;
            }
        }
        let hit = vec![0; spans.len()];
        WasteSpans {
            levels,
            ids,
            spans,
            hit,
        }
    }

    /// The lowest level of `cpu`'s domains whose span holds a CPU of
    /// `set` (whose occupied words are `words`), testing each span once
    /// per sample ([`Self::new_sample`] forgets the answers).
    #[inline]
    pub(crate) fn level(&mut self, cpu: usize, set: &CpuMask, words: &[usize]) -> Option<usize> {
        let row = &self.ids[cpu * self.levels..(cpu + 1) * self.levels];
        for (l, &id) in row.iter().enumerate() {
            if id == NO_SPAN {
                break;
            }
            let h = &mut self.hit[id as usize];
            if *h == 0 {
                *h = 1 + self.spans[id as usize].intersects_in(set, words) as u8;
            }
            if *h == 2 {
                return Some(l);
            }
        }
        None
    }

    /// Forgets the answers of the previous sample.
    #[inline]
    pub(crate) fn new_sample(&mut self) {
        self.hit.fill(0);
    }
}
