//! The fault model: which links and switches have failed, as users study them.
//!
//! `[faults]` combines, as a union:
//! - `random_links = N`, `random_switches = N`: the first `N` elements of one **nested** random
//!   sequence each (a partial Fisher-Yates shuffle: the first `N` faults are the same whatever the
//!   total, so a sweep over `N` walks one fault sequence, as SurePath's Figs. 1 and 6 do);
//! - `links = [[switch, port], ...]` and `switches = [...]`: explicit lists (ports are
//!   switch-to-switch ports `0..switch_ports(switch)`, see [`crate::topology`]);
//! - `file = "faults.json"` or `"faults.csv"`: the same lists from a file ([`mod@file`]);
//! - `shapes = [{ kind = "row" }, ...]`: structured shapes placed by coordinates ([`shapes`], SurePath
//!   section 6, Figs. 7 and 9);
//! - `[faults.lifetime]`: failures accumulated over a machine's life with critical ones repaired
//!   ([`lifetime`], Nue paper section 2).
//!
//! `[[faults.events]]` fail links and switches while the run goes on ([`events`]), and
//! `faults.reconfigure_cycles` says how long the routing takes to be rebuilt after each.
//!
//! Random draws come from `faults.seed` when set, else from the run's `seed` (so configs written
//! before `faults.seed` existed keep their fault sets); traffic never reads `faults.seed`, so either
//! can vary with the other fixed. Random links use stream owner 0, random switches owner 1, the
//! lifetime owner 2, all with [`Purpose::Faults`].
//!
//! A failed switch takes all its links and its servers down ([`crate::topology::Fabric`] applies a
//! [`FaultSet`]; the traffic side is in `sim.rs`). [`LiveGraph`] is the cheap view of a fault set
//! (dead ports and switches, no distance tables) that connectivity checks, `hxsim analyze
//! --sequence` and the lifetime model update one fault at a time.

pub mod events;
pub mod file;
pub mod lifetime;
pub mod shapes;

use super::{PortId, SwitchId, Topology};
use crate::error::ConfigError;
use crate::rng::{self, Purpose};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use events::{FaultEvent, Timeline};
pub use lifetime::LifetimeConfig;
pub use shapes::ShapeConfig;

/// Distance value for "unreachable" (as [`crate::topology::fabric::UNREACHABLE`]).
const UNREACHABLE: u32 = u32::MAX;

/// `faults.unreachable` values.
pub const UNREACHABLE_POLICIES: &[&str] = &["error", "drop"];

fn is_zero(x: &usize) -> bool {
    *x == 0
}
fn is_error(s: &String) -> bool {
    s == "error"
}

/// `[faults]`: failed links and switches applied before the run (see the module doc).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FaultConfig {
    /// Number of switch-to-switch links removed: the first `N` of the fault seed's link sequence.
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = 0))]
    pub random_links: usize,
    /// Number of switches removed (with their links and servers): the first `N` of the fault seed's
    /// switch sequence.
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = 0))]
    pub random_switches: usize,
    /// Failed links as `[switch, port]` (either end).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub links: Vec<Vec<u64>>,
    /// Failed switches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub switches: Vec<u64>,
    /// A JSON (`{"links": [[s, p], ...], "switches": [...]}`) or CSV (`link,s,p` / `switch,s` lines)
    /// file of failed links and switches: relative to the working directory once loaded (a config
    /// file's relative path is made so from its folder, see [`crate::config::parse_file_str`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Seed of the random fault draws; default: the run's `seed`.
    #[serde(skip_serializing_if = "Option::is_none", with = "crate::rng::seed_format::option")]
    #[schemars(with = "Option<u64>")]
    pub seed: Option<u64>,
    /// Structured shapes ([`shapes`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub shapes: Vec<ShapeConfig>,
    /// What a network split by faults does: `"error"` (exit 2 naming the unreachable pairs) or
    /// `"drop"` (traffic to unreachable destinations is not generated; the pairs are reported).
    #[serde(skip_serializing_if = "is_error")]
    #[schemars(extend("default" = "error"))]
    pub unreachable: String,
    /// Failures over a machine's lifetime ([`lifetime`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<LifetimeConfig>,
    /// Failures during the run, in increasing order of cycle ([`events`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub events: Vec<FaultEvent>,
    /// Cycles from a failure event until the routing rebuilt for the new network is in force (the
    /// routing's computation and distribution time). Until then switches route with the routing
    /// they had and see the failed ports as unavailable.
    #[serde(skip_serializing_if = "is_zero_u64")]
    #[schemars(extend("default" = 0))]
    pub reconfigure_cycles: u64,
    /// What a packet left with no live route after a failure event does: `"drop"` (dropped and
    /// counted as stranded) or `"wait"` (waits in its buffer while a rebuild of the routing is
    /// pending, and is dropped once none is).
    #[serde(skip_serializing_if = "is_drop")]
    #[schemars(extend("default" = "drop"))]
    pub stranded: String,
    /// End-to-end retransmission: a packet lost at a failure event or stranded after one is sent
    /// again by its source server this many cycles after the loss (the transport's timeout, as an
    /// InfiniBand reliable connection resends after its ACK timeout); at least the largest link
    /// latency and below `simulation.watchdog_cycles`. Absent: lost packets are gone (required absent or set with a `[workload]`, whose
    /// messages wait for every packet). Acts only with failure events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmit_cycles: Option<u64>,
    /// With `faults.retransmit_cycles`: how many times a packet is sent again before its source
    /// gives it up (counted in `packets_abandoned`); InfiniBand's retry count is at most 7.
    #[serde(skip_serializing_if = "is_default_retries")]
    #[schemars(extend("default" = 7))]
    pub retransmit_limit: u64,
}

