//! GOAL schedules: LogGOPSim's text format (Hoefler, Schneider and Lumsdaine, "LogGOPSim:
//! simulating large-scale applications in the LogGOPS model", HPDC 2010), as its `txt2bin` reads it
//! and Schedgen writes it (github.com/spcl/LogGOPSim, `src/LogGOPSim/txt2bin.re`):
//!
//! ```text
//! num_ranks 2
//!
//! rank 0 {
//! l1: send 64b to 1 tag 7
//! l2: calc 1000
//! l3: recv 64b from 1 tag 7
//! l2 requires l1
//! l3 irequires l2
//! }
//! rank 1 { ... }
//! ```
//!
//! One task per rank. An item ends at the end of its line (a `;` ends one too); `//` and
//! `/* ... */` are comments. `send`/`recv` sizes are bytes with a `b` suffix; the tag is optional
//! (default 0); `lX requires lY` makes `lX` wait for `lY` to complete, `irequires` for it to start.
//! Labels are optional and local to their rank, and a dependency names labels defined before it, as
//! in `txt2bin`. The `cpu N` and `nic N` suffixes (LogGOPSim's several CPUs and NICs per host) are
//! read and ignored: a task is one server here. Receives from any source or with any tag (`-1`)
//! are refused, since matching is resolved before the run (see [`crate::workload`]). Rank blocks
//! come in increasing rank order (as Schedgen writes them); a rank without a block has no
//! operations. Every error names `file:line`.
//!
//! [`export`] writes a [`Workload`] in this format, with tags chosen so that reading it back pairs
//! every receive with the same send.

use super::{Builder, OpIndex, OpKind, Origin, TaskId, Workload, WorkloadError, ON_START};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Word(&'a str),
    Int(u64),
    /// `-1`, the any-source or any-tag wildcard.
    Wildcard,
    Colon,
    Open,
    Close,
    /// The end of an item: a newline or `;`.
    End,
}

/// The tokens of a schedule, one at a time (a schedule of millions of operations is never held
/// as tokens), each with its line.
struct Lexer<'a> {
    text: &'a str,
    file: &'a str,
    i: usize,
    line: u32,
    done: bool,
}

impl<'a> Lexer<'a> {
    fn err(&self, line: u32, what: String) -> WorkloadError {
        WorkloadError { at: format!("{}:{line}", self.file), what }
    }

    /// The next token, a last [`Tok::End`] at the end of the text, then `None`.
    fn next(&mut self) -> Result<Option<(Tok<'a>, u32)>, WorkloadError> {
        let b = self.text.as_bytes();
        loop {
            let Some(&c) = b.get(self.i) else {
                if self.done {
                    return Ok(None);
                }
                self.done = true;
                return Ok(Some((Tok::End, self.line)));
            };
            let line = self.line;
            let one = |t| (Some((t, line)), 1);
            let (tok, len) = match c {
                b'\n' => {
                    self.line += 1;
                    one(Tok::End)
                }
                b';' => one(Tok::End),
                b' ' | b'\t' | b'\r' => (None, 1),
                b':' => one(Tok::Colon),
                b'{' => one(Tok::Open),
                b'}' => one(Tok::Close),
                b'/' if b.get(self.i + 1) == Some(&b'/') => {
                    (None, b[self.i..].iter().position(|&c| c == b'\n').unwrap_or(b.len() - self.i))
                }
                b'/' if b.get(self.i + 1) == Some(&b'*') => {
                    let Some(len) = self.text[self.i + 2..].find("*/") else {
                        return Err(self.err(line, "a `/*` comment is not closed".into()));
                    };
                    self.line += b[self.i..self.i + len + 2].iter().filter(|&&c| c == b'\n').count() as u32;
                    (None, len + 4)
                }
                b'-' if b.get(self.i + 1) == Some(&b'1')
                    && !b.get(self.i + 2).is_some_and(|c| c.is_ascii_alphanumeric()) =>
                {
                    (Some((Tok::Wildcard, line)), 2)
                }
                b'0'..=b'9' => {
                    let len = b[self.i..].iter().position(|c| !c.is_ascii_digit()).unwrap_or(b.len() - self.i);
                    let digits = &self.text[self.i..self.i + len];
                    let n = digits.parse().map_err(|_| self.err(line, format!("number {digits} is too large")))?;
                    (Some((Tok::Int(n), line)), len)
                }
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    let len = b[self.i..]
                        .iter()
                        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
                        .unwrap_or(b.len() - self.i);
                    (Some((Tok::Word(&self.text[self.i..self.i + len]), line)), len)
                }
                _ => {
                    let ch = self.text[self.i..].chars().next().unwrap_or('?');
                    return Err(self.err(line, format!("syntax error: unexpected `{}`", ch.escape_debug())));
                }
            };
            self.i += len;
            if tok.is_some() {
                return Ok(tok);
            }
        }
    }
}

