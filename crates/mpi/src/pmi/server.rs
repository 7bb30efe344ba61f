//! A PMI-1 server without IO, as `myrix mpiexec` runs it: one [`Server`] per job,
//! fed each rank's messages, answering with what to send to whom.

use super::wire::Message;
use std::collections::HashMap;

/// The longest key and value the server accepts (announced by `get_maxes`).
pub const KEYLEN_MAX: usize = 256;
pub const VALLEN_MAX: usize = 1024;
pub const KVSNAME_MAX: usize = 256;
/// How many keys one job may store (bounds the server's memory).
pub const MAX_KEYS: usize = 1 << 20;

/// What the server wants done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this message to that rank.
    Send(u32, Message),
    /// A rank asked to end the job with this exit code.
    Abort { rank: u32, code: i32 },
}

/// One job's PMI-1 state: its key-value space and the barrier.
#[derive(Debug)]
pub struct Server {
    size: u32,
    kvsname: String,
    kvs: HashMap<String, String>,
    in_barrier: Vec<bool>,
    waiting: u32,
    finalized: Vec<bool>,
    initialized: Vec<bool>,
    /// Each rank's application number (MPMD jobs, MPI_APPNUM); empty: all 0.
    appnums: Vec<u32>,
}

impl Server {
    /// A job of `size` ranks (at least 1) all on one node.
    pub fn new(size: u32, kvsname: &str) -> Server {
        let size = size.max(1);
        let mut kvs = HashMap::new();
        kvs.insert(
            "PMI_process_mapping".to_string(),
            format!("(vector,(0,1,{size}))"),
        );
        Server {
            size,
            kvsname: kvsname.to_string(),
            kvs,
            in_barrier: vec![false; size as usize],
            waiting: 0,
            finalized: vec![false; size as usize],
            initialized: vec![false; size as usize],
            appnums: Vec::new(),
        }
    }

    /// Gives each rank its application number (`get_appnum`): rank `r` gets
    /// `appnums[r]`, ranks past the list 0.
    pub fn set_appnums(&mut self, appnums: Vec<u32>) {
        self.appnums = appnums;
    }

    /// Replaces `PMI_process_mapping` (ranks on several nodes); a mapping longer
    /// than a value may be is left out, and the ranks fall back to their
    /// `MPI_LOCALRANKID`/`MPI_LOCALNRANKS`.
    pub fn set_process_mapping(&mut self, mapping: String) {
        if mapping.len() <= VALLEN_MAX {
            self.kvs.insert("PMI_process_mapping".to_string(), mapping);
        } else {
            self.kvs.remove("PMI_process_mapping");
        }
    }

    /// Whether `rank` sent `finalize`.
    pub fn finalized(&self, rank: u32) -> bool {
        self.finalized.get(rank as usize).copied().unwrap_or(false)
    }

