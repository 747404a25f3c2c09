//! The one integration-test binary (ripgrep style): golden cases, the CLI, the corpus, and
//! end-to-end runs under kpt and kustomize when they are installed.

mod cli;
mod container;
mod corpus;
mod golden;
mod limits;
mod orchestrators;
mod remote;
mod runtimes;
mod util;
