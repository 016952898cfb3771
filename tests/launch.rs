//! How hxsim reacts to being started by an MPI launcher: a build without MPI refuses to run as N
//! independent copies (exit 2, saying how to rebuild); commands other than `run` refuse several
//! ranks in any build; `HXSIM_SINGLE_PROCESS=1` overrides a stale launcher variable.

use std::process::{Command, Output};

fn hxsim(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hxsim"));
    c.args(args);
    for v in ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "HXSIM_SINGLE_PROCESS"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

const RUN: [&str; 6] =
    ["run", "configs/quickstart.toml", "--json", "--quiet", "--no-output", "--set=simulation.measure_cycles=200"];

#[cfg(not(feature = "mpi"))]
#[test]
fn build_without_mpi_refuses_several_ranks() {
    for var in ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"] {
        let out = hxsim(&RUN, &[(var, "4")]);
        assert_eq!(out.status.code(), Some(2), "{var}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{var}=4")) && err.contains("--features mpi"), "{err}");
        assert!(out.stdout.is_empty(), "nothing may be simulated");
    }
}

#[test]
fn one_announced_rank_or_the_override_runs_normally() {
    let out = hxsim(&RUN, &[("OMPI_COMM_WORLD_SIZE", "1")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = hxsim(&RUN, &[("SLURM_STEP_NUM_TASKS", "8"), ("HXSIM_SINGLE_PROCESS", "1")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["packets_delivered"].as_u64().unwrap() > 0);
}

#[test]
fn other_commands_refuse_several_ranks() {
    let out = hxsim(&["partition", "configs/quickstart.toml", "--parts", "2"], &[("PMI_SIZE", "3")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PMI_SIZE=3") && err.contains("only `hxsim run`"), "{err}");
}

/// Inside `sbatch -n 2` the batch script has `SLURM_NTASKS=2` but runs every command once: only
/// `srun` starts several tasks (and sets the step's variables), so every command runs normally.
#[test]
fn an_allocation_without_a_step_is_one_process() {
    let alloc = [("SLURM_NTASKS", "2"), ("SLURM_JOB_ID", "7")];
    let out = hxsim(&RUN, &alloc);
    assert!(out.status.success(), "run: {}", String::from_utf8_lossy(&out.stderr));
    let out = hxsim(&["analyze", "configs/quickstart.toml", "--json"], &alloc);
    assert!(out.status.success(), "analyze: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["switches"], 16);
    // An srun step of 2 tasks is two ranks.
    let out = hxsim(&["analyze", "configs/quickstart.toml"], &[("SLURM_NTASKS", "2"), ("SLURM_STEP_NUM_TASKS", "2")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SLURM_STEP_NUM_TASKS=2"));
}
