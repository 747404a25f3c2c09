//! The one integration-test binary (ripgrep style): golden cases, the CLI, the corpus, and
//! end-to-end runs under kpt and kustomize when they are installed.

mod apply_order;
mod authoring;
mod catalog_cmd;
mod cel;
mod cli;
mod container;
mod corpus;
mod cosign;
mod crd_corpus;
mod docs;
mod first_hour;
mod function_kinds;
mod git;
mod golden;
mod hardening_local;
mod hardening_net;
mod import_kubara;
mod keyless;
mod layout;
mod limits;
mod orchestrators;
mod patches;
mod remote;
mod runtime_field;
mod runtime_sources;
mod runtimes;
mod servers;
mod starlark;
mod template_limits;
mod util;
mod vendor;
