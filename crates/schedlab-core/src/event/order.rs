//! The tie rule: the order of events due at the same nanosecond.
//!
//! The queue pops by (time, [`tie_key`]); `tie_key` is a function of the
//! event alone, never of when it was pushed, so the order of same-time
//! events is fixed by what they are. (In push order, the order of a
//! syscall landing and a tick at the same nanosecond would depend on
//! which was armed first, so a fast-forward that does not push its
//! intermediate landings could not know where they fall; with constant
//! syscall costs tasks run in lockstep and ~22 % of hackbench's pops tie
//! with the previous one.)
//!
//! # The rule
//!
//! At one nanosecond, by class first (lowest first), then within a class
//! by CPU (or task, or group), then by the event's other fields:
//!
//! 1. **End** of the run: the run covers [start, end), so nothing due at
//!    the end instant happens.
//! 2. **WasteSample**: an observer, not a kernel event; it samples the
//!    state as it stood when the instant began.
//! 3. **TaskStart**: the workload's creation (once, at the start).
//! 4. **The running task's own progress**: BurstEnd, then TaskWork. A
//!    burst that ends at t has retired its last instruction by t, so its
//!    effect (a write's wakeup, the next syscall's entry) belongs to the
//!    instant; an interrupt due at t is taken at the next instruction
//!    boundary, after it, and sees that effect.
//! 5. **Timer interrupts**: the tick, then the hrtimers (task sleep /
//!    rt-app timer expiry, then its handler, deadline replenishment, the
//!    bandwidth period and slack timers, the RT period timer), then host
//!    noise (an interrupt, then a steal).
//! 6. **IPIs**: the queued remote wakeups (TTWU_QUEUE), the
//!    async-unthrottle csd, the NOHZ kick, and last the reschedule: the
//!    kernel's scheduler IPI enqueues the pending wakeups first and
//!    reschedules on the way out, so a `schedule()` due at t sees every
//!    wakeup and unthrottle due at t.
//!
//! Within a class, lower CPU (task, group) ids first: CPUs at one instant
//! are independent, any fixed order is as good; the kernel's own ties
//! (two hrtimers at one expiry, two wakeups in one wake list) follow
//! insertion order, which no push-independent rule can reproduce. Then
//! the rest of the event: generation (of which at most one is live, the
//! others are dropped on pop whenever they come), then the wakee.
//!
//! # Why it is total and push-independent
//!
//! `tie_key` is injective: each variant (and each value of a variant's
//! flag) has its own class, and the fields are packed in disjoint bits
//! (ids below [`MAX_ID`], checked at set-up). So two queued entries with
//! the same (time, key) are the same event, and the popped sequence is a
//! function of the set pushed, whatever the push order
//! (`queue::tests::shuffled_pushes_pop_the_same_sequence`). Being
//! injective, the key also *is* the event ([`from_tie_key`]): the queue
//! stores only the 128-bit (time, key).

use super::Event;
use crate::ids::{CpuId, GroupId, TaskId};

/// Ids (CPU, task, group) the key can hold: 2^27 (134 M). `Sim::new`
/// refuses a machine or workload beyond it.
pub const MAX_ID: usize = 1 << ID_BITS;

const ID_BITS: u32 = 27;
const CLASS_SHIFT: u32 = 32 + ID_BITS; // 5 bits of class above
const ID_SHIFT: u32 = 32;

// The classes, in pop order at one nanosecond (see the module doc).
const END: u64 = 0;
const WASTE_SAMPLE: u64 = 1;
const TASK_START: u64 = 2;
const BURST_END: u64 = 3;
const TASK_WORK: u64 = 4;
const TICK: u64 = 5;
const TASK_TIMER: u64 = 6;
const TASK_TIMER_HANDLER: u64 = 7;
const DL_TIMER: u64 = 8;
const BW_PERIOD: u64 = 9;
const BW_SLACK: u64 = 10;
const RT_PERIOD: u64 = 11;
const NOISE_IRQ: u64 = 12;
const NOISE_STEAL: u64 = 13;
const REMOTE_WAKEUP: u64 = 14;
const CFSB_CSD: u64 = 15;
const NOHZ_IDLE_BALANCE: u64 = 16;
const RESCHED: u64 = 17;

