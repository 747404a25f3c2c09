//! Exec binaries and Starlark scripts from an OCI artifact or a pinned Git commit (SPEC §7.3,
//! issue 23): the network side. The caller (`functions::exec::fetch`) checks the bytes against
//! the runtime's sha256 and caches them under it, as for HTTPS downloads, so an offline run
//! finds them in the cache and never gets here.

use crate::catalog_ref::GitRef;

use super::oci::RuntimeWant;
use super::{Remote, RemoteError, git};

impl Remote {
    /// The layer of the OCI artifact `reference` (without `oci://`) that holds the runtime
    /// for `want` (see [`super::net::Net::pull_runtime`]).
    pub fn fetch_oci_runtime(
        &self,
        reference: &str,
        want: RuntimeWant<'_>,
    ) -> Result<Vec<u8>, RemoteError> {
        if self.offline() {
            return Err(RemoteError::NotCached {
                reference: format!("oci://{reference}"),
                cache: self.cache().describe(),
            });
        }
        Ok(self.net()?.pull_runtime(reference, want)?.data)
    }

    /// The file `source.path` of the commit `source` pins (see [`git::load_file`]).
    pub fn fetch_git_runtime(&self, source: &GitRef) -> Result<Vec<u8>, RemoteError> {
        if self.offline() {
            return Err(RemoteError::NotCached {
                reference: source.to_string(),
                cache: self.cache().describe(),
            });
        }
        Ok(git::load_file(source, self.cache())?)
    }
}
