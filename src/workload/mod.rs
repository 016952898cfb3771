//! Workloads with causal dependencies: tasks running programs of `send`, `recv` and `calc`
//! operations, each started when the operations it requires have completed (or started), as in
//! LogGOPSim's GOAL schedules (Hoefler, Schneider and Lumsdaine, "LogGOPSim: simulating
//! large-scale applications in the LogGOPS model", HPDC 2010, and "Group Operation Assembly
//! Language", the format of its schedule generator Schedgen).
//!
//! A workload comes from a built-in kernel ([`kernels`]: the DAVC paper's application kernels and
//! MPI collectives) or from a GOAL file ([`goal`]); either way it is compiled by a [`Builder`] into
//! one read-only [`Workload`]: flat arrays of operations per task, each receive paired with the
//! send it matches, and the dependents of every operation. The network model runs it (one task
//! per server, `crate::network`'s task engine); this module knows nothing of networks.
//!
//! **Matching.** MPI matches a receive by (source, tag), in order: of the messages from one source
//! with one tag, the first sent is the first received (MPI 4.0, section 3.5, "Order"). With the
//! order of both sides taken as program order (the order the operations are listed in a task's
//! program), the pairs are known before the run: the `k`-th send from task `a` to task `b` with tag
//! `g` is received by the `k`-th receive of `b` from `a` with tag `g`. So the pairing is resolved
//! once, here, and a receive that no send matches is bad input, found before anything runs. (Where
//! two sends of one source and tag are independent, MPI's pairing depends on which is issued first;
//! program order fixes it, which keeps results independent of timing and layout.) Wildcard
//! receives (`MPI_ANY_SOURCE`) are not supported.

pub mod goal;
pub mod kernels;
pub mod replay;

use std::fmt;

/// Index of a task (an MPI rank of the workload), `0..tasks`.
pub type TaskId = u32;

/// An operation's index in its task's program.
pub type OpIndex = u32;

/// Bit of a dependent's entry that marks an "independent requires" (GOAL's `irequires`): the
/// dependent waits for the operation to start, not to complete.
pub const ON_START: u32 = 1 << 31;

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OpKind {
    /// Send `arg` bytes to task `peer`.
    Send,
    /// Receive the message of task `peer` that the matching send sends.
    Recv,
    /// Compute for `arg` cycles.
    Calc,
}

/// One operation of a compiled workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// Bytes (send and receive) or cycles (calc).
    pub arg: u64,
    /// The other task (send and receive); 0 for calc.
    pub peer: TaskId,
    /// The matching operation's index in `peer`'s program: a send's receive, a receive's send.
    pub partner: OpIndex,
    /// Operations this one requires (completion or start).
    pub requires: u32,
    /// What it does.
    pub kind: OpKind,
}

/// A compiled workload: the programs of all tasks, with receives paired with their sends and the
/// dependents of every operation. Read only; shared by every partition of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    name: String,
    /// Task `t`'s operations are `ops[task_ops[t]..task_ops[t + 1]]`.
    task_ops: Vec<u64>,
    ops: Vec<Op>,
    /// Operation `i`'s dependents (indices in its task, [`ON_START`] set for "on start") are
    /// `dependents[dep_start[i]..dep_start[i + 1]]`.
    dep_start: Vec<u64>,
    dependents: Vec<u32>,
    /// Iterations of an iterative kernel (for the time per iteration), else `None`.
    iterations: Option<u32>,
}