#[inline(always)]
fn pack(class: u64, id: u32, low: u32) -> u64 {
    debug_assert!((id as usize) < MAX_ID, "id {id} beyond the tie key");
    (class << CLASS_SHIFT) | (u64::from(id) << ID_SHIFT) | u64::from(low)
}

/// The event's place among events due at the same nanosecond (lower
/// first); injective (see the module doc).
#[inline]
pub fn tie_key(ev: &Event) -> u64 {
    match *ev {
        Event::End => pack(END, 0, 0),
        Event::WasteSample => pack(WASTE_SAMPLE, 0, 0),
        Event::TaskStart { task } => pack(TASK_START, task.0, 0),
        Event::BurstEnd { cpu, gen } => pack(BURST_END, cpu.0, gen),
        Event::TaskWork { cpu, task } => pack(TASK_WORK, cpu.0, task.0),
        Event::Tick { cpu, gen } => pack(TICK, cpu.0, gen),
        Event::TaskTimer {
            task,
            gen,
            handler: false,
        } => pack(TASK_TIMER, task.0, gen),
        Event::TaskTimer {
            task,
            gen,
            handler: true,
        } => pack(TASK_TIMER_HANDLER, task.0, gen),
        Event::DlTimer { task, gen } => pack(DL_TIMER, task.0, gen),
        Event::BwPeriod { group, gen } => pack(BW_PERIOD, group.0, gen),
        Event::BwSlack { group, gen } => pack(BW_SLACK, group.0, gen),
        Event::RtPeriod => pack(RT_PERIOD, 0, 0),
        Event::Noise { cpu, steal: false } => pack(NOISE_IRQ, cpu.0, 0),
        Event::Noise { cpu, steal: true } => pack(NOISE_STEAL, cpu.0, 0),
        Event::RemoteWakeup { cpu, task } => pack(REMOTE_WAKEUP, cpu.0, task.0),
        Event::CfsbCsd { cpu } => pack(CFSB_CSD, cpu.0, 0),
        Event::NohzIdleBalance { cpu } => pack(NOHZ_IDLE_BALANCE, cpu.0, 0),
        Event::Resched { cpu } => pack(RESCHED, cpu.0, 0),
    }
}

