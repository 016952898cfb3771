//! `hxsim --version`, the build attributes of results files, completions and the heartbeat.

use std::process::Command;

const QUICKSTART: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/quickstart.toml");

fn hxsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("running hxsim")
}

#[test]
fn version_names_commit_dirty_flag_features_and_profile() {
    let out = hxsim(&["--version"]);
    assert!(out.status.success());
    let v = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(v.trim(), format!("hxsim {}", hxsim::build_info::LONG_VERSION));
    assert!(v.contains(&format!("dirty: {}", hxsim::build_info::GIT_DIRTY)), "{v}");
    assert!(v.contains("features: [") && v.contains("profile "), "{v}");
}

#[test]
fn results_files_carry_the_build_and_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.h5");
    let p = path.to_str().unwrap();
    let out = hxsim(&[
        "run",
        QUICKSTART,
        "-q",
        "-o",
        p,
        "--set",
        "simulation.warmup_cycles=100",
        "--set",
        "simulation.measure_cycles=200",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let f = hxsim::output::hdf5::open_file(&path).unwrap();
    let attr = |n: &str| hxsim::output::hdf5::str_attr(&f, n).unwrap();
    assert_eq!(attr("git_commit"), hxsim::build_info::GIT_COMMIT);
    assert_eq!(attr("git_dirty"), hxsim::build_info::GIT_DIRTY);
    assert_eq!(attr("features"), hxsim::build_info::FEATURES);
    assert_eq!(attr("build_profile"), hxsim::build_info::PROFILE);
    let argv = hxsim::output::hdf5::str_list_attr(&f, "argv").unwrap();
    assert_eq!(&argv[1..4], ["run", QUICKSTART, "-q"]);
}

#[test]
fn completions_and_heartbeat() {
    let out = hxsim(&["completions", "bash"]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("hxsim"));
    // stderr is a pipe here: a heartbeat line every 0.05 s while the run goes on.
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args([
            "run",
            QUICKSTART,
            "--no-output",
            "--set",
            "simulation.warmup_cycles=2000",
            "--set",
            "simulation.measure_cycles=20000",
        ])
        .env("HXSIM_HEARTBEAT_SECS", "0.05")
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().any(|l| l.starts_with("hxsim: ") && l.contains("cycle ")), "{err}");
}
