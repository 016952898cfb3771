//! Synthetic traffic patterns: the destination server of each generated packet.
//!
//! References:
//! - *SurePath*: Camarero, Cano, Martínez, Beivide, "Achieving High-Performance Fault-Tolerant Routing in
//!   HyperX Interconnection Networks", section 4 (Experimental Setup): Uniform, Random Server Permutation,
//!   Dimension Complement Reverse and Regular Permutation to Neighbour (Figure 3).
//! - *HyperX*: Ahn, Binkert, Davis, McLaren, Schreiber, "HyperX: Topology, Routing, and Packaging of Efficient
//!   Large-Scale Networks", section 4.1 (Performance results): Bit Complement, Bit Rotate (Dally and Towles'
//!   bit rotation, the paper's reference \[3\]), Transpose and Swap2; also bit reverse (BookSim's `bitrev`).
//!
//! Conventions (shared with the topology): a HyperX has sides `S_0..S_{L-1}` and `T` servers per switch. The
//! switch with coordinates `(x_0, .., x_{L-1})` has id `x_0 + S_0*(x_1 + S_1*(x_2 + ..))` (dimension 0 varies
//! fastest), and the server with local index `w` (`0 <= w < T`) on switch `s` has id `s*T + w`. There are
//! `N = T * prod S_i` servers; server ids are `u32`, so `N <= 2^32`.
//!
//! - *Nue*: Domke, Hoefler, Matsuoka, "Routing on the Channel Dependency Graph" (HPDC 2016), Figs. 2 and
//!   7a: the all-to-all shift exchange (its reference \[36\], Zahavi et al., "Optimized InfiniBand fat-tree
//!   routing for shift all-to-all communication patterns"): in step `i = 1..N-1` every server `s` sends
//!   to `(s + i) mod N`.
//!
//! Only [`PatternKind::Uniform`] (and the group pattern) is random per packet; every other pattern is a
//! fixed map from source to destination computed at construction (a table for the random permutation) or
//! arithmetically per call, except the all-to-all shift, whose destination also depends on how many
//! packets the source generated before ([`Pattern::destination_nth`]).

use std::fmt;
use std::str::FromStr;

use crate::rng::{below, shuffle, stream, Purpose, Rng};

/// The traffic patterns known to the simulator; the configuration names them in kebab-case (`traffic.pattern`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, schemars::JsonSchema)]
#[schemars(rename_all = "kebab-case")]
pub enum PatternKind {
    /// SurePath section 4, "Uniform": each packet goes to a server chosen uniformly among the other `N-1`.
    Uniform,
    /// SurePath section 4, "Random Server Permutation": a random permutation of the servers chosen once from
    /// the seed; each server sends to its image. Fixed points (a server sending to itself) are possible.
    RandomServerPermutation,
    /// SurePath section 4, "Dimension Complement Reverse" (from OmniWAR): switch `(x, y, z)` sends to
    /// `(z̄, ȳ, x̄)` with `x̄ = k-1-x`; in 2-D the server index acts as a third coordinate,
    /// `(w, x, y) -> (ȳ, x̄, w̄)`.
    DimensionComplementReverse,
    /// SurePath section 4 and Figure 3, "Regular Permutation to Neighbour": on a `k x k x k` HyperX (`k` even),
    /// each embedded `K_2^3` hypercube carries a directed Hamiltonian 8-cycle and every switch sends to the
    /// next switch on its cycle.
    RegularPermutationToNeighbour,
    /// HyperX section 4.1, "Bit Complement": `dst = !src` on the `log2 N` bits of the server id.
    BitComplement,
    /// Bit reverse (BookSim's `bitrev`): `dst` is `src` with its `log2 N` bits in reverse order.
    BitReverse,
    /// HyperX section 4.1 and Figs. 6b and 7b, "Bit Rotate": Dally and Towles' bit rotation (their
    /// Table 3.2, the HyperX paper's reference \[3\]), `d_i = s_{(i+1) mod b}` on the `b = log2 N` bits:
    /// the id rotated right by one bit.
    BitRotate,
    /// HyperX section 4.1, "Transpose": the two halves of the `log2 N`-bit server id are swapped.
    Transpose,
    /// HyperX section 4.1, "Swap2": even-numbered servers exchange with a peer across the bisection of
    /// dimension 0, odd-numbered servers with a peer across the bisection of dimension 1.
    Swap2,
    /// DAVC section 7.1, "Adversarial" (Kim et al.'s worst case for the dragonfly): every server sends
    /// to a server drawn uniformly in the next group (group `g` to `g + 1 mod groups`), so a whole
    /// group's traffic funnels into the one global link between the two groups. Defined on
    /// topologies with groups ([`crate::topology::Topology::group_size`]: the dragonfly).
    AdversarialGroup,
    /// Nue Figs. 2 and 7a, the "all-to-all shift exchange" (Zahavi et al., the Nue paper's reference
    /// \[36\]): on `N` servers, the `k`-th packet (from 0) a server `s` generates goes to server
    /// `(s + 1 + (k / m) mod (N-1)) mod N`, `m` packets per message (`traffic.shift_message_packets`,
    /// [`Pattern::set_message_packets`]). So in step `i = 1..N-1` server `s` sends one message to
    /// `s + i`, every server walks through all the others in shift order, and after `(N-1) m` packets
    /// it starts over (an open-loop rotating permutation in `bernoulli` mode). Each server goes at its
    /// own pace: there is no barrier between steps, so the exchange may skew (a server ahead in its
    /// steps does not wait for the others), as in the paper's simulator, which replays the exchange
    /// as independent point-to-point messages. With faults or `traffic.active_servers`, `N` and the
    /// order are those of the live (active) servers' ranks in server-id order. A packet counts when
    /// it is generated (one dropped as unreachable too; one suppressed by a full source queue in
    /// `bernoulli` mode was never generated and does not).
    AllToAllShift,
}

impl PatternKind {
    /// Every pattern, in the order of the configuration's list of names.
    pub const ALL: [PatternKind; 11] = [
        PatternKind::Uniform,
        PatternKind::RandomServerPermutation,
        PatternKind::DimensionComplementReverse,
        PatternKind::RegularPermutationToNeighbour,
        PatternKind::BitComplement,
        PatternKind::BitReverse,
        PatternKind::BitRotate,
        PatternKind::Transpose,
        PatternKind::Swap2,
        PatternKind::AdversarialGroup,
        PatternKind::AllToAllShift,
    ];

    /// The kebab-case configuration name (`traffic.pattern`) of the pattern, e.g. `"bit-complement"`.
    pub fn name(self) -> &'static str {
        match self {
            PatternKind::Uniform => "uniform",
            PatternKind::RandomServerPermutation => "random-server-permutation",
            PatternKind::DimensionComplementReverse => "dimension-complement-reverse",
            PatternKind::RegularPermutationToNeighbour => "regular-permutation-to-neighbour",
            PatternKind::BitComplement => "bit-complement",
            PatternKind::BitReverse => "bit-reverse",
            PatternKind::BitRotate => "bit-rotate",
            PatternKind::Transpose => "transpose",
            PatternKind::Swap2 => "swap2",
            PatternKind::AdversarialGroup => "adversarial-group",
            PatternKind::AllToAllShift => "all-to-all-shift",
        }
    }
}

