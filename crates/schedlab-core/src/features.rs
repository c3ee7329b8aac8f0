//! Scheduler feature switches, one declarative list in the spirit of the
//! kernel's `features.h` (kernel-model.md §2.11).
//!
//! Each entry is a kernel-style name, its default and a one-line description.
//! The macro generates the [`Features`] struct, its `Default`, the names
//! table, parsing of `--features NO_PLACE_LAG,NAME=value` and a debugfs-style
//! listing. Enum-valued switches (like the later `THROTTLE=...`) are declared
//! in the `enums` part with their own value type.

use std::fmt;

/// Wakeup preemption model (`preempt=` of PREEMPT_DYNAMIC).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreemptModel {
    /// No forced preemption of kernel code.
    None,
    /// Preemption points at `cond_resched()`.
    Voluntary,
    /// Kernel code preemptible at any point (default).
    Full,
    /// Fair-class preemption only at the next tick or return to user.
    Lazy,
}

impl PreemptModel {
    /// Parses `none|voluntary|full|lazy`.
    pub fn parse(s: &str) -> Option<PreemptModel> {
        Some(match s {
            "none" => PreemptModel::None,
            "voluntary" => PreemptModel::Voluntary,
            "full" => PreemptModel::Full,
            "lazy" => PreemptModel::Lazy,
            _ => return None,
        })
    }
    /// The kernel spelling.
    pub fn name(self) -> &'static str {
        match self {
            PreemptModel::None => "none",
            PreemptModel::Voluntary => "voluntary",
            PreemptModel::Full => "full",
            PreemptModel::Lazy => "lazy",
        }
    }
}

impl fmt::Display for PreemptModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! sched_features {
    ($( $(#[doc = $doc:literal])* $name:ident : $field:ident = $default:expr ;)*) => {
        /// The resolved set of feature switches of one run.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Features {
            $( $(#[doc = $doc])* pub $field: bool, )*
        }

        impl Default for Features {
            fn default() -> Self {
                Features { $( $field: $default, )* }
            }
        }

        /// Every switch: (name, default, one-line description).
        pub const FEATURE_TABLE: &[(&str, bool, &str)] = &[
            $( (stringify!($name), $default, concat!($($doc),*)), )*
        ];

        impl Features {
            fn slot(&mut self, name: &str) -> Option<&mut bool> {
                match name {
                    $( stringify!($name) => Some(&mut self.$field), )*
                    _ => None,
                }
            }
            /// `(name, value)` for every switch, in table order.
            pub fn values(&self) -> Vec<(&'static str, bool)> {
                vec![ $( (stringify!($name), self.$field), )* ]
            }
        }
    };
}

sched_features! {
    /// Lag-preserving placement of waking entities (place_entity).
    PLACE_LAG: place_lag = true;
    /// Forked tasks start with half a slice of virtual deadline.
    PLACE_DEADLINE_INITIAL: place_deadline_initial = true;
    /// Protect the running entity up to the shortest queued slice (vprot).
    RUN_TO_PARITY: run_to_parity = true;
    /// A wakee with a shorter slice may override curr's protection.
    PREEMPT_SHORT: preempt_short = true;
    /// Wakeups may preempt the running task.
    WAKEUP_PREEMPTION: wakeup_preemption = true;
    /// An entity that sleeps while ineligible stays queued until picked (6.12+).
    DELAY_DEQUEUE: delay_dequeue = true;
    /// Positive lag of a delayed entity is clipped to zero.
    DELAY_ZERO: delay_zero = true;
    /// Placement treats a CPU running only SCHED_IDLE tasks as idle (5.4+).
    SCHED_IDLE_AS_IDLE: sched_idle_as_idle = true;
    /// Bound the wakeup scan of the LLC by its utilisation (5.19+); off, the
    /// whole LLC is scanned (as SIS_PROP's 4-CPU floor did on small LLCs).
    SIS_UTIL: sis_util = true;
}

/// Why a `--features` string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// Unknown switch name.
    #[error("unknown feature '{0}' (valid: {1})")]
    Unknown(String, String),
    /// The same switch given twice with different values.
    #[error("feature '{0}' is given twice with different values")]
    Contradiction(String),
    /// A value the switch does not take.
    #[error("feature '{0}': bad value '{1}' (on/off switches take 1, 0, on, off, true or false)")]
    BadValue(String, String),
}

impl Features {
    /// Parses a comma list of `NAME`, `NO_NAME` and `NAME=value` on top of
    /// the defaults. Boolean switches take `1|0|on|off|true|false` as a
    /// value. Giving one switch twice with different values is an error.
    pub fn parse(list: &str) -> Result<Features, FeatureError> {
        let mut f = Features::default();
        let mut seen: Vec<(String, bool)> = Vec::new();
        let valid = || {
            FEATURE_TABLE
                .iter()
                .map(|e| e.0)
                .collect::<Vec<_>>()
                .join(", ")
        };
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, on) = match item.split_once('=') {
                Some((name, value)) => {
                    let on = match value.trim() {
                        "1" | "on" | "true" => true,
                        "0" | "off" | "false" => false,
                        v => return Err(FeatureError::BadValue(name.to_string(), v.to_string())),
                    };
                    (name.trim(), on)
                }
                None => match item.strip_prefix("NO_") {
                    Some(rest) if f.clone().slot(rest).is_some() => (rest, false),
                    _ => (item, true),
                },
            };
            let slot = f
                .slot(name)
                .ok_or_else(|| FeatureError::Unknown(name.to_string(), valid()))?;
            if let Some((_, prev)) = seen.iter().find(|(n, _)| n == name) {
                if *prev != on {
                    return Err(FeatureError::Contradiction(name.to_string()));
                }
            }
            *slot = on;
            seen.push((name.to_string(), on));
        }
        Ok(f)
    }

    /// debugfs-style listing: `NAME` or `NO_NAME` per switch.
    pub fn debugfs_line(&self) -> String {
        self.values()
            .iter()
            .map(|(n, on)| {
                if *on {
                    n.to_string()
                } else {
                    format!("NO_{n}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_toggles_and_rejects_nonsense() {
        let f = Features::parse("NO_PLACE_LAG,RUN_TO_PARITY").unwrap();
        assert!(!f.place_lag && f.run_to_parity);
        assert!(matches!(
            Features::parse("BOGUS"),
            Err(FeatureError::Unknown(..))
        ));
        assert!(matches!(
            Features::parse("PLACE_LAG,NO_PLACE_LAG"),
            Err(FeatureError::Contradiction(..))
        ));
        assert!(!Features::parse("PLACE_LAG=0").unwrap().place_lag);
        assert!(Features::parse("PLACE_LAG=on").unwrap().place_lag);
        assert!(matches!(
            Features::parse("PLACE_LAG=maybe"),
            Err(FeatureError::BadValue(..))
        ));
        assert!(matches!(
            Features::parse("PLACE_LAG=1,NO_PLACE_LAG"),
            Err(FeatureError::Contradiction(..))
        ));
        assert_eq!(Features::parse("").unwrap(), Features::default());
    }
}
