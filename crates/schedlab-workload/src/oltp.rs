//! The OLTP generator's programs: pgbench's TPC-B-like transaction as a
//! request/reply exchange between client threads and backend processes
//! (the parsing of `oltp:` is in [`crate::generators::oltp`]).
//!
//! # The shape (pgbench's built-in `tpcb-like` script, simple protocol)
//!
//! A transaction is seven statements, each one round trip on the
//! connection's socket (pgbench's default `-M simple` sends one statement
//! per message and waits for its result):
//!
//! | # | statement | backend |
//! |---|---|---|
//! | 0 | `BEGIN` | CPU |
//! | 1 | `UPDATE pgbench_accounts` | CPU (100 000 × scale rows: no contention modelled) |
//! | 2 | `SELECT abalance` | CPU |
//! | 3 | `UPDATE pgbench_tellers` | takes the teller row's lock (10 × scale rows), CPU |
//! | 4 | `UPDATE pgbench_branches` | takes the branch row's lock (scale rows), CPU |
//! | 5 | `INSERT INTO pgbench_history` | CPU |
//! | 6 | `END` | CPU, then the commit's WAL flush (an I/O wait), then both row locks released |
//!
//! Row locks are held from the `UPDATE` to the end of the commit
//! (PostgreSQL releases a transaction's locks after its commit record is
//! flushed), always teller before branch (the script's order), so there
//! is no deadlock. A waiter is granted the lock by the releaser in queue
//! order (PostgreSQL's lock manager grants waiters in order and wakes
//! them through their semaphore, a futex: not a sync wakeup): the
//! workload's mutexes hand over (`pi_mutexes`), and among equal-nice
//! backends priority inheritance changes nothing.
//!
//! Rows are drawn uniformly, as pgbench's `random(1, n)`: each backend
//! cycles through [`TX_TABLE`] transactions whose rows a fixed PRNG
//! (splitmix64 of the backend's number) drew once, so runs are
//! deterministic and independent of `--seed`.
//!
//! # Request and reply
//!
//! Client thread `j` (a pgbench thread, `-j`) owns a contiguous run of
//! connections; the connection `c`'s requests travel on channel `c` (the
//! backend's socket), the replies of the thread's connections on one
//! channel (the thread's `select()`/`poll()` on its sockets). Per
//! statement the thread builds the statement (CPU), sends it and sleeps
//! until the reply is in. An AF_UNIX stream write wakes the reader with a
//! sync wakeup (`sock_def_readable` → `wake_up_interruptible_sync_poll`),
//! as do `poll`/`select` wakeups, so both directions are WF_SYNC wakeups
//! from task context (the channels' send).
//!
//! The default is one thread per connection (`pgbench -c W -j W`), every
//! connection in flight at once. Deviation, with fewer threads than
//! connections: a pgbench thread keeps all its connections in flight and
//! sends each one's next statement as soon as its result is in; here a
//! thread runs one transaction at a time, on its connections in turn
//! (statement-by-statement lock-step over several connections deadlocks
//! as soon as one of them waits for a row lock that another holds).
//!
//! # Constants and their sources
//!
//! * Backend CPU per transaction, default 420 µs, and client CPU per
//!   transaction per connection, default 70 µs: **measured** on this
//!   project's build host (PostgreSQL 15.18, pgbench 15.18, scale 1,
//!   `pgbench -c 1 -j 1 -t 3000`, 2026-11-23): the backends' CPU time
//!   (the postmaster's `cutime + cstime` after the backend exited) was
//!   1.27 s for 3000 transactions (423 µs each: 303 user, 120 system), and
//!   pgbench's own 0.20 s (67 µs). The backend's CPU is split equally over
//!   the seven statements and the client's likewise (pgbench's per-statement
//!   latencies, `-r`, include the waits, so they cannot split CPU time).
//! * Commit flush wait, default 120 µs: enterprise NVMe drives with power
//!   loss protection acknowledge a flush in tens to a few hundred µs
//!   (T. Poder, "Using Postgres pg_test_fsync tool for testing low latency
//!   writes", 2025; vendors quote < 255 µs average write latency); 120 µs,
//!   the generator's earlier default, lies inside that range. (This host's
//!   virtual disk took 4.7 ms per commit: not a server's storage.)
//! * Scale, default = connections: pgbench's documentation asks for a
//!   scale factor at least as large as the number of clients, "else you'll
//!   mostly be measuring update contention".
//! * One connection per CPU (the earlier default, kept) and one pgbench
//!   thread per connection: a choice, the same for every machine.

