//! Anonymous pipes (`fs/pipe.c`): capacity, merging and wakeups.
//!
//! Kernel rules modelled (Linux 5.5+ `pipe_write` / `pipe_read`):
//! * A pipe is a ring of `PIPE_DEF_BUFFERS` (16) page buffers of
//!   `PAGE_SIZE` (4 KiB on every preset: x86-64 and arm64 with 4 KiB
//!   pages). It is *full* when all 16 slots hold a page.
//! * Merging: a write first tries to append its sub-page part to the last
//!   buffer, which succeeds only when the pipe was not empty and that part
//!   still fits in the page (`offset + len + chars <= PAGE_SIZE`); otherwise
//!   it takes a fresh page per `PAGE_SIZE` of data. With 100-byte writes a
//!   page takes 40 of them (4000 bytes), so a pipe holds 16 x 40 = 640
//!   (confirmed on this host by `scripts/measure/syscost.c`: 640 writes before
//!   EAGAIN).
//! * A reader consumes from the oldest page and releases it when it has
//!   read all of it (`buf->len == 0`), the last page included, so an
//!   emptied pipe starts its next write on a fresh page.
//! * Wakeups (all `wake_up_interruptible_sync_poll`, i.e. WF_SYNC, from
//!   the waker's task context): a write wakes a reader when the pipe was
//!   empty before it; a read wakes a writer when the pipe was *full* (16
//!   slots) before it ([`WriterWake`]: up to 6.13 even if that read freed
//!   no slot, from 6.14 only if it did); a writer that had to wait wakes
//!   the next writer when it leaves the pipe not full.
//!   Readers and writers wait *exclusively* (`wait_event_..._exclusive`),
//!   so each wakeup wakes one waiter, the longest waiting; a waiter woken
//!   for nothing re-queues at the tail and sleeps again.
//!
//! * The pipe's shared state (the `pipe_inode_info`, its mutex, the ring's
//!   head and tail, the page being merged into) lives in cache lines held
//!   by the CPU that last read or wrote the pipe (`last_cpu`); a call on
//!   another CPU pays for moving them (`sched/syscall_cost.rs`).
//! * `pipe->mutex` serialises the pipe's writers and its reader
//!   (`lock`, `sched/chan_lock.rs`).
//!
//! Deviation: a message larger than a page is written whole, when enough
//! slots are free for all of it (the kernel would write the pages it can,
//! then wait for the rest).

use crate::ids::{CpuId, TaskId};
use std::collections::VecDeque;

/// `PAGE_SIZE` (4 KiB pages on every preset).
pub const PAGE_SIZE: u64 = 4096;
/// `PIPE_DEF_BUFFERS`: slots of a pipe created by pipe(2).
pub const PIPE_DEF_BUFFERS: usize = 16;

/// When `pipe_read` wakes a writer sleeping on a full pipe. The default is
/// the current kernel's rule (`kernels::DEFAULT_KERNEL` is `tip`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum WriterWake {
    /// Up to 6.13: whenever the pipe was full before the read, even if the
    /// read freed no slot (the writer wakes, finds the pipe still full and
    /// sleeps again).
    WasFull,
    /// From 6.14: only when the read freed a slot of a full pipe. Commit
    /// aaec5a95d596 "pipe_read: don't wake up the writer if the pipe is
    /// still full" (Oleg Nesterov, merged for 6.14). Measured on this
    /// host's 6.18 by `scripts/measure/pipewake.c`: with 640 100-byte messages
    /// queued and a writer blocked, reads 1-39 leave the writer asleep
    /// (0 voluntary switches), read 40 frees the first page and wakes it.
    #[default]
    FreedSlot,
}

impl WriterWake {
    /// The rule of `kernel` (a `--kernel` name).
    pub fn of(kernel: &str) -> Self {
        if crate::kernels::at_least(kernel, 6, 14) {
            WriterWake::FreedSlot
        } else {
            WriterWake::WasFull
        }
    }
}

/// One pipe buffer (a page): `end` = offset + len (where a merge appends),
/// `unread` = len.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Buf {
    end: u64,
    unread: u64,
}

/// A pipe's state and wait queues.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pipe {
    bufs: VecDeque<Buf>,
    /// Bytes waiting to be read: the sum of `bufs`' `unread`, kept as the
    /// buffers change (read on every `read()`).
    unread: u64,
    /// Readers sleeping on `rd_wait` (exclusive waiters, in order).
    pub readers: VecDeque<TaskId>,
    /// Writers sleeping on `wr_wait` (exclusive waiters, in order).
    pub writers: VecDeque<TaskId>,
    /// The CPU whose cache holds the pipe's shared state: the one that
    /// last called `read()` or `write()` on it (None: never used).
    pub last_cpu: Option<CpuId>,
    /// `pipe->mutex`.
    pub lock: super::chan_lock::ChanLock,
    /// The CPU that wrote each unread byte.
    pub origins: super::msg_origin::MsgOrigins,
}

