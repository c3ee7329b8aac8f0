//! Machine files: a regular machine in a few lines of TOML
//! (`--machine FILE.toml`), or the same top-level keys inline
//! (`--machine layout:sockets=2,cores_per_llc=32,like=icx-2s-80c-ht`).
//! The format is documented in `docs/formats.md` §3.1; every preset is
//! written out in it under `examples/machines/`.
//!
//! The caller supplies the text (this module does no I/O). Every refusal
//! is one line that starts with the file (or the `layout:` string) and
//! names the key.

use super::layout::{Layout, NodeDistances, Numbering};
use super::{
    preset, IdleState, Machine, MachineCosts, MAX_CPUS, PRESET_NAMES, REFERENCE_SWITCH_NS,
};
use crate::time::{Nanos, NSEC_PER_USEC};
use toml::{Table, Value};

/// The prefix of the inline form.
pub const LAYOUT_PREFIX: &str = "layout:";

/// The top-level keys.
pub const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "source",
    "sockets",
    "nodes_per_socket",
    "llcs_per_node",
    "cores_per_llc",
    "cores_per_cluster",
    "threads_per_core",
    "numbering",
    "distance_same_socket",
    "distance_other_socket",
    "distances",
    "like",
    "capacity",
    "poll",
    "idle_state",
    "costs",
];

/// The keys of one `[[idle_state]]`.
pub const IDLE_STATE_KEYS: &[&str] = &["name", "exit_latency_us", "target_residency_us"];

/// The keys of `[costs]`, the fields of [`MachineCosts`] (`syscall_scale`
/// is not one: it is always `context_switch_ns` over the 2 µs reference).
pub const COST_KEYS: &[&str] = &[
    "line_transfer_ns",
    "context_switch_ns",
    "wakeup_ns",
    "ipi_latency_ns",
    "ipi_send_ns",
    "channel_ns",
    "channel_xcpu_ns",
    "wakeup_xcpu_ns",
    "switch_xcpu_ns",
    "chan_sleep_ns",
];

/// Most NUMA nodes a file may describe: the kernel's largest
/// `MAX_NUMNODES` (`CONFIG_NODES_SHIFT` 10); the distance table is
/// quadratic in it.
const MAX_NODES: u64 = 1024;
/// Largest cost accepted, in ns (1 s).
const MAX_COST_NS: i64 = 1_000_000_000;
/// Largest idle-state latency or residency accepted, in µs (1 s).
const MAX_IDLE_US: i64 = 1_000_000;

/// Why a machine file is refused: one line, starting with the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MachineFileError(pub String);

type Result<T> = std::result::Result<T, MachineFileError>;

/// Reads a machine file's text; `file` names it in errors.
pub fn from_toml(file: &str, text: &str) -> Result<Machine> {
    let table: Table = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(sp) => {
                let mut at = sp.start.min(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let before = &text[..at];
                let line = before.matches('\n').count() + 1;
                let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                MachineFileError(format!("{file}:{line}:{col}: {msg}"))
            }
            None => MachineFileError(format!("{file}: {msg}")),
        }
    })?;
    Reader { file }.machine(&table, None)
}

/// Reads the inline form `layout:KEY=VALUE,...` (the prefix is optional):
/// the top-level keys of a machine file except the tables and lists
/// (`idle_state`, `costs`, `distances`). `name` defaults to `spec` itself,
/// `description` to a summary of the layout.
pub fn from_layout_spec(spec: &str) -> Result<Machine> {
    let r = Reader { file: spec };
    let body = spec.strip_prefix(LAYOUT_PREFIX).unwrap_or(spec);
    let mut t = Table::new();
    for item in body.split(',') {
        let Some((k, v)) = item.split_once('=') else {
            return Err(MachineFileError(format!(
                "{spec}: '{item}' is not KEY=VALUE"
            )));
        };
        let (k, v) = (k.trim(), v.trim());
        if t.contains_key(k) {
            return Err(r.err(k, "given twice"));
        }
        let value = match k {
            "idle_state" | "costs" | "distances" => {
                return Err(r.err(
                    k,
                    "is a table or a list: write it in a machine file (--machine FILE.toml)",
                ))
            }
            "name" | "description" | "source" | "numbering" | "like" => Value::String(v.into()),
            "poll" => match v {
                "true" => Value::Boolean(true),
                "false" => Value::Boolean(false),
                _ => Value::String(v.into()),
            },
            _ => match v.parse::<i64>() {
                Ok(i) => Value::Integer(i),
                Err(_) => Value::String(v.into()),
            },
        };
        t.insert(k.into(), value);
    }
    r.machine(&t, Some(spec))
}

