//! Helpers for the network controller tests: free loopback ports and node tables.

#![allow(dead_code)]

use myrix_rsm::net::node_table::NodeTable;
use myrix_rsm::{Controller, NodeId};

/// A UDP port on 127.0.0.1 free a moment ago.
pub fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A table of `nodes` on fresh loopback ports, as text.
pub fn table_text(nodes: &[u32]) -> String {
    nodes
        .iter()
        .map(|n| format!("{n} udp:127.0.0.1:{}\n", free_port()))
        .collect()
}

/// Controllers for each of `nodes` (all in this process), sharing one table.
pub fn controllers(nodes: &[u32]) -> Vec<Controller> {
    let t = NodeTable::parse(&table_text(nodes)).unwrap();
    nodes
        .iter()
        .map(|&n| Controller::udp(NodeId(n), t.clone()).unwrap())
        .collect()
}
