//! Services: `ServiceDefinition`s (the catalog side) and instances (the user side), with the
//! config schema checks, Kubernetes structural defaulting and kubara's legacy migrations.

pub mod defaulting;
pub mod definition;
pub mod goregex;
pub mod instance;
pub mod legacy;
pub mod schema;

pub use definition::{ServiceDefinition, Status};
pub use instance::Instance;
