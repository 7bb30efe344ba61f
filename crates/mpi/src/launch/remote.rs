//! The launcher's side of the ranks on other hosts: one ssh per host running `myrix
//! mpiexec-proxy` ([`super::proxy`]), fed the host's part of the job on its standard
//! input, which stays open for the job's lifetime: closing it (or the ssh dying) makes
//! the proxy kill that host's ranks.
//!
//! * The ssh command is `MYRIX_SSH` (split at spaces, e.g. `ssh -p 2222 -i key`), else
//!   `ssh`, followed by `-o BatchMode=yes -o ConnectTimeout=10 -x -T HOST` (no
//!   password prompt, a bounded connect, no X11 nor terminal) and the remote command
//!   `exec '<this myrix>' mpiexec-proxy` — the same path as here, as hydra expects
//!   `hydra_pmi_proxy` where it is itself.
//! * ssh runs in a process group of its own (a Ctrl-C at the terminal reaches the
//!   launcher, which ends the job in order) and gets SIGKILL if the launcher dies.
//! * The environment the ranks get there: [`forwarded_env`].

use super::proxy::ProxySpec;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// How long a host's proxy has to connect back once its ssh started.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the launcher waits for a proxy to end its ranks and exit, at the end.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// One remote host of the job.
pub struct Remote {
    pub name: String,
    ssh: Child,
    /// Writes the job to ssh's standard input (a big job may fill the pipe before
    /// ssh connected: the launcher does not wait for it) and keeps that input open.
    stdin: Option<std::thread::JoinHandle<Option<ChildStdin>>>,
    pub started: Instant,
    /// The proxy connected back.
    pub up: bool,
    /// The proxy's connection closed.
    pub gone: bool,
    /// ssh's exit, and when it was seen.
    pub exited: Option<(ExitStatus, Instant)>,
}

/// The variables sent along to the ranks on other hosts (hydra sends all; these are
/// the ones a myrix rank reads or a program commonly needs): every `MYRIX_*` but
/// `MYRIX_SSH` and `MYRIX_PMI_ADDR` (the launcher's own), `OMP_*`, `PATH`,
/// `LD_LIBRARY_PATH`, `LANG`, `LC_*`, `TZ`, `TMPDIR`.
pub fn forwarded_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| {
            let Some(k) = k.to_str() else { return false };
            (k.starts_with("MYRIX_") && k != "MYRIX_SSH" && k != "MYRIX_PMI_ADDR")
                || k.starts_with("OMP_")
                || k.starts_with("LC_")
                || matches!(k, "PATH" | "LD_LIBRARY_PATH" | "LANG" | "TZ" | "TMPDIR")
        })
        .collect()
}

/// `s` quoted for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The ssh command line for `host` (see the module's notes).
pub fn ssh_command(host: &str, exe: &std::path::Path) -> Result<Command, String> {
    let words: Vec<String> = match std::env::var("MYRIX_SSH") {
        Ok(v) if !v.trim().is_empty() => v.split_whitespace().map(String::from).collect(),
        Ok(_) | Err(std::env::VarError::NotPresent) => vec!["ssh".into()],
        Err(std::env::VarError::NotUnicode(_)) => return Err("MYRIX_SSH is not text".into()),
    };
    let exe = exe
        .to_str()
        .ok_or_else(|| format!("{}: the path of myrix is not text", exe.display()))?;
    let mut c = Command::new(&words[0]);
    c.args(&words[1..])
        .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-x", "-T"])
        .arg(host)
        .arg(format!("exec {} mpiexec-proxy", shell_quote(exe)));
    Ok(c)
}

