//! rsm_get_segmentid_range: the segment ids reserved for an application, from
//! `MYRIX_RSM_SEGMENTID_FILE` if set, else `/etc/rsm/rsm.segmentid`.
//!
//! The file has one reservation a line, fields separated by blanks or tabs:
//! `reserve <appid> <base> <length>`, the base in hexadecimal (`0x` optional), the
//! length in decimal (or hexadecimal with `0x`). A line whose first character is `#`
//! is a comment; blank lines are ignored. The manual page's own example spells the
//! keyword `reserved`, which is accepted too. Any other line makes the whole file
//! bad (RSMERR_BAD_CONF), as does a range past 0xFFFFFFFF.

use std::ffi::{c_char, c_int, CStr};

use myrix_rsm::RsmError;

use crate::ffi::{guard, write_out, Res};

/// The default configuration file.
pub const SEGMENTID_FILE: &str = "/etc/rsm/rsm.segmentid";
/// The environment variable that names another one.
pub const SEGMENTID_ENV: &str = "MYRIX_RSM_SEGMENTID_FILE";

fn number(s: &str, hex: bool) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None if hex => u64::from_str_radix(s, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The (base, length) `appid` reserves in `text`.
pub fn lookup(text: &str, appid: &str) -> Res<(u32, u32)> {
    let mut found = None;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let [kw, app, base, len] = f[..] else {
            return Err(RsmError::BadConf);
        };
        if kw != "reserve" && kw != "reserved" {
            return Err(RsmError::BadConf);
        }
        let base = number(base, true).ok_or(RsmError::BadConf)?;
        let len = number(len, false).ok_or(RsmError::BadConf)?;
        if base.checked_add(len).is_none_or(|end| end > 1 << 32) {
            return Err(RsmError::BadConf);
        }
        if app == appid && found.is_none() {
            found = Some((base as u32, len as u32));
        }
    }
    found.ok_or(RsmError::BadAppid)
}

/// # Safety
/// `appid` is NULL or a NUL-terminated string; `baseid` and `length` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_get_segmentid_range(
    appid: *const c_char,
    baseid: *mut u32,
    length: *mut u32,
) -> c_int {
    guard(|| {
        if appid.is_null() || baseid.is_null() || length.is_null() {
            return Err(RsmError::BadAddr);
        }
        // SAFETY: not NULL; the caller promises a NUL-terminated string.
        let appid = unsafe { CStr::from_ptr(appid) };
        let appid = appid.to_str().map_err(|_| RsmError::BadAppid)?;
        let path = std::env::var_os(SEGMENTID_ENV).unwrap_or_else(|| SEGMENTID_FILE.into());
        let text = std::fs::read_to_string(path).map_err(|_| RsmError::BadConf)?;
        let (base, len) = lookup(&text, appid)?;
        // SAFETY: both checked not NULL; the caller promises they are writable.
        unsafe { write_out(baseid, base) }?;
        // SAFETY: as above.
        unsafe { write_out(length, len) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "#keyword appid base length\n\
                        reserve SUNWfoo 0x600000 1000\n\
                        reserve\tmyapp\t80001000\t16\n\
                        \n\
                        reserved other 0xFFFFFF00 256\n";

    #[test]
    fn reservations_are_found_by_appid() {
        assert_eq!(lookup(FILE, "SUNWfoo"), Ok((0x600000, 1000)));
        assert_eq!(lookup(FILE, "myapp"), Ok((0x8000_1000, 16)));
        assert_eq!(lookup(FILE, "other"), Ok((0xFFFF_FF00, 256)));
        assert_eq!(lookup(FILE, "nobody"), Err(RsmError::BadAppid));
    }

    #[test]
    fn malformed_files_are_bad_conf() {
        for bad in [
            "reserve a 0x10\n",
            "keep a 0x10 4\n",
            "reserve a zz 4\n",
            "reserve a 0x10 -4\n",
            "reserve a 0xFFFFFFFF 2\n",
            " # indented comment\n",
        ] {
            assert_eq!(lookup(bad, "a"), Err(RsmError::BadConf), "{bad:?}");
        }
    }
}