impl Workload {
    /// What it is (the kernel and its sizes, or the GOAL file's name).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Number of tasks.
    pub fn tasks(&self) -> u32 {
        (self.task_ops.len() - 1) as u32
    }
    /// Number of operations over all tasks.
    pub fn total_ops(&self) -> u64 {
        self.ops.len() as u64
    }
    /// Operations of task `t`.
    pub fn ops_of(&self, t: TaskId) -> &[Op] {
        &self.ops[self.task_ops[t as usize] as usize..self.task_ops[t as usize + 1] as usize]
    }
    /// Operation `i` of task `t`.
    #[inline]
    pub fn op(&self, t: TaskId, i: OpIndex) -> &Op {
        &self.ops[self.task_ops[t as usize] as usize + i as usize]
    }
    /// Dependents of operation `i` of task `t`: indices in `t`'s program, with [`ON_START`] set on
    /// those that wait for it to start.
    #[inline]
    pub fn dependents(&self, t: TaskId, i: OpIndex) -> &[u32] {
        let g = self.task_ops[t as usize] as usize + i as usize;
        &self.dependents[self.dep_start[g] as usize..self.dep_start[g + 1] as usize]
    }
    /// Iterations of an iterative kernel.
    pub fn iterations(&self) -> Option<u32> {
        self.iterations
    }
    /// Messages (sends) over all tasks.
    pub fn messages(&self) -> u64 {
        self.ops.iter().filter(|o| o.kind == OpKind::Send).count() as u64
    }
    /// Bytes this workload takes in memory (what every rank of a run holds).
    pub fn bytes(&self) -> u64 {
        Self::bytes_for(self.tasks() as u64, self.ops.len() as u64, self.dependents.len() as u64)
    }
    /// Bytes a workload of `tasks` tasks, `ops` operations and `edges` dependencies takes in
    /// memory, compiled ([`Workload::bytes`]).
    pub fn bytes_for(tasks: u64, ops: u64, edges: u64) -> u64 {
        use std::mem::size_of;
        (tasks + 1) * 8 + ops * (size_of::<Op>() as u64 + 8) + edges * 4
    }
    /// Bytes of run-time state a run keeps per operation of a task on its servers
    /// (what is left to wait for and to send or receive).
    pub const RUN_BYTES_PER_OP: u64 = 8;
}

/// Why a workload could not be built: its position (file and line, or task and operation) and
/// what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    /// Where: `file:line`, or `task T, operation I`.
    pub at: String,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.what)
    }
}

impl std::error::Error for WorkloadError {}

/// Where an operation came from, for errors: a line of a file, or nothing (a kernel).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Origin {
    /// Line number (1-based), 0 when not from a file.
    pub line: u32,
}

/// A dependency under construction: operation `op` of task `task` waits for `on`.
#[derive(Debug, Clone, Copy)]
struct Edge {
    task: TaskId,
    op: OpIndex,
    on: OpIndex,
    on_start: bool,
}

/// Builds a [`Workload`] task by task: open task `t` with [`Builder::task`] (tasks in increasing
/// order, each at most once), add its operations (each returns its index in the task's program)
/// and dependencies, then [`Builder::finish`] pairs receives with sends and checks everything.
pub struct Builder {
    name: String,
    tasks: u32,
    file: Option<String>,
    /// Start of each task opened so far in `ops`, and one past: `task_ops[t]..task_ops[t + 1]`
    /// once task `t + 1` is opened or the workload finished.
    task_ops: Vec<u64>,
    ops: Vec<Op>,
    tags: Vec<u64>,
    lines: Vec<u32>,
    edges: Vec<Edge>,
    iterations: Option<u32>,
}

impl Builder {
    /// A workload of `tasks` tasks named `name`; `file`: the file it is read from (for errors).
    pub fn new(name: impl Into<String>, tasks: u32, file: Option<String>) -> Self {
        Builder {
            name: name.into(),
            tasks,
            file,
            task_ops: vec![0],
            ops: Vec::new(),
            tags: Vec::new(),
            lines: Vec::new(),
            edges: Vec::new(),
            iterations: None,
        }
    }

    /// Record the kernel's iteration count (the summary reports the time per iteration).
    pub fn set_iterations(&mut self, n: u32) {
        self.iterations = Some(n);
    }

    /// Start task `t`'s program. Tasks come in increasing order; one skipped has no operations.
    ///
    /// # Panics
    /// If `t` is not above the current task or not below the task count (a kernel's bug; a file's
    /// rank numbers are checked by its reader).
    pub fn task(&mut self, t: TaskId) {
        let current = self.task_ops.len() - 1;
        assert!(
            (t as usize > current || (t == 0 && self.ops.is_empty() && current == 0)) && t < self.tasks,
            "tasks in increasing order, below the task count"
        );
        while self.task_ops.len() - 1 < t as usize {
            self.task_ops.push(self.ops.len() as u64);
        }
    }

    fn current(&self) -> TaskId {
        (self.task_ops.len() - 1) as TaskId
    }

    fn push(&mut self, kind: OpKind, arg: u64, peer: TaskId, tag: u64, origin: Origin) -> OpIndex {
        let first = *self.task_ops.last().expect("task_ops starts with 0");
        let i = self.ops.len() as u64 - first;
        self.ops.push(Op { arg, peer, partner: u32::MAX, requires: 0, kind });
        self.tags.push(tag);
        self.lines.push(origin.line);
        i as OpIndex
    }

