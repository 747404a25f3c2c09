//! `krm-catalog-core`: the catalog model of `krm-catalog`, everything a catalog is and does
//! without a ResourceList around it: [`catalog`] (bundles, the KEP-2906 and kubara formats,
//! merge, editor schemas), [`catalog_ref`] (a catalog reference and its pin), [`config`]
//! (the function config), [`diagnostics`] (severity and field paths of every finding),
//! [`schema`] (CRD `openAPIV3Schema`: checks, defaulting, pruning, validation), [`service`]
//! (definitions, instances, their schema cache), [`template`] (the minijinja sandbox),
//! [`render`] (a catalog's services into manifests), [`lint`], and [`yaml`], the only door YAML
//! goes through.
//!
//! It is a crate of its own so that the compiler holds the layering: the catalog model cannot
//! see the ResourceList, the pipeline or the command line.

pub mod catalog;
pub mod catalog_ref;
pub mod config;
pub mod diagnostics;
pub mod env;
pub mod gvk;
pub mod lint;
pub mod patch;
pub mod render;
pub mod schema;
pub mod service;
pub mod strict;
pub mod suggest;
pub mod template;
pub mod verify;
pub mod yaml;