impl fmt::Display for PatternKind {
    /// Writes the kebab-case configuration name (see [`PatternKind::name`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PatternKind {
    type Err = String;

    /// Parses a kebab-case configuration name (see [`PatternKind::name`]); the error lists the allowed values.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PatternKind::ALL.iter().copied().find(|k| k.name() == s).ok_or_else(|| {
            let allowed: Vec<&str> = PatternKind::ALL.iter().map(|k| k.name()).collect();
            format!("unknown traffic pattern `{s}`; allowed values: {}", allowed.join(", "))
        })
    }
}

/// Successor of each vertex of the 3-cube on the directed Hamiltonian cycle used by Regular Permutation to
/// Neighbour: the reflected Gray code `000, 001, 011, 010, 110, 111, 101, 100` (then back to `000`), i.e.
/// `0 -> 1 -> 3 -> 2 -> 6 -> 7 -> 5 -> 4 -> 0`. Bit `d` of a vertex is the low bit of coordinate `x_d`.
const RPN_NEXT: [u32; 8] = [1, 3, 6, 2, 0, 4, 7, 5];

/// How a [`Pattern`] computes destinations; the data each map needs, precomputed in [`Pattern::new`].
#[derive(Debug, Clone)]
enum Map {
    /// Uniform among the other servers.
    Uniform { servers: u64 },
    /// Uniform among the other live servers (faults killed some): `ids` are the live servers in
    /// increasing order, `rank[v]` the position of live server `v` in `ids`.
    UniformLive { ids: Vec<u32>, rank: Vec<u32> },
    /// Table lookup (random server permutation).
    Table(Vec<u32>),
    /// Reverse the switch coordinate vector and complement each coordinate; same local index.
    ReverseComplement,
    /// 2-D dimension complement reverse: `(w, x, y) -> (ȳ, x̄, w̄)`.
    ReverseComplement2D { s0: u32, s1: u32 },
    /// Regular permutation to neighbour on a `k x k x k` HyperX.
    Rpn { k: u32 },
    /// `!src & mask`.
    BitComplement { mask: u32 },
    /// Reverse the low `bits` bits.
    BitReverse { bits: u32 },
    /// Rotate the low `bits` bits right by one.
    BitRotate { bits: u32 },
    /// Swap the two halves (`half` bits each) of the id.
    Transpose { half: u32, mask: u32 },
    /// Even servers move half-way along dimension 0, odd servers along dimension 1.
    Swap2 { s0: u32, s1: u32 },
    /// Uniform in the next group of `group` consecutive servers.
    NextGroup { group: u64, groups: u64 },
    /// All-to-all shift on all `servers` servers, `message` packets per step.
    Shift { servers: u64, message: u64 },
    /// All-to-all shift on the live servers (faults killed some): `ids` and `rank` as in `UniformLive`.
    ShiftLive { ids: Vec<u32>, rank: Vec<u32>, message: u64 },
    /// The pattern `inner`, defined on the ranks `0..ids.len()` of the active servers
    /// (`traffic.active_servers`): `ids[i]` is the global id of rank `i` (increasing), `rank[v]` the
    /// rank of server `v` (`u32::MAX` for an inactive one).
    Active { inner: Box<Pattern>, ids: Vec<u32>, rank: Vec<u32> },
}

/// A traffic pattern instantiated on one HyperX: maps a source server to the destination of its next packet.
///
/// Built once per run by [`Pattern::new`] and shared read-only by all partitions: every partition builds the
/// same pattern from the same seed (the random permutation uses the [`Purpose::Global`] stream of owner 0).
#[derive(Debug, Clone)]
pub struct Pattern {
    kind: PatternKind,
    servers: u64,
    servers_per_switch: u32,
    sides: Vec<u32>,
    /// `strides[d]`: switch-id difference between neighbours in dimension `d` (`prod_{e<d} S_e`); u64 because
    /// the stride past trailing sides of 1 may be 2^32.
    strides: Vec<u64>,
    map: Map,
}

/// `8x8x8`-style description of the sides.
fn sides_str(sides: &[usize]) -> String {
    sides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x")
}