use schedlab_core::program::{ChannelKind, ChannelSpec, Op, TaskSpec, Workload};
use schedlab_core::time::NSEC_PER_USEC;

/// Statements per transaction (pgbench `tpcb-like`).
pub const STATEMENTS: usize = 7;
/// Transactions each backend cycles through (rows drawn once per entry).
pub const TX_TABLE: usize = 32;
/// Statement that takes the teller row lock.
const STMT_TELLER: usize = 3;
/// Statement that takes the branch row lock.
const STMT_BRANCH: usize = 4;
/// Statement that commits.
const STMT_COMMIT: usize = 6;
/// Bytes of one request or reply on a connection: a pgbench statement and
/// its short reply are each well under 512 B, so each write is one small
/// skb (768 B of truesize, `sched/unix_stream.rs`). One request is in
/// flight per connection (simple protocol), so the send buffer (278 such
/// messages) never fills.
const MSG_BYTES: u64 = 100;

/// The request/reply OLTP set-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Connections (backend processes).
    pub workers: u64,
    /// Client threads (pgbench `-j`), 1..=workers.
    pub clients: u64,
    /// pgbench scale factor (branches; tellers are 10 × scale).
    pub scale: u64,
    /// Backend CPU per transaction (µs).
    pub cpu_us: u64,
    /// Client CPU per transaction and connection (µs).
    pub client_us: u64,
    /// Commit flush wait (µs).
    pub io_us: u64,
}

fn run(us: u64) -> Op {
    Op::Run {
        work_ns: us * NSEC_PER_USEC,
        config_us: us,
        perf: us,
    }
}

/// `total` split into `STATEMENTS` parts that sum to it (the remainder
/// goes to the first parts).
fn split(total: u64) -> [u64; STATEMENTS] {
    let n = STATEMENTS as u64;
    std::array::from_fn(|i| total / n + u64::from((i as u64) < total % n))
}

/// splitmix64: the fixed PRNG that draws each backend's rows.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The connections of client thread `j` of `clients` among `workers`:
/// `(first, count)`, the first `workers % clients` threads one more.
pub fn connections_of(j: u64, workers: u64, clients: u64) -> (u64, u64) {
    let (q, r) = (workers / clients, workers % clients);
    (j * q + j.min(r), q + u64::from(j < r))
}

/// Ops of one transaction of a backend whose statements take `cpu` µs:
/// per statement its request (`Recv`), its CPU (`Run`, when not zero)
/// and its reply (`Send`); two row locks, the commit's flush (`Sleep`)
/// and two unlocks. Used to allocate each transaction's ops exactly (a `Vec`
/// grown by pushes doubles to 32 slots for 26 ops).
fn tx_ops(cpu: &[u64; STATEMENTS]) -> usize {
    2 * STATEMENTS + 5 + cpu.iter().filter(|&&us| us > 0).count()
}

/// Ops of a client thread per connection: per statement its CPU (when not
/// zero), the request and the wait for the reply.
fn client_ops(cpu: &[u64; STATEMENTS]) -> usize {
    2 * STATEMENTS + cpu.iter().filter(|&&us| us > 0).count()
}

/// The program of backend `c` (connection `c`, replying on channel
/// `reply`): [`TX_TABLE`] transactions whose rows splitmix64 of `c` drew.
fn backend(c: u64, reply: u32, index: u32, p: &Params, cpu: &[u64; STATEMENTS]) -> TaskSpec {
    let tellers = 10 * p.scale;
    let mut rng = c.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed;
    let mut t = TaskSpec::looping(
        format!("worker-{c}"),
        index,
        schedlab_core::program::Policy::Normal,
        Vec::new(),
    );
    let proto = t
        .program
        .phases
        .pop()
        .expect("a looping task has one phase");
    let mut phases = Vec::with_capacity(TX_TABLE);
    for i in 0..TX_TABLE {
        let teller = (splitmix(&mut rng) % tellers) as u32;
        let branch = (tellers + splitmix(&mut rng) % p.scale) as u32;
        let mut ops = Vec::with_capacity(tx_ops(cpu));
        for (s, &us) in cpu.iter().enumerate() {
            ops.push(Op::Recv {
                chan: c as u32,
                msgs: 1,
            });
            match s {
                STMT_TELLER => ops.push(Op::Lock { mutex: teller }),
                STMT_BRANCH => ops.push(Op::Lock { mutex: branch }),
                _ => {}
            }
            if us > 0 {
                ops.push(run(us));
            }
            if s == STMT_COMMIT {
                ops.push(Op::Sleep {
                    ns: p.io_us * NSEC_PER_USEC,
                });
                ops.push(Op::Unlock { mutex: branch });
                ops.push(Op::Unlock { mutex: teller });
            }
            ops.push(Op::Send {
                first: reply,
                count: 1,
            });
        }
        debug_assert_eq!(ops.len(), tx_ops(cpu));
        phases.push(schedlab_core::program::Phase {
            name: format!("tx{i}"),
            ops,
            ..proto.clone()
        });
    }
    t.program.phases = phases;
    t
}

