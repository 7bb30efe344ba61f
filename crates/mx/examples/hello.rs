//! A complete MX program of two processes: a server that answers every message with
//! the same bytes in upper case, and a client that sends it a few.
//!
//! ```sh
//! cargo run --release -p myrix-mx --example hello                      # both, over shm
//! cargo run --release -p myrix-mx --example hello -- server udp:127.0.0.1:0
//! cargo run --release -p myrix-mx --example hello -- client 'ADDRESS THE SERVER PRINTED'
//! ```
//!
//! The server prints its address as its first line and receives any message with the
//! blocking `recv` (match info 0 under mask 0), telling texts from the goodbye by the
//! status's match info. The client connects with the key both sides agreed on, posts
//! the receive for each answer (`irecv`) before sending the question with the blocking
//! `send`, waits for it, and at the end says goodbye and disconnects. Errors end the
//! program with one line.
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

use myrix_mx::{Code, Endpoint, EndpointAddr, MxError, RecvBuf};

const KEY: u32 = 0x4d58;
/// Match info: the top 32 bits say what a message is, the rest is free.
const TEXT: u64 = 1 << 32;
const BYE: u64 = 2 << 32;
const KIND: u64 = 0xffff_ffff << 32;
const T: Duration = Duration::from_secs(10);

fn server(board: &str) -> Result<(), MxError> {
    let mut ep = Endpoint::open(board, 0, KEY)?;
    println!("{}", ep.addr());
    loop {
        // Match info 0 under mask 0: any message, whatever it is; the status says.
        let (st, buf) = ep.recv(RecvBuf::One(vec![0; 256]), 0, 0, Duration::from_secs(3600))?;
        match st.match_info & KIND {
            BYE => break,
            TEXT => {
                let mut text = buf.to_vec();
                text.truncate(st.xfer_len);
                text.make_ascii_uppercase();
                // The low 32 bits number the message: the answer carries the same.
                ep.send(st.source, &[&text], st.match_info, T)?;
            }
            _ => eprintln!(
                "hello: ignored a message with match info {:#x}",
                st.match_info
            ),
        }
    }
    // Let the last acknowledgements out (on UDP) before the endpoint closes.
    ep.flush_all(T)?;
    Ok(())
}

fn client(addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let server: EndpointAddr = addr.parse()?;
    // An endpoint on the same kind of board as the server's (on UDP, any local address
    // of the same family: the server answers where our frames come from).
    let board = match server.transport() {
        "udp" if server.location().starts_with('[') => "udp:[::]:0".to_string(),
        "udp" => "udp:0.0.0.0:0".to_string(),
        t => t.to_string(),
    };
    let mut ep = Endpoint::open(&board, 1, KEY)?;
    let peer = ep.connect(&server, KEY, T)?;
    for (i, word) in ["hello", "myrinet", "express"].iter().enumerate() {
        let m = TEXT | i as u64;
        // The answer's receive is posted before the question leaves.
        let answer = ep.irecv(RecvBuf::One(vec![0; 256]), m, u64::MAX, 0)?;
        ep.send(peer, &[word.as_bytes()], m, T)?;
        let (st, buf) = ep.wait(answer, T)?.ok_or("no answer within 10 s")?;
        if st.code != Code::Success {
            return Err(format!("answer {i}: {:?}", st.code).into());
        }
        let text = buf.map(|b| b.to_vec()).unwrap_or_default();
        println!(
            "{word} -> {}",
            String::from_utf8_lossy(&text[..st.xfer_len])
        );
    }
    ep.send(peer, &[], BYE, T)?;
    ep.flush_all(T)?;
    ep.disconnect(peer)?;
    Ok(())
}

/// No arguments: run a server over shared memory as a child process, and a client.
fn both() -> Result<(), Box<dyn std::error::Error>> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["server", "shm"])
        .stdout(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().ok_or("no pipe")?).read_line(&mut line)?;
    let r = client(line.trim());
    let status = child.wait()?;
    r?;
    if !status.success() {
        return Err("the server failed".into());
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => both(),
        ["server"] => server("shm").map_err(Into::into),
        ["server", board] => server(board).map_err(Into::into),
        ["client", addr] => client(addr),
        _ => Err("usage: hello [server [BOARD] | client ADDRESS]".into()),
    };
    if let Err(e) = r {
        eprintln!("hello: {e}");
        std::process::exit(1);
    }
}