impl Pipe {
    /// `pipe_empty`.
    pub fn empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// `pipe_full`: every slot holds a page.
    pub fn full(&self) -> bool {
        self.bufs.len() >= PIPE_DEF_BUFFERS
    }

    /// Bytes waiting to be read.
    pub fn unread(&self) -> u64 {
        debug_assert_eq!(self.unread, self.bufs.iter().map(|b| b.unread).sum::<u64>());
        self.unread
    }

    /// Would the sub-page part of an `n`-byte write merge into the last
    /// buffer?
    fn merges(&self, n: u64) -> bool {
        let chars = n % PAGE_SIZE;
        chars > 0 && self.bufs.back().is_some_and(|b| b.end + chars <= PAGE_SIZE)
    }

    /// Pages a write of `n` bytes takes.
    fn pages_for(&self, n: u64) -> usize {
        if self.merges(n) {
            (n / PAGE_SIZE) as usize
        } else {
            n.div_ceil(PAGE_SIZE) as usize
        }
    }

    /// Can an `n`-byte write complete now without waiting?
    pub fn writable(&self, n: u64) -> bool {
        self.bufs.len() + self.pages_for(n) <= PIPE_DEF_BUFFERS
    }

    /// Writes `n` bytes (the caller checked [`Pipe::writable`]); returns
    /// `was_empty` (the write must wake a reader).
    pub fn write(&mut self, n: u64) -> bool {
        debug_assert!(self.writable(n));
        let was_empty = self.empty();
        self.unread += n;
        let mut left = n;
        if self.merges(n) {
            let chars = n % PAGE_SIZE;
            let b = self.bufs.back_mut().expect("merges() saw a buffer");
            b.end += chars;
            b.unread += chars;
            left -= chars;
        }
        while left > 0 {
            let take = left.min(PAGE_SIZE);
            self.bufs.push_back(Buf {
                end: take,
                unread: take,
            });
            left -= take;
        }
        was_empty
    }

    /// Reads `n` bytes (the caller checked that many are unread); returns
    /// whether the read must wake a writer under `rule`.
    pub fn read(&mut self, n: u64, rule: WriterWake) -> bool {
        let was_full = self.full();
        debug_assert!(n <= self.unread);
        self.unread -= n;
        let mut left = n;
        while left > 0 {
            let b = self.bufs.front_mut().expect("enough unread bytes");
            let take = left.min(b.unread);
            b.unread -= take;
            left -= take;
            if b.unread == 0 {
                self.bufs.pop_front();
            }
        }
        match rule {
            WriterWake::WasFull => was_full,
            WriterWake::FreedSlot => was_full && !self.full(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hundred_byte_writes_merge_forty_to_a_page() {
        let mut p = Pipe::default();
        let mut n = 0;
        while p.writable(100) {
            p.write(100);
            n += 1;
        }
        assert_eq!(n, 640);
        assert!(p.full());
        // One read frees no slot (the first page still holds 3900 bytes):
        // the pipe stays full and a writer still cannot write. Up to 6.13
        // every such read wakes the writer for nothing.
        let mut q = p.clone();
        assert!(p.read(100, WriterWake::WasFull));
        assert!(!p.writable(100));
        for _ in 0..39 {
            assert!(p.read(100, WriterWake::WasFull));
        }
        assert!(!p.full() && p.writable(100));
        // From 6.14 only the 40th read, which frees the first page, wakes
        // it (this host's 6.18: scripts/measure/pipewake.c).
        for i in 1..=40 {
            assert_eq!(q.read(100, WriterWake::FreedSlot), i == 40, "read {i}");
        }
        assert!(!q.full() && q.writable(100));
        assert!(!q.read(100, WriterWake::FreedSlot), "the pipe was not full");
    }

    #[test]
    fn the_rule_follows_the_release() {
        assert_eq!(WriterWake::of("6.12"), WriterWake::WasFull);
        assert_eq!(WriterWake::of("6.15"), WriterWake::FreedSlot);
        assert_eq!(WriterWake::of("tip"), WriterWake::FreedSlot);
    }

    #[test]
    fn an_emptied_pipe_starts_a_fresh_page_and_wakes_its_reader() {
        let mut p = Pipe::default();
        assert!(p.write(100), "write into an empty pipe must wake");
        assert!(!p.write(100));
        p.read(100, WriterWake::FreedSlot);
        p.read(100, WriterWake::FreedSlot);
        assert!(p.empty());
        assert!(p.write(4000));
        // 4000 + 100 > 4096: no merge, a second page.
        assert!(!p.write(100));
        assert_eq!(p.bufs.len(), 2);
    }

    #[test]
    fn large_messages_take_whole_pages() {
        let mut p = Pipe::default();
        let mut n = 0;
        while p.writable(16384) {
            p.write(16384);
            n += 1;
        }
        assert_eq!(n, 4);
        assert_eq!(p.unread(), 65536);
        p.read(16384, WriterWake::FreedSlot);
        assert!(p.writable(16384));
    }
}
