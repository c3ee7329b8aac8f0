//! The workload's shared objects as real futex-based primitives.
//!
//! * Mutexes and condition variables are glibc `pthread_mutex_t` /
//!   `pthread_cond_t` (as rt-app uses them): a mutex taken by one op stays
//!   held until a later `Unlock` op of the same thread. With
//!   `Workload::pi_mutexes` the mutexes are `PTHREAD_PRIO_INHERIT`
//!   (FUTEX_LOCK_PI). Condition variables wait on CLOCK_MONOTONIC.
//! * Semaphores and barriers are a std `Mutex` + `Condvar` (futex-based on
//!   Linux): a counter with glibc's semantics (a post is remembered and not
//!   reserved for the waiter it wakes), and a generation-counted barrier
//!   whose last arrival wakes the others, as rt-app's barrier does.
//! * Channels are blocking pipes or AF_UNIX stream socketpairs, read and
//!   written as hackbench does: a `read` or `write` that cannot proceed
//!   sleeps in the kernel's own wait (a pipe's waits are exclusive: one
//!   waiter woken per wakeup; `poll` would wake every waiter). At the
//!   run's end a [`Blockers`] kicker interrupts threads still asleep in
//!   one with a signal whose handler does nothing (no `SA_RESTART`: the
//!   call returns `EINTR`).
//!
//! Every wait is bounded by the run's end (and by short slices when the run
//! has no end, so an error elsewhere can stop it): [`Stopped`] means the
//! run ended while waiting.

use crate::error::HostError;
use crate::sys;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

/// The run ended (duration reached, or another thread failed) during a wait.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stopped;

/// When the run ends.
#[derive(Debug)]
pub struct StopClock {
    /// CLOCK_MONOTONIC end of the run (`u64::MAX`: none).
    pub end: u64,
    /// Set when a thread failed: everyone stops.
    pub flag: AtomicBool,
}

/// Longest single wait when the run has no end.
const SLICE_NS: u64 = 100_000_000;

impl StopClock {
    /// Has the run ended?
    pub fn stopped(&self) -> bool {
        self.flag.load(Ordering::Relaxed) || (self.end != u64::MAX && sys::now_ns() >= self.end)
    }

    /// The deadline of the next wait slice (monotonic ns).
    pub fn slice_deadline(&self) -> u64 {
        self.end.min(sys::now_ns().saturating_add(SLICE_NS))
    }
}

/// A pthread mutex.
pub struct PMutex(Box<UnsafeCell<libc::pthread_mutex_t>>);
// SAFETY: pthread mutexes are made to be shared between threads; the box
// keeps the address stable.
unsafe impl Sync for PMutex {}
unsafe impl Send for PMutex {}

impl PMutex {
    /// A normal (or priority-inheriting) mutex.
    pub fn new(pi: bool) -> PMutex {
        let m = Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));
        // SAFETY: attr is initialised before use and destroyed after.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            if pi {
                libc::pthread_mutexattr_setprotocol(&mut attr, libc::PTHREAD_PRIO_INHERIT);
            }
            libc::pthread_mutex_init(m.get(), &attr);
            libc::pthread_mutexattr_destroy(&mut attr);
        }
        PMutex(m)
    }

    fn raw(&self) -> *mut libc::pthread_mutex_t {
        self.0.get()
    }

    /// Locks, waiting at most until the run ends.
    pub fn lock(&self, stop: &StopClock) -> Result<Result<(), Stopped>, HostError> {
        loop {
            if stop.stopped() {
                return Ok(Err(Stopped));
            }
            let mono = stop.slice_deadline();
            // timedlock waits on CLOCK_REALTIME: convert the deadline.
            let rt = sys::realtime_ns() + mono.saturating_sub(sys::now_ns());
            let ts = sys::timespec(rt);
            // SAFETY: the mutex is initialised and lives as long as self.
            let r = unsafe { libc::pthread_mutex_timedlock(self.raw(), &ts) };
            match r {
                0 => return Ok(Ok(())),
                libc::ETIMEDOUT | libc::EINTR => continue,
                e => return Err(HostError::errno("pthread_mutex_timedlock", e)),
            }
        }
    }

    /// Unlocks (an error if the thread does not hold it: rt-app's ordering
    /// bug, reported rather than ignored).
    pub fn unlock(&self) -> Result<(), HostError> {
        // SAFETY: as above.
        let r = unsafe { libc::pthread_mutex_unlock(self.raw()) };
        if r != 0 {
            return Err(HostError::errno("pthread_mutex_unlock", r));
        }
        Ok(())
    }
}