/// `faults.retransmit_limit`'s default: InfiniBand's largest retry count.
pub const DEFAULT_RETRANSMIT_LIMIT: u64 = 7;

fn is_default_retries(n: &u64) -> bool {
    *n == DEFAULT_RETRANSMIT_LIMIT
}

/// `faults.stranded` values.
pub const STRANDED_POLICIES: &[&str] = &["drop", "wait"];

fn is_drop(s: &String) -> bool {
    s == "drop"
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            random_links: 0,
            random_switches: 0,
            links: Vec::new(),
            switches: Vec::new(),
            file: None,
            seed: None,
            shapes: Vec::new(),
            unreachable: "error".into(),
            lifetime: None,
            events: Vec::new(),
            reconfigure_cycles: 0,
            stranded: "drop".into(),
            retransmit_cycles: None,
            retransmit_limit: DEFAULT_RETRANSMIT_LIMIT,
        }
    }
}

impl FaultConfig {
    /// Whether any fault is configured.
    pub fn any(&self) -> bool {
        self.random_links > 0
            || self.random_switches > 0
            || !self.links.is_empty()
            || !self.switches.is_empty()
            || self.file.is_some()
            || !self.shapes.is_empty()
            || self.lifetime.is_some()
    }

    /// The key to name when the fault set as a whole is at fault (e.g. it splits the network).
    pub fn describe(&self) -> String {
        let mut keys = Vec::new();
        if self.random_links > 0 {
            keys.push(format!("faults.random_links = {}", self.random_links));
        }
        if self.random_switches > 0 {
            keys.push(format!("faults.random_switches = {}", self.random_switches));
        }
        if !self.links.is_empty() {
            keys.push(format!("faults.links ({} links)", self.links.len()));
        }
        if !self.switches.is_empty() {
            keys.push(format!("faults.switches ({} switches)", self.switches.len()));
        }
        if let Some(f) = &self.file {
            keys.push(format!("faults.file = \"{f}\""));
        }
        if !self.shapes.is_empty() {
            keys.push(format!("faults.shapes ({} shapes)", self.shapes.len()));
        }
        if let Some(l) = &self.lifetime {
            keys.push(format!("faults.lifetime.step = {}", l.step()));
        }
        keys.join(", ")
    }

