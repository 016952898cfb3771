//! Placeholder until the GOAL reader lands (branch issue-33-kernels).
use super::{Workload, WorkloadError};
/// Parse GOAL text.
pub fn parse(_text: &str, file: &str) -> Result<Workload, WorkloadError> {
    Err(WorkloadError { at: file.into(), what: "GOAL not yet merged".into() })
}
