//! `myrix-lab`: the helpers that turn the models into experiments, apart from the
//! models themselves (as ns-3 keeps its helpers apart from its models) and apart from
//! the command line.
//!
//! | module | owns |
//! |---|---|
//! | [`runner`] | the one parallel runner: jobs on all cores, results in job order |
//! | [`saturation`] | the one saturation search: loads in steps until two points in a row saturate |
//! | [`report`] | a load point's row, and rows (load points, failure runs) as table, JSON or CSV |
//! | [`failure`] | a component failing or a host joining under load, per routing policy |
//! | [`ranks`] | load points split over the ranks of an MPI job, gathered to rank 0 through PMI |
//! | [`plot`] | line plots of plain `(x, y)` series as SVG or PNG |
//! | [`experiment`] | the minimal-routing experiment (figures 1–7) beside the paper's values |
//! | [`mxbench`] | the MX ping-pong/stream benchmark protocol between two processes |
//! | [`rsmbench`] | the RSM put/get/ping-pong/bandwidth benchmark between two processes |
//! | [`fabricbench`] | an MX ping-pong between two hosts of the simulated fabric |
//! | [`rsmsim`] | RSM put, get, put ping-pong and put bandwidth between two hosts of the simulated fabric |
//! | [`speed`] | the simulator's speed: CPU time per thread, peak memory |
//!
//! Nothing here prints, parses command-line arguments or exits: callers (the `myrix`
//! command, tests, other tools) get values and [`LabError`]s and decide what to show.

#![forbid(unsafe_code)]

pub mod error;
pub mod experiment;
pub mod fabricbench;
pub mod failure;
pub mod mxbench;
pub mod plot;
pub mod ranks;
pub mod report;
pub mod rsmbench;
pub mod rsmsim;
pub mod runner;
pub mod saturation;
pub mod speed;

pub use error::LabError;