    /// Append `send(bytes to peer, tag)` to the current task.
    pub fn send(&mut self, peer: TaskId, bytes: u64, tag: u64, origin: Origin) -> OpIndex {
        self.push(OpKind::Send, bytes, peer, tag, origin)
    }
    /// Append `recv(bytes from peer, tag)` to the current task.
    pub fn recv(&mut self, peer: TaskId, bytes: u64, tag: u64, origin: Origin) -> OpIndex {
        self.push(OpKind::Recv, bytes, peer, tag, origin)
    }
    /// Append `calc(cycles)` to the current task.
    pub fn calc(&mut self, cycles: u64, origin: Origin) -> OpIndex {
        self.push(OpKind::Calc, cycles, 0, 0, origin)
    }
    /// Operation `op` of the current task starts once its operation `on` has completed
    /// (`on_start`: once it has started, GOAL's `irequires`).
    pub fn require(&mut self, op: OpIndex, on: OpIndex, on_start: bool) {
        let task = self.current();
        self.edges.push(Edge { task, op, on, on_start });
    }
    /// Operations of the current task so far.
    pub fn ops_in_task(&self) -> u32 {
        (self.ops.len() as u64 - self.task_ops.last().copied().unwrap_or(0)) as u32
    }

    fn locate(&self, t: TaskId, i: OpIndex) -> String {
        let g = self.task_ops.get(t as usize).map(|&b| b as usize + i as usize);
        let line = g.and_then(|g| self.lines.get(g)).copied().unwrap_or(0);
        match (&self.file, line) {
            (Some(f), l) if l > 0 => format!("{f}:{l}"),
            (Some(f), _) => format!("{f}: rank {t}, operation {i}"),
            (None, _) => format!("task {t}, operation {i}"),
        }
    }

    fn err(&self, t: TaskId, i: OpIndex, what: impl Into<String>) -> WorkloadError {
        WorkloadError { at: self.locate(t, i), what: what.into() }
    }

