//! The client side of PMI-1 and PMI-2 without IO: what to send for each request and
//! how to read the reply. [`super::client`] moves the bytes.

use super::wire::{Message, WireError};

/// The PMI version spoken after `init`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// What the client asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// PMI-1 over `PMI_PORT`: identify with `PMI_ID` first.
    InitAck {
        id: i64,
    },
    /// The `cmd=init` line (both versions start with it).
    Init,
    /// PMI-2's `fullinit` (`jobid` from `PMI_JOBID`; Slurm requires it).
    FullInit {
        jobid: String,
        rank: i64,
    },
    GetMaxes,
    GetAppnum,
    GetUniverseSize,
    GetMyKvsname,
    Put {
        kvsname: String,
        key: String,
        value: String,
    },
    Get {
        kvsname: String,
        key: String,
    },
    /// PMI-2's `info-getjobattr` (PMI-1 reads job attributes with `get`).
    JobAttr {
        key: String,
    },
    /// PMI-1 `barrier_in`, PMI-2 `kvs-fence`.
    Fence,
    /// No reply is awaited.
    Abort {
        code: i32,
        msg: String,
    },
    Finalize,
}

/// A failed PMI exchange.
#[derive(Debug, thiserror::Error)]
pub enum PmiError {
    #[error("PMI connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("PMI: {0}")]
    Wire(#[from] WireError),
    #[error("PMI server answered {cmd} with rc={rc}{msg}")]
    Rc { cmd: String, rc: i64, msg: String },
    #[error("PMI: expected a {expected} reply, got cmd={got}")]
    Unexpected { expected: &'static str, got: String },
    #[error("PMI reply {cmd} lacks {field}")]
    Missing { cmd: String, field: &'static str },
    #[error("PMI environment: {0}")]
    Env(String),
    #[error("PMI: key {0:?} not found")]
    NotFound(String),
    #[error("PMI: value for {0:?} cannot be sent (PMI-1 values are ASCII 33-126)")]
    BadValue(String),
}

impl Request {
    /// The bytes to send in `version`.
    pub fn encode(&self, version: Version) -> Vec<u8> {
        let v1 = |m: Message| m.to_pmi1().into_bytes();
        match (self, version) {
            (Request::InitAck { id }, _) => v1(Message::new("initack").with("pmiid", id)),
            (Request::Init, Version::V1) => v1(Message::new("init")
                .with("pmi_version", 1)
                .with("pmi_subversion", 1)),
            (Request::Init, Version::V2) => v1(Message::new("init")
                .with("pmi_version", 2)
                .with("pmi_subversion", 0)),
            (Request::FullInit { jobid, rank }, _) => Message::new("fullinit")
                .with("pmijobid", jobid)
                .with("pmirank", rank)
                .with("threaded", "FALSE")
                .to_pmi2(),
            (Request::GetMaxes, _) => v1(Message::new("get_maxes")),
            (Request::GetAppnum, _) => v1(Message::new("get_appnum")),
            (Request::GetUniverseSize, _) => v1(Message::new("get_universe_size")),
            (Request::GetMyKvsname, _) => v1(Message::new("get_my_kvsname")),
            (
                Request::Put {
                    kvsname,
                    key,
                    value,
                },
                Version::V1,
            ) => v1(Message::new("put")
                .with("kvsname", kvsname)
                .with("key", key)
                .with("value", value)),
            (Request::Put { key, value, .. }, Version::V2) => Message::new("kvs-put")
                .with("key", key)
                .with("value", value)
                .to_pmi2(),
            (Request::Get { kvsname, key }, Version::V1) => v1(Message::new("get")
                .with("kvsname", kvsname)
                .with("key", key)),
            (Request::Get { key, .. }, Version::V2) => Message::new("kvs-get")
                .with("jobid", "")
                .with("srcid", -1)
                .with("key", key)
                .to_pmi2(),
            (Request::JobAttr { key }, Version::V2) => {
                Message::new("info-getjobattr").with("key", key).to_pmi2()
            }
            (Request::JobAttr { key }, Version::V1) => {
                v1(Message::new("get").with("kvsname", "").with("key", key))
            }
            (Request::Fence, Version::V1) => v1(Message::new("barrier_in")),
            (Request::Fence, Version::V2) => Message::new("kvs-fence").to_pmi2(),
            (Request::Abort { code, .. }, Version::V1) => {
                v1(Message::new("abort").with("exitcode", code))
            }
            (Request::Abort { msg, .. }, Version::V2) => Message::new("abort")
                .with("isworld", "TRUE")
                .with("msg", msg)
                .to_pmi2(),
            (Request::Finalize, Version::V1) => v1(Message::new("finalize")),
            (Request::Finalize, Version::V2) => Message::new("finalize").to_pmi2(),
        }
    }

    /// The reply's command, or `None` when no reply comes (abort).
    pub fn reply_cmd(&self, version: Version) -> Option<&'static str> {
        Some(match (self, version) {
            (Request::InitAck { .. }, _) => "initack",
            (Request::Init, _) => "response_to_init",
            (Request::FullInit { .. }, _) => "fullinit-response",
            (Request::GetMaxes, _) => "maxes",
            (Request::GetAppnum, _) => "appnum",
            (Request::GetUniverseSize, _) => "universe_size",
            (Request::GetMyKvsname, _) => "my_kvsname",
            (Request::Put { .. }, Version::V1) => "put_result",
            (Request::Put { .. }, Version::V2) => "kvs-put-response",
            (Request::Get { .. } | Request::JobAttr { .. }, Version::V1) => "get_result",
            (Request::Get { .. }, Version::V2) => "kvs-get-response",
            (Request::JobAttr { .. }, Version::V2) => "info-getjobattr-response",
            (Request::Fence, Version::V1) => "barrier_out",
            (Request::Fence, Version::V2) => "kvs-fence-response",
            (Request::Abort { .. }, _) => return None,
            (Request::Finalize, Version::V1) => "finalize_ack",
            (Request::Finalize, Version::V2) => "finalize-response",
        })
    }

    /// Checks a reply: its command and its `rc`. A PMI-1 `get` of a missing key and a
    /// PMI-2 reply with `found=FALSE` are [`PmiError::NotFound`].
    pub fn check(&self, version: Version, reply: Message) -> Result<Message, PmiError> {
        let expected = self.reply_cmd(version).unwrap_or("(none)");
        if reply.cmd != expected {
            return Err(PmiError::Unexpected {
                expected,
                got: reply.cmd.chars().take(64).collect(),
            });
        }
        let key = match self {
            Request::Get { key, .. } | Request::JobAttr { key } => Some(key),
            _ => None,
        };
        if reply.get("found") == Some("FALSE") {
            return Err(PmiError::NotFound(key.cloned().unwrap_or_default()));
        }
        if reply.rc() != 0 {
            if let Some(k) = key {
                return Err(PmiError::NotFound(k.clone()));
            }
            return Err(PmiError::Rc {
                cmd: reply.cmd.clone(),
                rc: reply.rc(),
                msg: reply
                    .get("msg")
                    .or_else(|| reply.get("errmsg"))
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default(),
            });
        }
        Ok(reply)
    }
}

/// A required field of a reply.
pub fn field<'a>(reply: &'a Message, name: &'static str) -> Result<&'a str, PmiError> {
    reply.get(name).ok_or_else(|| PmiError::Missing {
        cmd: reply.cmd.clone(),
        field: name,
    })
}

/// A required integer field of a reply.
pub fn int_field(reply: &Message, name: &'static str) -> Result<i64, PmiError> {
    reply.get_int(name).ok_or_else(|| PmiError::Missing {
        cmd: reply.cmd.clone(),
        field: name,
    })
}

#[cfg(test)]
mod tests {
    use super::super::wire::{parse_pmi1, parse_pmi2_body};
    use super::*;

    #[test]
    fn requests_encode_as_mpich_and_slurm_expect() {
        assert_eq!(
            Request::Init.encode(Version::V2),
            b"cmd=init pmi_version=2 pmi_subversion=0\n"
        );
        assert_eq!(Request::Fence.encode(Version::V1), b"cmd=barrier_in\n");
        assert_eq!(Request::Fence.encode(Version::V2), b"14    cmd=kvs-fence;");
        let abort = Request::Abort {
            code: 3,
            msg: "x".into(),
        };
        assert_eq!(abort.encode(Version::V1), b"cmd=abort exitcode=3\n");
        assert_eq!(abort.reply_cmd(Version::V1), None);
    }

    #[test]
    fn replies_are_checked() {
        let get = Request::Get {
            kvsname: "k".into(),
            key: "a".into(),
        };
        let ok = parse_pmi1(b"cmd=get_result rc=0 msg=success value=v\n").unwrap();
        assert_eq!(get.check(Version::V1, ok).unwrap().get("value"), Some("v"));
        let missing = parse_pmi1(b"cmd=get_result rc=-1 msg=key_not_found\n").unwrap();
        assert!(matches!(
            get.check(Version::V1, missing),
            Err(PmiError::NotFound(_))
        ));
        let nf = parse_pmi2_body(b"cmd=kvs-get-response;rc=0;found=FALSE;").unwrap();
        assert!(matches!(
            get.check(Version::V2, nf),
            Err(PmiError::NotFound(_))
        ));
        let wrong = parse_pmi1(b"cmd=maxes rc=0\n").unwrap();
        assert!(matches!(
            get.check(Version::V1, wrong),
            Err(PmiError::Unexpected { .. })
        ));
    }
}