impl Remote {
    /// Starts ssh toward `host` and writes it the proxy's job.
    pub fn start(host: &str, spec: &ProxySpec, exe: &std::path::Path) -> Result<Remote, String> {
        let mut cmd = ssh_command(host, exe)?;
        cmd.stdin(Stdio::piped());
        // SAFETY: setpgid and prctl are async-signal-safe: ssh leaves the terminal's
        // process group and dies with the launcher.
        unsafe {
            cmd.pre_exec(|| {
                libc::setpgid(0, 0);
                #[cfg(target_os = "linux")]
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let prog = cmd.get_program().to_string_lossy().into_owned();
        let mut ssh = cmd
            .spawn()
            .map_err(|e| format!("host {host}: starting {prog}: {e}"))?;
        let stdin = ssh.stdin.take();
        let text = spec.encode();
        // A proxy that never reads (ssh failed at once) is seen by its exit status.
        let writer = std::thread::spawn(move || {
            let mut s = stdin?;
            let _ = s.write_all(text.as_bytes());
            let _ = s.flush();
            Some(s)
        });
        Ok(Remote {
            name: host.to_string(),
            ssh,
            stdin: Some(writer),
            started: Instant::now(),
            up: false,
            gone: false,
            exited: None,
        })
    }

    /// Closes ssh's standard input (a write still blocked ends when ssh is killed).
    fn close_stdin(&mut self) {
        if let Some(w) = self.stdin.take() {
            if !w.is_finished() {
                let _ = self.ssh.kill();
            }
            drop(w.join());
        }
    }

    /// Notes ssh's exit, if it happened.
    pub fn poll(&mut self) {
        if self.exited.is_none() {
            if let Ok(Some(s)) = self.ssh.try_wait() {
                self.exited = Some((s, Instant::now()));
            }
        }
    }
}

/// Ends every remote host's part of the job: their standard input closed (the
/// proxies kill their ranks and exit), then waits for each ssh, which returns once
/// its proxy ended; one that takes longer than [`STOP_WAIT`] is killed.
pub fn stop_all(remotes: &mut [Remote]) {
    for r in remotes.iter_mut() {
        r.close_stdin();
    }
    let end = Instant::now() + STOP_WAIT;
    for r in remotes.iter_mut() {
        while r.exited.is_none() && Instant::now() < end {
            r.poll();
            std::thread::sleep(Duration::from_millis(10));
        }
        if r.exited.is_none() {
            let _ = r.ssh.kill();
            if let Ok(s) = r.ssh.wait() {
                r.exited = Some((s, Instant::now()));
            }
        }
    }
}

/// The signal that asked a job with remote hosts to end (0: none).
pub static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::Relaxed);
}

/// SIGINT, SIGTERM and SIGHUP noted in [`SIGNALLED`] while it lives (the job then
/// ends in order, remote ranks included), the previous handlers back when dropped.
pub struct SignalGuard(Vec<(libc::c_int, libc::sighandler_t)>);

impl SignalGuard {
    pub fn install() -> SignalGuard {
        SIGNALLED.store(0, Ordering::Relaxed);
        let h = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        SignalGuard(
            [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
                .iter()
                .map(|&s| (s, unsafe { libc::signal(s, h) }))
                .collect(),
        )
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        for &(s, old) in &self.0 {
            // SAFETY: restores the handler `install` replaced.
            unsafe { libc::signal(s, old) };
        }
    }
}

/// The PMI port for remote ranks: the address each remote host is told
/// (`MYRIX_PMI_ADDR`, else the source address of the route toward it) and the
/// listener (that address, or every address of its family when hosts differ).
pub fn pmi_listener(
    names: &[&str],
) -> Result<(std::net::TcpListener, Vec<String>), super::LaunchError> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let fixed = match std::env::var("MYRIX_PMI_ADDR") {
        Ok(v) => Some(v.trim().parse::<IpAddr>().map_err(|_| {
            super::LaunchError::Hosts(format!("MYRIX_PMI_ADDR={v}: not an IP address"))
        })?),
        Err(_) => None,
    };
    let addrs = names
        .iter()
        .map(|h| {
            fixed
                .or_else(|| super::hosts::source_address_toward(h))
                .ok_or_else(|| super::LaunchError::Host {
                    host: h.to_string(),
                    why: "cannot resolve it or find a route to it".into(),
                })
        })
        .collect::<Result<Vec<IpAddr>, _>>()?;
    let bind = match fixed {
        Some(a) => a,
        None if addrs.windows(2).all(|w| w[0] == w[1]) => addrs[0],
        None if addrs.iter().all(|a| a.is_ipv4()) => Ipv4Addr::UNSPECIFIED.into(),
        None => Ipv6Addr::UNSPECIFIED.into(),
    };
    let l = std::net::TcpListener::bind(SocketAddr::new(bind, 0))
        .map_err(|e| super::LaunchError::Hosts(format!("the PMI port on {bind}: {e}")))?;
    let port = l
        .local_addr()
        .map_err(|e| super::LaunchError::Hosts(format!("the PMI port: {e}")))?
        .port();
    let told = addrs
        .iter()
        .map(|a| SocketAddr::new(*a, port).to_string())
        .collect();
    Ok((l, told))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_command_is_quoted() {
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        let c = ssh_command("h1", std::path::Path::new("/opt/my rix/myrix")).unwrap();
        let args: Vec<_> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(args.contains(&"BatchMode=yes".to_string()));
        assert!(args.contains(&"ConnectTimeout=10".to_string()));
        let h = args.iter().position(|a| a == "h1").unwrap();
        assert_eq!(args[h + 1], "exec '/opt/my rix/myrix' mpiexec-proxy");
    }

    #[test]
    fn the_launchers_own_variables_stay_here() {
        let names: Vec<String> = forwarded_env()
            .into_iter()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        assert!(!names
            .iter()
            .any(|k| k == "MYRIX_SSH" || k == "MYRIX_PMI_ADDR"));
        assert!(!names.iter().any(|k| k == "HOME" || k.starts_with("SSH_")));
    }
}