    /// Pair receives with sends, build the dependents and check the workload: peers are tasks
    /// other than the task itself, dependencies name operations of their task, no task's
    /// dependencies form a cycle, every receive is matched by a send and every send by a receive.
    pub fn finish(mut self) -> Result<Workload, WorkloadError> {
        while self.task_ops.len() <= self.tasks as usize {
            self.task_ops.push(self.ops.len() as u64);
        }
        let n_ops = self.ops.len();
        // The task of every operation (for the checks below; dropped after).
        let mut task_of = vec![0 as TaskId; n_ops];
        for t in 0..self.tasks as usize {
            task_of[self.task_ops[t] as usize..self.task_ops[t + 1] as usize].fill(t as TaskId);
        }
        let index = |g: usize| (g as u64 - self.task_ops[task_of[g] as usize]) as OpIndex;
        for (g, o) in self.ops.iter().enumerate() {
            let t = task_of[g];
            if o.kind != OpKind::Calc && (o.peer >= self.tasks || o.peer == t) {
                let what = if o.peer == t {
                    "a task cannot send to or receive from itself".to_string()
                } else {
                    format!("peer {} is not a task (there are {} tasks: 0 to {})", o.peer, self.tasks, self.tasks - 1)
                };
                return Err(self.err(t, index(g), what));
            }
        }
        // Pairing: sends keyed (destination, source, tag, program order), receives keyed (task,
        // source, tag, program order); the k-th of each key group pair up.
        let mut sends: Vec<(TaskId, TaskId, u64, u32)> = Vec::new();
        let mut recvs: Vec<(TaskId, TaskId, u64, u32)> = Vec::new();
        for (g, o) in self.ops.iter().enumerate() {
            match o.kind {
                OpKind::Send => sends.push((o.peer, task_of[g], self.tags[g], g as u32)),
                OpKind::Recv => recvs.push((task_of[g], o.peer, self.tags[g], g as u32)),
                OpKind::Calc => {}
            }
        }
        sends.sort_unstable();
        recvs.sort_unstable();
        // The first receive no send matches is reported before the first send no receive
        // matches (a trace's missing send is the likelier mistake to point at).
        let (mut i, mut j) = (0, 0);
        let (mut lone_send, mut lone_recv) = (None, None);
        while i < sends.len() || j < recvs.len() {
            let key = |x: &(TaskId, TaskId, u64, u32)| (x.0, x.1, x.2);
            use std::cmp::Ordering::*;
            let order = match (sends.get(i), recvs.get(j)) {
                (Some(s), Some(r)) => key(s).cmp(&key(r)),
                (Some(_), None) => Less,
                _ => Greater,
            };
            match order {
                Equal => {
                    let (sg, rg) = (sends[i].3 as usize, recvs[j].3 as usize);
                    self.ops[sg].partner = index(rg);
                    self.ops[rg].partner = index(sg);
                    i += 1;
                    j += 1;
                }
                Less => {
                    lone_send = lone_send.or(Some(sends[i]));
                    i += 1;
                }
                Greater => {
                    lone_recv = lone_recv.or(Some(recvs[j]));
                    j += 1;
                }
            }
        }
        if let Some(r) = lone_recv {
            let g = r.3 as usize;
            let what = format!("no send matches this receive from task {} with tag {}", r.1, r.2);
            return Err(self.err(task_of[g], index(g), what));
        }
        if let Some(s) = lone_send {
            let g = s.3 as usize;
            let what = format!("no receive matches this send to task {} with tag {}", s.0, s.2);
            return Err(self.err(task_of[g], index(g), what));
        }
        drop((sends, recvs));
        // Dependents, grouped by the operation they wait for (a counting sort on `on`).
        let mut count = vec![0u64; n_ops + 1];
        for e in &self.edges {
            let (b, n) =
                (self.task_ops[e.task as usize], self.task_ops[e.task as usize + 1] - self.task_ops[e.task as usize]);
            for x in [e.op, e.on] {
                if x as u64 >= n {
                    let first = if e.op as u64 >= n { e.on } else { e.op };
                    return Err(self.err(
                        e.task,
                        first.min(n.saturating_sub(1) as u32),
                        format!("a dependency names operation {x}, but rank {} has {n} operations", e.task),
                    ));
                }
            }
            if e.op == e.on {
                return Err(self.err(e.task, e.op, "an operation cannot require itself"));
            }
            count[(b + e.on as u64) as usize + 1] += 1;
            self.ops[(b + e.op as u64) as usize].requires += 1;
        }
        for g in 1..=n_ops {
            count[g] += count[g - 1];
        }
        let dep_start = count.clone();
        let mut dependents = vec![0u32; self.edges.len()];
        for e in &self.edges {
            let on = (self.task_ops[e.task as usize] + e.on as u64) as usize;
            dependents[count[on] as usize] = e.op | if e.on_start { ON_START } else { 0 };
            count[on] += 1;
        }
        drop(count);
        let w = Workload {
            name: self.name.clone(),
            task_ops: std::mem::take(&mut self.task_ops),
            ops: std::mem::take(&mut self.ops),
            dep_start,
            dependents,
            iterations: self.iterations,
        };
        if let Some((t, i)) = w.find_cycle() {
            self.task_ops = w.task_ops.clone();
            return Err(self.err(t, i, "the dependencies of this operation form a cycle"));
        }
        Ok(w)
    }
}

impl Workload {
    /// An operation on a dependency cycle within its task, if any (Kahn's algorithm per task; a
    /// start dependency counts as an edge too, as a start waits for the op's own requirements).
    fn find_cycle(&self) -> Option<(TaskId, OpIndex)> {
        let mut left: Vec<u32> = Vec::new();
        let mut ready: Vec<OpIndex> = Vec::new();
        for t in 0..self.tasks() {
            let ops = self.ops_of(t);
            left.clear();
            left.extend(ops.iter().map(|o| o.requires));
            ready.clear();
            ready.extend((0..ops.len() as u32).filter(|&i| left[i as usize] == 0));
            let mut done = 0;
            while let Some(i) = ready.pop() {
                done += 1;
                for &d in self.dependents(t, i) {
                    let d = (d & !ON_START) as usize;
                    left[d] -= 1;
                    if left[d] == 0 {
                        ready.push(d as u32);
                    }
                }
            }
            if done < ops.len() {
                let i = left.iter().position(|&l| l > 0).expect("an operation left") as OpIndex;
                return Some((t, i));
            }
        }
        None
    }