/// The event a [`tie_key`] was made from.
#[inline(always)]
pub fn from_tie_key(key: u64) -> Event {
    let class = key >> CLASS_SHIFT;
    let id = ((key >> ID_SHIFT) as u32) & ((1 << ID_BITS) - 1);
    let low = key as u32;
    let (cpu, task, group) = (CpuId(id), TaskId(id), GroupId(id));
    match class {
        END => Event::End,
        WASTE_SAMPLE => Event::WasteSample,
        TASK_START => Event::TaskStart { task },
        BURST_END => Event::BurstEnd { cpu, gen: low },
        TASK_WORK => Event::TaskWork {
            cpu,
            task: TaskId(low),
        },
        TICK => Event::Tick { cpu, gen: low },
        TASK_TIMER => Event::TaskTimer {
            task,
            gen: low,
            handler: false,
        },
        TASK_TIMER_HANDLER => Event::TaskTimer {
            task,
            gen: low,
            handler: true,
        },
        DL_TIMER => Event::DlTimer { task, gen: low },
        BW_PERIOD => Event::BwPeriod { group, gen: low },
        BW_SLACK => Event::BwSlack { group, gen: low },
        RT_PERIOD => Event::RtPeriod,
        NOISE_IRQ => Event::Noise { cpu, steal: false },
        NOISE_STEAL => Event::Noise { cpu, steal: true },
        REMOTE_WAKEUP => Event::RemoteWakeup {
            cpu,
            task: TaskId(low),
        },
        CFSB_CSD => Event::CfsbCsd { cpu },
        NOHZ_IDLE_BALANCE => Event::NohzIdleBalance { cpu },
        RESCHED => Event::Resched { cpu },
        _ => unreachable!("tie key class {class} is no event's"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Any event, with ids below [`MAX_ID`].
    pub(crate) fn any_event() -> impl Strategy<Value = Event> {
        let id = 0..MAX_ID as u32;
        let gen = any::<u32>();
        prop_oneof![
            Just(Event::End),
            Just(Event::WasteSample),
            Just(Event::RtPeriod),
            id.clone()
                .prop_map(|t| Event::TaskStart { task: TaskId(t) }),
            (id.clone(), gen).prop_map(|(c, g)| Event::BurstEnd {
                cpu: CpuId(c),
                gen: g
            }),
            (id.clone(), any::<u32>()).prop_map(|(c, t)| Event::TaskWork {
                cpu: CpuId(c),
                task: TaskId(t)
            }),
            (id.clone(), gen).prop_map(|(c, g)| Event::Tick {
                cpu: CpuId(c),
                gen: g
            }),
            (id.clone(), gen, any::<bool>()).prop_map(|(t, g, h)| Event::TaskTimer {
                task: TaskId(t),
                gen: g,
                handler: h
            }),
            (id.clone(), gen).prop_map(|(t, g)| Event::DlTimer {
                task: TaskId(t),
                gen: g
            }),
            (id.clone(), gen).prop_map(|(x, g)| Event::BwPeriod {
                group: GroupId(x),
                gen: g
            }),
            (id.clone(), gen).prop_map(|(x, g)| Event::BwSlack {
                group: GroupId(x),
                gen: g
            }),
            (id.clone(), any::<bool>()).prop_map(|(c, s)| Event::Noise {
                cpu: CpuId(c),
                steal: s
            }),
            (id.clone(), any::<u32>()).prop_map(|(c, t)| Event::RemoteWakeup {
                cpu: CpuId(c),
                task: TaskId(t)
            }),
            id.clone().prop_map(|c| Event::CfsbCsd { cpu: CpuId(c) }),
            id.clone()
                .prop_map(|c| Event::NohzIdleBalance { cpu: CpuId(c) }),
            id.prop_map(|c| Event::Resched { cpu: CpuId(c) }),
        ]
    }

    proptest! {
        /// The key is the event: decoding gives it back, so two events
        /// with one key are the same event (the rule is injective).
        #[test]
        fn key_round_trips(ev in any_event()) {
            prop_assert_eq!(from_tie_key(tie_key(&ev)), ev);
        }

        /// Different events, different keys.
        #[test]
        fn distinct_events_distinct_keys(a in any_event(), b in any_event()) {
            prop_assert_eq!(a == b, tie_key(&a) == tie_key(&b));
        }
    }

    /// The rule's class order on one CPU, as the module doc states it.
    #[test]
    fn class_order_on_one_cpu() {
        let cpu = CpuId(3);
        let task = TaskId(7);
        let order = [
            Event::End,
            Event::WasteSample,
            Event::TaskStart { task },
            Event::BurstEnd { cpu, gen: 9 },
            Event::TaskWork { cpu, task },
            Event::Tick { cpu, gen: 1 },
            Event::TaskTimer {
                task,
                gen: 1,
                handler: false,
            },
            Event::TaskTimer {
                task,
                gen: 1,
                handler: true,
            },
            Event::DlTimer { task, gen: 1 },
            Event::BwPeriod {
                group: GroupId(1),
                gen: 1,
            },
            Event::BwSlack {
                group: GroupId(1),
                gen: 1,
            },
            Event::RtPeriod,
            Event::Noise { cpu, steal: false },
            Event::Noise { cpu, steal: true },
            Event::RemoteWakeup { cpu, task },
            Event::CfsbCsd { cpu },
            Event::NohzIdleBalance { cpu },
            Event::Resched { cpu },
        ];
        for w in order.windows(2) {
            assert!(
                tie_key(&w[0]) < tie_key(&w[1]),
                "{:?} before {:?}",
                w[0],
                w[1]
            );
        }
        // Within a class: CPU, then generation.
        let k = |c, g| {
            tie_key(&Event::BurstEnd {
                cpu: CpuId(c),
                gen: g,
            })
        };
        assert!(k(1, u32::MAX) < k(2, 0));
        assert!(k(2, 0) < k(2, 1));
    }
}
