//! `MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`, `MPI_Comm_get_parent` (MPI-5.0
//! §11.3), over the ports of `dynproc.rs`.
//!
//! The spawning group's root opens a port and starts the children as a job of their
//! own: `myrix mpiexec -n <maxprocs> <command> <argv…>`, with the port in
//! `MYRIX_MPI_PARENT_PORT`. The children's `MPI_Init` connects back to it (their
//! `MPI_COMM_WORLD`, root 0), which is the intercommunicator
//! `MPI_Comm_get_parent` returns; the parents' side is an `MPI_Comm_accept` over the
//! spawning communicator. The `myrix` binary is the one that launched this job
//! (`MYRIX_MPIEXEC`, which `myrix mpiexec` sets), else the first `myrix` in `PATH`:
//! a program under hydra, Slurm or alone spawns through it too.
//!
//! * While the root waits for the children it watches their launcher: a command that
//!   cannot start (the launcher exits first) is `MPI_ERR_SPAWN` in every entry of
//!   `array_of_errcodes` at once, not a wait until the port's time-out.
//! * Info keys: `wdir` is the children's working directory; every other key (`host`,
//!   `path`, `file`, `arch`, …) is ignored: the children run on this host.
//! * `MPI_Comm_spawn_multiple` starts one job in `myrix mpiexec`'s MPMD form
//!   (`-n a prog1 … : -n b prog2 …`), so the children share one `MPI_COMM_WORLD` in
//!   command order and each has its command's index as `MPI_APPNUM`; each command's
//!   `wdir` is its ranks' directory.
//! * The children's launcher dies with the spawning process (`PR_SET_PDEATHSIG`), so
//!   none outlives it: `MPI_Finalize` at the parent first waits (at most the port's
//!   time-out) for the children's jobs to end.

use crate::abi::*;
use crate::comm::lookup;
use crate::dynproc::{connect_groups, Role};
use crate::ffi::{finish, mpi_fn, put};
use crate::intercomm::errh;
use crate::port::{self, Wire};
use crate::runtime;
use std::ffi::CStr;
use std::os::fd::AsRawFd;
use std::os::raw::{c_char, c_int};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The environment variable carrying the parent's port to the children.
pub const PARENT_PORT: &str = "MYRIX_MPI_PARENT_PORT";
/// The most processes one spawn starts (as `myrix mpiexec -n`).
const MAX_PROCS: c_int = 4096;
/// The most arguments one command may have.
const MAX_ARGS: usize = 4096;

static PARENT: AtomicUsize = AtomicUsize::new(MPI_COMM_NULL);
/// The children's launchers, waited for at MPI_Finalize.
static LAUNCHERS: Mutex<Vec<Child>> = Mutex::new(Vec::new());

/// What one command of a spawn starts.
struct Cmd {
    program: String,
    args: Vec<String>,
    n: u32,
    wdir: Option<String>,
}

fn launcher() -> Result<PathBuf, c_int> {
    if let Some(p) = std::env::var_os("MYRIX_MPIEXEC").filter(|p| !p.is_empty()) {
        return Ok(p.into());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("myrix"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            crate::ffi::say!(
                "myrix MPI: MPI_Comm_spawn starts the children with `myrix mpiexec`: run \
                 under it, or put myrix in PATH"
            );
            MPI_ERR_SPAWN
        })
}