    /// Message packets: a message of `bytes` bytes is `ceil(bytes / phit_bytes)` phits, cut into
    /// packets of `packet_phits`; the last is padded to a whole packet (see docs/workloads.md:
    /// buffers and credits count whole packets, so a short last packet would hold a whole slot
    /// anyway), and an empty message is one packet (its arrival is what the receive waits for).
    pub fn packets(bytes: u64, phit_bytes: u64, packet_phits: u64) -> u64 {
        bytes.div_ceil(phit_bytes).div_ceil(packet_phits).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const O: Origin = Origin { line: 0 };

    /// A ping-pong: the pairing and the dependents are what the program says.
    #[test]
    fn a_ping_pong_pairs_and_chains() {
        let mut b = Builder::new("pp", 2, None);
        b.task(0);
        let s = b.send(1, 64, 7, O);
        let r = b.recv(1, 64, 7, O);
        b.require(r, s, false);
        b.task(1);
        let r1 = b.recv(0, 64, 7, O);
        let c = b.calc(10, O);
        let s1 = b.send(0, 64, 7, O);
        b.require(c, r1, false);
        b.require(s1, c, false);
        let w = b.finish().unwrap();
        assert_eq!(w.tasks(), 2);
        assert_eq!(w.total_ops(), 5);
        assert_eq!(w.op(0, s).partner, r1);
        assert_eq!(w.op(1, r1).partner, s);
        assert_eq!(w.op(1, s1).partner, r);
        assert_eq!(w.dependents(0, s), &[r]);
        assert_eq!(w.dependents(1, r1), &[c]);
        assert_eq!(w.dependents(1, c), &[s1]);
        assert_eq!(w.op(1, s1).requires, 1);
        assert_eq!(w.op(0, s).requires, 0);
        assert_eq!(w.messages(), 2);
    }

    /// Sends of one source and tag pair with receives in program order; other tags do not mix.
    #[test]
    fn matching_is_by_source_and_tag_in_program_order() {
        let mut b = Builder::new("m", 3, None);
        b.task(0);
        let a = b.send(2, 1, 5, O);
        let a2 = b.send(2, 2, 6, O);
        let a3 = b.send(2, 3, 5, O);
        b.task(1);
        let c = b.send(2, 4, 5, O);
        b.task(2);
        let r_c = b.recv(1, 4, 5, O);
        let r_a3 = {
            let x = b.recv(0, 1, 5, O);
            let y = b.recv(0, 3, 5, O);
            assert_eq!((x, y), (1, 2));
            y
        };
        let r_a2 = b.recv(0, 2, 6, O);
        let w = b.finish().unwrap();
        assert_eq!(w.op(0, a).partner, 1);
        assert_eq!(w.op(0, a3).partner, r_a3);
        assert_eq!(w.op(0, a2).partner, r_a2);
        assert_eq!(w.op(1, c).partner, r_c);
    }

    fn expect_err(b: Builder, what: &str) -> WorkloadError {
        let e = b.finish().expect_err("bad workload accepted");
        assert!(e.what.contains(what), "{e}");
        e
    }

    #[test]
    fn bad_workloads_are_refused_with_their_position() {
        let mut b = Builder::new("x", 2, Some("f.goal".into()));
        b.task(0);
        b.recv(1, 8, 0, Origin { line: 3 });
        let e = expect_err(b, "no send matches this receive from task 1");
        assert_eq!(e.at, "f.goal:3");

        let mut b = Builder::new("x", 2, None);
        b.task(0);
        b.send(1, 8, 0, O);
        expect_err(b, "no receive matches this send to task 1");

        let mut b = Builder::new("x", 2, None);
        b.task(1);
        b.send(2, 8, 0, O);
        expect_err(b, "peer 2 is not a task");

        let mut b = Builder::new("x", 2, None);
        b.task(0);
        let x = b.calc(1, O);
        let y = b.calc(1, O);
        let z = b.calc(1, O);
        b.require(y, x, false);
        b.require(z, y, false);
        b.require(y, z, true);
        let e = expect_err(b, "cycle");
        assert_eq!(e.at, "task 0, operation 1");

        let mut b = Builder::new("x", 1, None);
        b.task(0);
        let x = b.calc(1, O);
        b.require(x, 4, false);
        expect_err(b, "names operation 4");
    }

    /// Packets per message: ceil(ceil(bytes / phit) / packet), at least one.
    #[test]
    fn message_sizes_round_up_to_whole_packets() {
        assert_eq!(Workload::packets(0, 16, 16), 1);
        assert_eq!(Workload::packets(1, 16, 16), 1);
        assert_eq!(Workload::packets(256, 16, 16), 1);
        assert_eq!(Workload::packets(257, 16, 16), 2);
        assert_eq!(Workload::packets(4096, 8, 16), 32);
    }
}
