//! Scheduler feature switches, one declarative list in the spirit of the
//! kernel's `features.h` (kernel-model.md §2.11).
//!
//! Each entry is a kernel-style name, its default and a one-line description.
//! The macro generates the [`Features`] struct, its `Default`, the names
//! table, parsing of `--features NO_PLACE_LAG,NAME=value` and a debugfs-style
//! listing. Enum-valued switches (`LB_SERIALIZE=...`, `THROTTLE=...`) are
//! declared in the `enums` part with their own value type.

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

/// A switch with more than two values (a sched_feat never is one; these
/// are the project's enum-valued mechanisms).
pub trait FeatureEnum: Copy + Eq + Sized + 'static {
    /// Every value, in listing order, as written on the command line.
    const VALUES: &'static [&'static str];
    /// Parses one of [`Self::VALUES`].
    fn parse(s: &str) -> Option<Self>;
    /// The spelling of this value.
    fn name(self) -> &'static str;
}

/// `LB_SERIALIZE`: when periodic balancing of an SD_SERIALIZE (NUMA) domain
/// takes the global `sched_balance_running` flag (kernel-model.md §7.4).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LbSerialize {
    /// Up to 6.18: every CPU whose softirq walk reaches the domain tries the
    /// flag, then checks whether the domain is due.
    Eager,
    /// The posted patch: try the flag only once the domain is due.
    WhenDue,
    /// 6.19: only inside the balance, after should_we_balance chose this
    /// CPU; a lost race counts as a balanced pass; newidle too.
    BalancerOnly,
}

impl FeatureEnum for LbSerialize {
    const VALUES: &'static [&'static str] = &["eager", "when-due", "balancer-only"];
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "eager" => LbSerialize::Eager,
            "when-due" => LbSerialize::WhenDue,
            "balancer-only" => LbSerialize::BalancerOnly,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            LbSerialize::Eager => "eager",
            LbSerialize::WhenDue => "when-due",
            LbSerialize::BalancerOnly => "balancer-only",
        }
    }
}

/// `THROTTLE`: how CFS bandwidth control stops a group that ran out of
/// runtime (kernel-model.md §12.3-§12.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Throttle {
    /// Up to 6.17: the next pick dequeues the whole throttled hierarchy
    /// (its group entity leaves the parent queue).
    Legacy,
    /// 6.18+: the hierarchy stays queued; each picked task dequeues itself
    /// onto a limbo list when it returns to user space.
    PerTask,
    /// 2026 proposal: runtime accounting (`update_curr`) throttles at once,
    /// without a reschedule; tasks still leave at return to user.
    Unified,
}

impl FeatureEnum for Throttle {
    const VALUES: &'static [&'static str] = &["legacy", "per-task", "unified"];
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "legacy" => Throttle::Legacy,
            "per-task" => Throttle::PerTask,
            "unified" => Throttle::Unified,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            Throttle::Legacy => "legacy",
            Throttle::PerTask => "per-task",
            Throttle::Unified => "unified",
        }
    }
}

/// `FAIR_CLASS`: the fair class's pick and preemption generation (not a
/// kernel sched_feat: the kernel switched from CFS to EEVDF in 6.6 with
/// 147f3efaa241 "sched/fair: Implement an EEVDF-like scheduling policy").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FairClass {
    /// 6.6+: EEVDF (lag, eligibility, virtual deadlines), `fair/eevdf`.
    Eevdf,
    /// Up to 6.5: CFS (min_vruntime, sched_latency period, wakeup
    /// granularity, buddies), `fair/cfs`.
    Cfs,
}

impl FairClass {
    /// The spelling (`eevdf`, `cfs`).
    pub fn name_str(self) -> &'static str {
        <FairClass as FeatureEnum>::name(self)
    }
}

impl FeatureEnum for FairClass {
    const VALUES: &'static [&'static str] = &["eevdf", "cfs"];
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "eevdf" => FairClass::Eevdf,
            "cfs" => FairClass::Cfs,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            FairClass::Eevdf => "eevdf",
            FairClass::Cfs => "cfs",
        }
    }
}

/// The value of one switch, for listings and summary.json.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FeatureValue {
    /// An on/off switch.
    Bool(bool),
    /// An enum-valued switch, by its spelling.
    Enum(&'static str),
}

/// One row of the switch table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FeatureInfo {
    /// Kernel-style name.
    pub name: &'static str,
    /// Default, as written on the command line (`on`/`off` for switches).
    pub default: &'static str,
    /// Values accepted after `NAME=`.
    pub values: &'static [&'static str],
    /// One-line description.
    pub doc: &'static str,
}

const BOOL_VALUES: &[&str] = &["on", "off"];