/// Bytes the workload [`build`] makes for `p` will take (the threads'
/// programs, names and channels; [`crate::limits::task_bytes`]), computed
/// without building it: every backend has the same shape as backend 0,
/// and a client thread has `client_ops` ops per connection.
/// ~34 KB per backend with the default CPU split.
pub fn built_bytes(p: &Params) -> u64 {
    use crate::limits::{heap_block, task_bytes};
    let cpu = split(p.cpu_us);
    let per_backend = task_bytes(&backend(0, 0, 0, p, &cpu));
    let per_client = task_bytes(&TaskSpec::looping(
        "client-0",
        0,
        schedlab_core::program::Policy::Normal,
        Vec::new(),
    ));
    // The first `workers % clients` threads have q + 1 connections.
    let (q, r) = (p.workers / p.clients, p.workers % p.clients);
    let conn_ops = |n: u64| {
        heap_block(n as usize * client_ops(&split(p.client_us)) * std::mem::size_of::<Op>())
    };
    let chan = std::mem::size_of::<ChannelSpec>() as u64;
    [
        p.workers.saturating_mul(per_backend),
        p.clients.saturating_mul(per_client),
        r.saturating_mul(conn_ops(q + 1)),
        (p.clients - r).saturating_mul(conn_ops(q)),
        p.workers.saturating_add(p.clients).saturating_mul(chan),
    ]
    .into_iter()
    .fold(0u64, u64::saturating_add)
}

