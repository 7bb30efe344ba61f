//! Library set-up, error handlers, the environment, and the guard around every
//! exported function.
//!
//! Environment (read at `mx_init`):
//! * `MX_ERRORS_ARE_FATAL=0` or `OMX_FATAL_ERRORS=0`: the default error handler is
//!   `MX_ERRORS_RETURN` instead of `MX_ERRORS_ARE_FATAL`.
//! * `OMX_IGNORE_MX_ENV=1`: `MX_*` variables are ignored (as Open-MX does).
//! * `MX_DISABLE_SELF`, `MX_DISABLE_SHMEM`: accepted; see [`Env`] for what they do.
//! * `MYRIX_MX_PEERS`, `MYRIX_MX_IFACES`: see [`crate::naming`].
//! * `MYRIX_MX_TRANSPORT=auto|shm|eth|omx`: see [`Mode`].
//! * `MYRIX_OMX_WIRE=mx`: Open-MX's frames in its MX-compatible wire mode (what
//!   Open-MX built with `--enable-mx-wire` speaks: native MX's frames); `default` or
//!   unset: Open-MX's default mode. See [`Env::mx_wire`].

/// How endpoints reach their peers (`MYRIX_MX_TRANSPORT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// `omx` where the peer table names NIC ids of other hosts (or `MX_DISABLE_SHMEM`
    /// asks for the NIC path) and a raw socket opens on the board; `shm` otherwise.
    #[default]
    Auto,
    /// Shared memory only: peers of this host.
    Shm,
    /// myrix's frames on raw Ethernet only (`eth:IFACE`).
    Eth,
    /// Open-MX's frames on raw Ethernet to other hosts' NIC ids, shared memory to this
    /// host's (`omx+shm:IFACE`; with `MX_DISABLE_SHMEM`, `omx+nic:IFACE`: this host's
    /// through the interface too).
    Omx,
}

use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

use crate::naming;
use crate::strings::strerror;
use crate::types::*;

/// What the environment asked for at `mx_init`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Env {
    /// `MX_DISABLE_SELF=1`: a message to one's own address takes the shared-memory
    /// ring rather than a library shortcut. myrix has no such shortcut (the ring is
    /// the only path), so this changes nothing; it is recorded for `mx_get_info`'s
    /// sake and the docs.
    pub disable_self: bool,
    /// `MX_DISABLE_SHMEM=1` (`OMX_DISABLE_SHARED=1`): local processes are reached
    /// through the NIC, as MX and Open-MX do: on an Ethernet board with a raw socket,
    /// the endpoint is `omx+nic:IFACE` (see [`Mode`]). On the host-only board, with
    /// `MYRIX_MX_TRANSPORT=shm` or `eth`, or without CAP_NET_RAW, it has no effect.
    pub disable_shmem: bool,
    /// The default error handler returns instead of aborting.
    pub errors_return: bool,
    pub mode: Mode,
    /// `MYRIX_OMX_WIRE=mx`: endpoints that speak Open-MX's frames speak them in its
    /// MX-compatible wire mode (4 KiB medium fragments, 4096-byte pull replies, a
    /// 4144-byte MTU), Open-MX's `--enable-mx-wire` chosen at run time. Every peer must
    /// be in the same mode: the two modes' frames do not mix.
    pub mx_wire: bool,
}

struct Lib {
    initialized: bool,
    handler: mx_error_handler_t,
    env: Env,
}

static LIB: Mutex<Lib> = Mutex::new(Lib {
    initialized: false,
    handler: None,
    env: Env {
        disable_self: false,
        disable_shmem: false,
        errors_return: false,
        mode: Mode::Auto,
        mx_wire: false,
    },
});

/// Locks a mutex, even one a caught panic poisoned (the state stays usable: every
/// update is a single assignment or map operation).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn env_flag(name: &str) -> Option<bool> {
    let v = std::env::var(name).ok()?;
    Some(!matches!(v.trim(), "" | "0" | "no" | "false"))
}

fn read_env() -> Env {
    let ignore_mx = env_flag("OMX_IGNORE_MX_ENV") == Some(true);
    let mx = |name: &str| if ignore_mx { None } else { env_flag(name) };
    let omx = |name: &str| env_flag(name);
    Env {
        disable_self: mx("MX_DISABLE_SELF")
            .or(omx("OMX_DISABLE_SELF"))
            .unwrap_or(false),
        disable_shmem: mx("MX_DISABLE_SHMEM")
            .or(omx("OMX_DISABLE_SHARED"))
            .unwrap_or(false),
        errors_return: mx("MX_ERRORS_ARE_FATAL")
            .or(omx("OMX_FATAL_ERRORS"))
            .map(|fatal| !fatal)
            .unwrap_or(false),
        mode: match std::env::var("MYRIX_MX_TRANSPORT")
            .as_deref()
            .map(str::trim)
        {
            Err(_) | Ok("" | "auto") => Mode::Auto,
            Ok("shm") => Mode::Shm,
            Ok("eth") => Mode::Eth,
            Ok("omx") => Mode::Omx,
            Ok(other) => {
                eprintln!("MX: MYRIX_MX_TRANSPORT={other:?} is not auto, shm, eth or omx: auto");
                Mode::Auto
            }
        },
        mx_wire: match std::env::var("MYRIX_OMX_WIRE").as_deref().map(str::trim) {
            Err(_) | Ok("" | "default") => false,
            Ok("mx") => true,
            Ok(other) => {
                eprintln!("MX: MYRIX_OMX_WIRE={other:?} is not default or mx: default");
                false
            }
        },
    }
}

