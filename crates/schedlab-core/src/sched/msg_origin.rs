//! Where each queued message of a channel was written: the CPU whose
//! cache holds it until a reader takes it (a pipe's bytes in the page, an
//! AF_UNIX stream's skb and its data). A read pays for pulling its message
//! from that CPU, whoever used the channel's shared state last
//! (`SyscallCosts::xmsg`, `sched/syscall_cost.rs`).
//!
//! Kept as runs of bytes by writing CPU, oldest first: consecutive writes
//! from one CPU are one run. Reads take bytes from the front; a read's
//! message is the one its first byte belongs to (hackbench reads whole
//! messages of the size written).

use std::collections::VecDeque;

use crate::ids::CpuId;

/// The writing CPU of every unread byte of a channel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MsgOrigins {
    /// (bytes, writing CPU), oldest first.
    runs: VecDeque<(u64, CpuId)>,
}

impl MsgOrigins {
    /// `bytes` written by `cpu` join the queue.
    pub fn push(&mut self, bytes: u64, cpu: CpuId) {
        match self.runs.back_mut() {
            Some((n, c)) if *c == cpu => *n += bytes,
            _ => self.runs.push_back((bytes, cpu)),
        }
    }

    /// A read takes `bytes` from the front.
    pub fn take(&mut self, mut bytes: u64) {
        while bytes > 0 {
            let Some(front) = self.runs.front_mut() else {
                return;
            };
            if front.0 > bytes {
                front.0 -= bytes;
                return;
            }
            bytes -= front.0;
            self.runs.pop_front();
        }
    }

    /// The CPU that wrote the next message to be read, if one is queued.
    #[inline]
    pub fn front(&self) -> Option<CpuId> {
        self.runs.front().map(|r| r.1)
    }

    /// A walk over the writing CPUs of successive reads from the front,
    /// one read at a time ([`MsgOrigins::next_read`]).
    #[inline]
    pub fn reads(&self) -> ReadCursor {
        match self.runs.front() {
            Some(&(left, cpu)) => ReadCursor {
                run: 0,
                left,
                cpu,
                more: true,
            },
            None => ReadCursor::default(),
        }
    }

    /// The CPU that wrote the next read of `size` bytes on the walk `cur`
    /// (None once the queued bytes are used up), and the walk past it.
    #[inline]
    pub fn next_read(&self, cur: &mut ReadCursor, size: u64) -> Option<CpuId> {
        if !cur.more {
            return None;
        }
        let cpu = cur.cpu;
        // `left`: bytes of the current run from the next read's first byte.
        let mut skip = size;
        while skip >= cur.left {
            skip -= cur.left;
            cur.run += 1;
            match self.runs.get(cur.run) {
                Some(&(n, c)) => (cur.left, cur.cpu) = (n, c),
                None => {
                    cur.more = false;
                    return Some(cpu);
                }
            }
        }
        cur.left -= skip;
        Some(cpu)
    }

    /// The CPUs that wrote the next `k` reads of `size` bytes each (fewer
    /// when fewer bytes are queued), oldest first, into `out` (cleared):
    /// the walk's specification, for the tests.
    #[cfg(test)]
    pub fn next_reads(&self, size: u64, k: u64, out: &mut Vec<CpuId>) {
        out.clear();
        let mut cur = self.reads();
        while (out.len() as u64) < k {
            match self.next_read(&mut cur, size) {
                Some(c) => out.push(c),
                None => return,
            }
        }
    }
}

/// A position in a channel's queued bytes, at the first byte of a read
/// ([`MsgOrigins::reads`]); it holds no borrow, so the queue can be read
/// between steps.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadCursor {
    /// Index of the current run.
    run: usize,
    /// Bytes of the current run from the next read's first byte.
    left: u64,
    /// The current run's writing CPU.
    cpu: CpuId,
    /// False once the queued bytes are used up.
    more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_find_the_cpu_that_wrote_their_first_byte() {
        let mut o = MsgOrigins::default();
        assert_eq!(o.front(), None);
        // CPU 1 writes two 100-byte messages, CPU 2 one, CPU 1 one.
        o.push(100, CpuId(1));
        o.push(100, CpuId(1));
        o.push(100, CpuId(2));
        o.push(100, CpuId(1));
        assert_eq!(o.runs.len(), 3);
        let mut v = Vec::new();
        o.next_reads(100, 10, &mut v);
        assert_eq!(v, [CpuId(1), CpuId(1), CpuId(2), CpuId(1)]);
        o.next_reads(100, 2, &mut v);
        assert_eq!(v, [CpuId(1), CpuId(1)]);
        o.take(100);
        assert_eq!(o.front(), Some(CpuId(1)));
        o.take(100);
        assert_eq!(o.front(), Some(CpuId(2)));
        o.next_reads(100, 5, &mut v);
        assert_eq!(v, [CpuId(2), CpuId(1)]);
        // 50-byte reads: two per message.
        o.next_reads(50, 3, &mut v);
        assert_eq!(v, [CpuId(2), CpuId(2), CpuId(1)]);
        o.take(200);
        assert_eq!(o.front(), None);
        o.next_reads(100, 1, &mut v);
        assert!(v.is_empty());
        // Taking more than is queued empties it.
        o.push(10, CpuId(0));
        o.take(100);
        assert_eq!(o.front(), None);
    }
}