    /// Whether `rank` sent `init` (and so is an MPI process that must finalize).
    pub fn initialized(&self, rank: u32) -> bool {
        self.initialized
            .get(rank as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Handles one message from `rank` (ranks outside the job are ignored).
    pub fn handle(&mut self, rank: u32, msg: &Message) -> Vec<Action> {
        if rank >= self.size {
            return Vec::new();
        }
        let reply = |m: Message| vec![Action::Send(rank, m)];
        match msg.cmd.as_str() {
            "init" => {
                self.initialized[rank as usize] = true;
                reply(
                    Message::new("response_to_init")
                        .with("rc", 0)
                        .with("pmi_version", 1)
                        .with("pmi_subversion", 1),
                )
            }
            "get_maxes" => reply(
                Message::new("maxes")
                    .with("rc", 0)
                    .with("kvsname_max", KVSNAME_MAX)
                    .with("keylen_max", KEYLEN_MAX)
                    .with("vallen_max", VALLEN_MAX),
            ),
            "get_universe_size" => reply(
                Message::new("universe_size")
                    .with("rc", 0)
                    .with("size", self.size),
            ),
            "get_appnum" => {
                let n = self.appnums.get(rank as usize).copied().unwrap_or(0);
                reply(Message::new("appnum").with("rc", 0).with("appnum", n))
            }
            "get_my_kvsname" => reply(
                Message::new("my_kvsname")
                    .with("rc", 0)
                    .with("kvsname", &self.kvsname),
            ),
            "put" => {
                let (Some(key), Some(value)) = (msg.get("key"), msg.get("value")) else {
                    return reply(fail("put_result", "missing_key_or_value"));
                };
                if key.len() > KEYLEN_MAX || value.len() > VALLEN_MAX {
                    return reply(fail("put_result", "key_or_value_too_long"));
                }
                if self.kvs.len() >= MAX_KEYS && !self.kvs.contains_key(key) {
                    return reply(fail("put_result", "too_many_keys"));
                }
                self.kvs.insert(key.to_string(), value.to_string());
                reply(
                    Message::new("put_result")
                        .with("rc", 0)
                        .with("msg", "success"),
                )
            }
            "get" => match msg.get("key").and_then(|k| self.kvs.get(k)) {
                Some(v) => reply(
                    Message::new("get_result")
                        .with("rc", 0)
                        .with("msg", "success")
                        .with("value", v),
                ),
                None => reply(fail("get_result", "key_not_found")),
            },
            "barrier_in" => {
                let slot = &mut self.in_barrier[rank as usize];
                if !*slot {
                    *slot = true;
                    self.waiting += 1;
                }
                if self.waiting < self.size {
                    return Vec::new();
                }
                self.waiting = 0;
                self.in_barrier.iter_mut().for_each(|b| *b = false);
                (0..self.size)
                    .map(|r| Action::Send(r, Message::new("barrier_out").with("rc", 0)))
                    .collect()
            }
            "finalize" => {
                self.finalized[rank as usize] = true;
                reply(Message::new("finalize_ack").with("rc", 0))
            }
            "abort" => {
                let code = msg
                    .get_int("exitcode")
                    .and_then(|c| i32::try_from(c).ok())
                    .unwrap_or(1);
                vec![Action::Abort { rank, code }]
            }
            other => reply(
                Message::new(&format!("{}_result", sanitize(other)))
                    .with("rc", -1)
                    .with("msg", "unsupported_command"),
            ),
        }
    }
}

fn fail(cmd: &str, why: &str) -> Message {
    Message::new(cmd).with("rc", -1).with("msg", why)
}

fn sanitize(s: &str) -> String {
    s.chars()
        .take(64)
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::wire::parse_pmi1;
    use super::*;
    use proptest::prelude::*;

    fn msg(s: &str) -> Message {
        parse_pmi1(s.as_bytes()).unwrap()
    }

    #[test]
    fn barrier_releases_all_when_the_last_arrives() {
        let mut s = Server::new(3, "kvs_0");
        assert!(s.handle(0, &msg("cmd=barrier_in")).is_empty());
        assert!(s.handle(0, &msg("cmd=barrier_in")).is_empty());
        assert!(s.handle(2, &msg("cmd=barrier_in")).is_empty());
        let out = s.handle(1, &msg("cmd=barrier_in"));
        assert_eq!(out.len(), 3);
        assert!(s.handle(1, &msg("cmd=barrier_in")).is_empty());
    }

    #[test]
    fn put_get_and_mapping() {
        let mut s = Server::new(2, "kvs_0");
        s.handle(0, &msg("cmd=put kvsname=kvs_0 key=a value=1"));
        let out = s.handle(1, &msg("cmd=get kvsname=kvs_0 key=a"));
        let Action::Send(1, m) = &out[0] else {
            panic!()
        };
        assert_eq!(m.get("value"), Some("1"));
        let out = s.handle(1, &msg("cmd=get kvsname=kvs_0 key=PMI_process_mapping"));
        let Action::Send(1, m) = &out[0] else {
            panic!()
        };
        assert_eq!(m.get("value"), Some("(vector,(0,1,2))"));
        let out = s.handle(1, &msg("cmd=abort exitcode=7"));
        assert_eq!(out, vec![Action::Abort { rank: 1, code: 7 }]);
    }

    proptest! {
        #[test]
        fn any_message_from_any_rank_is_handled(rank in 0u32..6, cmd in "[a-z_]{0,12}", key in "[!-~]{0,10}") {
            let mut s = Server::new(4, "k");
            let m = Message::new(&cmd).with("key", &key).with("value", &key).with("exitcode", &key);
            let _ = s.handle(rank, &m);
        }
    }
}