/// The environment as `mx_init` read it.
pub fn env() -> Env {
    lock(&LIB).env
}

pub fn initialized() -> bool {
    lock(&LIB).initialized
}

/// The error handler in force for calls without an endpoint of their own.
pub fn global_handler() -> mx_error_handler_t {
    let lib = lock(&LIB);
    if lib.handler.is_some() {
        lib.handler
    } else if lib.env.errors_return {
        MX_ERRORS_RETURN
    } else {
        MX_ERRORS_ARE_FATAL
    }
}

/// A failed call: the handler (`h`, or the library's) decides what it returns.
pub fn fail_with(h: mx_error_handler_t, code: mx_return_t, what: &str) -> mx_return_t {
    let h = h.or_else(global_handler);
    let Some(f) = h else {
        return code;
    };
    let text = CString::new(what.replace('\0', " ")).unwrap_or_default();
    let raw = text.into_raw();
    // SAFETY: `f` is an error handler the program installed (or one of ours); it gets a
    // NUL-terminated string that lives until we take it back just after the call.
    let r = unsafe { f(raw, code) };
    // SAFETY: `raw` came from `CString::into_raw` above and is taken back once.
    drop(unsafe { CString::from_raw(raw) });
    r
}

/// A failed call without an endpoint.
pub fn fail(code: mx_return_t, what: &str) -> mx_return_t {
    fail_with(None, code, what)
}

/// Runs an exported function's body: a panic becomes `MX_BAD_BAD_BAD` (through the
/// error handler) rather than unwinding into C.
pub fn guard(name: &str, f: impl FnOnce() -> mx_return_t) -> mx_return_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => fail(ret::BAD_BAD_BAD, &format!("{name}: internal error")),
    }
}

/// The calls that need `mx_init` first.
pub fn need_init(name: &str) -> Result<(), mx_return_t> {
    if initialized() {
        Ok(())
    } else {
        Err(fail(
            ret::NOT_INITIALIZED,
            &format!("{name}: mx_init was not called"),
        ))
    }
}

unsafe extern "C" fn errors_are_fatal(text: *mut c_char, code: mx_return_t) -> mx_return_t {
    let what = if text.is_null() {
        String::new()
    } else {
        // SAFETY: the library passes a NUL-terminated string (`fail_with`); a program
        // calling the handler itself must too, as with MX.
        unsafe { std::ffi::CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    eprintln!("MX: fatal error: {what}: {}", strerror(code));
    std::process::abort()
}

unsafe extern "C" fn errors_return(_text: *mut c_char, code: mx_return_t) -> mx_return_t {
    code
}

/// Print the error and abort (the default).
#[no_mangle]
pub static MX_ERRORS_ARE_FATAL: mx_error_handler_t = Some(errors_are_fatal);
/// Return the error code to the caller.
#[no_mangle]
pub static MX_ERRORS_RETURN: mx_error_handler_t = Some(errors_return);

#[no_mangle]
pub extern "C" fn mx__init_api(api: c_int) -> mx_return_t {
    guard("mx_init", || {
        // The major version (0x3xx) must match; minor versions are compatible.
        if api >> 8 != MX_API >> 8 {
            return fail(
                ret::BAD_LIB_VERSION,
                &format!("mx_init: API {api:#x}, library {MX_API:#x}"),
            );
        }
        let mut lib = lock(&LIB);
        if lib.initialized {
            drop(lib);
            return fail(ret::ALREADY_INITIALIZED, "mx_init: already initialized");
        }
        lib.env = read_env();
        lib.initialized = true;
        drop(lib);
        naming::load();
        ret::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn mx_finalize() -> mx_return_t {
    guard("mx_finalize", || {
        if let Err(e) = need_init("mx_finalize") {
            return e;
        }
        crate::endpoint::close_all();
        lock(&LIB).initialized = false;
        ret::SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn mx_set_error_handler(h: mx_error_handler_t) -> mx_error_handler_t {
    catch_unwind(AssertUnwindSafe(|| {
        let old = global_handler();
        lock(&LIB).handler = h;
        old
    }))
    .unwrap_or_default()
}