impl Pattern {
    /// Instantiates `kind` on a HyperX with the given `sides` (`S_0..S_{L-1}`) and `servers_per_switch` (`T`);
    /// `seed` is the run's master seed (only [`PatternKind::RandomServerPermutation`] uses it).
    ///
    /// Constraints (SurePath section 4, HyperX section 4.1, and what makes each map well defined):
    /// - all: at least one dimension, every side and `T` at least 1, `N <= 2^32`;
    /// - uniform: `N >= 2`;
    /// - dimension-complement-reverse: in 2-D, `T == S_1` (the server index and `x_1` are exchanged); in any
    ///   other dimension count, `S_d == S_{L-1-d}` for every `d`;
    /// - regular-permutation-to-neighbour: 3 dimensions, all sides equal and even;
    /// - bit-complement, bit-reverse, bit-rotate: `N` a power of two; transpose: `N = 2^b` with `b` even;
    /// - swap2: at least 2 dimensions, `S_0` and `S_1` even, and if `T` is odd, `S_0` a multiple of 4 (else
    ///   moving half-way along dimension 0 changes the parity of the server id and the map is not a
    ///   permutation).
    ///
    /// Errors are Strings that say which constraint failed, e.g. "bit-complement needs a power-of-two number
    /// of servers, got 12288 (4096 switches * 3 servers per switch)", to be shown to the user with the key
    /// `traffic.pattern`.
    pub fn new(kind: PatternKind, sides: &[usize], servers_per_switch: usize, seed: u64) -> Result<Pattern, String> {
        if sides.is_empty() {
            return Err(format!("{kind} needs a network with at least one dimension, got no sides"));
        }
        if let Some(d) = sides.iter().position(|&s| s == 0) {
            return Err(format!("{kind} needs every side to be at least 1, got side {d} = 0 in {}", sides_str(sides)));
        }
        if servers_per_switch == 0 {
            return Err(format!("{kind} needs at least 1 server per switch, got 0"));
        }
        let too_many = || {
            format!(
                "{kind} supports at most 2^32 servers (ids are u32), got more: sides {} with {servers_per_switch} \
                 servers per switch",
                sides_str(sides)
            )
        };
        let mut switches: u64 = 1;
        let mut strides = Vec::with_capacity(sides.len());
        for &s in sides {
            strides.push(switches);
            switches = switches.checked_mul(s as u64).filter(|&x| x <= 1 << 32).ok_or_else(too_many)?;
        }
        let servers = switches.checked_mul(servers_per_switch as u64).filter(|&x| x <= 1 << 32).ok_or_else(too_many)?;
        // Ids are u32, so sides and T must be too (only a single side or T of exactly 2^32 is excluded here).
        if sides.iter().any(|&s| s as u64 > u32::MAX as u64) || servers_per_switch as u64 > u32::MAX as u64 {
            return Err(too_many());
        }
        let t = servers_per_switch as u32;
        let l = sides.len();
        let got_servers = || format!("got {servers} ({switches} switches * {t} servers per switch)");
        let log2_servers = || {
            if servers.is_power_of_two() {
                Ok(servers.trailing_zeros())
            } else {
                Err(format!("{kind} needs a power-of-two number of servers, {}", got_servers()))
            }
        };

        let map = match kind {
            PatternKind::Uniform => {
                if servers < 2 {
                    return Err(format!("uniform needs at least 2 servers, {}", got_servers()));
                }
                Map::Uniform { servers }
            }
            PatternKind::AllToAllShift => {
                if servers < 2 {
                    return Err(format!("all-to-all-shift needs at least 2 servers, {}", got_servers()));
                }
                Map::Shift { servers, message: 1 }
            }
            PatternKind::RandomServerPermutation => {
                let mut perm: Vec<u32> = (0..servers).map(|i| i as u32).collect();
                let mut rng = stream(seed, 0, Purpose::Global);
                shuffle(&mut rng, &mut perm);
                Map::Table(perm)
            }
            PatternKind::DimensionComplementReverse => {
                if l == 2 {
                    if servers_per_switch != sides[1] {
                        return Err(format!(
                            "dimension-complement-reverse in 2-D uses the server index as a third coordinate \
                             exchanged with dimension 1, so it needs servers per switch == side 1, got {t} servers \
                             per switch and sides {}",
                            sides_str(sides)
                        ));
                    }
                    Map::ReverseComplement2D { s0: sides[0] as u32, s1: sides[1] as u32 }
                } else {
                    if let Some(d) = (0..l).find(|&d| sides[d] != sides[l - 1 - d]) {
                        return Err(format!(
                            "dimension-complement-reverse exchanges dimensions {d} and {}, so it needs equal sides \
                             there, got {} and {} in {}",
                            l - 1 - d,
                            sides[d],
                            sides[l - 1 - d],
                            sides_str(sides)
                        ));
                    }
                    Map::ReverseComplement
                }
            }
            PatternKind::RegularPermutationToNeighbour => {
                if l != 3 {
                    return Err(format!(
                        "regular-permutation-to-neighbour needs a 3-D HyperX (k x k x k, k even), got {l} dimensions \
                         ({})",
                        sides_str(sides)
                    ));
                }
                let k = sides[0];
                if sides.iter().any(|&s| s != k) || !k.is_multiple_of(2) {
                    return Err(format!(
                        "regular-permutation-to-neighbour needs all sides equal and even (k x k x k, k even), got {}",
                        sides_str(sides)
                    ));
                }
                Map::Rpn { k: k as u32 }
            }
            PatternKind::BitComplement => {
                log2_servers()?;
                Map::BitComplement { mask: (servers - 1) as u32 }
            }
            PatternKind::BitReverse => Map::BitReverse { bits: log2_servers()? },
            PatternKind::BitRotate => Map::BitRotate { bits: log2_servers()? },
            PatternKind::Transpose => {
                let bits = log2_servers()?;
                if bits % 2 != 0 {
                    return Err(format!(
                        "transpose needs a number of servers 2^b with b even, {} = 2^{bits}",
                        got_servers()
                    ));
                }
                Map::Transpose { half: bits / 2, mask: (servers - 1) as u32 }
            }
            PatternKind::AdversarialGroup => return Err(no_groups("a HyperX")),
            PatternKind::Swap2 => {
                if l < 2 {
                    return Err(format!("swap2 needs at least 2 dimensions, got {l} ({})", sides_str(sides)));
                }
                if !sides[0].is_multiple_of(2) || !sides[1].is_multiple_of(2) {
                    return Err(format!(
                        "swap2 needs even sides in dimensions 0 and 1 (peers across the bisection), got {}",
                        sides_str(sides)
                    ));
                }
                if !t.is_multiple_of(2) && !sides[0].is_multiple_of(4) {
                    return Err(format!(
                        "swap2 with an odd number of servers per switch needs side 0 a multiple of 4 (else it is \
                         not a permutation), got {t} servers per switch and sides {}",
                        sides_str(sides)
                    ));
                }
                Map::Swap2 { s0: sides[0] as u32, s1: sides[1] as u32 }
            }
        };
        Ok(Pattern {
            kind,
            servers,
            servers_per_switch: t,
            sides: sides.iter().map(|&s| s as u32).collect(),
            strides,
            map,
        })
    }

    /// Instantiates `kind` on `servers` servers numbered by global id, on a topology without HyperX
    /// coordinates (`network` names it in errors). Only the id-based patterns are defined there:
    /// uniform, random server permutation, bit complement, bit reverse, bit rotate and transpose (HyperZ
    /// paper section 5 applies them to the processor id); the coordinate patterns are errors.
    pub fn on_servers(kind: PatternKind, servers: u64, network: &str, seed: u64) -> Result<Pattern, String> {
        match kind {
            PatternKind::DimensionComplementReverse
            | PatternKind::RegularPermutationToNeighbour
            | PatternKind::Swap2 => Err(format!(
                "{kind} is defined by HyperX switch coordinates, which {network} does not have; patterns by \
                 server id work on any topology: uniform, random-server-permutation, bit-complement, bit-reverse, \
                 bit-rotate, transpose, all-to-all-shift"
            )),
            PatternKind::AdversarialGroup => Err(no_groups(network)),
            // Id-based maps read only the server id, so a one-dimensional row of `servers` switches
            // with one server each is the same map.
            _ => Pattern::new(kind, &[servers as usize], 1, seed),
        }
    }

    /// [`PatternKind::AdversarialGroup`] on `servers` servers in groups of `group` consecutive ids
    /// (the servers of a group's switches).
    pub fn next_group(servers: u64, group: u64) -> Result<Pattern, String> {
        if group == 0 || !servers.is_multiple_of(group) || servers / group < 2 || servers > 1 << 32 {
            return Err(format!(
                "adversarial-group needs at least 2 groups of equal size and at most 2^32 servers, got {servers} servers \
                 in groups of {group}"
            ));
        }
        Ok(Pattern {
            kind: PatternKind::AdversarialGroup,
            servers,
            servers_per_switch: 1,
            sides: vec![servers as u32],
            strides: vec![1],
            map: Map::NextGroup { group, groups: servers / group },
        })
    }

    /// Destination server for a packet generated by server `src` (`src < N`), as its first packet
    /// ([`Pattern::destination_nth`] with `k = 0`; only the all-to-all shift reads `k`).
    #[inline]
    pub fn destination(&self, src: u32, rng: &mut Rng) -> u32 {
        self.destination_nth(src, 0, rng)
    }

