//! The PMI wire formats, without IO.
//!
//! * PMI-1: one line per message, `cmd=NAME key=value key=value…\n` (the spawn
//!   command `mcmd=spawn … endcmd` is not supported and is parsed as a plain line).
//! * PMI-2: after a PMI-1 style `cmd=init pmi_version=2 …` line, every message is a
//!   6-character, space-padded decimal length followed by that many bytes of
//!   `cmd=NAME;key=value;…;`, a literal `;` inside a value written `;;`.
//!
//! Parsers take arbitrary bytes and return errors, never panic; every length is
//! bounded ([`MAX_LINE`], [`MAX_PMI2_MSG`]).

use std::fmt;

/// The longest PMI-1 line accepted (MPICH's `PMIU_MAXLINE` is 1024; hydra's values
/// may be longer, so this is generous).
pub const MAX_LINE: usize = 64 * 1024;
/// The longest PMI-2 message body (the length field has six digits).
pub const MAX_PMI2_MSG: usize = 999_999;

/// A parsed PMI message: its command and its other key/value pairs, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub cmd: String,
    pub args: Vec<(String, String)>,
}

/// Why bytes are not a PMI message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("PMI message is not ASCII/UTF-8")]
    NotText,
    #[error("PMI message has no cmd= (or mcmd=) first")]
    NoCmd,
    #[error("PMI field without '=': {0:?}")]
    NoEquals(String),
    #[error("PMI line longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("PMI-2 length field {0:?} is not a number")]
    BadLength(String),
    #[error("PMI-2 message does not end with ';'")]
    Unterminated,
}

impl Message {
    /// A message with command `cmd` and no arguments.
    pub fn new(cmd: &str) -> Message {
        Message {
            cmd: cmd.to_string(),
            args: Vec::new(),
        }
    }

