//! The processes a run spans: this process alone, or the MPI world (cargo feature `mpi`).
//!
//! A binary started by an MPI launcher must know it was: built without MPI, `mpirun -np 4 hxsim`
//! would otherwise run four independent copies that each print a full result and exit 0; built
//! with one MPI and started by another MPI's `mpirun`, MPI itself reports a world of one process
//! per copy, with the same effect. [`World::from_env`] compares what the launcher announced in the
//! environment with what MPI reports, and fails with a [`LaunchError`] (exit code 2) instead.

use super::{Cycle, Observed, Outcome, Partition, Progress, RunSpec};
use serde::de::DeserializeOwned;
use serde::Serialize;
use thiserror::Error;

/// Environment variable that makes hxsim run as one process whatever a launcher announced (e.g. a
/// single-process `hxsim run` started with a stale launcher variable in its environment).
pub const SINGLE_PROCESS_ENV: &str = "HXSIM_SINGLE_PROCESS";

/// Launcher variables announcing the number of ranks, most specific first: Open MPI's `mpirun`,
/// PMI-1/PMI-2 launchers (MPICH's Hydra, `srun --mpi=pmi2`) and a Slurm job step (`srun`). An
/// allocation's `SLURM_NTASKS` is not one of them: it is set in the batch script of `sbatch -n 2`
/// too, where every command runs once; only `srun` starts several tasks, and it sets the step's
/// variables.
const LAUNCHER_VARS: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"];

/// Why the process group could not be set up. It is always about how hxsim was started, hence exit
/// code 2.
#[derive(Debug, Error)]
pub enum LaunchError {
    /// Started for several ranks, but built without MPI.
    #[error(
        "started as one of {ranks} ranks ({var}={ranks}), but this hxsim was built without MPI support, \
         so every rank would run the whole simulation on its own. Rebuild with \
         `cargo build --release --features mpi` (needs the Debian packages libopenmpi-dev openmpi-bin \
         libclang1-14 libclang-common-14-dev; see docs/mpi-slurm.md, \"Running on several processes\"), or start one \
         process without mpirun/srun (set {SINGLE_PROCESS_ENV}=1 if {var} is left over from an outer launcher)"
    )]
    NoMpi {
        /// The variable that announced the ranks.
        var: &'static str,
        /// Ranks announced.
        ranks: usize,
    },
    /// MPI's world is not the size the launcher announced.
    #[error(
        "the launcher announced {expected} ranks ({var}={expected}) but MPI reports a world of {actual}: {}",
        if var.starts_with("SLURM_") {
            format!(
                "{var} may be left over from the Slurm allocation rather than set by srun (set \
                 {SINGLE_PROCESS_ENV}=1 to run one process), or srun does not start MPI processes \
                 (use `srun --mpi=pmix`)"
            )
        } else {
            "hxsim was probably started by the mpirun of a different MPI library than the one it was \
             built against (this build links Open MPI: use Open MPI's mpirun, or srun --mpi=pmix)"
                .to_string()
        }
    )]
    SizeMismatch {
        /// The variable that announced the ranks.
        var: &'static str,
        /// Ranks announced.
        expected: usize,
        /// Ranks MPI reports.
        actual: usize,
    },
    /// MPI could not be initialised as needed.
    #[error("MPI initialisation failed: {0}")]
    Init(String),
}

/// The number of ranks a launcher announced in the environment, with the variable that said so, or
/// `None` when no launcher variable is set (or [`SINGLE_PROCESS_ENV`] is). A variable that is set
/// but not a positive number is ignored.
pub fn launcher_ranks() -> Option<(&'static str, usize)> {
    if std::env::var_os(SINGLE_PROCESS_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return None;
    }
    LAUNCHER_VARS.iter().find_map(|&var| {
        let n = std::env::var(var).ok()?.trim().parse::<usize>().ok()?;
        (n >= 1).then_some((var, n))
    })
}

/// The processes a run spans, and the few collective operations the driver needs on them.
pub struct World {
    imp: Imp,
}

enum Imp {
    Single,
    #[cfg(feature = "mpi")]
    Mpi(super::mpi::MpiWorld),
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "World {{ rank: {}, size: {} }}", self.rank(), self.size())
    }
}

impl World {
    /// This process alone.
    pub fn single() -> Self {
        World { imp: Imp::Single }
    }

    /// The process group this process was started into: alone when no launcher announced more than
    /// one rank; otherwise the MPI world (initialised here, once per process), which must have the
    /// announced size. Built without the `mpi` feature, several announced ranks are an error.
    pub fn from_env() -> Result<Self, LaunchError> {
        match launcher_ranks() {
            None | Some((_, 1)) => Ok(World::single()),
            Some((var, ranks)) => Self::launched(var, ranks),
        }
    }

