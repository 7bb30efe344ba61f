//! `myrix link …`: code-group streams in the text form link designers use as test vectors.

use crate::{hex, input_bytes, read_input, CliError};
use clap::{Args, Subcommand};
use myrix_link::code::{self, CodeGroup, Octet, Rd};
use myrix_link::framing::{decode_stream, frame_packet, Found};
use myrix_link::slack::{Cable, SlackPlan};
use myrix_link::symbol::{SymbolEncoder, Unit};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum LinkCmd {
    /// Encode data bytes as the code-groups of one framed Myrinet-2000 packet.
    Encode(EncodeArgs),
    /// Decode a code-group stream back into packets, symbols and errors.
    Decode(DecodeArgs),
    /// Size a STOP/GO slack buffer for a cable.
    Slack(SlackArgs),
}

#[derive(Args)]
pub struct EncodeArgs {
    /// Data bytes in hex (else --file, else standard input as raw bytes).
    #[arg(long)]
    hex: Option<String>,
    /// File of raw data bytes.
    #[arg(long, conflicts_with = "hex")]
    file: Option<PathBuf>,
    /// Plain data code-groups, no GAP framing (test-vector mode).
    #[arg(long)]
    raw: bool,
    /// Add a column naming the symbol or data byte each code-group belongs to.
    #[arg(long)]
    symbols: bool,
}

#[derive(Args)]
pub struct DecodeArgs {
    /// File with one code-group per line (else standard input).
    #[arg(long)]
    file: Option<PathBuf>,
    /// The stream is plain data code-groups (as `encode --raw` prints).
    #[arg(long)]
    raw: bool,
}

#[derive(Args)]
pub struct SlackArgs {
    /// Cable length in metres.
    #[arg(long, default_value_t = 200.0)]
    length_m: f64,
    /// Propagation delay, ns per metre (5.0 fibre, 5.6 copper).
    #[arg(long, default_value_t = 5.0)]
    ns_per_m: f64,
    /// Data rate in MB/s.
    #[arg(long, default_value_t = 250.0)]
    rate_mb_s: f64,
    /// Fixed round-trip delay besides the cable (symbol generation, SerDes), ns.
    #[arg(long, default_value_t = 600.0)]
    turnaround_ns: f64,
    /// Safety margin on the in-flight bytes (0.5 = 50 %).
    #[arg(long, default_value_t = 0.5)]
    margin: f64,
    /// Largest share of the reverse channel STOP/GO may take.
    #[arg(long, default_value_t = 0.01)]
    max_share: f64,
}

pub fn run(cmd: LinkCmd) -> Result<(), CliError> {
    match cmd {
        LinkCmd::Encode(a) => {
            let data = input_bytes(a.hex.as_deref(), a.file.as_deref())?;
            crate::out(&encode(&data, a.raw, a.symbols)?)?;
            Ok(())
        }
        LinkCmd::Decode(a) => {
            let text = read_input(a.file.as_deref())?;
            let text =
                String::from_utf8(text).map_err(|_| CliError::Input("input is not text".into()))?;
            let cgs = parse_stream(&text)?;
            let (out, errors) = decode(&cgs, a.raw);
            crate::out(&out)?;
            if errors > 0 {
                return Err(CliError::Found(format!("{errors} error(s) in the stream")));
            }
            Ok(())
        }
        LinkCmd::Slack(a) => {
            crate::out(&slack(&a)?)?;
            Ok(())
        }
    }
}

/// The text of `myrix link encode`.
pub fn encode(data: &[u8], raw: bool, symbols: bool) -> Result<String, CliError> {
    if data.is_empty() {
        return Err(CliError::Input(
            "no data bytes: a Myrinet packet has at least one".into(),
        ));
    }
    let mut out = String::new();
    let mut line = |cg: CodeGroup, o: Octet, rd: Rd, what: Option<String>| {
        let _ = write!(out, "{cg} {o} {}", rd.sign());
        if let Some(w) = what {
            let _ = write!(out, " {w}");
        }
        out.push('\n');
    };
    if raw {
        let mut rd = Rd::Neg;
        for &d in data {
            let (cg, next) = code::encode_data(d, rd);
            rd = next;
            line(
                cg,
                Octet::D(d),
                rd,
                symbols.then(|| format!("data {d:02x}")),
            );
        }
        return Ok(out);
    }
    let mut enc = SymbolEncoder::new();
    for u in frame_packet(data) {
        let what = match u {
            Unit::Data(d) => format!("data {d:02x}"),
            Unit::Ctl(c) => c.name().to_string(),
        };
        enc.encode(u, |cg, o, rd| {
            line(cg, o, rd, symbols.then(|| what.clone()))
        });
    }
    Ok(out)
}

