//! The manual's commands run. Every code block of README.md and docs/**/*.md marked by an HTML comment
//! on the line before it, `<!-- test -->` or `<!-- test: ARGS -->`, has each of its `hxsim` command
//! lines run with this build's binary, in a fresh folder per block where `configs/` is the
//! repository's, and every line must exit 0: a command the manual shows that the binary no longer
//! accepts (a renamed option, a refused config) fails here rather than for its next reader.
//!
//! `ARGS` is `--set KEY=VALUE` pairs, which run a block at reduced size (on each `hxsim run CONFIG`
//! and `hxsim sweep` line, each pair replaces the line's own `--set KEY=...` or is added), and may
//! start with `exit N`: every line of the block must then exit with N (a refusal the page shows).
//! A block with an `hxsim` line that is not to be run says why, `<!-- no-test: REASON -->`; one
//! with neither marker fails the test, so a new block is run unless its writer decides otherwise
//! (docs/writing-docs.md describes the convention).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One marked code block: where it is, the exit code its lines must give, its reductions and its
/// `hxsim` command lines.
struct Block {
    origin: String,
    exit: i32,
    reductions: Vec<(String, String)>,
    commands: Vec<String>,
}

/// The blocks of the manual that are run, and the origins of blocks with `hxsim` lines that carry
/// no marker at all.
struct Manual {
    blocks: Vec<Block>,
    unmarked: Vec<String>,
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A marker's `ARGS`: the exit code (`exit N` first, else 0) and the `--set KEY=VALUE` pairs;
/// anything else is an error in the manual.
fn parse_args(args: &str, origin: &str) -> (i32, Vec<(String, String)>) {
    let mut words: Vec<&str> = args.split_whitespace().collect();
    let mut exit = 0;
    if words.first() == Some(&"exit") {
        let code = words.get(1).and_then(|c| c.parse().ok());
        exit = code.unwrap_or_else(|| panic!("{origin}: `exit` takes an exit code: {args}"));
        words.drain(..2);
    }
    (exit, parse_reductions(&words, args, origin))
}

/// The `--set KEY=VALUE` pairs of a marker's arguments.
fn parse_reductions(words: &[&str], args: &str, origin: &str) -> Vec<(String, String)> {
    assert!(words.len().is_multiple_of(2), "{origin}: the marker's arguments must be `--set KEY=VALUE` pairs: {args}");
    words
        .chunks(2)
        .map(|pair| {
            let (key, value) =
                pair[1].split_once('=').unwrap_or_else(|| panic!("{origin}: `{}` is not KEY=VALUE", pair[1]));
            assert_eq!(pair[0], "--set", "{origin}: the marker's arguments must be `--set KEY=VALUE` pairs: {args}");
            (key.to_string(), value.to_string())
        })
        .collect()
}

/// The line without its shell comment: a `#` that starts a word outside quotes.
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut prev_blank) = (false, false, true);
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev_blank => return line[..i].trim_end(),
            _ => {}
        }
        prev_blank = c.is_whitespace();
    }
    line.trim_end()
}

/// The `hxsim` command lines of the code block whose opening fence is `lines[open]` (continuation
/// lines joined, comments dropped), and the index of its closing fence.
fn block_commands(lines: &[&str], open: usize, origin: &str) -> (Vec<String>, usize) {
    // The closing fence is a run of at least as many backticks and nothing else (CommonMark), so
    // a block may show another block inside a longer fence.
    let ticks = lines[open].trim_start().chars().take_while(|&c| c == '`').count();
    let closes = |line: &str| {
        let line = line.trim();
        line.len() >= ticks && line.chars().all(|c| c == '`')
    };
    let mut commands = Vec::new();
    let mut logical = String::new();
    let mut i = open + 1;
    while i < lines.len() && !closes(lines[i]) {
        if let Some(head) = lines[i].strip_suffix('\\') {
            logical.push_str(head);
            logical.push(' ');
        } else {
            logical.push_str(lines[i]);
            let command = strip_comment(logical.trim());
            if command.starts_with("hxsim ") {
                commands.push(command.to_string());
            }
            logical.clear();
        }
        i += 1;
    }
    assert!(i < lines.len(), "{origin}: the code block is not closed");
    (commands, i)
}

fn read_manual(root: &Path) -> Manual {
    let mut manual = Manual { blocks: Vec::new(), unmarked: Vec::new() };
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let name = file.strip_prefix(root).unwrap().display().to_string();
        let mut i = 0;
        while i < lines.len() {
            if !lines[i].trim_start().starts_with("```") {
                // A marker must sit right above a fence: one anywhere else would run nothing.
                let line = lines[i].trim();
                if line.starts_with("<!-- test") || line.starts_with("<!-- no-test") {
                    let next = lines.get(i + 1).map(|l| l.trim_start()).unwrap_or("");
                    assert!(
                        next.starts_with("```"),
                        "{name}:{}: a test marker must be followed by a fenced code block",
                        i + 1
                    );
                }
                i += 1;
                continue;
            }
            let origin = format!("{name}:{}", i + 1);
            let (commands, close) = block_commands(&lines, i, &origin);
            let marker = if i > 0 { lines[i - 1].trim() } else { "" };
            let args = marker.strip_prefix("<!-- test").and_then(|m| m.strip_suffix("-->")).map(str::trim);
            match args {
                Some(args) => {
                    let origin = format!("{name}:{i}");
                    let args = if args.is_empty() {
                        ""
                    } else {
                        args.strip_prefix(':')
                            .unwrap_or_else(|| panic!("{origin}: a marker is `<!-- test -->` or `<!-- test: ARGS -->`"))
                    };
                    let (exit, reductions) = parse_args(args, &origin);
                    assert!(!commands.is_empty(), "{origin}: the marked code block has no `hxsim` command line");
                    manual.blocks.push(Block { origin, exit, reductions, commands });
                }
                None if commands.is_empty() => {}
                None => {
                    let reason = marker.strip_prefix("<!-- no-test:").and_then(|m| m.strip_suffix("-->"));
                    if reason.is_none_or(|r| r.trim().is_empty()) {
                        manual.unmarked.push(origin);
                    }
                }
            }
            i = close + 1;
        }
    }
    manual
}

