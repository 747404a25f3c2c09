//! `krm-catalog`: a KRM function that resolves kinds through catalogs and expands
//! `ServiceDefinition`-backed services into manifests.
//!
//! The flow of one run (see [`pipeline`]): [`resource_list`] reads the ResourceList, [`config`]
//! reads the function config, [`catalog`] loads and merges the catalogs (the [`builtin`] one
//! first), [`service`] migrates, defaults and validates each service instance, [`render`] turns
//! it into manifests with minijinja, and [`results`] carries every problem back as KRM results.
//! [`cli`] is the command line around it; [`yaml`] is the only door YAML goes through.

pub mod builtin;
pub mod cli;
pub mod functions;
pub mod logger;
pub mod names;
pub mod pipeline;
pub mod remote;
pub mod resource_list;
pub mod results;
pub mod runtime;
pub mod walk;

pub use krm_catalog_core::{
    catalog, catalog_ref, config, diagnostics, env, gvk, render, schema, service, strict, suggest,
    verify, yaml,
};