impl Drop for PMutex {
    fn drop(&mut self) {
        // SAFETY: no thread uses it any more.
        unsafe { libc::pthread_mutex_destroy(self.raw()) };
    }
}

/// A pthread condition variable on CLOCK_MONOTONIC.
pub struct PCond(Box<UnsafeCell<libc::pthread_cond_t>>);
// SAFETY: as for PMutex.
unsafe impl Sync for PCond {}
unsafe impl Send for PCond {}

impl Default for PCond {
    fn default() -> Self {
        Self::new()
    }
}

impl PCond {
    /// A condition variable.
    pub fn new() -> PCond {
        let c = Box::new(UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER));
        // SAFETY: attr initialised before use.
        unsafe {
            let mut attr: libc::pthread_condattr_t = std::mem::zeroed();
            libc::pthread_condattr_init(&mut attr);
            libc::pthread_condattr_setclock(&mut attr, libc::CLOCK_MONOTONIC);
            libc::pthread_cond_init(c.get(), &attr);
            libc::pthread_condattr_destroy(&mut attr);
        }
        PCond(c)
    }

    /// `pthread_cond_wait` with `m` held: one wait (a spurious or timed-out
    /// return re-waits only when the run has no end and the slice ran out).
    pub fn wait(&self, m: &PMutex, stop: &StopClock) -> Result<Result<(), Stopped>, HostError> {
        loop {
            if stop.stopped() {
                return Ok(Err(Stopped));
            }
            let ts = sys::timespec(stop.slice_deadline());
            // SAFETY: both objects are initialised; the caller holds m.
            let r = unsafe { libc::pthread_cond_timedwait(self.0.get(), m.raw(), &ts) };
            match r {
                0 => return Ok(Ok(())),
                libc::ETIMEDOUT | libc::EINTR => continue,
                e => return Err(HostError::errno("pthread_cond_timedwait", e)),
            }
        }
    }

    /// `pthread_cond_signal` / `pthread_cond_broadcast`.
    pub fn signal(&self, all: bool) {
        // SAFETY: initialised.
        unsafe {
            if all {
                libc::pthread_cond_broadcast(self.0.get());
            } else {
                libc::pthread_cond_signal(self.0.get());
            }
        }
    }
}

impl Drop for PCond {
    fn drop(&mut self) {
        // SAFETY: no thread uses it any more.
        unsafe { libc::pthread_cond_destroy(self.0.get()) };
    }
}

fn wait_slice<'a, T>(
    cv: &Condvar,
    g: std::sync::MutexGuard<'a, T>,
    stop: &StopClock,
) -> std::sync::MutexGuard<'a, T> {
    let left = stop.slice_deadline().saturating_sub(sys::now_ns());
    cv.wait_timeout(g, std::time::Duration::from_nanos(left.max(1)))
        .unwrap_or_else(|e| e.into_inner())
        .0
}

/// A counting semaphore, initial value 0.
#[derive(Default)]
pub struct Sem {
    count: Mutex<u64>,
    cv: Condvar,
}

impl Sem {
    /// `sem_post`.
    pub fn post(&self) {
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cv.notify_one();
    }

    /// `sem_wait`.
    pub fn wait(&self, stop: &StopClock) -> Result<(), Stopped> {
        let mut g = self.count.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *g > 0 {
                *g -= 1;
                return Ok(());
            }
            if stop.stopped() {
                return Err(Stopped);
            }
            g = wait_slice(&self.cv, g, stop);
        }
    }
}

/// A reusable barrier of `n` participants.
pub struct Barrier {
    n: u32,
    state: Mutex<(u32, u64)>, // arrived, generation
    cv: Condvar,
}

impl Barrier {
    /// A barrier of `n` participants.
    pub fn new(n: u32) -> Barrier {
        Barrier {
            n: n.max(1),
            state: Mutex::new((0, 0)),
            cv: Condvar::new(),
        }
    }

    /// Arrive and wait for the others; the last arrival wakes them.
    /// Returns true for the last arrival.
    pub fn wait(&self, stop: &StopClock) -> Result<bool, Stopped> {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        if g.0 >= self.n {
            g.0 = 0;
            g.1 += 1;
            self.cv.notify_all();
            return Ok(true);
        }
        let gen = g.1;
        while g.1 == gen {
            if stop.stopped() {
                return Err(Stopped);
            }
            g = wait_slice(&self.cv, g, stop);
        }
        Ok(false)
    }
}

/// The signal that interrupts a blocked channel call at the run's end.
const INTERRUPT: i32 = libc::SIGUSR1;

extern "C" fn interrupted(_: i32) {}

