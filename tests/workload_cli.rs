//! `hxsim workload export` and `hxsim workload check` as a user meets them: a kernel written as a
//! GOAL schedule reads back with the sizes the kernel implies, LogGOPSim's example schedules check,
//! and bad input exits with code 2 and names the file and line (or the parameter), never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn hxsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("hxsim runs")
}

fn repo(path: &str) -> String {
    format!("{}/{}", env!("CARGO_MANIFEST_DIR"), path)
}

fn check_json(file: &Path) -> serde_json::Value {
    let out = hxsim(&["workload", "check", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn refused(out: &Output, says: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for s in says {
        assert!(err.contains(s), "`{s}` not in: {err}");
    }
}

/// A 4 x 4 stencil of 2 iterations with computation: 24 grid edges, so 2 x 2 x 24 = 96 messages
/// of 64 bytes; 96 sends, 96 receives and one calc per task between the iterations (16).
#[test]
fn an_exported_kernel_checks_with_the_sizes_it_implies() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.goal");
    let export = [
        "workload",
        "export",
        "stencil-2d",
        "--tasks",
        "16",
        "--bytes",
        "64",
        "--iterations",
        "2",
        "--compute-cycles",
        "10",
        "--grid",
        "4,4",
    ];
    let out = hxsim(&[&export[..], &["-o", file.to_str().unwrap()]].concat());
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v = check_json(&file);
    assert_eq!(v["tasks"], 16);
    assert_eq!(v["messages"], 96);
    assert_eq!(v["message_bytes"], 96 * 64);
    assert_eq!(v["operations"], 96 + 96 + 16);
    // One round per iteration (all halo sends at once) and 10 cycles of calc between the two.
    assert_eq!(v["rounds"], 2 + 10);
    // Without -o the same schedule goes to standard output.
    let out = hxsim(&export);
    assert!(out.status.success());
    assert_eq!(out.stdout, std::fs::read(&file).unwrap());
    // The text report says the same.
    let out = hxsim(&["workload", "check", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("messages       96"), "{text}");
}

/// LogGOPSim's example schedules: binomial broadcasts send N - 1 messages, the dissemination
/// barrier N log2 N; each takes log2 N rounds.
#[test]
fn loggopsim_examples_check() {
    for (file, tasks, messages, rounds) in [
        ("binary_tree_16.goal", 16, 15, 4),
        ("schedgen2_binomial_bcast_8.goal", 8, 7, 3),
        ("dissemination_16.goal", 16, 64, 4),
    ] {
        let v = check_json(&PathBuf::from(repo(&format!("tests/data/goal/{file}"))));
        let got = (v["tasks"].as_u64(), v["messages"].as_u64(), v["rounds"].as_u64());
        assert_eq!(got, (Some(tasks), Some(messages), Some(rounds)), "{file}");
    }
}

/// Bad schedules: exit 2 with `file:line` and what is wrong.
#[test]
fn bad_schedules_exit_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let head = "num_ranks 2\nrank 0 {\n";
    let cases = [
        ("syntax.goal", format!("{head}l1: send 8b too 1\n}}\n"), ":3", "syntax error"),
        ("label.goal", format!("{head}l1: calc 5\nl1 requires l4\n}}\n"), ":4", "unknown label `l4`"),
        ("cycle.goal", format!("{head}a: calc 1\nb: calc 1\na requires b\nb requires a\n}}\n"), ":", "cycle"),
        ("rank.goal", format!("{head}}}\nrank 5 {{\n}}\n"), ":4", "beyond num_ranks 2"),
        ("match.goal", format!("{head}l1: recv 8b from 1 tag 2\n}}\n"), ":3", "no send matches"),
        (
            "wait.goal",
            format!("{head}r: recv 8b from 1\ns: send 8b to 1\ns requires r\n}}\nrank 1 {{\nr: recv 8b from 0\ns: send 8b to 0\ns requires r\n}}\n"),
            "",
            "task 0, operation 0 (a receive from task 1) never completes",
        ),
    ];
    for (name, text, line, what) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let at = format!("{}{line}", path.display());
        refused(&hxsim(&["workload", "check", path.to_str().unwrap()]), &[&at, what]);
    }
    let missing = dir.path().join("missing.goal");
    refused(&hxsim(&["workload", "check", missing.to_str().unwrap()]), &["missing.goal", "cannot read"]);
}

/// Bad kernel parameters: exit 2 naming the parameter, the value and what is allowed.
#[test]
fn bad_kernel_parameters_exit_2() {
    refused(
        &hxsim(&["workload", "export", "butterfly", "--tasks", "12", "--bytes", "8"]),
        &["workload.tasks", "12", "power of two"],
    );
    refused(
        &hxsim(&["workload", "export", "stencil-2d", "--tasks", "16", "--bytes", "8", "--grid", "5,3"]),
        &["workload.grid", "[5, 3]", "product"],
    );
    refused(&hxsim(&["workload", "export", "no-such-kernel", "--tasks", "4", "--bytes", "8"]), &["butterfly"]);
}
