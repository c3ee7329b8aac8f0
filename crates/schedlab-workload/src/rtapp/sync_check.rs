//! Static checks of the synchronisation events of a workload.
//!
//! rt-app creates mutexes, conditions and semaphores by name on first use
//! and never checks how they are used: a `lock` without its `unlock` hangs
//! the next iteration (or every other thread), a `wait` on a condition that
//! no thread signals never returns. Such files are almost always mistakes,
//! so they are refused here with the position of the offending event.
//!
//! Rules:
//! * within one phase, every `lock` has a later `unlock` of the same mutex
//!   and no `unlock` comes while the phase does not hold the mutex (a phase
//!   repeats, so holding across its end would self-deadlock);
//! * a `wait` or `sync` holds its mutex (pthread_cond_wait's contract);
//! * a `wait` has a `signal`, `broad` or `sync` of the same condition
//!   somewhere in the workload; a `sem_wait` has a `sem_post`;
//!
//! A `suspend` of a task that no task resumes is only a warning: the
//! shipped browser-* examples do it (their main thread parks for good).
//! A `resume` of a name no task suspends under is allowed: rt-app loses
//! the wake-up, and shipped examples (browser-*) rely on that.

use std::collections::{HashMap, HashSet};

use super::raw::{RawEvent, RawTask};
use super::Cx;
use crate::json::Pos;
use crate::{ErrorKind, WorkloadError};

/// Checks every task's synchronisation events; the first problem found (in
/// text order) is the error.
pub fn check(cx: &mut Cx, tasks: &[RawTask]) -> Result<(), WorkloadError> {
    let mut warnings = Vec::new();
    let mut signalled = HashSet::new();
    let mut posted = HashSet::new();
    let mut resumed = HashSet::new();
    for t in tasks {
        for p in &t.phases {
            for e in &p.events {
                match e {
                    RawEvent::Signal(c, _)
                    | RawEvent::Wait {
                        cond: c,
                        sync: true,
                        ..
                    } => {
                        signalled.insert(c.as_str());
                    }
                    RawEvent::Sem(s, true) => {
                        posted.insert(s.as_str());
                    }
                    RawEvent::Resume(n) => {
                        resumed.insert(n.as_str());
                    }
                    _ => {}
                }
            }
        }
    }
    let names: HashSet<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    let fail =
        |pos: Pos, key: &str, msg: String| Err(cx.key_err(pos, key, ErrorKind::Invalid, &msg));
    for t in tasks {
        for p in &t.phases {
            // mutex -> position of the lock that holds it
            let mut held: HashMap<&str, (&str, Pos)> = HashMap::new();
            for (e, (key, pos)) in p.events.iter().zip(&p.event_keys) {
                let (key, pos) = (key.as_str(), *pos);
                match e {
                    RawEvent::Lock(m, lock) => {
                        let problem = if *lock {
                            held.insert(m, (key, pos)).map(|_| format!("mutex \"{m}\" is already held here (a second lock would deadlock: rt-app's mutexes do not recurse)"))
                        } else {
                            match held.remove(m.as_str()) {
                                Some(_) => None,
                                None => Some(format!("mutex \"{m}\" is not held at this point of phase \"{}\" (no lock before it)", p.name)),
                            }
                        };
                        if let Some(msg) = problem {
                            return fail(pos, key, msg);
                        }
                    }
                    RawEvent::Wait { cond, mutex, .. } => {
                        if !held.contains_key(mutex.as_str()) {
                            let msg = format!("mutex \"{mutex}\" must be locked before waiting on \"{cond}\" (lock it earlier in the phase)");
                            return fail(pos, key, msg);
                        }
                        if !signalled.contains(cond.as_str()) {
                            let msg = format!("no task signals, broadcasts or syncs \"{cond}\": this wait would never return");
                            return fail(pos, key, msg);
                        }
                    }
                    RawEvent::Sem(s, false) if !posted.contains(s.as_str()) => {
                        let msg = format!(
                            "no task posts semaphore \"{s}\": this wait would never return"
                        );
                        return fail(pos, key, msg);
                    }
                    RawEvent::Resume(n) if !names.contains(n.as_str()) => {
                        let msg = format!("key \"{key}\": no thread is named \"{n}\", so this resume wakes nobody (rt-app loses such a wake-up too)");
                        warnings.push((pos, msg));
                    }
                    RawEvent::Suspend if !resumed.contains(t.name.as_str()) => {
                        let msg = format!("key \"{key}\": no task resumes \"{}\", so this suspend never returns (rt-app hangs here too)", t.name);
                        warnings.push((pos, msg));
                    }
                    _ => {}
                }
            }
            if let Some((m, &(key, pos))) = held.iter().min_by_key(|(_, (_, p))| (p.line, p.col)) {
                let msg = format!("mutex \"{m}\" is never unlocked in phase \"{}\" (its next iteration, or any other thread, would deadlock)", p.name);
                return fail(pos, key, msg);
            }
        }
    }
    for (pos, msg) in warnings {
        cx.warn(pos, msg);
    }
    Ok(())
}