    /// Checks that need no network (the rest are in [`FaultConfig::build`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !UNREACHABLE_POLICIES.contains(&self.unreachable.as_str()) {
            return Err(ConfigError::value(
                "faults.unreachable",
                format!("\"{}\"", self.unreachable),
                format!("one of: {}", UNREACHABLE_POLICIES.join(", ")),
            ));
        }
        if let Some(l) = &self.lifetime {
            l.validate()?;
        }
        for (i, s) in self.shapes.iter().enumerate() {
            s.validate_keys(&format!("faults.shapes[{i}]"))?;
        }
        if !STRANDED_POLICIES.contains(&self.stranded.as_str()) {
            return Err(ConfigError::value(
                "faults.stranded",
                format!("\"{}\"", self.stranded),
                format!("one of: {}", STRANDED_POLICIES.join(", ")),
            ));
        }
        if self.retransmit_cycles == Some(0) {
            return Err(ConfigError::value(
                "faults.retransmit_cycles",
                0,
                "at least 1 (and at least the largest link latency), or absent for no retransmission",
            ));
        }
        if !(1..=u8::MAX as u64).contains(&self.retransmit_limit) {
            return Err(ConfigError::value("faults.retransmit_limit", self.retransmit_limit, "1 to 255"));
        }
        let mut previous = None;
        for (k, e) in self.events.iter().enumerate() {
            e.validate(k, previous)?;
            previous = Some(e.cycle);
        }
        Ok(())
    }

    /// The static fault set and what every event adds to it ([`Timeline`]).
    pub fn timeline(&self, topo: &dyn Topology, run_seed: u64) -> Result<Timeline, ConfigError> {
        Timeline::build(&self.events, topo, self.build(topo, run_seed)?, self.seed_or(run_seed))
    }

    /// The seed of the random fault draws.
    pub fn seed_or(&self, run_seed: u64) -> u64 {
        self.seed.unwrap_or(run_seed)
    }

    /// Everything but the lifetime, on `topo` (the lifetime starts from this set).
    pub fn base_set(&self, topo: &dyn Topology, run_seed: u64) -> Result<FaultSet, ConfigError> {
        let seed = self.seed_or(run_seed);
        let mut f = FaultSet::default();
        if self.random_links > 0 {
            let r = FaultSet::random_links(topo, self.random_links, seed)
                .map_err(|e| ConfigError::value("faults.random_links", self.random_links, e))?;
            f.links.extend(r.links);
        }
        if self.random_switches > 0 {
            let n = topo.num_switches();
            if self.random_switches > n {
                return Err(ConfigError::value(
                    "faults.random_switches",
                    self.random_switches,
                    format!("at most the number of switches ({n})"),
                ));
            }
            f.switches.extend(random_switches(topo, self.random_switches, seed));
        }
        for (i, l) in self.links.iter().enumerate() {
            let key = format!("faults.links[{i}]");
            if l.len() != 2 {
                return Err(ConfigError::value(&key, format!("{l:?}"), "a pair [switch, port]"));
            }
            f.links.push(check_link(topo, l[0], l[1]).map_err(|e| ConfigError::value(&key, format!("{l:?}"), e))?);
        }
        for (i, &s) in self.switches.iter().enumerate() {
            f.switches
                .push(check_switch(topo, s).map_err(|e| ConfigError::value(&format!("faults.switches[{i}]"), s, e))?);
        }
        if let Some(path) = &self.file {
            let g = file::read(topo, path)?;
            f.links.extend(g.links);
            f.switches.extend(g.switches);
        }
        for (i, s) in self.shapes.iter().enumerate() {
            let g = s.place(topo, &format!("faults.shapes[{i}]"))?;
            f.links.extend(g.links);
            f.switches.extend(g.switches);
        }
        f.normalize(topo);
        Ok(f)
    }

    /// The fault set of the config on `topo`: [`FaultConfig::base_set`], then the lifetime's
    /// failures at its step.
    pub fn build(&self, topo: &dyn Topology, run_seed: u64) -> Result<FaultSet, ConfigError> {
        let base = self.base_set(topo, run_seed)?;
        match &self.lifetime {
            // A lifetime played during the run starts from the base set (`crate::sim::events`).
            Some(l) if l.every_cycles > 0 => Ok(base),
            None => Ok(base),
            Some(l) => {
                let steps = lifetime::simulate(topo, &base, l, self.seed_or(run_seed), Some(l.step()));
                Ok(steps.into_iter().last().map(|s| s.faults).unwrap_or(base))
            }
        }
    }
}

/// A link given as `(switch, port)`, checked against `topo`: the canonical end.
pub fn check_link(topo: &dyn Topology, s: u64, p: u64) -> Result<(SwitchId, PortId), String> {
    let n = topo.num_switches() as u64;
    if s >= n {
        return Err(format!("a switch id below {n} and a switch-to-switch port of it"));
    }
    let ports = topo.switch_ports(s as SwitchId) as u64;
    if p >= ports {
        return Err(format!(
            "a port of switch {s} below {ports} (its switch-to-switch ports; server ports are not links)"
        ));
    }
    match topo.neighbour(s as SwitchId, p as PortId) {
        Some((o, q)) => Ok(canonical((s as SwitchId, p as PortId), (o, q))),
        None => Err(format!("a wired port: port {p} of switch {s} is not connected")),
    }
}

