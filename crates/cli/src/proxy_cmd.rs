//! `myrix mpiexec-proxy` (hidden): the per-host proxy of a `myrix mpiexec --hosts` job,
//! started by the launcher over ssh. It reads its part of the job from standard input
//! and runs `myrix_mpi::launch::proxy`; not for people to call.

use crate::CliError;
use std::process::ExitCode;

/// Runs the proxy; its exit status is 0 once its ranks are gone, 127 if one could not
/// be started (the launcher was told why).
pub fn run() -> Result<ExitCode, CliError> {
    let code = myrix_mpi::launch::proxy::run(std::io::stdin())
        .map_err(|e| CliError::Found(format!("mpiexec-proxy: {e}")))?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