/// Parses one code-group per line: `abcdei fghj` or `abcdeifghj`, anything after
/// ignored; blank lines and `#` comments skipped.
pub fn parse_stream(text: &str) -> Result<Vec<CodeGroup>, CliError> {
    let mut v = Vec::new();
    for (n, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut t = l.split_whitespace();
        let first = t.next().unwrap_or("");
        let cg = if first.len() == 6 {
            let second = t.next().unwrap_or("");
            CodeGroup::parse(&format!("{first} {second}"))
        } else {
            CodeGroup::parse(first)
        };
        match cg {
            Some(cg) => v.push(cg),
            None => {
                let shown: String = l.chars().take(40).collect();
                return Err(CliError::Input(format!(
                    "line {}: '{shown}' is not a 10-bit code-group (abcdei fghj)",
                    n + 1
                )));
            }
        }
    }
    Ok(v)
}

/// The report of `myrix link decode` and the number of errors in it.
pub fn decode(cgs: &[CodeGroup], raw: bool) -> (String, usize) {
    let mut out = String::new();
    let mut errors = 0;
    if raw {
        let mut bytes = vec![0u8; cgs.len()];
        let mut rd = Rd::Neg;
        let mut from = 0;
        while from < cgs.len() {
            match code::decode_slice(&cgs[from..], &mut bytes[from..], rd) {
                Ok(_) => break,
                Err(e) => {
                    let at = from + e.index;
                    let why = match e.error {
                        Ok(k) => format!("{k} is not a data code-group"),
                        Err(err) => err.to_string(),
                    };
                    let _ = writeln!(out, "error at code-group {at}: {why} ({})", cgs[at]);
                    errors += 1;
                    rd = code::decode(cgs[at], rd).1;
                    bytes[at] = 0;
                    from = at + 1;
                }
            }
        }
        let _ = writeln!(out, "data {} ({} bytes)", hex(&bytes), bytes.len());
        return (out, errors);
    }
    let mut packets = 0;
    for f in decode_stream(cgs) {
        match f {
            Found::Packet {
                start,
                bytes,
                damaged,
            } => {
                packets += 1;
                let _ = writeln!(
                    out,
                    "packet {packets} at code-group {start}: {} ({} bytes{})",
                    hex(&bytes),
                    bytes.len(),
                    if damaged { ", damaged" } else { "" }
                );
            }
            Found::Control { at, symbol } => {
                let _ = writeln!(out, "symbol {symbol} at code-group {at}");
            }
            Found::Error { at, error } => {
                errors += 1;
                let _ = writeln!(out, "error at code-group {at}: {error} ({})", cgs[at]);
            }
            Found::Truncated {
                at,
                bytes_in_packet,
            } => {
                errors += 1;
                let _ = writeln!(
                    out,
                    "error at code-group {at}: stream truncated ({bytes_in_packet} bytes of an unterminated packet)"
                );
            }
        }
    }
    (out, errors)
}

fn slack(a: &SlackArgs) -> Result<String, CliError> {
    let bad = |what: &str| Err(CliError::Input(format!("{what} must be a positive number")));
    if !(a.length_m >= 0.0 && a.length_m.is_finite()) {
        return bad("--length-m");
    }
    if !(a.ns_per_m > 0.0 && a.rate_mb_s > 0.0 && a.turnaround_ns >= 0.0 && a.margin >= 0.0) {
        return bad("--ns-per-m, --rate-mb-s, --turnaround-ns and --margin");
    }
    if !(a.max_share > 0.0 && a.max_share <= 1.0) {
        return Err(CliError::Input("--max-share must be in (0, 1]".into()));
    }
    let cable = Cable {
        length_m: a.length_m,
        ns_per_m: a.ns_per_m,
        bytes_per_ns: a.rate_mb_s / 1000.0,
        turnaround_ns: a.turnaround_ns,
    };
    if cable.bytes_in_flight() > 1e9 {
        return Err(CliError::Input(
            "cable too long: over a gigabyte in flight".into(),
        ));
    }
    let p = SlackPlan::for_cable(&cable, a.margin, a.max_share)
        .map_err(|e| CliError::Input(e.to_string()))?;
    Ok(format!(
        "round trip      {:.0} ns\nbytes in flight {} B\nbuffer          {} B\nSTOP at         {} B (headroom {} B)\nGO at           {} B\nhysteresis      {} B (STOP/GO at most {:.2} % of the reverse channel)\n",
        cable.round_trip_ns(),
        p.in_flight,
        p.capacity,
        p.stop,
        p.headroom(),
        p.go,
        p.hysteresis(),
        400.0 / p.hysteresis() as f64
    ))
}