    /// Destination server for the `k`-th packet (from 0) generated by server `src` (`src < N`). Only
    /// `Uniform` and the group pattern draw from `rng` (the stream of the source switch); all others
    /// leave `rng` untouched, and only the all-to-all shift reads `k`.
    ///
    /// Uniform and the shift never return `src` (SurePath section 4: "among the other servers"); the
    /// fixed maps may (random server permutation, and the centre of odd-sided dimension complement
    /// reverse), and the simulator then delivers the packet through the local switch.
    #[inline]
    pub fn destination_nth(&self, src: u32, k: u64, rng: &mut Rng) -> u32 {
        debug_assert!((src as u64) < self.servers, "server {src} out of range (N = {})", self.servers);
        match &self.map {
            Map::Uniform { servers } => {
                // Uniform in 0..N-1, then skip src: uniform over the N-1 other servers without rejection.
                let r = below(rng, servers - 1) as u32;
                r + (r >= src) as u32
            }
            Map::UniformLive { ids, rank } => {
                let r = below(rng, ids.len() as u64 - 1) as u32;
                ids[(r + (r >= rank[src as usize]) as u32) as usize]
            }
            Map::Table(perm) => perm[src as usize],
            Map::Shift { servers, message } => shift(src as u64, k, *message, *servers) as u32,
            Map::ShiftLive { ids, rank, message } => {
                debug_assert!(rank[src as usize] != u32::MAX, "dead server {src} generated a packet");
                ids[shift(rank[src as usize] as u64, k, *message, ids.len() as u64) as usize]
            }
            Map::Active { inner, ids, rank } => {
                debug_assert!(rank[src as usize] != u32::MAX, "inactive server {src} generated a packet");
                ids[inner.destination_nth(rank[src as usize], k, rng) as usize]
            }
            Map::NextGroup { group, groups } => {
                let next = (src as u64 / group + 1) % groups;
                (next * group + below(rng, *group)) as u32
            }
            Map::ReverseComplement => {
                let t = self.servers_per_switch;
                let (sw, w) = (src / t, src % t);
                let l = self.sides.len();
                let mut dst = 0u64;
                for d in 0..l {
                    let e = l - 1 - d;
                    let x = (sw as u64 / self.strides[e]) as u32 % self.sides[e];
                    // sides[d] == sides[e], checked in new.
                    dst += (self.sides[e] - 1 - x) as u64 * self.strides[d];
                }
                dst as u32 * t + w
            }
            Map::ReverseComplement2D { s0, s1 } => {
                let t = self.servers_per_switch;
                let (sw, w) = (src / t, src % t);
                let (x, y) = (sw % s0, sw / s0);
                // (w, x, y) -> (ȳ, x̄, w̄), with T == S_1.
                let (nw, nx, ny) = (s1 - 1 - y, s0 - 1 - x, t - 1 - w);
                (nx + s0 * ny) * t + nw
            }
            Map::Rpn { k } => {
                let t = self.servers_per_switch;
                let (sw, w) = (src / t, src % t);
                let k = *k;
                let (x0, x1, x2) = (sw % k, (sw / k) % k, sw / (k * k));
                let g = (x0 & 1) | (x1 & 1) << 1 | (x2 & 1) << 2;
                let h = RPN_NEXT[g as usize];
                // Replace the low bit of each coordinate by the successor's (stays in the pair {2a, 2a+1}).
                let (y0, y1, y2) = ((x0 & !1) | (h & 1), (x1 & !1) | (h >> 1 & 1), (x2 & !1) | (h >> 2));
                (y0 + k * (y1 + k * y2)) * t + w
            }
            Map::BitComplement { mask } => !src & mask,
            Map::BitReverse { bits } => {
                if *bits == 0 {
                    0
                } else {
                    src.reverse_bits() >> (32 - bits)
                }
            }
            Map::BitRotate { bits } => {
                if *bits == 0 {
                    0
                } else {
                    (src >> 1) | ((src & 1) << (bits - 1))
                }
            }
            Map::Transpose { half, mask } => {
                if *half == 0 {
                    src
                } else {
                    ((src << half) | (src >> half)) & mask
                }
            }
            Map::Swap2 { s0, s1 } => {
                let t = self.servers_per_switch;
                let (sw, w) = (src / t, src % t);
                let dst_sw = if src.is_multiple_of(2) {
                    let x0 = sw % s0;
                    sw - x0 + (x0 + s0 / 2) % s0
                } else {
                    let x1 = (sw / s0) % s1;
                    sw - x1 * s0 + ((x1 + s1 / 2) % s1) * s0
                };
                dst_sw * t + w
            }
        }
    }

    /// The kind this pattern was built from.
    pub fn kind(&self) -> PatternKind {
        self.kind
    }

    /// Number of servers `N` of the network the pattern was built for.
    pub fn servers(&self) -> u64 {
        self.servers
    }

    /// True if the pattern is a permutation of servers (every server receives from exactly one): all patterns
    /// except Uniform. SurePath section 4 and HyperX section 4.1 define these as permutations; each map here
    /// is a bijection under the constraints checked by [`Pattern::new`].
    pub fn is_permutation(&self) -> bool {
        match &self.map {
            Map::Active { inner, .. } => inner.is_permutation(),
            m => !matches!(
                m,
                Map::Uniform { .. }
                    | Map::UniformLive { .. }
                    | Map::NextGroup { .. }
                    | Map::Shift { .. }
                    | Map::ShiftLive { .. }
            ),
        }
    }

    /// Whether [`Pattern::destination_nth`] reads `k` (the all-to-all shift): then the simulator
    /// counts each server's packets; other patterns need no such state.
    pub fn reads_packet_index(&self) -> bool {
        match &self.map {
            Map::Shift { .. } | Map::ShiftLive { .. } => true,
            Map::Active { inner, .. } => inner.reads_packet_index(),
            _ => false,
        }
    }

    /// All-to-all shift: `m` packets per message (per step of the exchange), at least 1
    /// (`traffic.shift_message_packets`). Other patterns are unchanged.
    pub fn set_message_packets(&mut self, m: u64) {
        assert!(m >= 1, "a message has at least one packet");
        match &mut self.map {
            Map::Shift { message, .. } | Map::ShiftLive { message, .. } => *message = m,
            Map::Active { inner, .. } => inner.set_message_packets(m),
            _ => {}
        }
    }

    /// Whether server `v` takes part in the traffic: every server, except with a pattern built by
    /// [`Pattern::on_active`], where only the active ones do.
    pub fn is_active(&self, v: u32) -> bool {
        match &self.map {
            Map::Active { rank, .. } => rank[v as usize] != u32::MAX,
            _ => true,
        }
    }