/// A switch id checked against `topo`.
pub fn check_switch(topo: &dyn Topology, s: u64) -> Result<SwitchId, String> {
    let n = topo.num_switches() as u64;
    if s >= n {
        Err(format!("a switch id below {n}"))
    } else {
        Ok(s as SwitchId)
    }
}

fn canonical(a: (SwitchId, PortId), b: (SwitchId, PortId)) -> (SwitchId, PortId) {
    a.min(b)
}

/// Failed links and switches. Links are `(switch, port)` pairs naming either end; a failed switch
/// implies all its links (they need not be listed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultSet {
    /// Failed links, each as one of its two ends.
    pub links: Vec<(SwitchId, PortId)>,
    /// Failed switches.
    pub switches: Vec<SwitchId>,
}

impl FaultSet {
    /// `n` distinct switch-to-switch links chosen uniformly by the seed: the first `n` of one nested
    /// sequence ([`link_sequence`]).
    pub fn random_links(topo: &dyn Topology, n: usize, seed: u64) -> Result<Self, String> {
        let all = super::fabric::all_links(topo);
        if n > all.len() {
            return Err(format!("at most the {} links of the network", all.len()));
        }
        Ok(FaultSet { links: link_sequence(&all, n, seed), switches: Vec::new() })
    }

    /// Whether nothing has failed.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty() && self.switches.is_empty()
    }

    /// Canonical link ends (the lower `(switch, port)`), duplicates removed (first occurrence kept);
    /// switches deduplicated the same way.
    pub fn normalize(&mut self, topo: &dyn Topology) {
        let mut seen = std::collections::HashSet::new();
        self.links = self
            .links
            .iter()
            .filter_map(|&(s, p)| topo.neighbour(s, p).map(|o| canonical((s, p), o)))
            .filter(|l| seen.insert(*l))
            .collect();
        let mut seen = std::collections::HashSet::new();
        self.switches.retain(|s| seen.insert(*s));
    }
}

/// The first `n` links of the nested random sequence over `all` under `seed`: a partial
/// Fisher-Yates shuffle, whose `i`-th draw depends only on `i` and the stream, so the first `m`
/// links are the same for every `n >= m`.
pub fn link_sequence(all: &[(SwitchId, PortId)], n: usize, seed: u64) -> Vec<(SwitchId, PortId)> {
    nested_sample(all.len(), n, seed, 0).into_iter().map(|i| all[i]).collect()
}

/// The first `n` switches of the nested random switch sequence under `seed`.
pub fn random_switches(topo: &dyn Topology, n: usize, seed: u64) -> Vec<SwitchId> {
    nested_sample(topo.num_switches(), n, seed, 1).into_iter().map(|i| i as SwitchId).collect()
}

/// The first `n` of a uniform random order of `0..len` (partial Fisher-Yates on stream `owner`).
fn nested_sample(len: usize, n: usize, seed: u64, owner: u64) -> Vec<usize> {
    shuffled_prefix(len, n, &mut rng::stream(seed, owner, Purpose::Faults))
}

