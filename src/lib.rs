//! `krm-catalog`: a KRM function that resolves kinds through catalogs and expands
//! `ServiceDefinition`-backed services into manifests.
//!
//! The flow of one run (see [`pipeline`]): [`resource_list`] reads the ResourceList, [`config`]
//! reads the function config, [`catalog`] loads and merges the catalogs (the built-in one
//! first), [`service`] migrates, defaults and validates each service instance, [`render`] turns
//! it into manifests with minijinja, and [`results`] carries every problem back as KRM results.
//! [`cli`] is the command line around it; [`yaml`] is the only door YAML goes through.
//!
//! The library's surface is what a program embedding the function needs: [`run`] on a
//! [`ResourceList`], the catalog model (re-exported from `krm-catalog-core`), and the results.
//! Everything else is private to the crate.

mod builtin;
pub mod cli;
mod logger;
mod names;
pub mod pipeline;
pub mod resource_list;
pub mod results;
mod signature;
mod walk;

// Public for the integration tests (archives they build, the platform they run on), not an
// API: hidden from the documentation.
#[doc(hidden)]
pub mod functions;
#[doc(hidden)]
pub mod remote;

pub use krm_catalog_core::{
    catalog, catalog_ref, config, diagnostics, lint, patch, render, schema, service, template,
    verify, yaml,
};
// The core crate's helpers, under the same paths as in the core crate itself.
pub(crate) use krm_catalog_core::{env, gvk, strict, suggest};

pub use pipeline::{Outcome, RunContext, run};
pub use resource_list::ResourceList;
pub use results::{KrmResult, Severity};
