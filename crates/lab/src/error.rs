//! The crate's one error type. Its messages are complete sentences for a person; the
//! variant says whose fault it was, so a front end can pick an exit code.

use std::path::PathBuf;

/// What went wrong in an experiment or a benchmark.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The parameters were refused (a bad value, an unknown name, a network that cannot
    /// carry the run); nothing was measured.
    #[error("{0}")]
    Invalid(String),
    /// A plot could not be drawn or written to `path`.
    #[error("{}: {reason}", path.display())]
    Plot { path: PathBuf, reason: String },
    /// The run started and failed: a peer stopped answering, a message ended badly, a
    /// byte did not verify.
    #[error("{0}")]
    Failed(String),
}

impl LabError {
    pub(crate) fn plot(path: &std::path::Path, reason: impl Into<String>) -> LabError {
        LabError::Plot {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}