/// Installs the do-nothing handler of `INTERRUPT` (SIGUSR1), without `SA_RESTART`,
/// once per process.
pub fn install_interrupt_handler() -> Result<(), HostError> {
    static ONCE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = interrupted as extern "C" fn(i32) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            if libc::sigaction(INTERRUPT, &sa, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error().to_string());
            }
        }
        Ok(())
    })
    .clone()
    .map_err(|e| HostError::Workload(format!("sigaction(SIGUSR1): {e}")))
}

/// The threads that may be asleep in a channel call: at the run's end
/// [`Blockers::kick_all`] signals each with `INTERRUPT`. A thread stays
/// listed from [`Blockers::register`] until its guard drops, and is only
/// signalled under the list's lock, so never after it left.
#[derive(Default)]
pub struct Blockers {
    live: Mutex<Vec<libc::pthread_t>>,
}

/// Removes the calling thread from its [`Blockers`] when dropped.
pub struct BlockerGuard<'a> {
    of: &'a Blockers,
    me: libc::pthread_t,
}

impl Blockers {
    /// Lists the calling thread until the guard drops.
    pub fn register(&self) -> BlockerGuard<'_> {
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        self.live.lock().unwrap_or_else(|e| e.into_inner()).push(me);
        BlockerGuard { of: self, me }
    }

    /// Signals every listed thread (a signal that comes just before a
    /// thread enters its call is lost: call this repeatedly until the
    /// threads are gone). The number signalled.
    pub fn kick_all(&self) -> usize {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        for &t in live.iter() {
            // SAFETY: `t` is a running thread: it removes itself under
            // this lock before it ends.
            unsafe { libc::pthread_kill(t, INTERRUPT) };
        }
        live.len()
    }
}

impl Drop for BlockerGuard<'_> {
    fn drop(&mut self) {
        let mut live = self.of.live.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: pthread_equal has no preconditions.
        if let Some(i) = live
            .iter()
            .position(|&t| unsafe { libc::pthread_equal(t, self.me) } != 0)
        {
            live.swap_remove(i);
        }
    }
}

/// How channels (`Op::Send` / `Op::Recv`) are made.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ChannelKind {
    /// `pipe2`, blocking.
    Pipe,
    /// `socketpair(AF_UNIX, SOCK_STREAM)`, blocking.
    Socket,
}

/// One channel: a reader end and a writer end.
pub struct Channel {
    rd: i32,
    wr: i32,
}

