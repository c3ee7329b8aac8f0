//! Index newtypes.
//!
//! Naming convention (after scx_lavd): an id is an *absolute* index into the
//! simulator's flat tables (`CpuId(3)` is logical CPU 3 everywhere; `TaskId(0)`
//! is the first task of the workload in file order). Relative indexes (a CPU's
//! position inside a core or LLC) are plain `usize` named `*_rdx`.

use std::fmt;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);
        impl $name {
            /// The index as `usize`, for table lookups.
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A logical CPU (the Linux CPU number).
    CpuId
);
id_type!(
    /// A task (thread) of the workload, in creation order.
    TaskId
);
id_type!(
    /// A scheduling entity (task or group entity) in the entity arena.
    EntityId
);
id_type!(
    /// A cfs_rq in the runqueue arena (one root per CPU, one per group per CPU).
    CfsRqId
);
id_type!(
    /// A task group (cgroup); `GroupId(0)` is the root group.
    GroupId
);
