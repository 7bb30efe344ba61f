//! A PMI client over a socket: PMI-1 on `PMI_FD` or `PMI_PORT`+`PMI_ID` (MPICH's
//! hydra, `myrix mpiexec`), PMI-2 on `PMI_FD` (Slurm's `srun --mpi=pmi2`), or a
//! singleton when neither is set. The protocol is [`super::codec`]; this file only
//! moves bytes.

use super::codec::{field, int_field, PmiError, Request, Version};
use super::wire::{valid_pmi1_value, Decoder, Framing, Message};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the environment comes from (the process's, or a map in tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// How the client reached its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No PMI in the environment: a job of one.
    Singleton,
    Pmi1,
    Pmi2,
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// A connected (or singleton) PMI client after `init`.
pub struct PmiClient {
    stream: Option<Box<dyn Stream>>,
    decoder: Decoder,
    version: Version,
    mode: Mode,
    rank: u32,
    size: u32,
    appnum: i64,
    kvsname: String,
    /// The singleton's key-value space.
    local: HashMap<String, String>,
    finalized: bool,
}

impl std::fmt::Debug for PmiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmiClient")
            .field("mode", &self.mode)
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("kvsname", &self.kvsname)
            .finish()
    }
}

/// `PMI_FD` can be taken once per process: a second owner would close it twice.
static FD_TAKEN: AtomicBool = AtomicBool::new(false);

fn parse_env_int(env: Env, key: &str) -> Result<Option<i64>, PmiError> {
    match env(key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| PmiError::Env(format!("{key}={v:?} is not a number"))),
    }
}

/// `PMI_RANK` and `PMI_SIZE`, which PMI-1 servers set (PMI-1 has no query for them).
fn env_rank_size(env: Env) -> Result<(Option<i64>, Option<i64>), PmiError> {
    Ok((
        parse_env_int(env, "PMI_RANK")?,
        parse_env_int(env, "PMI_SIZE")?,
    ))
}

/// Takes the socket `PMI_FD` names.
fn take_fd(fd: i64) -> Result<UnixStream, PmiError> {
    use std::os::fd::FromRawFd;
    let fd = i32::try_from(fd)
        .ok()
        .filter(|&f| f > 2)
        .ok_or_else(|| PmiError::Env(format!("PMI_FD={fd} is not a usable descriptor")))?;
    // SAFETY: fcntl(F_GETFD) only queries the descriptor table; any int is allowed.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(PmiError::Env(format!("PMI_FD={fd} is not open")));
    }
    if FD_TAKEN.swap(true, Ordering::SeqCst) {
        return Err(PmiError::Env(
            "PMI_FD was already taken by this process".into(),
        ));
    }
    // Keep the descriptor out of programs this process starts later.
    // SAFETY: fd is open (checked above); setting FD_CLOEXEC changes no memory.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    // SAFETY: fd is open, and this process hands it to exactly one owner (FD_TAKEN):
    // the launcher gave it to us for PMI and nothing else in the process uses it.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}

impl PmiClient {
    /// Connects as the environment says and runs `init` (and for PMI-2 `fullinit`,
    /// for PMI-1 the rank/size/kvsname queries).
    pub fn from_env(env: Env) -> Result<PmiClient, PmiError> {
        let want_v2 = match env("MYRIX_PMI").as_deref() {
            Some("1") | Some("pmi1") => false,
            Some("2") | Some("pmi2") => true,
            // Slurm's pmi2 plugin sets PMI_JOBID; hydra does not.
            _ => env("PMI_JOBID").is_some(),
        };
        if let Some(fd) = parse_env_int(env, "PMI_FD")? {
            let stream = Box::new(take_fd(fd)?);
            let rank = parse_env_int(env, "PMI_RANK")?.unwrap_or(0);
            return if want_v2 {
                let jobid = env("PMI_JOBID").unwrap_or_default();
                PmiClient::start_v2(stream, jobid, rank)
            } else {
                PmiClient::start_v1(stream, None, env_rank_size(env)?)
            };
        }
        if let Some(port) = env("PMI_PORT") {
            let id = parse_env_int(env, "PMI_ID")?.unwrap_or(0);
            let s = TcpStream::connect(port.trim())
                .map_err(|e| PmiError::Env(format!("PMI_PORT={port}: {e}")))?;
            let _ = s.set_nodelay(true);
            return PmiClient::start_v1(Box::new(s), Some(id), env_rank_size(env)?);
        }
        Ok(PmiClient::singleton())
    }

