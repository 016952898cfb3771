//! A workload replayed in the telephone model, without a network: every send occupies its task for
//! one round and its message arrives at the round's end, a receive completes once it has started
//! and its message has arrived, a calc of `c` cycles takes `c` rounds, and an operation starts
//! when what it requires has completed (or started, for an `irequires`). This finds what the
//! compiled workload's checks cannot: tasks that wait for each other (each receiving before it
//! sends), which would stop a run; and the rounds it takes are the workload's critical path in
//! messages, known in closed form for the kernels (a binomial broadcast of `N` tasks takes
//! `ceil(log2 N)` rounds, a ring step one, a pipeline of `W` waves through `N` tasks `N + W - 2`),
//! which their tests check.

use super::{OpIndex, OpKind, TaskId, Workload, ON_START};
use std::fmt;

/// Operations that never complete: the first of them (a started receive whose message never
/// comes, if any), and how many there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    /// Its task.
    pub task: TaskId,
    /// Its index in the task's program.
    pub op: OpIndex,
    /// What it is.
    pub kind: OpKind,
    /// Its peer (send and receive).
    pub peer: TaskId,
    /// Operations that never complete, over all tasks.
    pub never: u64,
}

impl fmt::Display for Stuck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            OpKind::Recv => format!("a receive from task {}", self.peer),
            OpKind::Send => format!("a send to task {}", self.peer),
            OpKind::Calc => "a calc".to_string(),
        };
        write!(
            f,
            "task {}, operation {} ({what}) never completes: tasks wait for each other ({} operations never complete)",
            self.task, self.op, self.never
        )
    }
}

impl std::error::Error for Stuck {}

const NONE: u64 = u64::MAX;

/// The rounds `w` takes in the telephone model, or the operations that never complete.
pub fn rounds(w: &Workload) -> Result<u64, Stuck> {
    let tasks = w.tasks();
    let mut base = vec![0usize; tasks as usize + 1];
    for t in 0..tasks {
        base[t as usize + 1] = base[t as usize] + w.ops_of(t).len();
    }
    let total = base[tasks as usize];
    let locate = |g: usize| {
        let t = base.partition_point(|&b| b <= g) - 1;
        (t as TaskId, (g - base[t]) as OpIndex)
    };
    let mut left: Vec<u32> = (0..tasks).flat_map(|t| w.ops_of(t).iter().map(|o| o.requires)).collect();
    let mut ready = vec![0u64; total];
    let mut started = vec![NONE; total];
    let mut arrival = vec![NONE; total];
    let mut done = vec![NONE; total];
    enum Ev {
        Start(usize, u64),
        Arrive(usize, u64),
        Complete(usize, u64),
    }
    let mut events: Vec<Ev> = (0..total).filter(|&g| left[g] == 0).map(|g| Ev::Start(g, 0)).collect();
    while let Some(ev) = events.pop() {
        let (g, time, on_start) = match ev {
            Ev::Start(g, t) => {
                started[g] = t;
                let (task, i) = locate(g);
                let op = w.op(task, i);
                match op.kind {
                    OpKind::Send => {
                        events.push(Ev::Complete(g, t + 1));
                        events.push(Ev::Arrive(base[op.peer as usize] + op.partner as usize, t + 1));
                    }
                    OpKind::Calc => events.push(Ev::Complete(g, t + op.arg)),
                    OpKind::Recv if arrival[g] != NONE => events.push(Ev::Complete(g, t.max(arrival[g]))),
                    OpKind::Recv => {}
                }
                (g, t, true)
            }
            Ev::Arrive(g, a) => {
                arrival[g] = a;
                if started[g] != NONE {
                    events.push(Ev::Complete(g, started[g].max(a)));
                }
                continue;
            }
            Ev::Complete(g, t) => {
                done[g] = t;
                (g, t, false)
            }
        };
        let (task, i) = locate(g);
        for &d in w.dependents(task, i) {
            if (d & ON_START != 0) != on_start {
                continue;
            }
            let dg = base[task as usize] + (d & !ON_START) as usize;
            ready[dg] = ready[dg].max(time);
            left[dg] -= 1;
            if left[dg] == 0 {
                events.push(Ev::Start(dg, ready[dg]));
            }
        }
    }
    let never = done.iter().filter(|&&d| d == NONE).count() as u64;
    if never == 0 {
        return Ok(done.into_iter().max().unwrap_or(0));
    }
    let g = (0..total)
        .find(|&g| done[g] == NONE && started[g] != NONE)
        .or_else(|| (0..total).find(|&g| done[g] == NONE))
        .expect("an operation that never completes");
    let (task, op) = locate(g);
    let o = w.op(task, op);
    Err(Stuck { task, op, kind: o.kind, peer: o.peer, never })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Builder, Origin};

    /// Two tasks that each receive before sending never finish; the report names the first
    /// receive. Reversing one task's order lets both finish in 2 rounds (one message each way,
    /// the second sent when the first has arrived).
    #[test]
    fn tasks_waiting_for_each_other_are_found() {
        let build = |first_sends: bool| {
            let o = Origin::default();
            let mut b = Builder::new("x", 2, None);
            for t in 0..2 {
                b.task(t);
                if t == 0 && first_sends {
                    let s = b.send(1, 8, 0, o);
                    let r = b.recv(1, 8, 0, o);
                    b.require(r, s, false);
                } else {
                    let r = b.recv(1 - t, 8, 0, o);
                    let s = b.send(1 - t, 8, 0, o);
                    b.require(s, r, false);
                }
            }
            b.finish().unwrap()
        };
        let e = rounds(&build(false)).unwrap_err();
        assert_eq!((e.task, e.op, e.kind, e.peer, e.never), (0, 0, OpKind::Recv, 1, 4));
        assert!(e.to_string().contains("task 0, operation 0 (a receive from task 1) never completes"), "{e}");
        assert_eq!(rounds(&build(true)), Ok(2));
    }

    /// `irequires` waits for the start only: a calc of 10 that a send waits to start overlaps it.
    #[test]
    fn a_start_dependency_overlaps() {
        let o = Origin::default();
        let mut b = Builder::new("x", 2, None);
        b.task(0);
        let c = b.calc(10, o);
        let s = b.send(1, 8, 0, o);
        b.require(s, c, true);
        b.task(1);
        b.recv(0, 8, 0, o);
        assert_eq!(rounds(&b.finish().unwrap()), Ok(10));
        let mut b = Builder::new("x", 2, None);
        b.task(0);
        let c = b.calc(10, o);
        let s = b.send(1, 8, 0, o);
        b.require(s, c, false);
        b.task(1);
        b.recv(0, 8, 0, o);
        assert_eq!(rounds(&b.finish().unwrap()), Ok(11));
    }
}
