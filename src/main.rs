//! `hxsim`: command-line entry point. Parses the command line ([`hxsim::cli`]) and dispatches to
//! the subcommand's module in [`hxsim::commands`]; the work is in the library.

use anyhow::Result;
use clap::Parser;
use hxsim::cli::{Cli, Command};
use hxsim::commands::{self, run::RunOutputs};
use hxsim::console::note;
use hxsim::sim::RunOptions;
use std::process::ExitCode;

/// The system allocator, except that an allocation that fails ends the process with one line on
/// stderr and exit code 2 (a model that does not fit in memory), not Rust's abort: exit 134, a
/// core dump, and a stack backtrace when `RUST_BACKTRACE` is set. The memory check before a run
/// ([`hxsim::config::Config::check_memory`]) refuses what is known not to fit; this catches the
/// rest (packets beyond the estimate, limits that changed meanwhile). Nothing in hxsim recovers
/// from a failed allocation (no `try_reserve`), so nothing is lost by not returning.
struct ReportingAllocator;

// SAFETY: every call goes to the system allocator with the same arguments; a null result never
// returns.
unsafe impl std::alloc::GlobalAlloc for ReportingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: ReportingAllocator = ReportingAllocator;

/// Print that an allocation of `bytes` failed and exit 2, allocating nothing (the message is
/// written from a stack buffer with `write(2)`).
fn out_of_memory(bytes: usize) -> ! {
    use std::fmt::Write;
    struct Buf([u8; 400], usize);
    impl Write for Buf {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let n = s.len().min(self.0.len() - self.1);
            self.0[self.1..self.1 + n].copy_from_slice(&s.as_bytes()[..n]);
            self.1 += n;
            Ok(())
        }
    }
    let mut b = Buf([0; 400], 0);
    let _ = writeln!(
        b,
        "error: out of memory: an allocation of {bytes} bytes failed; the run needs more memory than this process may \
         use (hxsim analyze CONFIG prints the estimate; see also ulimit -v and the job's memory limit)"
    );
    // SAFETY: writing a buffer we own to stderr, then ending the process without unwinding.
    unsafe {
        libc::write(2, b.0.as_ptr().cast(), b.1);
        libc::_exit(2)
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    init_logging(cli.verbose);
    // A bug that panics one partition thread would leave the others waiting at the window barrier
    // forever (a hung job instead of a failed one): end the process once the message is printed.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::exit(101);
    }));
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            note(&format!("error: {e:#}"));
            ExitCode::from(commands::exit_code(&e))
        }
    }
}

/// Log events to stderr: `RUST_LOG` when set, else warnings, or more with `-v`; coloured only
/// when stderr is a terminal (not in a Slurm log file or a pipe).
fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi).try_init();
}

fn dispatch(cli: Cli) -> Result<u8> {
    // `run` joins the MPI world (or explains why it cannot); nothing else is rank-aware, and N copies
    // of it would print N times or write the same file N times.
    if !matches!(cli.command, Command::Run { .. }) {
        if let Some((var, ranks)) = hxsim::engine::launcher_ranks().filter(|&(_, n)| n > 1) {
            note(&format!(
                "error: started as one of {ranks} ranks ({var}={ranks}); only `hxsim run` runs over several \
                 processes: start this command once, without mpirun/srun (or set {}=1)",
                hxsim::engine::SINGLE_PROCESS_ENV
            ));
            return Ok(2);
        }
    }
    if !matches!(cli.command, Command::Run { .. } | Command::Sweep { .. }) {
        // Commands that only print end quietly when their reader goes away (`hxsim analyze | head`),
        // as Unix tools do; `run` and `sweep` write their files first and report a closed stdout as
        // an I/O error (exit 1) instead.
        // SAFETY: restoring the default action of a signal before any thread is started.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    match cli.command {
        Command::Run {
            cfg,
            checkpoint,
            threads,
            json,
            quiet,
            out,
            json_out,
            max_memory,
            prefetch,
            candidate_cache,
        } => {
            // Checkpoint and restart: with --resume the config comes from the checkpoint, and so does the
            // thread count unless --threads is given (a checkpoint resumes with any).
            let request = hxsim::checkpoint::Request {
                checkpoint: checkpoint.checkpoint,
                every: checkpoint.checkpoint_every,
                resume: checkpoint.resume,
            };
            let (config, threads, checkpoint) =
                hxsim::checkpoint::setup(&request, cfg.config.as_deref(), &cfg.set, threads, hxsim::sim::router_vcs)?;
            let outputs = RunOutputs { h5: out.path(&config.name, ""), json: json_out };
            let paths = commands::run::RunPaths {
                config: cfg.config.as_deref(),
                resume: request.resume.as_deref(),
                checkpoint: checkpoint.as_ref().and_then(|c| c.path()),
            };
            commands::run::check_paths(&config, paths, &outputs)?;
            let ranks = hxsim::engine::launcher_ranks().map_or(1, |r| r.1);
            config.check_memory(ranks, max_memory, None)?;
            let opts = RunOptions { threads, max_memory, fetch_ahead: prefetch, candidate_cache, checkpoint };
            commands::run::run(&config, &opts, json, quiet, &outputs)
        }
        Command::Sweep { config, from, set, jobs, quiet, out, max_memory } => {
            let output = match (out.no_output, out.output) {
                (true, _) => commands::sweep::Output::None,
                (false, Some(p)) => commands::sweep::Output::Path(p),
                (false, None) => commands::sweep::Output::Default,
            };
            let base = match (from, config) {
                (Some(ckpt), _) => commands::sweep::Base::Checkpoint(ckpt),
                (None, Some(c)) => commands::sweep::Base::Config(c),
                (None, None) => {
                    return Err(hxsim::config::ConfigError::value(
                        "CONFIG",
                        "missing",
                        "a config file, or --from CHECKPOINT",
                    )
                    .into())
                }
            };
            commands::sweep::run(&base, &set, jobs, quiet, output, max_memory)
        }
        Command::Plot { file, output, figure, point, by, width, font } => {
            let size = hxsim::plot::PrintSize::parse(&width, &font)?;
            commands::plot::run(&file, output.as_deref(), figure, point, by.as_deref(), size)
        }
        Command::Partition { cfg, parts, method, json } => {
            let config = commands::load_config(&cfg.config, &cfg.set)?;
            commands::partition::run(&config, parts, method.as_deref(), json)
        }
        Command::Merge { inputs, output, format, expect } => {
            commands::merge::run(&inputs, output.as_deref(), format.as_deref(), expect)
        }
        Command::Completions { shell } => commands::completions::run(shell),
        Command::Analyze { cfg, json, sequence } => {
            let config = commands::load_config(&cfg.config, &cfg.set)?;
            match sequence {
                Some(s) => commands::analyze::run_sequence(&config, &s, json),
                None => commands::analyze::run(&config, json),
            }
        }
        Command::Faults { cfg, json } => {
            let config = commands::load_config(&cfg.config, &cfg.set)?;
            commands::faults::run(&config, json)
        }
        Command::CheckDeadlock { cfg, json } => {
            let config = commands::load_config(&cfg.config, &cfg.set)?;
            commands::check_deadlock::run(&config, json)
        }
        Command::Design(args) => commands::design::run(&args),
        Command::Workload(args) => commands::workload::run(&args),
        Command::Docs { page: hxsim::cli::DocsPage::Reference, output } => commands::docs::run(output.as_deref()),
    }
}