impl Channel {
    /// Opens a pipe or socket pair.
    pub fn open(kind: ChannelKind) -> Result<Channel, HostError> {
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid 2-int array.
        let r = unsafe {
            match kind {
                ChannelKind::Pipe => libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC),
                ChannelKind::Socket => libc::socketpair(
                    libc::AF_UNIX,
                    libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                    0,
                    fds.as_mut_ptr(),
                ),
            }
        };
        if r != 0 {
            return Err(HostError::last_os(format!("{kind:?} channel")));
        }
        Ok(Channel {
            rd: fds[0],
            wr: fds[1],
        })
    }

    /// Writes all of `buf`, asleep in `write` while the channel is full;
    /// an interrupted call ([`Blockers::kick_all`]) ends it if the run has
    /// ended.
    pub fn send(&self, buf: &[u8], stop: &StopClock) -> Result<Result<(), Stopped>, HostError> {
        let mut off = 0;
        while off < buf.len() {
            if off > 0 && stop.stopped() {
                return Ok(Err(Stopped));
            }
            // SAFETY: the slice is valid for its length.
            let n = unsafe { libc::write(self.wr, buf[off..].as_ptr().cast(), buf.len() - off) };
            if n > 0 {
                off += n as usize;
                continue;
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => {
                    if stop.stopped() {
                        return Ok(Err(Stopped));
                    }
                }
                _ => {
                    return Err(HostError::Sys {
                        call: "write(channel)".into(),
                        err: e,
                    })
                }
            }
        }
        Ok(Ok(()))
    }

    /// Reads exactly `len` bytes into scratch space, asleep in `read`
    /// while the channel is empty; an interrupted call ends it if the run
    /// has ended.
    pub fn recv(
        &self,
        len: usize,
        buf: &mut [u8],
        stop: &StopClock,
    ) -> Result<Result<(), Stopped>, HostError> {
        let mut left = len;
        while left > 0 {
            if left < len && stop.stopped() {
                return Ok(Err(Stopped));
            }
            let want = left.min(buf.len());
            // SAFETY: buf is valid for `want` bytes.
            let n = unsafe { libc::read(self.rd, buf.as_mut_ptr().cast(), want) };
            if n > 0 {
                left -= n as usize;
                continue;
            }
            if n == 0 {
                return Err(HostError::Workload("channel closed while reading".into()));
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => {
                    if stop.stopped() {
                        return Ok(Err(Stopped));
                    }
                }
                _ => {
                    return Err(HostError::Sys {
                        call: "read(channel)".into(),
                        err: e,
                    })
                }
            }
        }
        Ok(Ok(()))
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // SAFETY: we own both descriptors.
        unsafe {
            libc::close(self.rd);
            libc::close(self.wr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    fn clock(ms: u64) -> StopClock {
        StopClock {
            end: sys::now_ns() + ms * 1_000_000,
            flag: AtomicBool::new(false),
        }
    }

    #[test]
    fn mutex_held_across_calls_and_pi() {
        for pi in [false, true] {
            let m = PMutex::new(pi);
            let s = clock(1000);
            m.lock(&s).unwrap().unwrap();
            m.unlock().unwrap();
        }
    }

    #[test]
    fn sem_remembers_posts_and_times_out() {
        let s = Sem::default();
        let c = clock(1000);
        s.post();
        assert_eq!(s.wait(&c), Ok(()));
        let short = clock(20);
        assert_eq!(s.wait(&short), Err(Stopped));
    }

    #[test]
    fn barrier_releases_all() {
        let b = Arc::new(Barrier::new(3));
        let c = Arc::new(clock(2000));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let (b, c) = (b.clone(), c.clone());
                std::thread::spawn(move || b.wait(&c))
            })
            .collect();
        let lasts: Vec<bool> = hs.into_iter().map(|h| h.join().unwrap().unwrap()).collect();
        assert_eq!(lasts.iter().filter(|&&x| x).count(), 1);
    }

    #[test]
    fn channels_carry_bytes_and_stop() {
        install_interrupt_handler().unwrap();
        for kind in [ChannelKind::Pipe, ChannelKind::Socket] {
            let ch = Channel::open(kind).unwrap();
            let c = clock(1000);
            ch.send(&[7u8; 100], &c).unwrap().unwrap();
            let mut buf = [0u8; 64];
            ch.recv(100, &mut buf, &c).unwrap().unwrap();
            // An empty channel: the reader sleeps in read() until the run
            // has ended and a kick interrupts it.
            let short = clock(20);
            let blockers = Blockers::default();
            std::thread::scope(|s| {
                let reader = s.spawn(|| {
                    let _g = blockers.register();
                    let mut b = [0u8; 64];
                    ch.recv(1, &mut b, &short).unwrap()
                });
                while !reader.is_finished() {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    if short.stopped() {
                        blockers.kick_all();
                    }
                }
                assert_eq!(reader.join().unwrap(), Err(Stopped));
            });
            // A kick before the end is not the end: the call goes on and
            // gets its data.
            let long = clock(5000);
            std::thread::scope(|s| {
                let reader = s.spawn(|| {
                    let _g = blockers.register();
                    let mut b = [0u8; 64];
                    ch.recv(100, &mut b, &long).unwrap()
                });
                for _ in 0..5 {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    blockers.kick_all();
                }
                ch.send(&[1u8; 100], &long).unwrap().unwrap();
                assert_eq!(reader.join().unwrap(), Ok(()));
            });
            assert_eq!(blockers.kick_all(), 0, "threads leave the list");
        }
    }

    /// The calling thread's voluntary context switches so far.
    fn voluntary_switches() -> u64 {
        let st = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        st.lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn a_pipe_wakes_one_blocked_reader_per_write() {
        // Three readers asleep in read() on one empty pipe; a 1-byte write
        // wakes exactly one of them (the pipe's exclusive wait). poll()
        // would wake all three and two would find the pipe empty and sleep
        // again: two sleeps in their call instead of one. Later writes
        // release the other two, each still after a single sleep.
        install_interrupt_handler().unwrap();
        let ch = Channel::open(ChannelKind::Pipe).unwrap();
        let c = clock(5000);
        let blockers = Blockers::default();
        let done = AtomicUsize::new(0);
        let sleeps = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    let _g = blockers.register();
                    let mut b = [0u8; 1];
                    let before = voluntary_switches();
                    let r = ch.recv(1, &mut b, &c).unwrap();
                    sleeps.lock().unwrap().push(voluntary_switches() - before);
                    assert_eq!(r, Ok(()));
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            ch.send(&[1u8], &c).unwrap().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert_eq!(done.load(Ordering::SeqCst), 1);
            for _ in 0..2 {
                ch.send(&[1u8], &c).unwrap().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
        assert_eq!(done.load(Ordering::SeqCst), 3);
        assert_eq!(
            *sleeps.lock().unwrap(),
            [1, 1, 1],
            "sleeps per reader's call"
        );
    }
}