/// The command with the block's reductions: on `hxsim run CONFIG` and `hxsim sweep` lines, each
/// `--set KEY=VALUE` replaces the line's `--set KEY=...` or is added.
fn reduced(command: &str, reductions: &[(String, String)]) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let sub = words.get(1).copied().unwrap_or("");
    // A run or sweep from a checkpoint takes the checkpoint's config: reducing it is refused.
    if reductions.is_empty()
        || !(sub == "run" || sub == "sweep")
        || words.contains(&"--resume")
        || words.contains(&"--from")
    {
        return command.to_string();
    }
    let mut out = command.to_string();
    for (key, value) in reductions {
        let prefix = format!("--set {key}=");
        match out.find(&prefix) {
            Some(at) => {
                let start = at + prefix.len();
                let end = out[start..].find(char::is_whitespace).map_or(out.len(), |e| start + e);
                out.replace_range(start..end, value);
            }
            None => out.push_str(&format!(" --set {key}={value}")),
        }
    }
    out
}

#[test]
fn reductions_replace_or_add_sets() {
    let r = vec![
        ("simulation.warmup_cycles".to_string(), "100".to_string()),
        ("topology.sides".to_string(), "[4,4]".to_string()),
    ];
    assert_eq!(
        reduced("hxsim sweep c.toml --set simulation.warmup_cycles=3000 --set traffic.load=0.1:1.0:0.1", &r),
        "hxsim sweep c.toml --set simulation.warmup_cycles=100 --set traffic.load=0.1:1.0:0.1 --set topology.sides=[4,4]"
    );
    assert_eq!(reduced("hxsim run --resume run.ckpt -o r.h5", &r), "hxsim run --resume run.ckpt -o r.h5");
    assert_eq!(reduced("hxsim analyze c.toml", &r), "hxsim analyze c.toml");
    assert_eq!(strip_comment("hxsim run c.toml   # a comment"), "hxsim run c.toml");
    assert_eq!(strip_comment("hxsim analyze c.toml --set 'a=\"#x\"' # c"), "hxsim analyze c.toml --set 'a=\"#x\"'");
    assert_eq!(strip_comment("hxsim design hyperx --bisection 9/32#x"), "hxsim design hyperx --bisection 9/32#x");
}

#[test]
fn markers_give_exit_codes_and_reductions() {
    assert_eq!(parse_args("", "t"), (0, vec![]));
    assert_eq!(parse_args("exit 2", "t"), (2, vec![]));
    assert_eq!(parse_args("exit 3 --set a.b=[1,2]", "t"), (3, vec![("a.b".to_string(), "[1,2]".to_string())]));
    assert!(std::panic::catch_unwind(|| parse_args("exit --set a=1", "t")).is_err());
    assert!(std::panic::catch_unwind(|| parse_args("--threads 2", "t")).is_err());
    let lines = ["```sh", "hxsim sweep c.toml \\", "  --set a=1   # why", "make run", "```"];
    assert_eq!(block_commands(&lines, 0, "t"), (vec!["hxsim sweep c.toml    --set a=1".to_string()], 4));
    let nested = ["````markdown", "<!-- test -->", "```sh", "hxsim run c.toml", "```", "````", "hxsim x"];
    assert_eq!(block_commands(&nested, 0, "t"), (vec!["hxsim run c.toml".to_string()], 5));
}

#[test]
fn the_manuals_marked_commands_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Manual { blocks, unmarked } = read_manual(root);
    assert!(
        unmarked.is_empty(),
        "code blocks with `hxsim` lines and no `<!-- test -->` or `<!-- no-test: REASON -->` marker:\n{}",
        unmarked.join("\n")
    );
    let commands: usize = blocks.iter().map(|b| b.commands.len()).sum();
    // The manual marks blocks on most pages; far fewer found means the markers went unread.
    assert!(blocks.len() >= 15 && commands >= 40, "{} marked blocks with {commands} commands", blocks.len());
    let bin = Path::new(env!("CARGO_BIN_EXE_hxsim"));
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let started = Instant::now();
    let mut failed = Vec::new();
    for block in &blocks {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root.join("configs"), dir.path().join("configs")).unwrap();
        for command in &block.commands {
            let command = reduced(command, &block.reductions);
            let t = Instant::now();
            let out = Command::new("bash")
                .args(["-c", &format!("set -o pipefail\n{command}")])
                .current_dir(dir.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            eprintln!("{}: {:.1} s: {command}", block.origin, t.elapsed().as_secs_f64());
            if out.status.code() != Some(block.exit) {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let tail: Vec<&str> = stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
                failed.push(format!(
                    "{}: `{command}` exited {:?}, not {}:\n{}",
                    block.origin,
                    out.status.code(),
                    block.exit,
                    tail.join("\n")
                ));
            }
        }
    }
    eprintln!("{} blocks, {commands} commands in {:.1} s", blocks.len(), started.elapsed().as_secs_f64());
    assert!(failed.is_empty(), "commands of the manual that failed:\n{}", failed.join("\n\n"));
}
