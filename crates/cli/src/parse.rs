//! Parsers of argument values several commands share: times with units, load ranges,
//! message-size mixes, lists, and the switch timing models by name.

use crate::CliError;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap::Args;
use myrix_fabric::named::Named;
use myrix_link::Picos;
use myrix_sim::{ChannelRelease, SwitchModel};
use std::marker::PhantomData;

/// `2ms`, `500us`, `1250000ns`, `1s`, truncated to whole picoseconds.
pub fn parse_time(s: &str) -> Result<Picos, CliError> {
    let s = s.trim();
    // The unit is a suffix: "1e3us" is a number in exponent form, not "1" and "e3us".
    let units = [
        ("ns", 1e3),
        ("us", 1e6),
        ("µs", 1e6),
        ("ms", 1e9),
        ("s", 1e12),
    ];
    let Some((num, scale)) = units
        .iter()
        .find_map(|&(u, scale)| s.strip_suffix(u).map(|n| (n, scale)))
    else {
        return Err(CliError::Input(format!(
            "'{s}': a time needs a unit: ns, us, ms or s (e.g. 500us)"
        )));
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v * scale < 1e16 => Ok(Picos((v * scale) as u64)),
        _ => Err(CliError::Input(format!(
            "'{s}' is not a positive time below 10 000 s"
        ))),
    }
}

/// clap's parser for a kind chosen by name ([`Named`]): `--help` lists the names, an
/// unknown one gets the kind's own message.
#[derive(Clone)]
pub struct NamedParser<T>(PhantomData<fn() -> T>);

/// `value_parser = named::<SwitchModel>()`.
pub fn named<T>() -> NamedParser<T> {
    NamedParser(PhantomData)
}

impl<T: Named + Send + Sync> TypedValueParser for NamedParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let flag = arg
            .and_then(|a| a.get_long())
            .map_or(String::new(), |l| format!("--{l}: "));
        let text = value.to_string_lossy();
        T::from_name(&text).map_err(|e| {
            clap::Error::raw(ErrorKind::InvalidValue, format!("{flag}{e}\n")).with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(T::names().map(PossibleValue::new)))
    }
}

/// The switch timing reading, shared by every command that simulates.
#[derive(Args, Clone, Copy)]
pub struct ModelArgs {
    /// How switches spend the 150 ns of header processing: shared-unit (one routing
    /// unit per switch, the study's), route-then-request, hold-output (see the sim
    /// crate's SwitchModel).
    #[arg(long, default_value = "shared-unit", value_parser = named::<SwitchModel>())]
    pub switch_model: SwitchModel,
    /// When a packet frees its output channel: drain (once its tail has left the buffer
    /// at the far end: one packet per channel, the classic wormhole model and the
    /// study's) or send (once its tail is sent, as Myrinet's byte-FIFO slack buffers
    /// allow).
    #[arg(long, default_value = "drain", value_parser = named::<ChannelRelease>())]
    pub channel_release: ChannelRelease,
}

/// The highest offered load accepted, flits/ns/switch: far past saturation on every
/// network the generators make (a host injects at most 0.16 flits/ns), low enough that
/// numbers stay printable and a run's work is bounded by its simulated time.
pub const MAX_LOAD: f64 = 10.0;

/// An offered load: `0 < load <= MAX_LOAD`; `what` names the option in the error.
pub fn check_load(load: f64, what: &str) -> Result<f64, CliError> {
    if load > 0.0 && load <= MAX_LOAD {
        Ok(load)
    } else {
        // 1e300 as written, not as 301 digits.
        let shown = if load.abs() < 1e6 {
            load.to_string()
        } else {
            format!("{load:e}")
        };
        Err(CliError::Input(format!(
            "{what} {shown}: load must be a positive number of flits/ns/switch, at most {MAX_LOAD}"
        )))
    }
}

/// `start:end:step` (flits/ns/switch) as the loads from start to end.
pub fn parse_loads(s: &str) -> Result<Vec<f64>, CliError> {
    let bad = || {
        CliError::Input(format!(
            "--loads '{s}': expected start:end:step with 0 < start <= end, step > 0 and at most 1000 points"
        ))
    };
    let v: Vec<f64> = s
        .split(':')
        .map(|x| x.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let [a, b, st] = v[..] else { return Err(bad()) };
    if !(a > 0.0 && b >= a && st > 0.0 && a.is_finite() && b.is_finite()) || (b - a) / st > 1000.0 {
        return Err(bad());
    }
    check_load(b, "--loads: end")?;
    let n = ((b - a) / st + 1e-9).floor() as usize;
    Ok((0..=n).map(|i| a + st * i as f64).collect())
}

/// `32`, `32,1024` (an even mix) or `32:0.8,1024:0.2` (weights) as (bytes, weight).
pub fn parse_mix(s: &str) -> Result<Vec<(usize, f64)>, CliError> {
    let bad = || {
        CliError::Input(format!(
            "--msg-bytes '{s}': expected sizes of 1 to 65536 bytes like 32, 32,1024 or 32:0.8,1024:0.2"
        ))
    };
    s.split(',')
        .map(|part| {
            let (b, w) = part.split_once(':').unwrap_or((part, "1"));
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            let w: f64 = w.trim().parse().map_err(|_| bad())?;
            if b == 0 || b > 65536 || !(w > 0.0 && w.is_finite()) {
                return Err(bad());
            }
            Ok((b, w))
        })
        .collect()
}

/// A comma-separated list of numbers; `what` names the option in the error.
pub fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, CliError> {
    s.split(',')
        .map(|x| x.trim().parse::<T>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            CliError::Input(format!(
                "{what} '{s}': expected a comma-separated list of numbers"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_loads_and_mixes() {
        assert_eq!(parse_time("2ms").unwrap(), 2 * myrix_link::MS);
        assert_eq!(parse_time(" 500us ").unwrap(), 500 * myrix_link::US);
        assert!(parse_time("5").is_err() && parse_time("-3ms").is_err());
        assert_eq!(parse_time("1e3us").unwrap(), myrix_link::MS);
        for s in ["1e300ms", "NaNms", "infs"] {
            let e = parse_time(s).unwrap_err().to_string();
            assert!(e.contains("not a positive time below 10 000 s"), "{s}: {e}");
        }
        assert_eq!(parse_loads("0.01:0.03:0.01").unwrap().len(), 3);
        assert!(parse_loads("0.02:0.01:0.01").is_err());
        assert_eq!(
            parse_mix("32:0.8,1024:0.2").unwrap(),
            [(32, 0.8), (1024, 0.2)]
        );
        assert!(parse_mix("0").is_err());
        assert_eq!(list::<u32>("1, 2", "--x").unwrap(), [1, 2]);
    }
}