/// Builds the request/reply workload into `w` (threads `worker-k`, then
/// `client-j`; channels: one per connection, then one per client thread;
/// mutexes: tellers, then branches). The caller checks its size first
/// ([`built_bytes`], [`crate::limits::check_build_bytes`]).
pub fn build(p: &Params, w: &mut Workload) {
    let (workers, clients) = (p.workers, p.clients);
    w.pi_mutexes = true;
    w.channels.reserve_exact((workers + clients) as usize);
    for _ in 0..workers + clients {
        w.channels.push(ChannelSpec {
            kind: ChannelKind::UnixStream,
            msg_bytes: MSG_BYTES,
        });
    }
    let tellers = 10 * p.scale;
    w.mutexes = (tellers + p.scale) as u32;
    let cpu = split(p.cpu_us);
    let mut index = 0u32;
    // The client thread of each connection: the inverse of
    // `connections_of` (the first `r` threads have `q + 1` connections),
    // in closed form (a search over the threads made building 42 201
    // workers take 10 s).
    let owner = |c: u64| {
        let (q, r) = (workers / clients, workers % clients);
        if c < r * (q + 1) {
            c / (q + 1)
        } else {
            r + (c - r * (q + 1)) / q
        }
    };
    w.tasks.reserve_exact((workers + clients) as usize);
    for c in 0..workers {
        let reply = (workers + owner(c)) as u32;
        w.tasks.push(backend(c, reply, index, p, &cpu));
        index += 1;
    }
    let client_cpu = split(p.client_us);
    for j in 0..clients {
        let (first, n) = connections_of(j, workers, clients);
        let mut ops = Vec::with_capacity(n as usize * client_ops(&client_cpu));
        for c in first..first + n {
            for &us in &client_cpu {
                if us > 0 {
                    ops.push(run(us));
                }
                ops.push(Op::Send {
                    first: c as u32,
                    count: 1,
                });
                ops.push(Op::Recv {
                    chan: (workers + j) as u32,
                    msgs: 1,
                });
            }
        }
        w.tasks.push(TaskSpec::looping(
            format!("client-{j}"),
            index,
            schedlab_core::program::Policy::Normal,
            ops,
        ));
        index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_connection_replies_to_the_thread_that_owns_it() {
        for (workers, clients) in [(1, 1), (7, 3), (12, 6), (10, 4), (100, 7), (5, 5)] {
            let mut w = Workload::default();
            build(&params(workers, clients), &mut w);
            for j in 0..clients {
                let (first, n) = connections_of(j, workers, clients);
                for c in first..first + n {
                    let sends: Vec<u32> = w.tasks[c as usize].program.phases[0]
                        .ops
                        .iter()
                        .filter_map(|o| match o {
                            Op::Send { first, .. } => Some(*first),
                            _ => None,
                        })
                        .collect();
                    assert!(!sends.is_empty());
                    assert!(
                        sends.iter().all(|&s| s == (workers + j) as u32),
                        "{workers}/{clients} c{c}"
                    );
                }
            }
        }
    }

    fn params(workers: u64, clients: u64) -> Params {
        Params {
            workers,
            clients,
            scale: workers,
            cpu_us: 420,
            client_us: 70,
            io_us: 120,
        }
    }

    #[test]
    fn connections_are_shared_out() {
        let v: Vec<_> = (0..3).map(|j| connections_of(j, 10, 3)).collect();
        assert_eq!(v, [(0, 4), (4, 3), (7, 3)]);
        assert_eq!(split(420).iter().sum::<u64>(), 420);
        assert_eq!(split(3), [1, 1, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn a_transaction_is_seven_round_trips_with_row_locks() {
        let mut w = Workload::default();
        build(&params(4, 2), &mut w);
        assert_eq!(w.tasks.len(), 6);
        assert_eq!(w.channels.len(), 6);
        assert_eq!(w.mutexes, 44);
        assert!(w.pi_mutexes);
        let b = &w.tasks[1];
        assert_eq!(b.name, "worker-1");
        assert_eq!(b.program.phases.len(), TX_TABLE);
        let ops = &b.program.phases[0].ops;
        let recvs = ops
            .iter()
            .filter(|o| matches!(o, Op::Recv { chan: 1, msgs: 1 }))
            .count();
        let replies = ops
            .iter()
            .filter(|o| matches!(o, Op::Send { first: 4, count: 1 }))
            .count();
        assert_eq!((recvs, replies), (7, 7));
        // Teller then branch; both released after the commit's flush.
        let locks: Vec<u32> = ops
            .iter()
            .filter_map(|o| match o {
                Op::Lock { mutex } => Some(*mutex),
                _ => None,
            })
            .collect();
        assert_eq!(locks.len(), 2);
        assert!(locks[0] < 40 && locks[1] >= 40);
        let sleep = ops
            .iter()
            .position(|o| matches!(o, Op::Sleep { .. }))
            .unwrap();
        assert!(matches!(ops[sleep + 1], Op::Unlock { .. }));
        // Client 1 owns connections 2 and 3: a transaction on each in turn.
        let c = &w.tasks[5];
        assert_eq!(c.name, "client-1");
        let sends: Vec<u32> = c.program.phases[0]
            .ops
            .iter()
            .filter_map(|o| match o {
                Op::Send { first, count: 1 } => Some(*first),
                _ => None,
            })
            .collect();
        assert_eq!(sends, [[2u32; 7], [3u32; 7]].concat());
        assert!(c.program.phases[0]
            .ops
            .contains(&Op::Recv { chan: 5, msgs: 1 }));
        // Rows differ between transactions and backends, same every build.
        let mut w2 = Workload::default();
        build(&params(4, 2), &mut w2);
        assert_eq!(w, w2);
        assert_ne!(w.tasks[0].program.phases, w.tasks[1].program.phases);
    }

    #[test]
    fn the_size_is_known_before_building_and_nothing_is_over_allocated() {
        for (workers, clients) in [(1, 1), (7, 3), (40, 40), (100, 1)] {
            let p = params(workers, clients);
            let mut w = Workload::default();
            build(&p, &mut w);
            for t in &w.tasks {
                assert!(t
                    .program
                    .phases
                    .iter()
                    .all(|ph| ph.ops.len() == ph.ops.capacity()));
                assert_eq!(t.program.phases.len(), t.program.phases.capacity());
            }
            let built: u64 = w.tasks.iter().map(crate::limits::task_bytes).sum::<u64>()
                + w.channels.capacity() as u64 * std::mem::size_of::<ChannelSpec>() as u64;
            assert_eq!(built_bytes(&p), built, "{workers}/{clients}");
        }
        // About 34 KB a backend (32 transactions of 26 ops).
        let per = built_bytes(&params(1000, 1000)) / 1000;
        assert!((30_000..40_000).contains(&per), "{per}");
    }
}