    #[cfg(feature = "mpi")]
    fn launched(var: &'static str, ranks: usize) -> Result<Self, LaunchError> {
        Ok(World { imp: Imp::Mpi(super::mpi::MpiWorld::init(var, ranks)?) })
    }

    #[cfg(not(feature = "mpi"))]
    fn launched(var: &'static str, ranks: usize) -> Result<Self, LaunchError> {
        Err(LaunchError::NoMpi { var, ranks })
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        match &self.imp {
            Imp::Single => 0,
            #[cfg(feature = "mpi")]
            Imp::Mpi(w) => w.rank(),
        }
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        match &self.imp {
            Imp::Single => 1,
            #[cfg(feature = "mpi")]
            Imp::Mpi(w) => w.size(),
        }
    }

    /// Whether this is rank 0, which merges and prints results.
    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    /// Gather one byte string from every rank on rank 0 (collective): `Some(strings by rank)` there,
    /// `None` elsewhere.
    pub fn gather_to_root(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        match &self.imp {
            Imp::Single => Some(vec![mine]),
            #[cfg(feature = "mpi")]
            Imp::Mpi(w) => w.gather_to_root(&mine),
        }
    }

    /// The minimum of `x` over all ranks (collective).
    pub fn min_all(&self, x: u64) -> u64 {
        match &self.imp {
            Imp::Single => x,
            #[cfg(feature = "mpi")]
            Imp::Mpi(w) => w.min_all(x),
        }
    }

    /// The element-wise sum of `words` over all ranks, on rank 0 (collective; every rank passes
    /// the same number of words): `Some(sums)` there, `None` elsewhere. Integer sums (wrapping, so
    /// two's-complement negative counts add up too) do not depend on the order ranks are combined
    /// in, so the result is the one a single process computes.
    pub fn sum_to_root(&self, words: &[u64]) -> Option<Vec<u64>> {
        match &self.imp {
            Imp::Single => Some(words.to_vec()),
            #[cfg(feature = "mpi")]
            Imp::Mpi(w) => w.sum_to_root(words),
        }
    }

    /// Run this rank's partitions with [`super::run_with`] over the world (collective).
    /// `neighbours` are the other ranks that own an LP linked to one of this rank's LPs (the only
    /// ranks this rank exchanges messages with); see [`super::run_with`] for `part_of`.
    pub fn run<P>(
        &self,
        parts: Vec<P>,
        part_of: &[u32],
        neighbours: &[usize],
        spec: &RunSpec,
        progress: &Progress,
    ) -> (Vec<P>, Outcome)
    where
        P: Partition,
        P::Msg: Serialize + DeserializeOwned,
    {
        self.run_observed(parts, part_of, neighbours, spec, progress, |_| {})
    }

    /// [`World::run`], calling `on_window(end)` at the end of every window on every rank, on the
    /// calling thread, after the window's exchange and before any partition starts the next
    /// window (see [`super::Transport::window_end`]). All ranks see the same `end`s, so
    /// `on_window` may make collective calls on this world (e.g. [`World::sum_to_root`]).
    pub fn run_observed<P, F>(
        &self,
        parts: Vec<P>,
        part_of: &[u32],
        neighbours: &[usize],
        spec: &RunSpec,
        progress: &Progress,
        on_window: F,
    ) -> (Vec<P>, Outcome)
    where
        P: Partition,
        P::Msg: Serialize + DeserializeOwned,
        F: FnMut(Cycle),
    {
        match &self.imp {
            Imp::Single => {
                debug_assert!(neighbours.is_empty());
                let mut tr = Observed { inner: super::Local, hook: on_window };
                super::run_with(parts, part_of, spec, progress, &mut tr)
            }
            #[cfg(feature = "mpi")]
            Imp::Mpi(w) => {
                let mut tr = Observed { inner: w.transport(neighbours), hook: on_window };
                super::run_with(parts, part_of, spec, progress, &mut tr)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_world_collectives_are_identities() {
        let w = World::single();
        assert_eq!((w.rank(), w.size()), (0, 1));
        assert!(w.is_root());
        assert_eq!(w.min_all(7), 7);
        assert_eq!(w.sum_to_root(&[1, u64::MAX]), Some(vec![1, u64::MAX]));
        assert_eq!(w.gather_to_root(vec![1, 2, 3]), Some(vec![vec![1, 2, 3]]));
    }
}