    /// Instantiates `kind` on the active servers `ids` (global ids in increasing order, at least 2, all
    /// below `servers`) of a network of `servers` servers (`traffic.active_servers`, see
    /// [`crate::traffic::active_servers`]). The pattern is defined on the ranks `0..M` (`M = ids.len()`):
    /// rank `i` is the server `ids[i]`, and a packet of rank `i` goes to rank `p(i)`, where `p` is the
    /// pattern by server id on `M` servers ([`Pattern::on_servers`]). So bit complement sends rank `i`
    /// to rank `M-1-i`, and uniform and the random server permutation stay among the active servers.
    ///
    /// This is how the HyperX paper (Ahn et al., SC09, section 4.1) can run its bit patterns on the
    /// beta = 0.25 HyperX of Fig. 7: "N = 4096" processors on a network of 4802 server ports, the bit
    /// patterns being defined on the `log2 N` bits of the processor number, not on a port.
    ///
    /// The HyperX-coordinate patterns (dimension complement reverse, regular permutation to
    /// neighbour, Swap2) are errors: they map a server to a server of a switch chosen by coordinates
    /// with the same local index, which an uneven subset need not contain (Swap2's "even-numbered
    /// servers" would also change meaning with the numbering). The group pattern is an error too.
    /// Bit complement, bit reverse and bit rotate need `M` a power of two, transpose `M = 2^b` with `b`
    /// even. Errors are Strings for the key `traffic.active_servers`.
    pub fn on_active(kind: PatternKind, ids: Vec<u32>, servers: u64, seed: u64) -> Result<Pattern, String> {
        let m = ids.len() as u64;
        match kind {
            PatternKind::DimensionComplementReverse
            | PatternKind::RegularPermutationToNeighbour
            | PatternKind::Swap2
            | PatternKind::AdversarialGroup => {
                return Err(format!(
                    "all servers ({servers}) with {kind}, which maps servers by switch coordinates or groups and \
                     is not defined on a subset; patterns by rank work on the active servers: uniform, \
                     random-server-permutation, bit-complement, bit-reverse, bit-rotate, transpose, all-to-all-shift"
                ));
            }
            PatternKind::BitComplement | PatternKind::BitReverse | PatternKind::BitRotate if !m.is_power_of_two() => {
                return Err(format!("a power of two for {kind} (at most {servers}, the servers of the network)"));
            }
            PatternKind::Transpose if !(m.is_power_of_two() && m.trailing_zeros().is_multiple_of(2)) => {
                return Err(format!(
                    "a power of two 2^b with b even for transpose (4^k: 4, 16, .., 4096; at most {servers})"
                ));
            }
            _ => {}
        }
        let inner = Pattern::on_servers(kind, m, "the active servers", seed)?;
        let mut rank = vec![u32::MAX; servers as usize];
        for (i, &v) in ids.iter().enumerate() {
            rank[v as usize] = i as u32;
        }
        Ok(Pattern {
            kind,
            servers,
            servers_per_switch: 1,
            sides: vec![servers as u32],
            strides: vec![1],
            map: Map::Active { inner: Box::new(inner), ids, rank },
        })
    }

    /// Define the pattern over the live servers only (`live[v]`; at least 2 live, checked by the
    /// caller) when faults killed some: uniform draws among the other live servers; the random
    /// server permutation becomes a random permutation of the live servers under the same `seed`
    /// (dead servers map to themselves and never send); the all-to-all shift walks the live servers'
    /// ranks (dead servers are skipped, as if absent). The other permutations are fixed maps and
    /// stay as they are; the caller silences a live server whose image is dead.
    pub fn restrict_to_live(&mut self, live: &[bool], seed: u64) {
        if live.iter().all(|&l| l) {
            return;
        }
        let ids: Vec<u32> = (0..live.len() as u32).filter(|&v| live[v as usize]).collect();
        let ranks = |ids: &[u32]| {
            let mut rank = vec![u32::MAX; live.len()];
            for (i, &v) in ids.iter().enumerate() {
                rank[v as usize] = i as u32;
            }
            rank
        };
        match &mut self.map {
            Map::Uniform { .. } => {
                let rank = ranks(&ids);
                self.map = Map::UniformLive { ids, rank };
            }
            Map::Shift { message, .. } => {
                let (rank, message) = (ranks(&ids), *message);
                self.map = Map::ShiftLive { ids, rank, message };
            }
            Map::Table(perm) => {
                let mut shuffled = ids.clone();
                let mut rng = stream(seed, 0, Purpose::Global);
                shuffle(&mut rng, &mut shuffled);
                for (v, p) in perm.iter_mut().enumerate() {
                    *p = v as u32;
                }
                for (&v, &w) in ids.iter().zip(&shuffled) {
                    perm[v as usize] = w;
                }
            }
            _ => {}
        }
    }
}

/// All-to-all shift on `n >= 2` ranks: the rank that rank `r` sends its `k`-th packet to, with `m`
/// packets per message: step `(k / m) mod (n-1)` of the walk `r+1, r+2, .., r+n-1` (mod `n`), which
/// skips `r` itself. u64: `r + 1 + step` may pass 2^32.
#[inline]
fn shift(r: u64, k: u64, m: u64, n: u64) -> u64 {
    (r + 1 + (k / m) % (n - 1)) % n
}

