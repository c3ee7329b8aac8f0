//! The output limit (`--max-output`) on the bytes a run really writes,
//! counted while it goes.
//!
//! A run enters a [`Scope`] on the thread that simulates it; the writers
//! that grow with the run charge what they write to it: the streamed
//! rt-app logs ([`crate::log_stream`]) each formatted row, the trace
//! spools ([`crate::spool`]) each byte spooled. The first charge past the
//! limit fails and is remembered: the log stream drops its rows from then
//! on, a spool returns an error, and the caller, which polls
//! [`exceeded`] while the simulation goes, stops the run and reports it;
//! its stage is then removed, so nothing half-written is left. At most
//! the limit is ever charged, so no more than that reaches the disk.
//!
//! The scope is per thread so that runs on several threads of one
//! process (a sweep) each have their own count. Outside any scope nothing
//! is counted.

use std::cell::Cell;
use std::io;

#[derive(Clone, Copy, Debug)]
struct Count {
    limit: u64,
    used: u64,
    exceeded: bool,
}

thread_local! {
    static CURRENT: Cell<Option<Count>> = const { Cell::new(None) };
}

/// The output limit of the run on this thread, from [`Scope::enter`]
/// until the scope is dropped.
#[derive(Debug)]
pub struct Scope {
    outer: Option<Count>,
}

impl Scope {
    /// Counts what this thread writes from now on against `limit` bytes.
    pub fn enter(limit: u64) -> Scope {
        let outer = CURRENT.with(|c| {
            c.replace(Some(Count {
                limit,
                used: 0,
                exceeded: false,
            }))
        });
        Scope { outer }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.outer));
    }
}

/// Charges `n` bytes about to be written. Err (and [`exceeded`] from then
/// on) when they would pass the limit; the bytes must then not be written.
pub fn charge(n: usize) -> io::Result<()> {
    CURRENT.with(|c| {
        let Some(mut count) = c.get() else {
            return Ok(());
        };
        let ok = !count.exceeded && count.used.saturating_add(n as u64) <= count.limit;
        if ok {
            count.used += n as u64;
        } else {
            count.exceeded = true;
        }
        c.set(Some(count));
        if ok {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "the output reached the --max-output limit of {} bytes",
                count.limit
            )))
        }
    })
}

/// The limit, when a charge on this thread has passed it.
pub fn exceeded() -> Option<u64> {
    CURRENT.with(|c| c.get().filter(|k| k.exceeded).map(|k| k.limit))
}

/// Bytes charged so far on this thread (0 outside a scope).
pub fn used() -> u64 {
    CURRENT.with(|c| c.get().map_or(0, |k| k.used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_stop_at_the_limit_and_scopes_nest() {
        assert!(charge(1 << 40).is_ok(), "no scope: nothing counted");
        let s = Scope::enter(100);
        assert!(charge(60).is_ok());
        assert!(charge(40).is_ok());
        assert_eq!(exceeded(), None);
        assert!(charge(1).is_err());
        assert_eq!(exceeded(), Some(100));
        assert!(charge(0).is_err(), "stays exceeded");
        assert_eq!(used(), 100);
        {
            let _inner = Scope::enter(10);
            assert_eq!(exceeded(), None);
        }
        assert_eq!(exceeded(), Some(100));
        drop(s);
        assert_eq!(exceeded(), None);
    }
}