    /// PMI-1 over an already connected stream (what `PMI_FD` names), for a rank
    /// that knows its rank and size from elsewhere (`PMI_RANK`, `PMI_SIZE`).
    pub fn pmi1_over(stream: UnixStream, rank: i64, size: i64) -> Result<PmiClient, PmiError> {
        PmiClient::start_v1(Box::new(stream), None, (Some(rank), Some(size)))
    }

    /// PMI-2 over an already connected stream, as under `srun --mpi=pmi2`.
    pub fn pmi2_over(stream: UnixStream, jobid: &str, rank: i64) -> Result<PmiClient, PmiError> {
        PmiClient::start_v2(Box::new(stream), jobid.to_string(), rank)
    }

    /// A job of one, with a local key-value space.
    pub fn singleton() -> PmiClient {
        PmiClient {
            stream: None,
            decoder: Decoder::new(Framing::Lines),
            version: Version::V1,
            mode: Mode::Singleton,
            rank: 0,
            size: 1,
            appnum: 0,
            kvsname: "singleton".into(),
            local: HashMap::new(),
            finalized: false,
        }
    }

    fn new(stream: Box<dyn Stream>, version: Version) -> PmiClient {
        PmiClient {
            stream: Some(stream),
            decoder: Decoder::new(Framing::Lines),
            version,
            mode: if version == Version::V1 {
                Mode::Pmi1
            } else {
                Mode::Pmi2
            },
            rank: 0,
            size: 1,
            appnum: 0,
            kvsname: String::new(),
            local: HashMap::new(),
            finalized: false,
        }
    }

    fn start_v1(
        stream: Box<dyn Stream>,
        id: Option<i64>,
        mut rank_size: (Option<i64>, Option<i64>),
    ) -> Result<PmiClient, PmiError> {
        let mut c = PmiClient::new(stream, Version::V1);
        if let Some(id) = id {
            c.call(&Request::InitAck { id })?;
            // The server then says `cmd=set size=N`, `rank=R`, `debug=D`.
            for _ in 0..3 {
                let m = c.read_message()?;
                if m.cmd == "set" {
                    rank_size.0 = m.get_int("rank").or(rank_size.0);
                    rank_size.1 = m.get_int("size").or(rank_size.1);
                }
            }
        }
        c.call(&Request::Init)?;
        let kvs = c.call(&Request::GetMyKvsname)?;
        c.kvsname = field(&kvs, "kvsname")?.to_string();
        if let Ok(a) = c.call(&Request::GetAppnum) {
            c.appnum = a.get_int("appnum").unwrap_or(0);
        }
        let (Some(rank), Some(size)) = rank_size else {
            return Err(PmiError::Env(
                "PMI-1 server gave no rank/size (PMI_RANK, PMI_SIZE unset)".into(),
            ));
        };
        c.set_rank_size(rank, size)?;
        Ok(c)
    }

    fn start_v2(stream: Box<dyn Stream>, jobid: String, rank: i64) -> Result<PmiClient, PmiError> {
        let mut c = PmiClient::new(stream, Version::V2);
        c.call(&Request::Init)?;
        c.decoder.set_framing(Framing::Length6);
        let r = c.call(&Request::FullInit {
            jobid: jobid.clone(),
            rank,
        })?;
        let rank = int_field(&r, "rank")?;
        let size = int_field(&r, "size")?;
        c.appnum = r.get_int("appnum").unwrap_or(0);
        c.kvsname = if jobid.is_empty() {
            "pmi2".to_string()
        } else {
            jobid
        };
        c.set_rank_size(rank, size)?;
        Ok(c)
    }

    fn set_rank_size(&mut self, rank: i64, size: i64) -> Result<(), PmiError> {
        let size = u32::try_from(size)
            .ok()
            .filter(|&s| s >= 1)
            .ok_or_else(|| PmiError::Env(format!("job size {size} is not positive")))?;
        let rank = u32::try_from(rank)
            .ok()
            .filter(|&r| r < size)
            .ok_or_else(|| PmiError::Env(format!("rank {rank} is not below size {size}")))?;
        self.rank = rank;
        self.size = size;
        Ok(())
    }