/// The error of the group pattern on a topology without groups.
fn no_groups(network: &str) -> String {
    format!(
        "adversarial-group sends every group to the next group (DAVC section 7.1), and {network} has no groups; \
         it needs topology.kind = \"dragonfly\", or traffic.group_switches (switches per group) elsewhere"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng() -> Rng {
        stream(99, 5, Purpose::Traffic)
    }

    fn pat(kind: PatternKind, sides: &[usize], t: usize) -> Pattern {
        Pattern::new(kind, sides, t, 42).unwrap_or_else(|e| panic!("{kind} on {sides:?} T={t}: {e}"))
    }

    fn map_all(p: &Pattern) -> Vec<u32> {
        let mut r = rng();
        (0..p.servers()).map(|s| p.destination(s as u32, &mut r)).collect()
    }

    /// Server id from (switch coordinates, local index).
    fn server(sides: &[usize], t: usize, coords: &[usize], w: usize) -> u32 {
        let mut sw = 0;
        for d in (0..sides.len()).rev() {
            sw = sw * sides[d] + coords[d];
        }
        (sw * t + w) as u32
    }

    /// (switch coordinates, local index) of a server.
    fn coords(sides: &[usize], t: usize, s: u32) -> (Vec<usize>, usize) {
        let s = s as usize;
        let (mut sw, w) = (s / t, s % t);
        let mut c = Vec::new();
        for &k in sides {
            c.push(sw % k);
            sw /= k;
        }
        (c, w)
    }

    fn assert_bijection(p: &Pattern) {
        let img = map_all(p);
        let n = p.servers() as usize;
        let mut seen = vec![false; n];
        for (s, &d) in img.iter().enumerate() {
            assert!((d as usize) < n, "{}: {s} -> {d} out of range", p.kind());
            assert!(!seen[d as usize], "{}: {d} hit twice", p.kind());
            seen[d as usize] = true;
        }
    }

    #[test]
    fn adversarial_group_sends_to_the_next_group() {
        // 4 groups of 6 servers: group g draws in group g + 1, the last in group 0.
        let p = Pattern::next_group(24, 6).unwrap();
        assert!(!p.is_permutation());
        let mut r = rng();
        let mut hit = [false; 24];
        for _ in 0..50 {
            for src in 0..24u32 {
                let d = p.destination(src, &mut r);
                assert_eq!(d / 6, (src / 6 + 1) % 4, "{src} -> {d}");
                hit[d as usize] = true;
            }
        }
        assert!(hit.iter().all(|&h| h), "every server of the next group is drawn");
        let e = Pattern::on_servers(PatternKind::AdversarialGroup, 24, "Torus 4x6", 1).unwrap_err();
        assert!(e.contains("Torus 4x6") && e.contains("no groups"), "{e}");
        assert!(Pattern::next_group(24, 24).is_err());
    }

    #[test]
    fn names_round_trip() {
        for (k, name) in PatternKind::ALL.iter().zip(PatternKind::ALL.map(|k| k.name())) {
            assert_eq!(k.name(), name);
            assert_eq!(k.to_string(), name);
            assert_eq!(name.parse::<PatternKind>().unwrap(), *k);
        }
    }

    #[test]
    fn unknown_name_lists_allowed_values() {
        let e = "bitcomplement".parse::<PatternKind>().unwrap_err();
        assert!(e.contains("bitcomplement"), "{e}");
        for k in PatternKind::ALL {
            assert!(e.contains(k.name()), "{e}");
        }
        assert!("Uniform".parse::<PatternKind>().is_err());
    }

    #[test]
    fn uniform_never_returns_src_and_is_roughly_uniform() {
        // 3x3 with 2 servers: N = 18, 17 possible destinations per source.
        let p = pat(PatternKind::Uniform, &[3, 3], 2);
        assert!(!p.is_permutation());
        let mut r = rng();
        let n = 18u32;
        let draws = 17_000u32;
        for src in 0..n {
            let mut c = vec![0u32; n as usize];
            for _ in 0..draws {
                let d = p.destination(src, &mut r);
                assert_ne!(d, src);
                c[d as usize] += 1;
            }
            assert_eq!(c[src as usize], 0);
            let e = draws as f64 / (n - 1) as f64;
            let chi2: f64 = (0..n).filter(|&d| d != src).map(|d| (c[d as usize] as f64 - e).powi(2) / e).sum();
            // 16 degrees of freedom: P(chi2 > 45) is about 1e-4.
            assert!(chi2 < 45.0, "src {src}: chi2 {chi2}, counts {c:?}");
        }
    }

    #[test]
    fn uniform_reaches_both_ends() {
        let p = pat(PatternKind::Uniform, &[2], 1);
        let mut r = rng();
        for _ in 0..100 {
            assert_eq!(p.destination(0, &mut r), 1);
            assert_eq!(p.destination(1, &mut r), 0);
        }
    }

    #[test]
    fn fixed_maps_do_not_draw() {
        use PatternKind::{AdversarialGroup, AllToAllShift, Uniform};
        for k in PatternKind::ALL.into_iter().filter(|&k| ![Uniform, AdversarialGroup, AllToAllShift].contains(&k)) {
            let p = pat(k, &[4, 4, 4], 4);
            assert!(p.is_permutation());
            assert!(!p.reads_packet_index(), "{k}");
            let mut r = rng();
            for s in 0..256 {
                p.destination(s, &mut r);
            }
            assert_eq!(r, rng(), "{k} drew from the rng");
        }
    }

    #[test]
    fn permutations_are_bijections() {
        let nets: [(&[usize], usize); 7] =
            [(&[4, 4, 4], 4), (&[4, 4], 4), (&[8, 8, 8], 8), (&[8, 8, 8], 1), (&[2, 4, 2], 2), (&[8, 4], 4), (&[4], 4)];
        let mut checked = 0;
        for (sides, t) in nets {
            for k in PatternKind::ALL {
                if let Ok(p) = Pattern::new(k, sides, t, 7) {
                    assert_eq!(p.kind(), k);
                    if p.is_permutation() {
                        assert_bijection(&p);
                        checked += 1;
                    }
                }
            }
        }
        // 4x4x4/4 and 8x8x8/8: all 7 fixed maps; the rest a subset.
        assert!(checked >= 20, "{checked}");
        for k in
            PatternKind::ALL.into_iter().filter(|&k| k != PatternKind::Uniform && k != PatternKind::AdversarialGroup)
        {
            assert!(Pattern::new(k, &[4, 4, 4], 4, 7).is_ok(), "{k}");
            assert!(Pattern::new(k, &[8, 8, 8], 8, 7).is_ok(), "{k}");
        }
    }

    #[test]
    fn random_server_permutation_depends_only_on_seed() {
        let a = map_all(&Pattern::new(PatternKind::RandomServerPermutation, &[4, 4, 4], 4, 1).unwrap());
        let b = map_all(&Pattern::new(PatternKind::RandomServerPermutation, &[4, 4, 4], 4, 1).unwrap());
        let c = map_all(&Pattern::new(PatternKind::RandomServerPermutation, &[4, 4, 4], 4, 2).unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Not the identity, and (statistically) spread over the network.
        let moved = a.iter().enumerate().filter(|&(s, &d)| s as u32 != d).count();
        assert!(moved > 240, "{moved}");
        // The global stream, shuffled with Fisher-Yates.
        let mut expect: Vec<u32> = (0..256).collect();
        shuffle(&mut stream(1, 0, Purpose::Global), &mut expect);
        assert_eq!(a, expect);
    }

    #[test]
    fn dcr_3d_example_and_involution() {
        let sides = [8, 8, 8];
        let p = pat(PatternKind::DimensionComplementReverse, &sides, 8);
        let mut r = rng();
        for w in 0..8 {
            let d = p.destination(server(&sides, 8, &[1, 2, 3], w), &mut r);
            assert_eq!(d, server(&sides, 8, &[4, 5, 6], w));
        }
        for s in 0..p.servers() as u32 {
            let d = p.destination(s, &mut r);
            let (c, w) = coords(&sides, 8, s);
            assert_eq!(coords(&sides, 8, d), (vec![7 - c[2], 7 - c[1], 7 - c[0]], w));
            assert_eq!(p.destination(d, &mut r), s);
            assert_ne!(d, s, "no fixed point with even k");
        }
    }

    #[test]
    fn dcr_3d_middle_side_may_differ() {
        let sides = [4, 6, 4];
        let p = pat(PatternKind::DimensionComplementReverse, &sides, 2);
        let mut r = rng();
        let d = p.destination(server(&sides, 2, &[0, 1, 3], 1), &mut r);
        assert_eq!(d, server(&sides, 2, &[0, 4, 3], 1));
        assert_bijection(&p);
    }

    #[test]
    fn dcr_2d_example() {
        let sides = [4, 4];
        let p = pat(PatternKind::DimensionComplementReverse, &sides, 4);
        let mut r = rng();
        // (w=1, x=2, y=3) -> (ȳ, x̄, w̄) = (0, 1, 2).
        let d = p.destination(server(&sides, 4, &[2, 3], 1), &mut r);
        assert_eq!(coords(&sides, 4, d), (vec![1, 2], 0));
        for s in 0..64 {
            let d = p.destination(s, &mut r);
            let (c, w) = coords(&sides, 4, s);
            assert_eq!(coords(&sides, 4, d), (vec![3 - c[0], 3 - w], 3 - c[1]));
            assert_eq!(p.destination(d, &mut r), s);
        }
        // The paper's 16x16 with 16 servers per switch.
        assert_bijection(&pat(PatternKind::DimensionComplementReverse, &[16, 16], 16));
    }

    #[test]
    fn dcr_other_dimension_counts_reverse_and_complement() {
        let sides = [3, 5, 7, 3];
        let p = pat(PatternKind::DimensionComplementReverse, &[3, 5, 5, 3], 2);
        assert_bijection(&p);
        let mut r = rng();
        let s = server(&[3, 5, 5, 3], 2, &[0, 1, 4, 2], 1);
        assert_eq!(p.destination(s, &mut r), server(&[3, 5, 5, 3], 2, &[0, 0, 3, 2], 1));
        assert!(Pattern::new(PatternKind::DimensionComplementReverse, &sides, 2, 0).is_err());
        // 1-D: x -> k-1-x; the middle switch of an odd side is a fixed point.
        let p = pat(PatternKind::DimensionComplementReverse, &[5], 3);
        assert_eq!(p.destination(1, &mut r), 13);
        assert_eq!(p.destination(7, &mut r), 7);
        // Trailing sides of 1 make the last stride 2^32.
        let sides = [1, 1 << 16, 1 << 16, 1];
        let p = pat(PatternKind::DimensionComplementReverse, &sides, 1);
        let s = server(&sides, 1, &[0, 5, 7, 0], 0);
        assert_eq!(p.destination(s, &mut r), server(&sides, 1, &[0, (1 << 16) - 8, (1 << 16) - 6, 0], 0));
    }

    fn rpn_switch_map(k: usize) -> Vec<usize> {
        let p = pat(PatternKind::RegularPermutationToNeighbour, &[k, k, k], 1);
        map_all(&p).into_iter().map(|d| d as usize).collect()
    }

    #[test]
    fn rpn_cycle_is_hamiltonian_on_the_cube() {
        let mut v = 0;
        let mut seen = [false; 8];
        for _ in 0..8 {
            assert!(!seen[v as usize]);
            seen[v as usize] = true;
            let n = RPN_NEXT[v as usize];
            assert_eq!((v ^ n).count_ones(), 1, "{v} -> {n} is not a cube edge");
            v = n;
        }
        assert_eq!(v, 0);
    }

    #[test]
    fn rpn_sends_to_a_neighbour_in_the_same_small_cube() {
        let k = 8;
        let sides = [k, k, k];
        let t = 3;
        let p = pat(PatternKind::RegularPermutationToNeighbour, &sides, t);
        let mut r = rng();
        for s in 0..p.servers() as u32 {
            let d = p.destination(s, &mut r);
            let ((a, wa), (b, wb)) = (coords(&sides, t, s), coords(&sides, t, d));
            assert_eq!(wa, wb);
            assert_eq!((0..3).filter(|&i| a[i] != b[i]).count(), 1, "{a:?} -> {b:?}");
            assert!((0..3).all(|i| a[i] / 2 == b[i] / 2), "{a:?} -> {b:?} leaves its K_2^3");
            // Cycles of length exactly 8.
            let mut x = s;
            for step in 1..=8 {
                x = p.destination(x, &mut r);
                assert_eq!(x == s, step == 8);
            }
        }
        // Gray-code order on the low bits at the corner: (0,0,0) -> (1,0,0) -> (1,1,0).
        let m = rpn_switch_map(k);
        assert_eq!(m[0], 1);
        assert_eq!(m[1], 1 + k);
    }

    #[test]
    fn rpn_rows_hold_zero_or_half_k_disjoint_pairs() {
        for k in [2, 4, 8] {
            let m = rpn_switch_map(k);
            let c = |s: usize| [s % k, (s / k) % k, s / (k * k)];
            let mut nonempty = 0;
            for dim in 0..3 {
                let (o1, o2) = ((dim + 1) % 3, (dim + 2) % 3);
                for a in 0..k {
                    for b in 0..k {
                        // The row: all switches with coords o1 = a, o2 = b.
                        let in_row = |s: usize| c(s)[o1] == a && c(s)[o2] == b;
                        let pairs: Vec<(usize, usize)> =
                            (0..k * k * k).filter(|&s| in_row(s) && in_row(m[s])).map(|s| (s, m[s])).collect();
                        assert!(pairs.is_empty() || pairs.len() == k / 2, "k {k} dim {dim} row {a},{b}: {pairs:?}");
                        let mut ends: Vec<usize> = pairs.iter().flat_map(|&(s, d)| [s, d]).collect();
                        ends.sort();
                        ends.dedup();
                        assert_eq!(ends.len(), 2 * pairs.len(), "pairs not disjoint: {pairs:?}");
                        nonempty += !pairs.is_empty() as usize;
                    }
                }
            }
            // Every pair lies in exactly one row: k^3 pairs / (k/2 per row).
            assert_eq!(nonempty, 2 * k * k);
        }
    }

    #[test]
    fn bit_patterns_examples() {
        // 4x4x4 with 4 servers: N = 256, 8 bits.
        let sides = [4, 4, 4];
        let mut r = rng();
        let bc = pat(PatternKind::BitComplement, &sides, 4);
        assert_eq!(bc.destination(0, &mut r), 255);
        assert_eq!(bc.destination(0b1010_0001, &mut r), 0b0101_1110);
        let br = pat(PatternKind::BitReverse, &sides, 4);
        assert_eq!(br.destination(1, &mut r), 128);
        assert_eq!(br.destination(0b1100_0010, &mut r), 0b0100_0011);
        let tr = pat(PatternKind::Transpose, &sides, 4);
        assert_eq!(tr.destination(0b0001_0010, &mut r), 0b0010_0001);
        assert_eq!(tr.destination(0b1111_0000, &mut r), 0b0000_1111);
        for s in 0..256 {
            for p in [&bc, &br, &tr] {
                assert_eq!(p.destination(p.destination(s, &mut r), &mut r), s, "{} not an involution", p.kind());
            }
        }
        // Bit rotation (Dally and Towles Table 3.2): d_i = s_{i+1 mod b}, a permutation of order b.
        let rot = pat(PatternKind::BitRotate, &sides, 4);
        assert_eq!(rot.destination(1, &mut r), 128);
        assert_eq!(rot.destination(0b1100_0010, &mut r), 0b0110_0001);
        let mut seen = vec![false; 256];
        for s in 0..256 {
            let mut d = s;
            for _ in 0..8 {
                d = rot.destination(d, &mut r);
            }
            assert_eq!(d, s, "eight rotations of 8 bits are the identity");
            seen[rot.destination(s, &mut r) as usize] = true;
        }
        assert!(seen.iter().all(|&x| x), "a permutation");
        // The HyperX paper's network: 8x8x8, T = 8, N = 4096.
        let tr = pat(PatternKind::Transpose, &[8, 8, 8], 8);
        assert_eq!(tr.destination(0x03f, &mut r), 0xfc0);
        // Degenerate N = 1.
        for k in [PatternKind::BitComplement, PatternKind::BitReverse, PatternKind::Transpose] {
            assert_eq!(pat(k, &[1], 1).destination(0, &mut r), 0);
        }
        // Largest network: N = 2^32.
        let big = [1 << 16, 1 << 8];
        let br = pat(PatternKind::BitReverse, &big, 1 << 8);
        assert_eq!(br.destination(1, &mut r), 1 << 31);
        let tr = pat(PatternKind::Transpose, &big, 1 << 8);
        assert_eq!(tr.destination(0x1234_5678, &mut r), 0x5678_1234);
        let bc = pat(PatternKind::BitComplement, &big, 1 << 8);
        assert_eq!(bc.destination(0, &mut r), u32::MAX);
    }

    #[test]
    fn swap2_moves_half_way_in_dimension_0_or_1() {
        for (sides, t) in [(vec![4usize, 4, 4], 4usize), (vec![8, 4], 3), (vec![4, 6, 3], 5), (vec![6, 2], 2)] {
            let p = pat(PatternKind::Swap2, &sides, t);
            let mut r = rng();
            for s in 0..p.servers() as u32 {
                let d = p.destination(s, &mut r);
                let ((a, wa), (b, wb)) = (coords(&sides, t, s), coords(&sides, t, d));
                assert_eq!(wa, wb);
                let dim = (s % 2) as usize;
                let mut expect = a.clone();
                expect[dim] = (a[dim] + sides[dim] / 2) % sides[dim];
                assert_eq!(b, expect, "{sides:?} T={t}: {s}");
                assert_eq!(d % 2, s % 2);
                assert_eq!(p.destination(d, &mut r), s, "not an involution");
            }
            assert_bijection(&p);
        }
    }

    /// Every destination of the first `packets` packets of each source, in generation order.
    fn shift_walks(p: &Pattern, sources: impl Iterator<Item = u32>, packets: u64) -> Vec<(u32, Vec<u32>)> {
        let mut r = rng();
        let walks = sources.map(|s| (s, (0..packets).map(|k| p.destination_nth(s, k, &mut r)).collect())).collect();
        assert_eq!(r, rng(), "the shift drew from the rng");
        walks
    }

    /// The Nue paper's exchange (Zahavi et al.): in step i = 1..N-1 server s sends to (s + i) mod N.
    /// With m packets per message, packet k belongs to step k / m + 1.
    #[test]
    fn all_to_all_shift_is_the_shift_order_then_starts_over() {
        let n = 12u32; // 3x2 switches, 2 servers each
        for m in [1u64, 3] {
            let mut p = pat(PatternKind::AllToAllShift, &[3, 2], 2);
            p.set_message_packets(m);
            assert!(!p.is_permutation());
            assert!(p.reads_packet_index());
            for (s, walk) in shift_walks(&p, 0..n, 2 * (n as u64 - 1) * m) {
                for (k, &d) in walk.iter().enumerate() {
                    let step = (k as u64 / m) % (n as u64 - 1) + 1;
                    assert_eq!(d, (s + step as u32) % n, "m {m}: packet {k} of {s}");
                }
                // One full exchange: m packets to every other server, none to itself.
                let full = &walk[..((n as u64 - 1) * m) as usize];
                let mut count = vec![0u64; n as usize];
                full.iter().for_each(|&d| count[d as usize] += 1);
                for (d, &c) in count.iter().enumerate() {
                    assert_eq!(c, if d as u32 == s { 0 } else { m }, "m {m}: {s} -> {d}");
                }
                // Then it starts over with step 1.
                assert_eq!(walk[full.len()], (s + 1) % n);
            }
        }
        // Two servers: each sends only to the other.
        let p = pat(PatternKind::AllToAllShift, &[2], 1);
        assert_eq!(shift_walks(&p, 0..2, 3), vec![(0, vec![1, 1, 1]), (1, vec![0, 0, 0])]);
        assert!(Pattern::new(PatternKind::AllToAllShift, &[1], 1, 0).unwrap_err().contains("at least 2 servers"));
    }

    #[test]
    fn all_to_all_shift_in_each_step_is_a_permutation() {
        // Every server at the same step k: the map s -> dst is a bijection (each server receives once).
        let p = pat(PatternKind::AllToAllShift, &[4, 4], 3);
        let n = p.servers() as u32;
        let mut r = rng();
        for k in 0..(n as u64 - 1) {
            let mut seen = vec![false; n as usize];
            for s in 0..n {
                let d = p.destination_nth(s, k, &mut r);
                assert!(!seen[d as usize], "step {k}: {d} hit twice");
                seen[d as usize] = true;
            }
        }
    }

    #[test]
    fn all_to_all_shift_skips_dead_servers() {
        // 10 servers, 3, 4 and 8 dead: the live ranks are 0 1 2 5 6 7 9 -> 0..7.
        let mut p = Pattern::on_servers(PatternKind::AllToAllShift, 10, "a ring", 1).unwrap();
        p.set_message_packets(2);
        let live: Vec<bool> = (0..10).map(|v| ![3, 4, 8].contains(&v)).collect();
        p.restrict_to_live(&live, 1);
        let ids: Vec<u32> = (0..10).filter(|&v| live[v as usize]).collect();
        let l = ids.len();
        for (i, &s) in ids.iter().enumerate() {
            let (_, walk) = shift_walks(&p, std::iter::once(s), 2 * (l as u64 - 1)).remove(0);
            let expect: Vec<u32> = (1..l).flat_map(|step| [ids[(i + step) % l]; 2]).collect();
            assert_eq!(walk, expect, "from {s}");
        }
    }

    #[test]
    fn all_to_all_shift_on_active_servers_walks_their_ranks() {
        let ids = vec![1u32, 4, 6, 7, 11];
        let mut p = Pattern::on_active(PatternKind::AllToAllShift, ids.clone(), 12, 1).unwrap();
        p.set_message_packets(1);
        let walks = shift_walks(&p, ids.iter().copied(), 4);
        assert_eq!(walks[0], (1, vec![4, 6, 7, 11]));
        assert_eq!(walks[3], (7, vec![11, 1, 4, 6]));
    }

    #[test]
    fn error_cases_say_which_constraint_failed() {
        use PatternKind::*;
        let err = |k, sides: &[usize], t| Pattern::new(k, sides, t, 0).unwrap_err();
        let cases: Vec<(String, &[&str])> = vec![
            (err(Uniform, &[], 4), &["at least one dimension"]),
            (err(Uniform, &[4, 0], 4), &["side 1 = 0"]),
            (err(Uniform, &[4, 4], 0), &["at least 1 server per switch"]),
            (err(Uniform, &[1], 1), &["uniform", "at least 2 servers"]),
            (err(RandomServerPermutation, &[1 << 16, 1 << 16], 2), &["2^32"]),
            (err(Uniform, &[usize::MAX, 4], 1), &["2^32"]),
            (err(DimensionComplementReverse, &[8, 8, 4], 2), &["dimension-complement-reverse", "8 and 4"]),
            (err(DimensionComplementReverse, &[4, 4], 8), &["servers per switch == side 1", "8 servers"]),
            (err(RegularPermutationToNeighbour, &[4, 4], 2), &["regular-permutation-to-neighbour", "3-D"]),
            (err(RegularPermutationToNeighbour, &[4, 4, 8], 2), &["all sides equal and even", "4x4x8"]),
            (err(RegularPermutationToNeighbour, &[5, 5, 5], 2), &["even", "5x5x5"]),
            (err(BitComplement, &[16, 16, 16], 3), &["bit-complement", "power-of-two number of servers", "12288"]),
            (err(BitReverse, &[6, 4], 4), &["bit-reverse", "power-of-two", "96"]),
            (err(Transpose, &[6, 4], 4), &["transpose", "power-of-two"]),
            (err(Transpose, &[4, 4, 4], 2), &["transpose", "b even", "2^7"]),
            (err(Swap2, &[8], 8), &["swap2", "at least 2 dimensions"]),
            (err(Swap2, &[4, 5], 2), &["swap2", "even sides", "4x5"]),
            (err(Swap2, &[6, 4], 3), &["swap2", "multiple of 4", "3 servers"]),
        ];
        for (e, needles) in cases {
            for n in needles {
                assert!(e.contains(n), "`{e}` should mention `{n}`");
            }
        }
    }
}