/// The parser's place: before `num_ranks`, between rank blocks, or inside one.
struct Reader<'a> {
    file: &'a str,
    builder: Option<Builder>,
    ranks: u32,
    /// The open rank block, if any.
    rank: Option<TaskId>,
    /// The last rank whose block was read.
    last: Option<TaskId>,
    labels: HashMap<&'a str, OpIndex>,
}

impl<'a> Reader<'a> {
    fn err(&self, line: u32, what: impl Into<String>) -> WorkloadError {
        WorkloadError { at: format!("{}:{line}", self.file), what: what.into() }
    }

    fn syntax(&self, line: u32, expected: &str, got: Option<&Tok>) -> WorkloadError {
        let got = match got {
            None | Some(Tok::End) => "the end of the item".to_string(),
            Some(Tok::Word(w)) => format!("`{w}`"),
            Some(Tok::Int(n)) => format!("`{n}`"),
            Some(Tok::Wildcard) => "`-1`".to_string(),
            Some(Tok::Colon) => "`:`".to_string(),
            Some(Tok::Open) => "`{`".to_string(),
            Some(Tok::Close) => "`}`".to_string(),
        };
        self.err(line, format!("syntax error: expected {expected}, found {got}"))
    }

    /// One item (the tokens up to an end of item), which may open or close a rank block.
    fn item(&mut self, toks: &[Tok<'a>], line: u32) -> Result<(), WorkloadError> {
        match toks {
            [] => Ok(()),
            [Tok::Close, rest @ ..] => {
                if self.rank.take().is_none() {
                    return Err(self.err(line, "`}` closes no rank block"));
                }
                self.item(rest, line)
            }
            [Tok::Word("num_ranks"), rest @ ..] => {
                if self.builder.is_some() {
                    return Err(self.err(line, "a second `num_ranks`"));
                }
                let n = match rest {
                    [Tok::Int(n)] => *n,
                    _ => return Err(self.syntax(line, "`num_ranks` and a number", rest.first())),
                };
                if n == 0 || n > TaskId::MAX as u64 {
                    return Err(self.err(line, format!("num_ranks {n}: must be from 1 to {}", TaskId::MAX)));
                }
                self.ranks = n as u32;
                self.builder = Some(Builder::new(self.file.to_string(), self.ranks, Some(self.file.to_string())));
                Ok(())
            }
            [Tok::Word("rank"), rest @ ..] => {
                let (r, rest) = match rest {
                    [Tok::Int(r), Tok::Open, rest @ ..] => (*r, rest),
                    [Tok::Int(_), other, ..] => return Err(self.syntax(line, "`{` after the rank", Some(other))),
                    _ => return Err(self.syntax(line, "`rank N {`", rest.first())),
                };
                if let Some(open) = self.rank {
                    return Err(self.err(line, format!("rank {r} opens inside rank {open}'s block (a `}}` missing)")));
                }
                let Some(b) = self.builder.as_mut() else {
                    return Err(self.err(line, "a rank block before `num_ranks N`"));
                };
                if r >= self.ranks as u64 {
                    let n = self.ranks;
                    return Err(self.err(line, format!("rank {r} is beyond num_ranks {n} (ranks are 0 to {})", n - 1)));
                }
                let r = r as TaskId;
                if let Some(last) = self.last.filter(|&l| l >= r) {
                    return Err(self.err(
                        line,
                        format!("rank {r} after rank {last}: each rank's block once, in increasing rank order"),
                    ));
                }
                b.task(r);
                self.rank = Some(r);
                self.last = Some(r);
                self.labels.clear();
                self.item(rest, line)
            }
            [Tok::Word(a), Tok::Word(kind @ ("requires" | "irequires")), rest @ ..] => {
                let on = match rest {
                    [Tok::Word(on)] => *on,
                    _ => return Err(self.syntax(line, "a label", rest.first())),
                };
                let (op, on) = (self.label(a, line)?, self.label(on, line)?);
                self.open(line)?.require(op, on, *kind == "irequires");
                Ok(())
            }
            [Tok::Word(label), Tok::Colon, rest @ ..] => {
                let op = self.operation(rest, line)?;
                if self.labels.insert(label, op).is_some() {
                    return Err(self.err(line, format!("label `{label}` is defined twice in this rank")));
                }
                Ok(())
            }
            _ => self.operation(toks, line).map(|_| ()),
        }
    }

    fn open(&mut self, line: u32) -> Result<&mut Builder, WorkloadError> {
        if self.rank.is_none() {
            return Err(self.err(line, "an operation or dependency outside a `rank N { ... }` block"));
        }
        Ok(self.builder.as_mut().expect("a rank is open only after num_ranks"))
    }

    fn label(&self, name: &str, line: u32) -> Result<OpIndex, WorkloadError> {
        self.labels.get(name).copied().ok_or_else(|| {
            let rank = self.rank.map_or(String::new(), |r| format!(" in rank {r}"));
            self.err(line, format!("unknown label `{name}`{rank} (a dependency names labels defined before it)"))
        })
    }

    /// `send Nb to R [tag T]`, `recv Nb from R [tag T]` or `calc N`, each with optional `cpu N`
    /// and `nic N`.
    fn operation(&mut self, toks: &[Tok<'a>], line: u32) -> Result<OpIndex, WorkloadError> {
        let (kind, rest) = match toks {
            [Tok::Word("send"), rest @ ..] => (OpKind::Send, rest),
            [Tok::Word("recv"), rest @ ..] => (OpKind::Recv, rest),
            [Tok::Word("calc"), rest @ ..] => (OpKind::Calc, rest),
            _ => {
                return Err(self.syntax(
                    line,
                    "`send`, `recv`, `calc`, a label, `rank`, `num_ranks` or `}`",
                    toks.first(),
                ))
            }
        };
        let mut it = rest.iter().peekable();
        let Some(&Tok::Int(arg)) = it.next() else {
            return Err(self.syntax(line, "a size", rest.first()));
        };
        let mut peer = 0u64;
        if kind != OpKind::Calc {
            if it.next_if_eq(&&Tok::Word("b")).is_none() {
                return Err(self.syntax(line, "`b` after the size", it.peek().copied()));
            }
            let dir = if kind == OpKind::Send { "to" } else { "from" };
            if it.next_if_eq(&&Tok::Word(dir)).is_none() {
                return Err(self.syntax(line, &format!("`{dir}`"), it.peek().copied()));
            }
            peer = match it.next() {
                Some(Tok::Int(p)) => *p,
                Some(Tok::Wildcard) if kind == OpKind::Recv => {
                    return Err(self.err(line, "a receive from any source (-1) is not supported"))
                }
                other => return Err(self.syntax(line, "a rank", other)),
            };
        }
        let mut tag = 0u64;
        if kind != OpKind::Calc && it.next_if_eq(&&Tok::Word("tag")).is_some() {
            tag = match it.next() {
                Some(Tok::Int(t)) => *t,
                Some(Tok::Wildcard) if kind == OpKind::Recv => {
                    return Err(self.err(line, "a receive with any tag (-1) is not supported"))
                }
                other => return Err(self.syntax(line, "a tag", other)),
            };
        }
        for suffix in ["cpu", "nic"] {
            if it.next_if_eq(&&Tok::Word(suffix)).is_some() && !matches!(it.next(), Some(Tok::Int(_))) {
                return Err(self.err(line, format!("syntax error: expected a number after `{suffix}`")));
            }
        }
        if let Some(extra) = it.next() {
            return Err(self.syntax(line, "the end of the item", Some(extra)));
        }
        let peer = TaskId::try_from(peer).unwrap_or(TaskId::MAX);
        let o = Origin { line };
        let b = self.open(line)?;
        Ok(match kind {
            OpKind::Send => b.send(peer, arg, tag, o),
            OpKind::Recv => b.recv(peer, arg, tag, o),
            OpKind::Calc => b.calc(arg, o),
        })
    }
}

/// Read the GOAL schedule `text` of the file named `file` (for errors and as the workload's name).
pub fn parse(text: &str, file: &str) -> Result<Workload, WorkloadError> {
    let mut lexer = Lexer { text, file, i: 0, line: 1, done: false };
    let mut r = Reader { file, builder: None, ranks: 0, rank: None, last: None, labels: HashMap::new() };
    let mut item: Vec<Tok> = Vec::with_capacity(16);
    let (mut first, mut last) = (1, 1);
    while let Some((t, line)) = lexer.next()? {
        last = line;
        if t == Tok::End {
            r.item(&item, first)?;
            item.clear();
        } else {
            if item.is_empty() {
                first = line;
            }
            item.push(t);
        }
    }
    if let Some(open) = r.rank {
        return Err(r.err(last, format!("rank {open}'s block is not closed (a `}}` missing)")));
    }
    match r.builder {
        Some(b) => b.finish(),
        None => Err(r.err(last, "no `num_ranks N`: not a GOAL schedule")),
    }
}

/// Read the GOAL schedule in `path`.
pub fn read(path: &Path) -> Result<Workload, WorkloadError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| WorkloadError { at: name.clone(), what: format!("cannot read the schedule: {e}") })?;
    parse(&text, &name)
}