    fn read_message(&mut self) -> Result<Message, PmiError> {
        let stream = self
            .stream
            .as_mut()
            .ok_or_else(|| PmiError::Env("no PMI connection".into()))?;
        let mut buf = [0u8; 4096];
        loop {
            if let Some(m) = self.decoder.next_message() {
                return Ok(m?);
            }
            let n = stream.read(&mut buf)?;
            if n == 0 {
                return Err(PmiError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "PMI server closed the connection",
                )));
            }
            self.decoder.feed(&buf[..n]);
        }
    }

    /// Sends one request and waits for its reply.
    fn call(&mut self, req: &Request) -> Result<Message, PmiError> {
        let bytes = req.encode(self.version);
        let stream = self
            .stream
            .as_mut()
            .ok_or_else(|| PmiError::Env("no PMI connection".into()))?;
        stream.write_all(&bytes)?;
        stream.flush()?;
        if req.reply_cmd(self.version).is_none() {
            return Ok(Message::default());
        }
        let m = self.read_message()?;
        req.check(self.version, m)
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn rank(&self) -> u32 {
        self.rank
    }
    pub fn size(&self) -> u32 {
        self.size
    }
    pub fn appnum(&self) -> i64 {
        self.appnum
    }
    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// Stores `key=value` in the job's key-value space (visible to others after the
    /// next [`fence`](Self::fence)).
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        if !valid_pmi1_value(key) || !valid_pmi1_value(value) {
            return Err(PmiError::BadValue(key.to_string()));
        }
        if self.mode == Mode::Singleton {
            self.local.insert(key.to_string(), value.to_string());
            return Ok(());
        }
        let req = Request::Put {
            kvsname: self.kvsname.clone(),
            key: key.to_string(),
            value: value.to_string(),
        };
        self.call(&req).map(drop)
    }

    /// Reads a key another rank put before the last fence.
    pub fn get(&mut self, key: &str) -> Result<String, PmiError> {
        if self.mode == Mode::Singleton {
            return self
                .local
                .get(key)
                .cloned()
                .ok_or_else(|| PmiError::NotFound(key.to_string()));
        }
        let req = Request::Get {
            kvsname: self.kvsname.clone(),
            key: key.to_string(),
        };
        let r = self.call(&req)?;
        Ok(field(&r, "value")?.to_string())
    }

    /// A job attribute such as `PMI_process_mapping`.
    pub fn job_attr(&mut self, key: &str) -> Result<String, PmiError> {
        match self.mode {
            Mode::Singleton => Err(PmiError::NotFound(key.to_string())),
            Mode::Pmi1 => self.get(key),
            Mode::Pmi2 => {
                let r = self.call(&Request::JobAttr {
                    key: key.to_string(),
                })?;
                Ok(field(&r, "value")?.to_string())
            }
        }
    }

    /// PMI-1 `barrier`, PMI-2 `kvs-fence`: every rank waits for all, and the puts
    /// before it become visible.
    pub fn fence(&mut self) -> Result<(), PmiError> {
        if self.mode == Mode::Singleton {
            return Ok(());
        }
        self.call(&Request::Fence).map(drop)
    }

    /// Asks the launcher to end the whole job. The launcher kills this process too; if
    /// it has not within a few seconds (or there is none), the process exits `code`.
    pub fn abort(&mut self, code: i32, msg: &str) -> ! {
        if self.mode != Mode::Singleton {
            let msg: String = msg
                .chars()
                .map(|c| if c.is_ascii_graphic() { c } else { '_' })
                .collect();
            let _ = self.call(&Request::Abort { code, msg });
            std::thread::sleep(std::time::Duration::from_secs(3));
        }
        std::process::exit(i32::from(crate::launch::exit_status(code)))
    }

    /// Tells the launcher this rank is done with PMI. Idempotent.
    pub fn finalize(&mut self) -> Result<(), PmiError> {
        if self.finalized || self.mode == Mode::Singleton {
            self.finalized = true;
            return Ok(());
        }
        self.finalized = true;
        self.call(&Request::Finalize).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_pmi_is_a_singleton() {
        let env = |_: &str| None;
        let mut c = PmiClient::from_env(&env).unwrap();
        assert_eq!((c.mode(), c.rank(), c.size()), (Mode::Singleton, 0, 1));
        c.put("a", "b").unwrap();
        c.fence().unwrap();
        assert_eq!(c.get("a").unwrap(), "b");
        assert!(c.get("z").is_err());
        c.finalize().unwrap();
    }

    /// Plays Slurm's side of PMI-2 for one rank (1 of 2).
    fn fake_slurm(mut s: UnixStream) {
        use super::super::wire::Decoder;
        let mut d = Decoder::new(Framing::Lines);
        let mut buf = [0u8; 1024];
        let mut kvs = HashMap::new();
        loop {
            let m = loop {
                if let Some(m) = d.next_message() {
                    break m.unwrap();
                }
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    return;
                }
                d.feed(&buf[..n]);
            };
            let reply = match m.cmd.as_str() {
                "init" => {
                    assert_eq!(m.get("pmi_version"), Some("2"));
                    s.write_all(b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n")
                        .unwrap();
                    d.set_framing(Framing::Length6);
                    continue;
                }
                "fullinit" => {
                    assert_eq!(m.get("pmijobid"), Some("4.0"));
                    Message::new("fullinit-response")
                        .with("pmi-version", 2)
                        .with("rank", 1)
                        .with("size", 2)
                        .with("appnum", 0)
                        .with("rc", 0)
                }
                "info-getjobattr" => Message::new("info-getjobattr-response")
                    .with("rc", 0)
                    .with("found", "TRUE")
                    .with("value", "(vector,(0,1,2))"),
                "kvs-put" => {
                    kvs.insert(
                        m.get("key").unwrap().to_string(),
                        m.get("value").unwrap().to_string(),
                    );
                    Message::new("kvs-put-response").with("rc", 0)
                }
                "kvs-fence" => Message::new("kvs-fence-response").with("rc", 0),
                "kvs-get" => match kvs.get(m.get("key").unwrap()) {
                    Some(v) => Message::new("kvs-get-response")
                        .with("rc", 0)
                        .with("found", "TRUE")
                        .with("value", v),
                    None => Message::new("kvs-get-response")
                        .with("rc", 0)
                        .with("found", "FALSE"),
                },
                "finalize" => Message::new("finalize-response").with("rc", 0),
                other => panic!("unexpected {other}"),
            };
            s.write_all(&reply.to_pmi2()).unwrap();
        }
    }

    #[test]
    fn pmi2_against_a_slurm_like_server() {
        let (a, b) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || fake_slurm(b));
        let c = PmiClient::pmi2_over(a, "4.0", 1).unwrap();
        assert_eq!((c.mode(), c.rank(), c.size()), (Mode::Pmi2, 1, 2));
        let mut job = crate::Job::from_client(c, &|_: &str| None);
        assert_eq!((job.local_rank, job.local_size, job.nnodes), (1, 2, 1));
        job.publish("card", "a;b=c").unwrap();
        job.barrier().unwrap();
        assert_eq!(job.lookup("card", 1).unwrap(), "a;b=c");
        assert!(matches!(job.lookup("card", 0), Err(PmiError::NotFound(_))));
        job.finalize().unwrap();
        drop(job);
        server.join().unwrap();
    }

    #[test]
    fn pmi1_against_the_launchers_server() {
        use super::super::server::{Action, Server};
        let (a, mut b) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            let mut srv = Server::new(1, "kvs_7");
            let mut d = Decoder::new(Framing::Lines);
            let mut buf = [0u8; 1024];
            loop {
                let n = b.read(&mut buf).unwrap();
                if n == 0 {
                    return srv.finalized(0);
                }
                d.feed(&buf[..n]);
                while let Some(m) = d.next_message() {
                    for a in srv.handle(0, &m.unwrap()) {
                        if let Action::Send(_, m) = a {
                            b.write_all(m.to_pmi1().as_bytes()).unwrap();
                        }
                    }
                }
            }
        });
        let mut c = PmiClient::pmi1_over(a, 0, 1).unwrap();
        assert_eq!((c.mode(), c.kvsname()), (Mode::Pmi1, "kvs_7"));
        assert_eq!(
            c.job_attr("PMI_process_mapping").unwrap(),
            "(vector,(0,1,1))"
        );
        c.put("k", "v").unwrap();
        c.fence().unwrap();
        assert_eq!(c.get("k").unwrap(), "v");
        assert!(c.put("bad key", "v").is_err());
        c.finalize().unwrap();
        drop(c);
        assert!(server.join().unwrap());
    }

    #[test]
    fn bad_env_is_an_error() {
        let env = |k: &str| (k == "PMI_FD").then(|| "seven".to_string());
        assert!(PmiClient::from_env(&env).is_err());
        let env = |k: &str| (k == "PMI_FD").then(|| "99999".to_string());
        assert!(PmiClient::from_env(&env).is_err());
    }
}