/// The first `n` of a uniform random order of `0..len` drawn from `rng` (a partial Fisher-Yates
/// shuffle: the `i`-th draw depends only on `i` and the stream).
pub(crate) fn shuffled_prefix(len: usize, n: usize, rng: &mut rng::Rng) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..len).collect();
    for i in 0..n.min(len) {
        let j = i + rng::below(rng, (len - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(n.min(len));
    idx
}

/// A topology with dead ports and switches and nothing else: connectivity and distances by BFS,
/// updated one fault at a time (no distance tables).
pub struct LiveGraph<'a> {
    topo: &'a dyn Topology,
    ports: usize,
    dead_port: Vec<bool>,
    dead_switch: Vec<bool>,
    failed_links: usize,
    failed_switches: usize,
}

/// The parts of a network that faults split.
#[derive(Debug, Clone)]
pub struct Components {
    /// Component of each switch (`u32::MAX` for a dead switch).
    pub of: Vec<u32>,
    /// Live servers in each component.
    pub servers: Vec<u64>,
    /// Ordered pairs of live servers in different components.
    pub unreachable_pairs: u64,
    /// Live servers.
    pub live_servers: u64,
}

impl Components {
    /// One unreachable pair of servers `(a, b)`, if any: the first server of the largest component
    /// and the first server of another.
    pub fn example_pair(&self, topo: &dyn Topology) -> Option<(u32, u32)> {
        let big = (0..self.servers.len()).max_by_key(|&c| (self.servers[c], std::cmp::Reverse(c)))?;
        let other = (0..self.servers.len()).find(|&c| c != big && self.servers[c] > 0)?;
        let first = |c: usize| {
            (0..self.of.len())
                .find(|&s| self.of[s] == c as u32 && topo.servers_at(s as SwitchId) > 0)
                .map(|s| topo.first_server(s as SwitchId))
        };
        Some((first(big)?, first(other)?))
    }
}

/// Diameter and connectivity along a fault set (`hxsim analyze --sequence`, the lifetime table).
#[derive(Debug, Clone, Serialize)]
pub struct Reach {
    /// Largest finite distance between live server-bearing switches.
    pub diameter: u32,
    /// Mean distance over reachable ordered pairs of live server-bearing switches (self pairs
    /// included).
    pub average_distance: f64,
    /// Every live server reaches every other.
    pub connected: bool,
    /// Ordered pairs of live servers that cannot reach each other.
    pub unreachable_pairs: u64,
}

impl<'a> LiveGraph<'a> {
    /// `topo` with `faults` applied.
    pub fn new(topo: &'a dyn Topology, faults: &FaultSet) -> Self {
        let ports = topo.max_switch_ports();
        let n = topo.num_switches();
        let mut g = LiveGraph {
            topo,
            ports,
            dead_port: vec![false; n * ports],
            dead_switch: vec![false; n],
            failed_links: 0,
            failed_switches: 0,
        };
        for &(s, p) in &faults.links {
            g.fail_link(s, p);
        }
        for &s in &faults.switches {
            g.fail_switch(s);
        }
        g
    }
    /// The topology.
    pub fn topology(&self) -> &dyn Topology {
        self.topo
    }
    /// Whether port `p` of `s` (and its switch) is alive.
    #[inline]
    pub fn alive(&self, s: SwitchId, p: PortId) -> bool {
        !self.dead_port[s as usize * self.ports + p as usize]
    }
    /// Whether switch `s` is alive.
    #[inline]
    pub fn switch_alive(&self, s: SwitchId) -> bool {
        !self.dead_switch[s as usize]
    }
    /// Failed links (listed or taken down by a failed switch).
    pub fn failed_links(&self) -> usize {
        self.failed_links
    }
    /// Failed switches.
    pub fn failed_switches(&self) -> usize {
        self.failed_switches
    }
    /// Fail a link (a no-op if it is dead already); returns whether it was alive.
    pub fn fail_link(&mut self, s: SwitchId, p: PortId) -> bool {
        let Some((o, q)) = self.topo.neighbour(s, p) else { return false };
        if !self.alive(s, p) {
            return false;
        }
        self.dead_port[s as usize * self.ports + p as usize] = true;
        self.dead_port[o as usize * self.ports + q as usize] = true;
        self.failed_links += 1;
        true
    }
    /// Bring a failed link back (a repair).
    pub fn repair_link(&mut self, s: SwitchId, p: PortId) {
        let Some((o, q)) = self.topo.neighbour(s, p) else { return };
        if self.alive(s, p) || !self.switch_alive(s) || !self.switch_alive(o) {
            return;
        }
        self.dead_port[s as usize * self.ports + p as usize] = false;
        self.dead_port[o as usize * self.ports + q as usize] = false;
        self.failed_links -= 1;
    }
    /// Fail a switch and every link of it; returns the links it took down (alive until now).
    pub fn fail_switch(&mut self, s: SwitchId) -> Vec<PortId> {
        if !self.switch_alive(s) {
            return Vec::new();
        }
        let taken: Vec<PortId> = (0..self.topo.switch_ports(s) as PortId).filter(|&p| self.fail_link(s, p)).collect();
        self.dead_switch[s as usize] = true;
        self.failed_switches += 1;
        taken
    }
    /// Bring a failed switch back with the links it took down (`taken`, from [`Self::fail_switch`]).
    pub fn repair_switch(&mut self, s: SwitchId, taken: &[PortId]) {
        if self.switch_alive(s) {
            return;
        }
        self.dead_switch[s as usize] = false;
        self.failed_switches -= 1;
        for &p in taken {
            self.repair_link(s, p);
        }
    }

    /// The live servers' components (switches without servers count only as relays).
    pub fn components(&self) -> Components {
        let n = self.topo.num_switches();
        let mut of = vec![u32::MAX; n];
        let mut servers = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        for root in 0..n as SwitchId {
            if of[root as usize] != u32::MAX || !self.switch_alive(root) {
                continue;
            }
            let c = servers.len() as u32;
            let mut count = 0u64;
            of[root as usize] = c;
            queue.push_back(root);
            while let Some(s) = queue.pop_front() {
                count += self.topo.servers_at(s) as u64;
                for p in 0..self.topo.switch_ports(s) as PortId {
                    if !self.alive(s, p) {
                        continue;
                    }
                    if let Some((o, _)) = self.topo.neighbour(s, p) {
                        if of[o as usize] == u32::MAX {
                            of[o as usize] = c;
                            queue.push_back(o);
                        }
                    }
                }
            }
            servers.push(count);
        }
        let live: u64 = servers.iter().sum();
        let same: u128 = servers.iter().map(|&c| c as u128 * c as u128).sum();
        let unreachable_pairs = (live as u128 * live as u128 - same).min(u64::MAX as u128) as u64;
        Components { of, servers, unreachable_pairs, live_servers: live }
    }

    /// Whether every live server reaches every other: one BFS, `O(links)`.
    pub fn servers_connected(&self) -> bool {
        self.components().servers.iter().filter(|&&c| c > 0).count() <= 1
    }

    fn bfs(&self, root: SwitchId, d: &mut [u32], queue: &mut std::collections::VecDeque<SwitchId>) {
        super::bfs_hops(root, d, queue, |s| {
            (0..self.topo.switch_ports(s) as PortId)
                .filter(move |&p| self.alive(s, p))
                .filter_map(move |p| self.topo.neighbour(s, p))
                .map(|(o, _)| o)
        });
    }

    /// Diameter, average distance and connectivity over live server-bearing switches: a BFS from
    /// each of them (in parallel), `O(switches * links)`.
    pub fn reach(&self) -> Reach {
        let n = self.topo.num_switches();
        let sources: Vec<SwitchId> =
            (0..n as SwitchId).filter(|&s| self.switch_alive(s) && self.topo.servers_at(s) > 0).collect();
        let (diameter, sum, pairs) = sources
            .par_iter()
            .map_init(
                || (vec![UNREACHABLE; n], std::collections::VecDeque::new()),
                |(d, q), &r| {
                    self.bfs(r, d, q);
                    let (mut diam, mut sum, mut pairs) = (0u32, 0u64, 0u64);
                    for &s in &sources {
                        let x = d[s as usize];
                        if x != UNREACHABLE {
                            diam = diam.max(x);
                            sum += x as u64;
                            pairs += 1;
                        }
                    }
                    (diam, sum, pairs)
                },
            )
            .reduce(|| (0, 0, 0), |a, b| (a.0.max(b.0), a.1 + b.1, a.2 + b.2));
        let c = self.components();
        Reach {
            diameter,
            average_distance: if pairs == 0 { 0.0 } else { sum as f64 / pairs as f64 },
            connected: c.unreachable_pairs == 0,
            unreachable_pairs: c.unreachable_pairs,
        }
    }

    /// The current fault set (canonical links, including those of failed switches).
    pub fn fault_set(&self) -> FaultSet {
        let mut f = FaultSet::default();
        for s in 0..self.topo.num_switches() as SwitchId {
            if !self.switch_alive(s) {
                f.switches.push(s);
            }
            for p in 0..self.topo.switch_ports(s) as PortId {
                if let Some(o) = self.topo.neighbour(s, p) {
                    if (s, p) < o && !self.alive(s, p) && self.switch_alive(s) && self.switch_alive(o.0) {
                        f.links.push((s, p));
                    }
                }
            }
        }
        f
    }
}

#[cfg(test)]
mod tests;