    /// Adds `key=value`.
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Message {
        self.args.push((key.to_string(), value.to_string()));
        self
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key` as an integer.
    pub fn get_int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(|v| v.trim().parse().ok())
    }

    /// `rc`, 0 when absent (some servers leave it out on success).
    pub fn rc(&self) -> i64 {
        self.get_int("rc").unwrap_or(0)
    }

    /// The PMI-1 line, newline included. Values are written as given: callers keep
    /// them free of spaces and newlines ([`valid_pmi1_value`]).
    pub fn to_pmi1(&self) -> String {
        let mut s = format!("cmd={}", self.cmd);
        for (k, v) in &self.args {
            s.push(' ');
            s.push_str(k);
            s.push('=');
            s.push_str(v);
        }
        s.push('\n');
        s
    }

    /// The PMI-2 message with its 6-character length prefix.
    pub fn to_pmi2(&self) -> Vec<u8> {
        let mut body = format!("cmd={};", escape2(&self.cmd));
        for (k, v) in &self.args {
            body.push_str(&escape2(k));
            body.push('=');
            body.push_str(&escape2(v));
            body.push(';');
        }
        let mut out = format!("{:<6}", body.len()).into_bytes();
        out.extend_from_slice(body.as_bytes());
        out
    }
}

fn escape2(s: &str) -> String {
    s.replace(';', ";;")
}

/// Whether `v` can be sent as a PMI-1 value: ASCII 33–126 (no spaces, no `=` issues
/// for values since only the first `=` splits), non-empty.
pub fn valid_pmi1_value(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| (33..=126).contains(&b))
}

/// Parses one PMI-1 line (without or with its newline).
pub fn parse_pmi1(line: &[u8]) -> Result<Message, WireError> {
    if line.len() > MAX_LINE {
        return Err(WireError::TooLong);
    }
    let text = std::str::from_utf8(line).map_err(|_| WireError::NotText)?;
    let text = text.trim_end_matches(['\n', '\r']);
    let mut fields = text.split([' ', '\t']).filter(|f| !f.is_empty());
    let first = fields.next().ok_or(WireError::NoCmd)?;
    let cmd = first
        .strip_prefix("cmd=")
        .or_else(|| first.strip_prefix("mcmd="))
        .ok_or(WireError::NoCmd)?;
    let mut msg = Message::new(cmd);
    for f in fields {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| WireError::NoEquals(f.chars().take(64).collect()))?;
        msg.args.push((k.to_string(), v.to_string()));
    }
    Ok(msg)
}

/// Parses a PMI-2 body (what follows the length field).
pub fn parse_pmi2_body(body: &[u8]) -> Result<Message, WireError> {
    let text = std::str::from_utf8(body).map_err(|_| WireError::NotText)?;
    let mut pairs = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut terminated = true;
    while let Some(c) = chars.next() {
        if c == ';' {
            if chars.peek() == Some(&';') {
                chars.next();
                field.push(';');
                terminated = false;
                continue;
            }
            pairs.push(std::mem::take(&mut field));
            terminated = true;
        } else {
            field.push(c);
            terminated = false;
        }
    }
    if !terminated {
        return Err(WireError::Unterminated);
    }
    let mut it = pairs.into_iter();
    let first = it.next().ok_or(WireError::NoCmd)?;
    let cmd = first.strip_prefix("cmd=").ok_or(WireError::NoCmd)?;
    let mut msg = Message::new(cmd);
    for f in it {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| WireError::NoEquals(f.chars().take(64).collect()))?;
        msg.args.push((k.to_string(), v.to_string()));
    }
    Ok(msg)
}

/// Which framing a byte stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Newline-terminated lines (PMI-1, and PMI-2's first message).
    Lines,
    /// 6-character length prefixes (PMI-2 after init).
    Length6,
}

/// Splits a byte stream into messages: feed bytes as they arrive, take messages out.
#[derive(Debug, Clone)]
pub struct Decoder {
    buf: Vec<u8>,
    framing: Framing,
}

impl Decoder {
    pub fn new(framing: Framing) -> Decoder {
        Decoder {
            buf: Vec::new(),
            framing,
        }
    }

    /// Switches framing (PMI-2 after the init line); buffered bytes are kept.
    pub fn set_framing(&mut self, framing: Framing) {
        self.framing = framing;
    }

    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Adds received bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received and not yet taken as a message.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The next whole message, if one is buffered. An error consumes the bad message
    /// (or, for an unusable length field or an over-long line, the whole buffer).
    pub fn next_message(&mut self) -> Option<Result<Message, WireError>> {
        match self.framing {
            Framing::Lines => {
                let Some(end) = self.buf.iter().position(|&b| b == b'\n') else {
                    if self.buf.len() > MAX_LINE {
                        self.buf.clear();
                        return Some(Err(WireError::TooLong));
                    }
                    return None;
                };
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                Some(parse_pmi1(&line))
            }
            Framing::Length6 => {
                if self.buf.len() < 6 {
                    return None;
                }
                let field = String::from_utf8_lossy(&self.buf[..6]).into_owned();
                let len = match field.trim().parse::<usize>() {
                    Ok(n) if n <= MAX_PMI2_MSG => n,
                    _ => {
                        self.buf.clear();
                        return Some(Err(WireError::BadLength(field)));
                    }
                };
                if self.buf.len() < 6 + len {
                    return None;
                }
                let msg: Vec<u8> = self.buf.drain(..6 + len).collect();
                Some(parse_pmi2_body(&msg[6..]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pmi1_round_trip() {
        let m = Message::new("put")
            .with("kvsname", "kvs_1")
            .with("key", "k")
            .with("value", "a=b");
        let line = m.to_pmi1();
        assert_eq!(line, "cmd=put kvsname=kvs_1 key=k value=a=b\n");
        assert_eq!(parse_pmi1(line.as_bytes()).unwrap(), m);
    }

    #[test]
    fn pmi2_round_trip_with_semicolons() {
        let m = Message::new("kvs-put")
            .with("key", "a;b")
            .with("value", ";;x;");
        let bytes = m.to_pmi2();
        assert_eq!(&bytes[..6], format!("{:<6}", bytes.len() - 6).as_bytes());
        let mut d = Decoder::new(Framing::Length6);
        d.feed(&bytes[..10]);
        assert!(d.next_message().is_none());
        d.feed(&bytes[10..]);
        assert_eq!(d.next_message().unwrap().unwrap(), m);
        assert_eq!(d.pending(), 0);
    }

    #[test]
    fn slurm_reply_parses() {
        let body = b"cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=0;spawner-jobid=4.0;debugged=FALSE;pmiverbose=FALSE;rc=0;";
        let m = parse_pmi2_body(body).unwrap();
        assert_eq!(m.cmd, "fullinit-response");
        assert_eq!(m.get_int("size"), Some(2));
        assert_eq!(m.rc(), 0);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(parse_pmi1(b"hello"), Err(WireError::NoCmd));
        assert!(parse_pmi1(b"cmd=x y").is_err());
        assert!(parse_pmi1(&[0xff, 0xfe]).is_err());
        let mut d = Decoder::new(Framing::Length6);
        d.feed(b"abcdefgh");
        assert!(matches!(
            d.next_message(),
            Some(Err(WireError::BadLength(_)))
        ));
        assert!(parse_pmi2_body(b"cmd=x;a=b").is_err());
    }

    proptest! {
        #[test]
        fn decoder_never_panics(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..20), lines in any::<bool>()) {
            let mut d = Decoder::new(if lines { Framing::Lines } else { Framing::Length6 });
            for c in chunks {
                d.feed(&c);
                while let Some(_m) = d.next_message() {}
            }
        }

        #[test]
        fn pmi1_parse_never_panics(s in "\\PC{0,200}") {
            let _ = parse_pmi1(s.as_bytes());
            let _ = parse_pmi2_body(s.as_bytes());
        }

        #[test]
        fn pmi2_messages_round_trip(cmd in "[a-z-]{1,12}", args in prop::collection::vec(("[a-zA-Z_-]{1,8}", "[ -~]{0,20}"), 0..6)) {
            // Keys never hold `;` (PMI-2 keys are names); values may.
            let mut m = Message::new(&cmd);
            for (k, v) in &args { m = m.with(k, v); }
            let mut d = Decoder::new(Framing::Length6);
            d.feed(&m.to_pmi2());
            prop_assert_eq!(d.next_message().unwrap().unwrap(), m);
        }

        #[test]
        fn pmi1_messages_round_trip(cmd in "[a-z_]{1,12}", args in prop::collection::vec(("[a-z_]{1,8}", "[!-~]{1,20}"), 0..6)) {
            let mut m = Message::new(&cmd);
            for (k, v) in &args { m = m.with(k, v); }
            let mut d = Decoder::new(Framing::Lines);
            d.feed(m.to_pmi1().as_bytes());
            prop_assert_eq!(d.next_message().unwrap().unwrap(), m);
        }
    }
}
