//! Endpoint addresses and their printable form, so two processes can exchange them as
//! text (a command line, a file, the first line of a server's output).
//!
//! ```text
//! 0a1b2c3d4e5f-3-9f8e7d6c@udp:127.0.0.1:40000
//! ^ NIC id     ^ ^session ^ where the transport finds it
//!              endpoint id
//! ```

use core::fmt;
use core::str::FromStr;

/// An endpoint's identity and where to reach it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EndpointAddr {
    /// 48-bit NIC id: the board's unique address.
    pub nic: u64,
    pub endpoint: u8,
    /// Chosen at random each time the endpoint opens: tells incarnations apart.
    pub session: u32,
    /// Transport-specific location, `kind:rest` (`udp:HOST:PORT`, `shm:NAME`, `self:`).
    pub locator: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad endpoint address {text:?}: {why}")]
pub struct AddrError {
    pub text: String,
    pub why: &'static str,
}

impl fmt::Display for EndpointAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:012x}-{}-{:08x}@{}",
            self.nic, self.endpoint, self.session, self.locator
        )
    }
}

impl FromStr for EndpointAddr {
    type Err = AddrError;
    fn from_str(s: &str) -> Result<Self, AddrError> {
        let err = |why| AddrError {
            text: s.chars().take(200).collect(),
            why,
        };
        let (id, locator) = s.split_once('@').ok_or(err("no '@' before the locator"))?;
        let mut parts = id.split('-');
        let (Some(nic), Some(ep), Some(session), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err("expected NIC-ENDPOINT-SESSION before '@'"));
        };
        if nic.len() != 12 {
            return Err(err("NIC id must be 12 hex digits"));
        }
        let nic = u64::from_str_radix(nic, 16).map_err(|_| err("NIC id is not hex"))?;
        let endpoint = ep
            .parse::<u8>()
            .map_err(|_| err("endpoint id must be 0-255"))?;
        if session.len() != 8 {
            return Err(err("session must be 8 hex digits"));
        }
        let session = u32::from_str_radix(session, 16).map_err(|_| err("session is not hex"))?;
        if !locator.contains(':') {
            return Err(err("locator must be TRANSPORT:WHERE"));
        }
        Ok(EndpointAddr {
            nic,
            endpoint,
            session,
            locator: locator.to_string(),
        })
    }
}

impl EndpointAddr {
    /// The transport name in the locator (`udp`, `shm`, `self`).
    pub fn transport(&self) -> &str {
        self.locator.split(':').next().unwrap_or("")
    }
    /// The locator after the transport name.
    pub fn location(&self) -> &str {
        self.locator.split_once(':').map(|x| x.1).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let a = EndpointAddr {
            nic: 0x0a1b_2c3d_4e5f,
            endpoint: 3,
            session: 0x9f8e_7d6c,
            locator: "udp:[::1]:40000".into(),
        };
        let s = a.to_string();
        assert_eq!(s, "0a1b2c3d4e5f-3-9f8e7d6c@udp:[::1]:40000");
        assert_eq!(s.parse::<EndpointAddr>().unwrap(), a);
        assert_eq!(a.transport(), "udp");
        assert_eq!(a.location(), "[::1]:40000");
        for bad in [
            "",
            "@udp:x",
            "0a1b2c3d4e5f-3@udp:x",
            "0a1b2c3d4e5f-300-9f8e7d6c@udp:x",
            "0a1b2c3d4e5g-3-9f8e7d6c@udp:x",
            "0a1b2c3d4e5f-3-9f8e7d6c@udp",
            "0a1b2c3d4e5f-3-9f8e7d6c-1@udp:x",
        ] {
            assert!(bad.parse::<EndpointAddr>().is_err(), "{bad}");
        }
    }
}