/// `w` as a GOAL schedule. Operation `i` of a rank is labelled `l<i>`; its dependencies follow the
/// rank's operations, grouped by the operation waited for, in the order of [`Workload::dependents`].
/// A send's tag is its own index in its rank's program and a receive's tag its send's index, so
/// that reading the file back pairs every receive with the same send (the workload's own tags are
/// not kept once it is compiled) and gives an equal workload.
pub fn export(w: &Workload) -> String {
    let mut s = String::with_capacity(32 * w.total_ops() as usize + 64);
    let name = w.name().replace(['\n', '\r'], " ");
    let _ = writeln!(s, "// {name}\n// written by hxsim {}\nnum_ranks {}", env!("CARGO_PKG_VERSION"), w.tasks());
    for t in 0..w.tasks() {
        let _ = write!(s, "\nrank {t} {{\n");
        let ops = w.ops_of(t);
        for (i, o) in ops.iter().enumerate() {
            let _ = match o.kind {
                OpKind::Send => writeln!(s, "l{i}: send {}b to {} tag {i}", o.arg, o.peer),
                OpKind::Recv => writeln!(s, "l{i}: recv {}b from {} tag {}", o.arg, o.peer, o.partner),
                OpKind::Calc => writeln!(s, "l{i}: calc {}", o.arg),
            };
        }
        for on in 0..ops.len() as OpIndex {
            for &d in w.dependents(t, on) {
                let how = if d & ON_START != 0 { "irequires" } else { "requires" };
                let _ = writeln!(s, "l{} {how} l{on}", d & !ON_START);
            }
        }
        s.push_str("}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::kernels::{rounds, KernelParams, REGISTRY};
    use super::*;

    fn data(name: &str) -> Workload {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/goal").join(name);
        read(&path).unwrap_or_else(|e| panic!("{e}"))
    }

    /// LogGOPSim's own examples replay: Schedgen's binomial-tree broadcasts (16 ranks from
    /// LogGOPSim's first release, 8 ranks from Schedgen2) and the dissemination barrier of 16
    /// ranks. Their message counts are N - 1 and N log2 N; the broadcasts take log2 N rounds in
    /// the telephone model (every child of a task is sent to at once: nothing orders the sends),
    /// the barrier log2 N (each round's send waits for the previous round's receive).
    #[test]
    fn loggopsim_examples_replay() {
        let w = data("binary_tree_16.goal");
        assert_eq!((w.tasks(), w.messages()), (16, 15));
        assert_eq!(rounds(&w), Some(4));
        let w = data("schedgen2_binomial_bcast_8.goal");
        assert_eq!((w.tasks(), w.messages()), (8, 7));
        assert_eq!(rounds(&w), Some(3));
        let w = data("dissemination_16.goal");
        assert_eq!((w.tasks(), w.messages(), w.total_ops()), (16, 64, 128));
        assert_eq!(rounds(&w), Some(4));
        // Rank 0 of the barrier: round k sends to 2^k and receives from 16 - 2^k.
        let sends: Vec<u32> = w.ops_of(0).iter().filter(|o| o.kind == OpKind::Send).map(|o| o.peer).collect();
        let recvs: Vec<u32> = w.ops_of(0).iter().filter(|o| o.kind == OpKind::Recv).map(|o| o.peer).collect();
        assert_eq!((sends, recvs), (vec![1, 2, 4, 8], vec![15, 14, 12, 8]));
    }

    /// The grammar's corners: comments, `;`, optional labels and tags, `cpu`/`nic` suffixes,
    /// `irequires`, a size of `8 b`, and a rank without a block.
    #[test]
    fn the_format_as_txt2bin_reads_it() {
        let text = "/* a\n two-line comment */ num_ranks 3;\n\
                    rank 0 { // task 0\n\
                    a1: send 8 b to 2 tag 5 cpu 1 nic 0\n\
                    calc 100 cpu 0\n\
                    x_2: recv 16b from 2\n\
                    x_2 irequires a1; a1 requires a1_\n\
                    }\n";
        let e = parse(text, "t.goal").unwrap_err();
        assert_eq!(e.at, "t.goal:7");
        assert!(e.what.contains("unknown label `a1_`"), "{e}");
        let text = text.replace("a1 requires a1_", "").replace("calc 100", "c: calc 100")
            + "rank 2 {\nrecv 8b from 0 tag 5\nsend 16b to 0\n}\n";
        let w = parse(&text, "t.goal").unwrap();
        assert_eq!(w.tasks(), 3);
        assert!(w.ops_of(1).is_empty());
        let ops = w.ops_of(0);
        assert_eq!((ops[0].kind, ops[0].arg, ops[0].peer, ops[0].partner), (OpKind::Send, 8, 2, 0));
        assert_eq!((ops[1].kind, ops[1].arg), (OpKind::Calc, 100));
        assert_eq!((ops[2].kind, ops[2].arg, ops[2].partner, ops[2].requires), (OpKind::Recv, 16, 1, 1));
        assert_eq!(w.dependents(0, 0), &[2 | ON_START]);
        assert_eq!(w.name(), "t.goal");
        assert_eq!(w.iterations(), None);
    }

    fn error(text: &str) -> WorkloadError {
        parse(text, "bad.goal").expect_err("a bad schedule was accepted")
    }

    /// Each kind of bad input is refused with its file and line.
    #[test]
    fn bad_schedules_name_file_and_line() {
        let head = "num_ranks 2\nrank 0 {\n";
        let cases: &[(String, &str, &str)] = &[
            (format!("{head}l1: sned 8b to 1\n}}\n"), "bad.goal:3", "syntax error"),
            (format!("{head}l1: send 8 to 1\n}}\n"), "bad.goal:3", "expected `b`"),
            (format!("{head}l1: send 8b to 1 tag\n}}\n"), "bad.goal:3", "expected a tag"),
            (format!("{head}l1: calc 5 %\n}}\n"), "bad.goal:3", "unexpected `%`"),
            (format!("{head}l1: calc 5\nl1 requires l9\n}}\n"), "bad.goal:4", "unknown label `l9`"),
            (format!("{head}l1: calc 5\nl1: calc 6\n}}\n"), "bad.goal:4", "defined twice"),
            (format!("{head}l1: calc 5\nl2: calc 5\nl1 requires l2\nl2 requires l1\n}}\n"), "bad.goal:", "cycle"),
            (format!("{head}}}\nrank 2 {{\n}}\n"), "bad.goal:4", "beyond num_ranks 2"),
            (
                format!("{head}l1: recv 8b from 1 tag 3\n}}\nrank 1 {{\nsend 8b to 0 tag 4\n}}\n"),
                "bad.goal:3",
                "no send matches this receive from task 1 with tag 3",
            ),
            (format!("{head}l1: send 8b to 7\n}}\n"), "bad.goal:3", "peer 7 is not a task"),
            (format!("{head}recv 8b from -1\n}}\n"), "bad.goal:3", "any source"),
            (format!("{head}recv 8b from 1 tag -1\n}}\n"), "bad.goal:3", "any tag"),
            (format!("{head}calc 1\n"), "bad.goal:4", "not closed"),
            (format!("{head}}}\nrank 0 {{\n}}\n"), "bad.goal:4", "increasing rank order"),
            ("rank 0 {\n}\n".to_string(), "bad.goal:1", "before `num_ranks"),
            ("num_ranks 2\ncalc 5\n".to_string(), "bad.goal:2", "outside a `rank"),
            ("num_ranks 0\n".to_string(), "bad.goal:1", "must be from 1"),
            ("num_ranks 99999999999999999999999\n".to_string(), "bad.goal:1", "too large"),
            ("\n\n".to_string(), "bad.goal:3", "no `num_ranks"),
            (format!("{head}}}\n}}\n"), "bad.goal:4", "closes no rank"),
            (format!("{head}/* open\n\n"), "bad.goal:3", "not closed"),
        ];
        for (text, at, what) in cases {
            let e = error(text);
            assert!(e.at.starts_with(at) && e.what.contains(what), "{text:?}: {e}");
        }
        let e = error(&format!("{head}l1: calc 5\nl2: calc 5\nl1 requires l2\nl2 requires l1\n}}\n"));
        assert!(e.at == "bad.goal:3" || e.at == "bad.goal:4", "{e}");
    }

    /// Mangled schedules (bytes deleted, tokens inserted, lines repeated, at positions drawn by a
    /// fixed xorshift) are read or refused with a position, never a panic.
    #[test]
    fn mangled_schedules_never_panic() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/goal/dissemination_16.goal");
        let kernel = KernelParams { tasks: 4, bytes: 8, iterations: 2, compute_cycles: 5, grid: vec![] };
        let bases = [
            std::fs::read_to_string(path).unwrap().replace("rank 15 {", "/* c */ rank 15 { // x"),
            export(&(REGISTRY[3].build)(&kernel).unwrap()).replacen(
                "l4 requires l0",
                "l4 irequires l0; l4 requires l2 // c",
                1,
            ),
        ];
        for b in &bases {
            parse(b, "f.goal").unwrap();
        }
        let inserts = [
            "{",
            "}",
            ":",
            ";",
            "\n",
            "-1",
            "-",
            "rank 3 {",
            "rank",
            "num_ranks 4",
            "requires",
            "irequires",
            "l1",
            "l9",
            "99999999999999999999999",
            "4294967296",
            "/*",
            "*/",
            "//",
            "b",
            "tag",
            "cpu",
            "nic",
            "send",
            "recv",
            "calc",
            "é",
            "\t",
            "\r\n",
            "0",
        ];
        let mut x = 0x9e3779b97f4a7c15u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let (mut ok, mut refused) = (0, 0);
        for i in 0..3000 {
            let mut t = bases[i % 2].clone();
            for _ in 0..1 + next(3) {
                let mut p = next(t.len() + 1);
                while !t.is_char_boundary(p) {
                    p -= 1;
                }
                match next(3) {
                    0 => {
                        let mut end = (p + 1 + next(6)).min(t.len());
                        while !t.is_char_boundary(end) {
                            end += 1;
                        }
                        t.replace_range(p..end, "");
                    }
                    1 => t.insert_str(p, inserts[next(inserts.len())]),
                    _ => {
                        let start = t[..p].rfind('\n').map_or(0, |i| i + 1);
                        let end = t[p..].find('\n').map_or(t.len(), |i| p + i + 1);
                        let line = t[start..end].to_string();
                        t.insert_str(start, &line);
                    }
                }
            }
            match parse(&t, "f.goal") {
                Ok(_) => ok += 1,
                Err(e) => {
                    assert!(e.at.starts_with("f.goal"), "{e}");
                    refused += 1;
                }
            }
        }
        assert!(ok > 0 && refused > 0, "{ok} read, {refused} refused");
    }

    /// export(kernel) read back is the same workload: the same operations, pairs and dependents
    /// in the same order, for every kernel, with and without computation.
    #[test]
    fn kernels_survive_a_round_trip_through_goal() {
        for k in REGISTRY {
            for compute in [0, 50] {
                let tasks = if k.name == "pingpong" { 2 } else { 8 };
                let p = KernelParams { tasks, bytes: 1000, iterations: 2, compute_cycles: compute, grid: vec![] };
                let w = (k.build)(&p).unwrap();
                let text = export(&w);
                let back = parse(&text, "k.goal").unwrap_or_else(|e| panic!("{}: {e}\n{text}", k.name));
                assert_eq!(back.task_ops, w.task_ops, "{}", k.name);
                assert_eq!(back.ops, w.ops, "{}", k.name);
                assert_eq!(back.dep_start, w.dep_start, "{}", k.name);
                assert_eq!(back.dependents, w.dependents, "{}", k.name);
                assert_eq!(export(&back).lines().skip(1).collect::<Vec<_>>(), text.lines().skip(1).collect::<Vec<_>>());
            }
        }
        // And a file's schedule, start dependencies included.
        let w = data("dissemination_16.goal");
        let back = parse(&export(&w), "d.goal").unwrap();
        assert_eq!((back.ops, back.dependents), (w.ops, w.dependents));
    }
}