/// `value` as an error message shows it.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the string {s:?}"),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => b.to_string(),
        other => format!("a {}", other.type_str()),
    }
}

struct Reader<'a> {
    file: &'a str,
}

impl Reader<'_> {
    fn err(&self, key: &str, msg: impl std::fmt::Display) -> MachineFileError {
        MachineFileError(format!("{}: key '{key}': {msg}", self.file))
    }

    fn known(&self, t: &Table, prefix: &str, allowed: &[&str]) -> Result<()> {
        match t.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(self.err(
                &format!("{prefix}{k}"),
                format!("unknown (known keys: {})", allowed.join(", ")),
            )),
            None => Ok(()),
        }
    }

    /// A one-line, non-empty string.
    fn string(&self, t: &Table, key: &str, full: &str) -> Result<Option<String>> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Err(self.err(full, "is empty")),
            Some(Value::String(s)) if s.chars().any(char::is_control) => {
                Err(self.err(full, "must be one line without control characters"))
            }
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(full, format!("must be a string, not {}", show(v)))),
        }
    }

    fn int_value(&self, v: &Value, full: &str, min: i64, max: i64) -> Result<i64> {
        match v {
            Value::Integer(i) if *i < min => {
                Err(self.err(full, format!("must be at least {min}, not {i}")))
            }
            Value::Integer(i) if *i > max => {
                Err(self.err(full, format!("must be at most {max}, not {i}")))
            }
            Value::Integer(i) => Ok(*i),
            v => Err(self.err(full, format!("must be an integer, not {}", show(v)))),
        }
    }

    fn int(&self, t: &Table, key: &str, full: &str, min: i64, max: i64) -> Result<Option<i64>> {
        t.get(key)
            .map(|v| self.int_value(v, full, min, max))
            .transpose()
    }

    /// A count of 1 or more (at most [`MAX_CPUS`], more could not fit).
    fn count(&self, t: &Table, key: &str, default: Option<u32>) -> Result<u32> {
        match self.int(t, key, key, 1, MAX_CPUS as i64)? {
            Some(n) => Ok(n as u32),
            None => default.ok_or_else(|| self.err(key, "missing (required)")),
        }
    }

    /// A list of exactly `n` integers in `min..=max`.
    fn ints(
        &self,
        v: &Value,
        full: &str,
        n: usize,
        what: &str,
        min: i64,
        max: i64,
    ) -> Result<Vec<i64>> {
        let Value::Array(a) = v else {
            return Err(self.err(
                full,
                format!("must be a list of {n} integers ({what}), not {}", show(v)),
            ));
        };
        if a.len() != n {
            return Err(self.err(
                full,
                format!("must list {n} integers ({what}), not {}", a.len()),
            ));
        }
        a.iter()
            .map(|x| self.int_value(x, full, min, max))
            .collect()
    }

    fn machine(&self, t: &Table, spec: Option<&str>) -> Result<Machine> {
        self.known(t, "", TOP_KEYS)?;
        let name = match (self.string(t, "name", "name")?, spec) {
            (Some(n), _) => n,
            (None, Some(s)) => s.to_string(),
            (None, None) => return Err(self.err("name", "missing (required)")),
        };
        let description = self.string(t, "description", "description")?;
        if description.is_none() && spec.is_none() {
            return Err(self.err("description", "missing (required)"));
        }
        self.string(t, "source", "source")?;

        let sockets = self.count(t, "sockets", None)?;
        let nodes_per_socket = self.count(t, "nodes_per_socket", Some(1))?;
        let llcs_per_node = self.count(t, "llcs_per_node", Some(1))?;
        let cores_per_llc = self.count(t, "cores_per_llc", None)?;
        let cores_per_cluster = self.count(t, "cores_per_cluster", Some(1))?;
        let threads_per_core = self.count(t, "threads_per_core", Some(1))?;
        if !cores_per_llc.is_multiple_of(cores_per_cluster) {
            return Err(self.err(
                "cores_per_cluster",
                format!("{cores_per_cluster} does not divide cores_per_llc ({cores_per_llc})"),
            ));
        }
        let factors = [
            sockets,
            nodes_per_socket,
            llcs_per_node,
            cores_per_llc,
            threads_per_core,
        ];
        let nr_cpus: u128 = factors.iter().map(|&n| u128::from(n)).product();
        if nr_cpus > MAX_CPUS as u128 {
            let shown: Vec<String> = factors.iter().map(|n| n.to_string()).collect();
            return Err(MachineFileError(format!(
                "{}: sockets x nodes_per_socket x llcs_per_node x cores_per_llc x threads_per_core = {} = {nr_cpus} CPUs, more than the {MAX_CPUS} the simulator supports",
                self.file,
                shown.join(" x ")
            )));
        }
        let nr_nodes = u64::from(sockets) * u64::from(nodes_per_socket);
        if nr_nodes > MAX_NODES {
            return Err(MachineFileError(format!(
                "{}: sockets x nodes_per_socket = {sockets} x {nodes_per_socket} = {nr_nodes} nodes, more than the {MAX_NODES} Linux supports (NODES_SHIFT 10)",
                self.file
            )));
        }
        let numbering = match self.string(t, "numbering", "numbering")? {
            None => Numbering::SiblingsLast,
            Some(n) => Numbering::from_name(&n).ok_or_else(|| {
                self.err(
                    "numbering",
                    format!("must be \"siblings-last\" or \"siblings-adjacent\", not {n:?}"),
                )
            })?,
        };
        let capacity = self
            .int(t, "capacity", "capacity", 1, 1024)?
            .unwrap_or(1024) as u32;
        let like = match self.string(t, "like", "like")? {
            None => None,
            Some(n) => Some(preset(&n).ok_or_else(|| {
                self.err(
                    "like",
                    format!("unknown preset '{n}' (one of {})", PRESET_NAMES.join(", ")),
                )
            })?),
        };
        let distances = self.distances(t, sockets, nodes_per_socket, like.as_ref())?;

        let idle_states = self.idle_states(t, like.as_ref())?;
        let costs = self.costs(t, like.as_ref())?;

        let layout = Layout {
            sockets,
            nodes_per_socket,
            llcs_per_node,
            cores_per_llc,
            cores_per_cluster,
            threads_per_core,
            numbering,
            distances,
            capacity,
        };
        let description = description.unwrap_or_else(|| {
            let from = match &like {
                Some(m) => format!("costs and idle states of {}", m.name),
                None => "costs and idle states given".to_string(),
            };
            format!(
                "{sockets} socket(s) x {nodes_per_socket} node(s) x {llcs_per_node} LLC(s) x {cores_per_llc} core(s) x {threads_per_core} thread(s), {cores_per_cluster} core(s) per cluster, {}; {from}",
                numbering.name()
            )
        });
        layout
            .build(name, description, costs, idle_states)
            .map_err(|e| MachineFileError(format!("{}: {e}", self.file)))
    }

    fn distances(
        &self,
        t: &Table,
        sockets: u32,
        nodes_per_socket: u32,
        like: Option<&Machine>,
    ) -> Result<NodeDistances> {
        let same = self.int(t, "distance_same_socket", "distance_same_socket", 11, 254)?;
        let other = self.int(t, "distance_other_socket", "distance_other_socket", 11, 254)?;
        let given = same.is_some() || other.is_some();
        // The `like` preset's distance from node 0 to the first other node
        // of its socket (same) or of another socket (other), if it has one.
        let from_like = |same_socket: bool| -> Option<i64> {
            let m = like?;
            let pkg0 = m.node_cpus(0).first().map(|c| m.cpu(c).package)?;
            (1..m.node_distance.len()).find_map(|n| {
                let pkg = m.node_cpus(n as u32).first().map(|c| m.cpu(c).package)?;
                ((pkg == pkg0) == same_socket).then(|| i64::from(m.node_distance[0][n]))
            })
        };
        let same = same.or_else(|| from_like(true));
        let other = other.or_else(|| from_like(false));
        let nodes = (sockets * nodes_per_socket) as usize;
        let Some(v) = t.get("distances") else {
            if nodes_per_socket > 1 && same.is_none() {
                return Err(self.err(
                    "distance_same_socket",
                    "missing: needed when nodes_per_socket is more than 1 (the SLIT distance between two nodes of one socket; the 'like' preset, if any, has one node per socket)",
                ));
            }
            if sockets > 1 && other.is_none() {
                return Err(self.err(
                    "distance_other_socket",
                    "missing: needed when sockets is more than 1 (the SLIT distance between nodes of different sockets; the 'like' preset, if any, has one socket)",
                ));
            }
            return Ok(NodeDistances::BySocket {
                same_socket: same.unwrap_or(20) as u32,
                other_socket: other.unwrap_or(20) as u32,
            });
        };
        if given {
            return Err(self.err(
                "distances",
                "give either distances or distance_same_socket / distance_other_socket, not both",
            ));
        }
        let shape = format!("{nodes} rows of {nodes} (sockets x nodes_per_socket = {nodes} nodes)");
        let Value::Array(rows) = v else {
            return Err(self.err(
                "distances",
                format!("must be a table of {shape}, not {}", show(v)),
            ));
        };
        if rows.len() != nodes {
            return Err(self.err(
                "distances",
                format!("must have {shape}, not {} rows", rows.len()),
            ));
        }
        let mut table = Vec::with_capacity(nodes);
        for (a, row) in rows.iter().enumerate() {
            let row = self.ints(
                row,
                "distances",
                nodes,
                &format!("row {a}: {shape}"),
                10,
                254,
            )?;
            table.push(row.into_iter().map(|d| d as u32).collect::<Vec<u32>>());
        }
        for (a, row) in table.iter().enumerate() {
            for (b, &d) in row.iter().enumerate() {
                if a == b && d != 10 {
                    return Err(self.err(
                        "distances",
                        format!("node {a}'s distance to itself is {d} (must be 10)"),
                    ));
                }
                if a != b && d <= 10 {
                    return Err(self.err(
                        "distances",
                        format!("distance from node {a} to node {b} is {d} (must be above 10)"),
                    ));
                }
                if d != table[b][a] {
                    return Err(self.err(
                        "distances",
                        format!(
                            "node {a} -> {b} is {d} but {b} -> {a} is {} (must be equal)",
                            table[b][a]
                        ),
                    ));
                }
            }
        }
        Ok(NodeDistances::Table(table))
    }

    fn idle_states(&self, t: &Table, like: Option<&Machine>) -> Result<Vec<IdleState>> {
        let poll = match t.get("poll") {
            None => None,
            Some(Value::Boolean(b)) => Some(*b),
            Some(v) => {
                return Err(self.err("poll", format!("must be true or false, not {}", show(v))))
            }
        };
        let Some(v) = t.get("idle_state") else {
            if poll.is_some() {
                return Err(self.err("poll", "applies only to an [[idle_state]] list"));
            }
            return match like {
                Some(m) => Ok(m.idle_states.clone()),
                None => Err(self.err(
                    "like",
                    "missing: needed for the idle states (there is no [[idle_state]] list)",
                )),
            };
        };
        let Value::Array(list) = v else {
            return Err(self.err(
                "idle_state",
                format!("must be a list of tables ([[idle_state]]), not {}", show(v)),
            ));
        };
        let mut states = Vec::new();
        if poll.unwrap_or(true) {
            states.push(IdleState {
                name: "POLL".into(),
                exit_latency_ns: 0,
                target_residency_ns: 0,
            });
        }
        for (i, e) in list.iter().enumerate() {
            let Value::Table(st) = e else {
                return Err(self.err(
                    &format!("idle_state[{}]", i + 1),
                    format!("must be a table ([[idle_state]]), not {}", show(e)),
                ));
            };
            // The N-th [[idle_state]] table, counted from 1.
            let key = |k: &str| format!("idle_state[{}].{k}", i + 1);
            if let Some(k) = st.keys().find(|k| !IDLE_STATE_KEYS.contains(&k.as_str())) {
                return Err(self.err(
                    &key(k),
                    format!("unknown (known keys: {})", IDLE_STATE_KEYS.join(", ")),
                ));
            }
            let name = self
                .string(st, "name", &key("name"))?
                .ok_or_else(|| self.err(&key("name"), "missing (required)"))?;
            if name == "POLL" {
                return Err(self.err(
                    &key("name"),
                    "POLL is always the first state, added by itself (poll = false leaves it out): do not list it",
                ));
            }
            let us = |k: &str| -> Result<u64> {
                Ok(self
                    .int(st, k, &key(k), 0, MAX_IDLE_US)?
                    .ok_or_else(|| self.err(&key(k), "missing (required)"))?
                    as u64)
            };
            let exit = us("exit_latency_us")?;
            let residency = us("target_residency_us")?;
            states.push(IdleState {
                name,
                exit_latency_ns: exit * NSEC_PER_USEC,
                target_residency_ns: residency * NSEC_PER_USEC,
            });
        }
        if states.is_empty() {
            return Err(self.err(
                "idle_state",
                "no idle state at all (an empty list and poll = false)",
            ));
        }
        for w in states.windows(2) {
            if w[1].target_residency_ns < w[0].target_residency_ns {
                return Err(self.err(
                    "idle_state",
                    format!(
                        "'{}' has a shorter target residency ({} us) than '{}' before it ({} us): list the states from shallow to deep",
                        w[1].name,
                        w[1].target_residency_ns / NSEC_PER_USEC,
                        w[0].name,
                        w[0].target_residency_ns / NSEC_PER_USEC
                    ),
                ));
            }
        }
        Ok(states)
    }

    fn costs(&self, t: &Table, like: Option<&Machine>) -> Result<MachineCosts> {
        let empty = Table::new();
        let c = match t.get("costs") {
            None if like.is_none() => {
                return Err(self.err(
                    "like",
                    "missing: needed for the costs (there is no [costs] table)",
                ))
            }
            None => &empty,
            Some(Value::Table(c)) => c,
            Some(v) => {
                return Err(self.err(
                    "costs",
                    format!("must be a table ([costs]), not {}", show(v)),
                ))
            }
        };
        self.known(c, "costs.", COST_KEYS)?;
        let base = like.map(|m| &m.costs);
        let full = |k: &str| format!("costs.{k}");
        let missing = |k: &str| self.err(&full(k), "missing (no 'like' preset to take it from)");
        let ns = |k: &str| -> Result<Option<Nanos>> {
            Ok(self
                .int(c, k, &full(k), 0, MAX_COST_NS)?
                .map(|v| v as Nanos))
        };
        let array = |k: &str, n: usize, what: &str| -> Result<Option<Vec<Nanos>>> {
            c.get(k)
                .map(|v| {
                    self.ints(v, &full(k), n, what, 0, MAX_COST_NS)
                        .map(|a| a.into_iter().map(|x| x as Nanos).collect())
                })
                .transpose()
        };
        let line_transfer_ns = match array(
            "line_transfer_ns",
            7,
            "same CPU, same core, same cluster, same LLC, same node, same socket, other socket",
        )? {
            Some(l) => {
                if let Some(w) = l.windows(2).find(|w| w[1] < w[0]) {
                    return Err(self.err(
                        &full("line_transfer_ns"),
                        format!("must not shrink with distance ({} after {})", w[1], w[0]),
                    ));
                }
                l.try_into().expect("7 figures")
            }
            None => base
                .map(|b| b.line_transfer_ns)
                .ok_or_else(|| missing("line_transfer_ns"))?,
        };
        let required = |k: &str, from: Option<Nanos>| -> Result<Nanos> {
            match ns(k)? {
                Some(v) => Ok(v),
                None => from.ok_or_else(|| missing(k)),
            }
        };
        let context_switch_ns = required("context_switch_ns", base.map(|b| b.context_switch_ns))?;
        let wakeup_ns = required("wakeup_ns", base.map(|b| b.wakeup_ns))?;
        let ipi_latency_ns = required("ipi_latency_ns", base.map(|b| b.ipi_latency_ns))?;
        let ipi_send_ns = required("ipi_send_ns", Some(base.map_or(0, |b| b.ipi_send_ns)))?;
        let four = "pipe write, pipe read, AF_UNIX write, AF_UNIX read";
        let channel_ns = match array("channel_ns", 4, four)? {
            Some(a) => Some(a.try_into().expect("4 figures")),
            None => base.and_then(|b| b.channel_ns),
        };
        let channel_xcpu_ns = match array("channel_xcpu_ns", 4, four)? {
            Some(a) => Some(a.try_into().expect("4 figures")),
            None => base.and_then(|b| b.channel_xcpu_ns),
        };
        let chan_sleep_ns = match array("chan_sleep_ns", 2, "pipe, AF_UNIX")? {
            Some(a) => Some(a.try_into().expect("2 figures")),
            None => base.and_then(|b| b.chan_sleep_ns),
        };
        let wakeup_xcpu_ns = ns("wakeup_xcpu_ns")?.or(base.and_then(|b| b.wakeup_xcpu_ns));
        let switch_xcpu_ns = ns("switch_xcpu_ns")?.or(base.and_then(|b| b.switch_xcpu_ns));
        Ok(MachineCosts {
            line_transfer_ns,
            context_switch_ns,
            wakeup_ns,
            ipi_latency_ns,
            ipi_send_ns,
            syscall_scale: [context_switch_ns, REFERENCE_SWITCH_NS],
            channel_ns,
            channel_xcpu_ns,
            wakeup_xcpu_ns,
            switch_xcpu_ns,
            chan_sleep_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CpuId;
    use crate::machine::Distance;

    fn examples_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/machines")
    }

    /// The error line for `text`, read as `m.toml`.
    fn err(text: &str) -> String {
        from_toml("m.toml", text).unwrap_err().to_string()
    }

    const MINIMAL: &str =
        "name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 4\nlike = \"vm-2cpu\"\n";

    #[test]
    fn machine_file_examples_equal_the_presets() {
        let mut seen = Vec::new();
        for e in std::fs::read_dir(examples_dir()).unwrap() {
            let path = e.unwrap().path();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let Some(name) = file.strip_suffix(".toml") else {
                continue;
            };
            let text = std::fs::read_to_string(&path).unwrap();
            let m = from_toml(&file, &text).unwrap_or_else(|e| panic!("{e}"));
            let mut p = preset(name).unwrap_or_else(|| panic!("{file}: no preset {name}"));
            // A file carries no host noise (vm-2cpu's preset has one).
            p.noise = None;
            assert_eq!(m.cpus, p.cpus, "{file}: CPUs");
            assert_eq!(m.node_distance, p.node_distance, "{file}: distances");
            assert_eq!(m.costs, p.costs, "{file}: costs");
            assert_eq!(m.idle_states, p.idle_states, "{file}: idle states");
            assert_eq!(m, p, "{file}: the whole machine");
            seen.push(name.to_string());
        }
        seen.sort();
        let mut all: Vec<String> = PRESET_NAMES.iter().map(|s| s.to_string()).collect();
        all.sort();
        assert_eq!(seen, all, "one example file per preset");
    }

    #[test]
    fn machine_file_like_fills_costs_and_idle_states() {
        // The brief's example: 2 x Xeon Platinum 8358, 32C/64T per socket.
        let text = "name = \"icl-2s-32c-ht\"\ndescription = \"2 x Xeon Platinum 8358\"\nsockets = 2\ncores_per_llc = 32\nthreads_per_core = 2\ndistance_other_socket = 21\nlike = \"icx-2s-80c-ht\"\n[costs]\nwakeup_ns = 1700\n";
        let m = from_toml("x.toml", text).unwrap();
        let icx = preset("icx-2s-80c-ht").unwrap();
        assert_eq!(m.nr_cpus(), 128);
        assert_eq!(m.core_span(CpuId(0)).to_list(), "0,64");
        assert_eq!(m.llc_span(CpuId(40)).to_list(), "32-63,96-127");
        assert_eq!(m.node_distance, vec![vec![10, 21], vec![21, 10]]);
        assert_eq!(m.idle_states, icx.idle_states);
        assert_eq!(m.costs.wakeup_ns, 1700);
        assert_eq!(m.costs.line_transfer_ns, icx.costs.line_transfer_ns);
        assert_eq!(m.costs.context_switch_ns, icx.costs.context_switch_ns);
        // An idle_state list replaces the preset's; POLL comes first.
        let text = format!("{MINIMAL}[[idle_state]]\nname = \"C1\"\nexit_latency_us = 2\ntarget_residency_us = 3\n");
        let m = from_toml("x.toml", &text).unwrap();
        let names: Vec<&str> = m.idle_states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "C1"]);
        assert_eq!(m.idle_states[1].exit_latency_ns, 2_000);
        // EPYC 7713: 8 CCX of 8 cores per socket, NPS1.
        let text = "name = \"milan\"\ndescription = \"2 x EPYC 7713\"\nsockets = 2\nllcs_per_node = 8\ncores_per_llc = 8\nthreads_per_core = 2\ndistance_other_socket = 32\nlike = \"epyc-2s-256c-smt\"\ncapacity = 1000\n";
        let m = from_toml("x.toml", text).unwrap();
        assert_eq!(m.nr_cpus(), 256);
        assert_eq!(m.counts(), (128, 128, 16, 2, 2));
        assert_eq!(m.distance(CpuId(0), CpuId(8)), Distance::SameNode);
        assert_eq!(m.cpu(CpuId(5)).capacity, 1000);
    }

    #[test]
    fn machine_layout_spec_is_the_same_keys_inline() {
        let spec = "layout:sockets=2,cores_per_llc=32,threads_per_core=2,distance_other_socket=21,like=icx-2s-80c-ht";
        let m = from_layout_spec(spec).unwrap();
        assert_eq!(m.name, spec);
        assert_eq!(m.nr_cpus(), 128);
        assert!(m.description.contains("2 socket(s)"), "{}", m.description);
        assert!(m.description.contains("icx-2s-80c-ht"), "{}", m.description);
        let m = from_layout_spec("layout:name=small,sockets=1,cores_per_llc=8,cores_per_cluster=4,numbering=siblings-adjacent,like=a7-octa").unwrap();
        assert_eq!(m.name, "small");
        assert_eq!(m.cluster_span(CpuId(5)).to_list(), "4-7");
        // Distances missing from the spec come from the `like` preset.
        let m = from_layout_spec(
            "layout:sockets=2,cores_per_llc=32,threads_per_core=2,like=icx-2s-80c-ht",
        )
        .unwrap();
        assert_eq!(m.node_distance, vec![vec![10, 20], vec![20, 10]]);
        let m = from_layout_spec(
            "layout:sockets=3,nodes_per_socket=2,cores_per_llc=2,like=gnr-2s-snc3",
        )
        .unwrap();
        assert_eq!(m.node_distance[0], vec![10, 12, 21, 21, 21, 21]);
        let m = from_layout_spec("layout:sockets=2,cores_per_llc=2,like=big-8s-4096").unwrap();
        assert_eq!(m.node_distance, vec![vec![10, 21], vec![21, 10]]);
        let e = |s: &str| from_layout_spec(s).unwrap_err().to_string();
        assert!(
            e("layout:sockets=1,nodes_per_socket=2,cores_per_llc=2,like=icx-2s-80c-ht")
                .contains("key 'distance_same_socket': missing")
        );
        assert_eq!(
            e("layout:sockets"),
            "layout:sockets: 'sockets' is not KEY=VALUE"
        );
        assert!(e("layout:sockets=x,cores_per_llc=2,like=vm-2cpu")
            .contains("key 'sockets': must be an integer, not the string \"x\""));
        assert!(e("layout:sockets=1,sockets=2").contains("key 'sockets': given twice"));
        assert!(e("layout:sockets=1,costs=2").contains("key 'costs': is a table"));
        assert!(e("layout:sockets=1,cores_per_llc=2").contains("key 'like': missing"));
        assert!(e("layout:sockets=1,cores_per_llc=2,bogus=1").contains("key 'bogus': unknown"));
    }

    #[test]
    fn machine_file_edits_of_the_examples_are_read_or_refused() {
        // Every example with each line left out, cut at each character,
        // and each number replaced: a machine or one line naming the file,
        // never a panic.
        for e in std::fs::read_dir(examples_dir()).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let mut variants: Vec<String> = Vec::new();
            for i in 0..lines.len() {
                let mut l = lines.clone();
                l.remove(i);
                variants.push(l.join("\n"));
                for bad in ["0", "-1", "99999999999999999999", "\"x\"", "1.5", "[]"] {
                    let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                    if let Some(at) = l[i].find(|c: char| c.is_ascii_digit()) {
                        let end = l[i][at..]
                            .find(|c: char| !c.is_ascii_digit())
                            .map_or(l[i].len(), |n| at + n);
                        l[i].replace_range(at..end, bad);
                        variants.push(l.join("\n"));
                    }
                }
            }
            for (at, _) in text.char_indices().step_by(7) {
                variants.push(text[..at].to_string());
            }
            for v in &variants {
                if let Err(e) = from_toml("m.toml", v) {
                    let e = e.to_string();
                    assert!(e.starts_with("m.toml") && !e.contains('\n'), "{e}");
                }
            }
        }
    }

    #[test]
    fn machine_file_refusals_name_the_key() {
        let cases: &[(&str, &str)] = &[
            ("name = \"m\"\nsockets = [", "m.toml:2:"),
            ("name = \"m\"\nname = \"n\"\n", "m.toml:2:"),
            ("bogus = 1\n", "key 'bogus': unknown (known keys: name,"),
            ("description = \"d\"\n", "key 'name': missing (required)"),
            ("name = \"m\"\n", "key 'description': missing (required)"),
            ("name = \"\"\ndescription = \"d\"\n", "key 'name': is empty"),
            ("name = 3\ndescription = \"d\"\n", "key 'name': must be a string, not 3"),
            ("name = \"m\"\ndescription = \"d\"\ncores_per_llc = 1\n", "key 'sockets': missing (required)"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 0\n", "key 'sockets': must be at least 1, not 0"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = -2\n", "key 'sockets': must be at least 1, not -2"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1.5\n", "key 'sockets': must be an integer, not 1.5"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 4\nthreads_per_core = 0\n", "key 'threads_per_core': must be at least 1, not 0"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 6\ncores_per_cluster = 4\n", "key 'cores_per_cluster': 4 does not divide cores_per_llc (6)"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 8\ncores_per_llc = 16384\n", "= 8 x 1 x 1 x 16384 x 1 = 131072 CPUs, more than the 16384"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 99999\n", "key 'cores_per_llc': must be at most 16384"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 2048\ncores_per_llc = 1\n", "sockets x nodes_per_socket = 2048 x 1 = 2048 nodes, more than the 1024"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nnumbering = \"odd\"\n", "key 'numbering': must be \"siblings-last\" or \"siblings-adjacent\""),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 2\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n", "key 'distance_other_socket': missing"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 2\ncores_per_llc = 2\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = 1\ntarget_residency_us = 1\n", "key 'distance_other_socket': missing"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\nnodes_per_socket = 2\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n", "key 'distance_same_socket': missing"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 2\ncores_per_llc = 2\ndistance_other_socket = 10\n", "key 'distance_other_socket': must be at least 11, not 10"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 2\ncores_per_llc = 2\ndistances = [[10, 20]]\n", "key 'distances': must have 2 rows of 2"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 2\ncores_per_llc = 2\ndistances = [[10, 20], [21, 10]]\n", "key 'distances': node 0 -> 1 is 20 but 1 -> 0 is 21"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 2\ncores_per_llc = 2\ndistances = [[10, 20], [20, 10]]\ndistance_other_socket = 20\n", "key 'distances': give either"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"nope\"\n", "key 'like': unknown preset 'nope' (one of a7-octa,"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\n", "key 'like': missing: needed for the idle states"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = 1\ntarget_residency_us = 1\n", "key 'like': missing: needed for the costs"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = 1\ntarget_residency_us = 1\n[costs]\nwakeup_ns = 1\n", "key 'costs.line_transfer_ns': missing (no 'like' preset"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\ncapacity = 2000\n", "key 'capacity': must be at most 1024, not 2000"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\npoll = false\n", "key 'poll': applies only to an [[idle_state]] list"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = 1\n", "key 'idle_state[1].target_residency_us': missing (required)"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = -1\ntarget_residency_us = 1\n", "key 'idle_state[1].exit_latency_us': must be at least 0, not -1"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = 1\ntarget_residency_us = 1\nlatency = 3\n", "key 'idle_state[1].latency': unknown"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[[idle_state]]\nname = \"POLL\"\nexit_latency_us = 0\ntarget_residency_us = 0\n", "key 'idle_state[1].name': POLL is always the first state"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[[idle_state]]\nname = \"C6\"\nexit_latency_us = 100\ntarget_residency_us = 600\n[[idle_state]]\nname = \"C1\"\nexit_latency_us = 1\ntarget_residency_us = 1\n", "key 'idle_state': 'C1' has a shorter target residency"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[costs]\nbogus_ns = 1\n", "key 'costs.bogus_ns': unknown"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[costs]\nwakeup_ns = -5\n", "key 'costs.wakeup_ns': must be at least 0, not -5"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[costs]\nline_transfer_ns = [1, 2, 3]\n", "key 'costs.line_transfer_ns': must list 7 integers"),
            ("name = \"m\"\ndescription = \"d\"\nsockets = 1\ncores_per_llc = 2\nlike = \"vm-2cpu\"\n[costs]\nline_transfer_ns = [1, 2, 3, 4, 5, 6, 1]\n", "must not shrink with distance (1 after 6)"),
        ];
        for (text, want) in cases {
            let e = err(text);
            assert!(e.starts_with("m.toml"), "{e}");
            assert!(e.contains(want), "{text}\n-> {e}\nwanted {want}");
            assert!(!e.contains('\n'), "{e}");
        }
        // The minimal file is fine.
        assert_eq!(from_toml("m.toml", MINIMAL).unwrap().nr_cpus(), 4);
    }
}