macro_rules! sched_features {
    (
        bools { $( $(#[doc = $doc:literal])* $name:ident : $field:ident = $default:expr ;)* }
        enums { $( $(#[doc = $edoc:literal])* $ename:ident : $efield:ident : $ety:ident = $edefault:expr, $edefname:literal ;)* }
    ) => {
        /// The resolved set of feature switches of one run.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Features {
            $( $(#[doc = $doc])* pub $field: bool, )*
            $( $(#[doc = $edoc])* pub $efield: $ety, )*
        }

        impl Default for Features {
            fn default() -> Self {
                Features { $( $field: $default, )* $( $efield: $edefault, )* }
            }
        }

        /// Every switch: name, default, accepted values, one-line description.
        pub const FEATURE_TABLE: &[FeatureInfo] = &[
            $( FeatureInfo {
                name: stringify!($name),
                default: if $default { "on" } else { "off" },
                values: BOOL_VALUES,
                doc: concat!($($doc),*),
            }, )*
            $( FeatureInfo {
                name: stringify!($ename),
                default: $edefname,
                values: <$ety as FeatureEnum>::VALUES,
                doc: concat!($($edoc),*),
            }, )*
        ];

        impl Features {
            fn bool_slot(&mut self, name: &str) -> Option<&mut bool> {
                match name {
                    $( stringify!($name) => Some(&mut self.$field), )*
                    _ => None,
                }
            }
            /// Sets an enum switch; Some(false) for a bad value, None if no such switch.
            fn set_enum(&mut self, name: &str, value: &str) -> Option<bool> {
                match name {
                    $( stringify!($ename) => Some(match <$ety as FeatureEnum>::parse(value) {
                        Some(v) => { self.$efield = v; true }
                        None => false,
                    }), )*
                    _ => None,
                }
            }
            /// `(name, value)` for every switch, in table order.
            pub fn values(&self) -> Vec<(&'static str, FeatureValue)> {
                vec![
                    $( (stringify!($name), FeatureValue::Bool(self.$field)), )*
                    $( (stringify!($ename), FeatureValue::Enum(self.$efield.name())), )*
                ]
            }
        }
    };
}

sched_features! {
    bools {
        /// Lag-preserving placement of waking entities (place_entity).
        PLACE_LAG: place_lag = true;
        /// Forked tasks start with half a slice of virtual deadline.
        PLACE_DEADLINE_INITIAL: place_deadline_initial = true;
        /// Protect the running entity from the pick: up to the shortest queued slice (vprot, 6.17+); before 6.17, until its deadline changes, and without it not at all.
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
        /// Newidle balance of a domain runs with a probability following its success ratio (6.19).
        NI_RANDOM: ni_random = true;
        /// When newidle balance pulls nothing, steal a task from an overloaded CPU of the LLC (RFC).
        STEAL: steal = false;
        /// CFS (FAIR_CLASS=cfs): a waking sleeper's vruntime credit is half of sched_latency instead of all of it.
        GENTLE_FAIR_SLEEPERS: gentle_fair_sleepers = true;
        /// CFS: a new task starts one virtual slice after min_vruntime (it owes the period it joins).
        START_DEBIT: start_debit = true;
        /// CFS: the pick prefers the task woken last if that is not unfair (off in every CFS release).
        NEXT_BUDDY: next_buddy = false;
        /// CFS: the pick prefers the task a wakeup preempted, to return the CPU to it.
        LAST_BUDDY: last_buddy = true;
        /// CFS (5.13+): the period counts every task of the CPU (h_nr_running), not those of one queue.
        ALT_PERIOD: alt_period = true;
        /// CFS (5.13+): a slice is never below min_granularity.
        BASE_SLICE: base_slice = true;
        /// Before 5.19: bound the LLC scan of select_idle_cpu by avg_idle against the scan cost, at least 4 CPUs (read when SIS_UTIL is off).
        SIS_PROP: sis_prop = false;
    }
    enums {
        /// When balancing an SD_SERIALIZE (NUMA) domain takes the global sched_balance_running flag: eager (<=6.18), when-due (posted patch), balancer-only (6.19).
        LB_SERIALIZE: lb_serialize: LbSerialize = LbSerialize::BalancerOnly, "balancer-only";
        /// How CFS bandwidth control throttles a group out of runtime: legacy (whole hierarchy at pick, <=6.17), per-task (at return to user, 6.18+), unified (decided in runtime accounting, 2026 proposal).
        THROTTLE: throttle: Throttle = Throttle::PerTask, "per-task";
        /// The fair class's pick and preemption: eevdf (6.6+) or cfs (up to 6.5: sched_latency period, check_preempt_tick, wakeup granularity, buddies). Set by --kernel.
        FAIR_CLASS: fair_class: FairClass = FairClass::Eevdf, "eevdf";
    }
}

/// Why a `--features` string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// Unknown switch name.
    #[error("unknown feature '{0}' ({1})")]
    Unknown(String, String),
    /// The same switch given twice with different values.
    #[error("feature '{0}' is given twice with different values")]
    Contradiction(String),
    /// A value the switch does not take.
    #[error("feature '{0}': bad value '{1}' (valid: {2})")]
    BadValue(String, String, String),
}

impl Features {
    /// Parses a comma list of `NAME`, `NO_NAME` and `NAME=value` on top of
    /// the defaults. Boolean switches take `1|0|on|off|true|false` as a
    /// value. Giving one switch twice with different values is an error.
    pub fn parse(list: &str) -> Result<Features, FeatureError> {
        Features::default().apply(list)
    }

    /// [`Features::parse`] on top of `self` (a release's defaults).
    pub fn apply(&self, list: &str) -> Result<Features, FeatureError> {
        let mut f = self.clone();
        let mut seen: Vec<(String, String)> = Vec::new();
        let valid = || {
            "valid: ".to_string()
                + &FEATURE_TABLE
                    .iter()
                    .map(|e| e.name)
                    .collect::<Vec<_>>()
                    .join(", ")
        };
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = match item.split_once('=') {
                Some((name, value)) => (name.trim(), value.trim().to_string()),
                None => match item.strip_prefix("NO_") {
                    Some(rest) if f.clone().bool_slot(rest).is_some() => (rest, "off".to_string()),
                    _ => (item, "on".to_string()),
                },
            };
            let value = match value.as_str() {
                "1" | "true" => "on".to_string(),
                "0" | "false" => "off".to_string(),
                v => v.to_string(),
            };
            if let Some(slot) = f.bool_slot(name) {
                *slot = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    v => {
                        return Err(FeatureError::BadValue(
                            name.to_string(),
                            v.to_string(),
                            BOOL_VALUES.join(", "),
                        ))
                    }
                };
            } else {
                match f.set_enum(name, &value) {
                    Some(true) => {}
                    Some(false) => {
                        let info = FEATURE_TABLE
                            .iter()
                            .find(|i| i.name == name)
                            .expect("listed");
                        let shown = if value == "on" {
                            format!("{name} without a value")
                        } else {
                            value.clone()
                        };
                        return Err(FeatureError::BadValue(
                            name.to_string(),
                            shown,
                            info.values.join(", "),
                        ));
                    }
                    None => {
                        // A misspelt NO_NAME is suggested with its prefix.
                        let (prefix, bare) = match name.strip_prefix("NO_") {
                            Some(rest) => ("NO_", rest),
                            None => ("", name),
                        };
                        let guess =
                            crate::suggest::closest(bare, FEATURE_TABLE.iter().map(|e| e.name))
                                .map_or(String::new(), |k| format!("did you mean {prefix}{k}? "));
                        return Err(FeatureError::Unknown(name.to_string(), guess + &valid()));
                    }
                }
            }
            if let Some((_, prev)) = seen.iter().find(|(n, _)| n == name) {
                if *prev != value {
                    return Err(FeatureError::Contradiction(name.to_string()));
                }
            }
            seen.push((name.to_string(), value));
        }
        Ok(f)
    }

    /// debugfs-style listing: `NAME` or `NO_NAME` per switch, `NAME=value`
    /// for enum switches.
    pub fn debugfs_line(&self) -> String {
        self.values()
            .iter()
            .map(|(n, v)| match v {
                FeatureValue::Bool(true) => n.to_string(),
                FeatureValue::Bool(false) => format!("NO_{n}"),
                FeatureValue::Enum(e) => format!("{n}={e}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_defaults_match_the_default_features() {
        let d = Features::default();
        for ((name, v), info) in d.values().iter().zip(FEATURE_TABLE) {
            assert_eq!(*name, info.name);
            let shown = match v {
                FeatureValue::Bool(true) => "on",
                FeatureValue::Bool(false) => "off",
                FeatureValue::Enum(e) => e,
            };
            assert_eq!(shown, info.default, "{name}");
        }
    }

    #[test]
    fn parse_toggles_and_rejects_nonsense() {
        let f = Features::parse("NO_PLACE_LAG,RUN_TO_PARITY").unwrap();
        assert!(!f.place_lag && f.run_to_parity);
        assert!(matches!(
            Features::parse("BOGUS"),
            Err(FeatureError::Unknown(..))
        ));
        // A misspelt switch names the one it is close to, NO_ kept.
        let e = Features::parse("NO_SCHED_IDEL_AS_IDLE")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("unknown feature 'NO_SCHED_IDEL_AS_IDLE' (did you mean NO_SCHED_IDLE_AS_IDLE? valid: "),
            "{e}"
        );
        let e = Features::parse("BOGUS").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown feature 'BOGUS' (valid: PLACE_LAG"),
            "{e}"
        );
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
        let f = Features::parse("LB_SERIALIZE=eager").unwrap();
        assert_eq!(f.lb_serialize, LbSerialize::Eager);
        assert!(matches!(
            Features::parse("LB_SERIALIZE=sometimes"),
            Err(FeatureError::BadValue(..))
        ));
        assert!(matches!(
            Features::parse("LB_SERIALIZE"),
            Err(FeatureError::BadValue(..))
        ));
        assert!(matches!(
            Features::parse("LB_SERIALIZE=eager,LB_SERIALIZE=when-due"),
            Err(FeatureError::Contradiction(..))
        ));
    }
}
