//! `hxsim workload`: write a built-in kernel ([`crate::workload::kernels`]) as a GOAL schedule,
//! and check a GOAL schedule ([`crate::workload::goal`]): that it can be replayed (it parses, and
//! its tasks do not wait for each other forever: [`crate::workload::replay`]), and how large it is. Bad input (a kernel's parameters, a schedule's errors) exits with code 2, naming the
//! parameter or the file and line.

use crate::cli::{WorkloadArgs, WorkloadCommand, WorkloadExportArgs};
use crate::error::ConfigError;
use crate::workload::replay::{self, Stuck};
use crate::workload::{goal, kernels, OpKind, Workload, WorkloadError};
use anyhow::{Context, Result};
use std::path::Path;

/// Run `hxsim workload ...`.
pub fn run(args: &WorkloadArgs) -> Result<u8> {
    match &args.command {
        WorkloadCommand::Export(e) => export(e),
        WorkloadCommand::Check { file, json } => check(file, *json),
    }
}

/// What `check` reports of a workload.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Size {
    /// Tasks (ranks).
    pub tasks: u32,
    /// Operations over all tasks.
    pub operations: u64,
    /// Messages (sends).
    pub messages: u64,
    /// Bytes of all messages.
    pub message_bytes: u64,
    /// Dependencies (`requires` and `irequires`).
    pub dependencies: u64,
    /// Bytes the compiled workload takes in memory (every rank of a run holds it).
    pub memory_bytes: u64,
    /// Rounds it takes in the telephone model ([`crate::workload::replay`]): its critical path
    /// in messages.
    pub rounds: u64,
}

impl Size {
    /// The size of `w`, or why it cannot complete (tasks that wait for each other).
    pub fn of(w: &Workload) -> Result<Size, Stuck> {
        let (mut message_bytes, mut dependencies) = (0u64, 0u64);
        for t in 0..w.tasks() {
            for o in w.ops_of(t) {
                dependencies += o.requires as u64;
                if o.kind == OpKind::Send {
                    message_bytes += o.arg;
                }
            }
        }
        Ok(Size {
            tasks: w.tasks(),
            operations: w.total_ops(),
            messages: w.messages(),
            message_bytes,
            dependencies,
            memory_bytes: w.bytes(),
            rounds: replay::rounds(w)?,
        })
    }
}

fn export(a: &WorkloadExportArgs) -> Result<u8> {
    let kernel = kernels::by_name(&a.kernel).ok_or_else(|| {
        ConfigError::value("workload.kernel", format!("\"{}\"", a.kernel), kernels::names().join(", "))
    })?;
    let params = kernels::KernelParams {
        tasks: a.tasks,
        bytes: a.bytes,
        iterations: a.iterations,
        compute_cycles: a.compute_cycles,
        grid: a.grid.clone(),
    };
    let w = (kernel.build)(&params)?;
    let text = goal::export(&w);
    match &a.output {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
            crate::console::note(&format!(
                "wrote {}: {}; {} tasks, {} operations, {} messages",
                path.display(),
                w.name(),
                w.tasks(),
                w.total_ops(),
                w.messages()
            ));
        }
        None => {
            use std::io::Write;
            std::io::stdout().write_all(text.as_bytes()).context("cannot write the schedule")?;
        }
    }
    Ok(0)
}

fn check(file: &Path, json: bool) -> Result<u8> {
    let w = goal::read(file)?;
    let s = Size::of(&w).map_err(|e| WorkloadError { at: file.display().to_string(), what: e.to_string() })?;
    if json {
        let mut v = serde_json::to_value(&s)?;
        v["file"] = file.display().to_string().into();
        println!("{v}");
    } else {
        println!("{}: a GOAL schedule that can be replayed", file.display());
        println!("tasks          {}", s.tasks);
        println!("operations     {}", s.operations);
        println!("messages       {}", s.messages);
        println!("message bytes  {}", s.message_bytes);
        println!("dependencies   {}", s.dependencies);
        println!("memory         {} bytes (compiled)", s.memory_bytes);
        println!("rounds         {} (critical path in messages, one message per task per round)", s.rounds);
    }
    Ok(0)
}