/// Starts the children's job: one program, or several in the MPMD form.
fn start(cmds: &[Cmd], port: &str) -> Result<Child, c_int> {
    let mut cmd = Command::new(launcher()?);
    cmd.arg("mpiexec");
    for (i, c) in cmds.iter().enumerate() {
        if i > 0 {
            cmd.arg(":");
        }
        cmd.args(["-n", &c.n.to_string()]);
        if let Some(d) = &c.wdir {
            cmd.args(["--wdir", d]);
        }
        cmd.arg(&c.program).args(&c.args);
    }
    cmd.env(PARENT_PORT, port).stdin(Stdio::null());
    for k in [
        "PMI_FD",
        "PMI_PORT",
        "PMI_ID",
        "PMI_JOBID",
        "PMI_RANK",
        "PMI_SIZE",
    ] {
        cmd.env_remove(k);
    }
    // This process's end of its own launcher's socket must not leak into the
    // children's launcher.
    let pmi_fd: c_int = std::env::var("PMI_FD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);
    // SAFETY: between fork and exec the closure calls only close and prctl, which
    // are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if pmi_fd > 2 {
                libc::close(pmi_fd);
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    cmd.spawn().map_err(|e| {
        crate::ffi::say!("myrix MPI: MPI_Comm_spawn: cannot start myrix mpiexec: {e}");
        MPI_ERR_SPAWN
    })
}

/// Reads a C argument vector (NULL-terminated; NULL is none).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of C strings.
unsafe fn argv_of(argv: *const *mut c_char) -> Result<Vec<String>, c_int> {
    let mut v = Vec::new();
    if argv.is_null() {
        return Ok(v);
    }
    for i in 0.. {
        if i >= MAX_ARGS {
            return Err(MPI_ERR_ARG);
        }
        // SAFETY: within the array up to its NULL, by the caller's contract.
        let p = unsafe { *argv.add(i) };
        if p.is_null() {
            break;
        }
        // SAFETY: a C string.
        let s = unsafe { CStr::from_ptr(p) };
        v.push(s.to_str().map_err(|_| MPI_ERR_ARG)?.to_string());
    }
    Ok(v)
}

/// One command from C arguments.
///
/// # Safety
/// As [`argv_of`]; `command` is NULL or a C string.
unsafe fn cmd_of(
    command: *const c_char,
    argv: *const *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
) -> Result<Cmd, c_int> {
    if command.is_null() {
        return Err(MPI_ERR_ARG);
    }
    if !(1..=MAX_PROCS).contains(&maxprocs) {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: a C string by the caller's contract.
    let program = unsafe { CStr::from_ptr(command) }
        .to_str()
        .map_err(|_| MPI_ERR_ARG)?
        .to_string();
    if program.is_empty() {
        return Err(MPI_ERR_ARG);
    }
    let wdir = crate::info::pairs_or_empty(info)?
        .into_iter()
        .find(|(k, _)| k == "wdir")
        .map(|(_, v)| v);
    Ok(Cmd {
        program,
        // SAFETY: the caller's contract.
        args: unsafe { argv_of(argv) }?,
        n: maxprocs as u32,
        wdir,
    })
}

/// The spawn, collective over `comm`; `cmd` is called at `root` only.
fn spawn(
    cmd: impl FnOnce() -> Result<Vec<Cmd>, c_int>,
    root: c_int,
    comm: MPI_Comm,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    let lc = lookup(comm, name)?;
    let mut opened: Option<String> = None;
    let mut child: Option<Child> = None;
    let wire = || {
        let c = cmd()?;
        let p = port::open()?;
        opened = Some(p.clone());
        let ch = child.insert(start(&c, &p)?);
        let deadline = Instant::now() + port::timeout();
        let s = port::accept_watching(&p, deadline, &mut || match ch.try_wait() {
            Ok(None) => None,
            Ok(Some(st)) => Some(format!("the children's launcher ended ({st})")),
            Err(e) => Some(e.to_string()),
        })
        .map_err(|e| if e == MPI_ERR_PORT { MPI_ERR_SPAWN } else { e })?;
        let w = Wire {
            fd: s.as_raw_fd(),
            deadline,
        };
        Ok((w, s))
    };
    let r = connect_groups(lc, root, Role::Accept, wire, errh(comm), name);
    if let Some(p) = opened {
        let _ = port::close(&p);
    }
    if let Some(mut ch) = child {
        if r.is_ok() {
            LAUNCHERS.lock().unwrap_or_else(|p| p.into_inner()).push(ch);
        } else {
            let _ = ch.kill();
            let _ = ch.wait();
        }
    }
    r
}

/// Fills `codes` (`n` ints, NULL: ignored) with `code`.
///
/// # Safety
/// `codes` is NULL or valid for `n` ints.
unsafe fn fill(codes: *mut c_int, n: usize, code: c_int) {
    if codes.is_null() {
        return;
    }
    for i in 0..n.min(MAX_PROCS as usize) {
        // SAFETY: the caller's contract.
        unsafe { codes.add(i).write(code) };
    }
}

/// The spawn's result into C: the intercommunicator and the error codes.
///
/// # Safety
/// `intercomm` NULL or an MPI_Comm; `codes` NULL or valid for `n` ints.
unsafe fn finish_spawn(
    r: Result<MPI_Comm, c_int>,
    intercomm: *mut MPI_Comm,
    codes: *mut c_int,
    n: c_int,
    comm: MPI_Comm,
    name: &str,
) -> c_int {
    let r = r.and_then(|h| {
        let remote = lookup(h, name).map_or(0, |c| c.ranks.len());
        // SAFETY: the caller's contract.
        unsafe { fill(codes, remote, MPI_SUCCESS) };
        // SAFETY: as above.
        unsafe { put(intercomm, h) }
    });
    if let Err(code) = r {
        // SAFETY: the caller's contract.
        unsafe { fill(codes, usize::try_from(n).unwrap_or(0), code) };
        if !intercomm.is_null() {
            // SAFETY: non-NULL, an MPI_Comm.
            unsafe { intercomm.write(MPI_COMM_NULL) };
        }
    }
    finish(comm, name, r.map(drop))
}

mpi_fn! {
    fn MPI_Comm_spawn / PMPI_Comm_spawn(command: *const c_char, argv: *mut *mut c_char, maxprocs: c_int, info: MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) -> c_int {
        let name = "MPI_Comm_spawn";
        let r = if intercomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: the C contract (read at the root only).
            spawn(|| unsafe { cmd_of(command, argv, maxprocs, info) }.map(|c| vec![c]), root, comm, name)
        };
        // SAFETY: the C contract.
        unsafe { finish_spawn(r, intercomm, array_of_errcodes, maxprocs, comm, name) }
    }
}

mpi_fn! {
    /// One job of the commands in order (MPMD), at most 4096 processes in all.
    fn MPI_Comm_spawn_multiple / PMPI_Comm_spawn_multiple(count: c_int, array_of_commands: *mut *mut c_char, array_of_argv: *mut *mut *mut c_char, array_of_maxprocs: *const c_int, array_of_info: *const MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) -> c_int {
        let name = "MPI_Comm_spawn_multiple";
        // The total, for the error codes (NULL arrays give 0).
        let total: c_int = if count > 0 && count <= MAX_PROCS && !array_of_maxprocs.is_null() {
            // SAFETY: count ints by the C contract.
            (0..count as usize).map(|i| unsafe { *array_of_maxprocs.add(i) }.clamp(0, MAX_PROCS)).sum::<c_int>()
        } else {
            0
        };
        let cmds = || -> Result<Vec<Cmd>, c_int> {
            if !(1..=MAX_PROCS).contains(&count) || array_of_commands.is_null() || array_of_maxprocs.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let mut all: Vec<Cmd> = Vec::new();
            let mut n: u32 = 0;
            for i in 0..count as usize {
                // SAFETY: arrays of `count` entries by the C contract.
                let (c, a, m, inf) = unsafe {
                    (
                        *array_of_commands.add(i),
                        if array_of_argv.is_null() { std::ptr::null_mut() } else { *array_of_argv.add(i) },
                        *array_of_maxprocs.add(i),
                        if array_of_info.is_null() { MPI_INFO_NULL } else { *array_of_info.add(i) },
                    )
                };
                // SAFETY: as above.
                let c = unsafe { cmd_of(c, a, m, inf) }?;
                n = n.checked_add(c.n).filter(|&n| n <= MAX_PROCS as u32).ok_or(MPI_ERR_ARG)?;
                all.push(c);
            }
            Ok(all)
        };
        let r = if intercomm.is_null() { Err(MPI_ERR_ARG) } else { spawn(cmds, root, comm, name) };
        // SAFETY: the C contract.
        unsafe { finish_spawn(r, intercomm, array_of_errcodes, total, comm, name) }
    }
}

mpi_fn! {
    /// The intercommunicator to the parents of a spawned process; MPI_COMM_NULL
    /// for a process MPI_Comm_spawn did not start (or once it is disconnected).
    fn MPI_Comm_get_parent / PMPI_Comm_get_parent(parent: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_get_parent";
        let p = PARENT.load(Ordering::SeqCst);
        let p = if p != MPI_COMM_NULL && lookup(p, name).is_err() { MPI_COMM_NULL } else { p };
        // SAFETY: parent is NULL or an MPI_Comm.
        let r = runtime::check(name).and_then(|()| unsafe { put(parent, p) });
        finish(MPI_COMM_WORLD, name, r)
    }
}

/// At MPI_Init: a spawned process connects to its parents (collective over its
/// `MPI_COMM_WORLD`).
pub fn connect_parent() -> Result<(), c_int> {
    let Some(port) = std::env::var(PARENT_PORT).ok().filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let name = "MPI_Init";
    let lc = lookup(MPI_COMM_WORLD, name)?;
    let deadline = Instant::now() + port::timeout();
    let wire = || {
        let s = port::connect(&port)?;
        Ok((
            Wire {
                fd: s.as_raw_fd(),
                deadline,
            },
            s,
        ))
    };
    let h = connect_groups(lc, 0, Role::Connect, wire, errh(MPI_COMM_WORLD), name)?;
    PARENT.store(h, Ordering::SeqCst);
    Ok(())
}

/// The parent intercommunicator was disconnected or freed.
pub fn forget_parent(h: MPI_Comm) {
    let _ = PARENT.compare_exchange(h, MPI_COMM_NULL, Ordering::SeqCst, Ordering::SeqCst);
}

/// At MPI_Finalize: waits (at most the port's time-out) for the children's jobs.
pub fn wait_children() {
    let mut l = LAUNCHERS.lock().unwrap_or_else(|p| p.into_inner());
    let end = Instant::now() + port::timeout();
    for ch in l.iter_mut() {
        while matches!(ch.try_wait(), Ok(None)) && Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    l.clear();
}
