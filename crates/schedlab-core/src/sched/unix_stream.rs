//! AF_UNIX stream sockets (`net/unix/af_unix.c`, `net/core/sock.c`):
//! send-buffer accounting and wakeups.
//!
//! Kernel rules modelled:
//! * Every `write()` of a small message is its own skb, queued on the
//!   peer's receive queue (`unix_stream_sendmsg` does not coalesce), and
//!   charged to the *sending* socket's `sk_wmem_alloc` by its `truesize`.
//!   All hackbench senders of one receiver write through the same socket,
//!   so they share its send buffer.
//! * `sock_alloc_send_pskb` lets a write through while `sk_wmem_alloc <
//!   sk_sndbuf` (the last one may overshoot); otherwise the writer sleeps
//!   (`sock_wait_for_wmem`, a *non-exclusive* wait). `sk_sndbuf` is
//!   `net.core.wmem_default`, 212992 by default.
//! * `truesize` of a linear skb: the head allocation (the data rounded to
//!   `SMP_CACHE_BYTES` plus the aligned `struct skb_shared_info`, 320 bytes
//!   on x86-64 and arm64, rounded up to the allocator's object size) plus
//!   the aligned `struct sk_buff` (256). A 100-byte write: 128 + 320 = 448
//!   -> 512, + 256 = 768. Measured on this host (Linux 6.18,
//!   `scripts/measure/syscost.c`): 278 writes of 100 bytes before EAGAIN with
//!   SO_SNDBUF 212992, i.e. a truesize in (766, 768]. Above
//!   `SKB_MAX_HEAD(0)` (3776 bytes) the rest goes into whole pages, each
//!   charging `PAGE_SIZE` (approximate: not measured).
//! * The reader sleeps on its own socket while the receive queue is empty
//!   (`unix_stream_data_wait`, non-exclusive). Each write wakes it when it
//!   sleeps (`sock_def_readable`: `wake_up_interruptible_sync_poll`, WF_SYNC).
//! * Reading a whole skb frees it: `sock_wfree` takes its truesize off the
//!   sender's `sk_wmem_alloc` and calls `unix_write_space`, which wakes
//!   *every* sleeping writer (sync) only when the socket is writable again
//!   in `unix_writable`'s sense: at most a quarter of `sk_sndbuf` in use.
//! * The shared state (the receiving socket's queue lock and list, the
//!   sender's `sk_wmem_alloc`, the skb a reader frees) lives in cache lines
//!   held by the CPU that last wrote or read the stream (`last_cpu`); a
//!   call on another CPU pays for moving them (`sched/syscall_cost.rs`).
//! * The receiving socket's `unix_state_lock` and queue lock serialise
//!   its writers and its reader (`lock`, `sched/chan_lock.rs`).

use crate::ids::{CpuId, TaskId};
use std::collections::VecDeque;

/// `net.core.wmem_default`, the `sk_sndbuf` of a new AF_UNIX socket.
pub const WMEM_DEFAULT: u64 = 212_992;
/// `SMP_CACHE_BYTES` (64-byte lines on every preset).
const CACHE_BYTES: u64 = 64;
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` (x86-64, arm64).
const SHINFO: u64 = 320;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`.
const SKB: u64 = 256;
/// `SKB_MAX_HEAD(0)`: most linear data in an order-0 head.
const MAX_HEAD: u64 = super::pipe::PAGE_SIZE - SHINFO;

/// `truesize` of the skb one `write()` of `len` bytes makes.
pub fn skb_truesize(len: u64) -> u64 {
    let paged = if len > MAX_HEAD {
        (len - MAX_HEAD).div_ceil(super::pipe::PAGE_SIZE) * super::pipe::PAGE_SIZE
    } else {
        0
    };
    let linear = len.saturating_sub(paged);
    let head = linear.div_ceil(CACHE_BYTES) * CACHE_BYTES + SHINFO;
    // kmalloc's power-of-two object sizes (the head is at least 320 bytes,
    // above the 96- and 192-byte caches).
    head.next_power_of_two() + SKB + paged
}

/// One stream socket pair direction: the sender's send-buffer accounting,
/// the receiver's queue, and both wait queues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnixStream {
    /// `sk_wmem_alloc` of the sending socket (bytes of truesize).
    pub wmem: u64,
    /// `sk_sndbuf`.
    pub sndbuf: u64,
    /// Truesize of each skb on the receive queue, oldest first.
    queue: VecDeque<u64>,
    /// Readers sleeping on the receiving socket (non-exclusive).
    pub readers: Vec<TaskId>,
    /// Writers sleeping for send-buffer space (non-exclusive).
    pub writers: Vec<TaskId>,
    /// The CPU whose cache holds the stream's shared state: the one that
    /// last called `write()` or `read()` on it (None: never used).
    pub last_cpu: Option<CpuId>,
    /// The receiving socket's `unix_state_lock` / `sk_receive_queue.lock`.
    pub lock: super::chan_lock::ChanLock,
    /// The CPU that wrote each queued skb's bytes.
    pub origins: super::msg_origin::MsgOrigins,
}

impl Default for UnixStream {
    fn default() -> Self {
        UnixStream {
            wmem: 0,
            sndbuf: WMEM_DEFAULT,
            queue: VecDeque::new(),
            readers: Vec::new(),
            writers: Vec::new(),
            last_cpu: None,
            lock: Default::default(),
            origins: Default::default(),
        }
    }
}

impl UnixStream {
    /// Messages (skbs) waiting to be read.
    pub fn queued(&self) -> u64 {
        self.queue.len() as u64
    }

    /// Can a write go through now (`sk_wmem_alloc < sk_sndbuf`)?
    pub fn writable(&self) -> bool {
        self.wmem < self.sndbuf
    }

    /// A write of `len` bytes (the caller checked [`UnixStream::writable`]).
    pub fn write(&mut self, len: u64) {
        let ts = skb_truesize(len);
        self.wmem += ts;
        self.queue.push_back(ts);
    }

    /// Reads one message (one skb; the caller checked one is queued);
    /// returns true when `unix_write_space` finds the socket writable
    /// (wmem at most a quarter of sndbuf): sleeping writers are woken.
    pub fn read(&mut self) -> bool {
        let ts = self.queue.pop_front().expect("a queued skb");
        self.wmem -= ts;
        self.wmem * 4 <= self.sndbuf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truesize_of_a_hundred_byte_write_matches_the_host() {
        assert_eq!(skb_truesize(100), 768);
        // 278 writes get through, as measured on the host.
        let mut s = UnixStream::default();
        let mut n = 0;
        while s.writable() {
            s.write(100);
            n += 1;
        }
        assert_eq!(n, 278);
    }

    #[test]
    fn writers_are_woken_only_at_a_quarter() {
        let mut s = UnixStream::default();
        while s.writable() {
            s.write(100);
        }
        let mut reads = 0;
        while !s.read() {
            reads += 1;
        }
        // 278 × 768 in use; writable again at ≤ 53248 bytes = 69 skbs.
        assert_eq!(278 - reads - 1, 69);
    }

    #[test]
    fn big_writes_charge_pages() {
        assert_eq!(skb_truesize(4096), 512 + 256 + 4096);
        assert!(skb_truesize(65536) > 65536);
    }
}
