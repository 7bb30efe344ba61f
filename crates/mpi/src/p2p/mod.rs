//! Point-to-point messaging: MPI's matching engine over a [`fabric::Fabric`].

pub mod fabric;
