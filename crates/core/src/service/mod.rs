//! Services: `ServiceDefinition`s (the catalog side) and instances (the user side), with the
//! config schema checks and kubara's legacy migrations (the schema machinery is `crate::schema`).

pub mod definition;
pub mod deprecation;
pub mod instance;
pub mod kubara_config;
pub mod legacy;
pub mod placeholder;

pub use definition::{ServiceDefinition, Status};
pub use instance::{Instance, Schemas};
