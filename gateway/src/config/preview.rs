//! `[preview]`: the npm modules generated previews may import, served at `/vendor/` ([`crate::vendor`]).

use std::path::PathBuf;

use serde::Deserialize;

/// `[preview]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreviewConfig {
    /// Packages (`"name@version"`, an exact version) previews may import besides the pinned set
    /// (react, react-dom, lucide-react, recharts, …). The set-up (`cargo xtask setup
    /// preview-packages`, also run by `serve` and `test`) installs them from the npm registry and
    /// builds them; the gateway only serves what was built, and warns at start about what was not.
    pub packages: Vec<String>,
    /// The built modules and their `manifest.json`, written by the set-up.
    pub vendor_dir: PathBuf,
}

impl Default for PreviewConfig {
    fn default() -> Self {
        Self { packages: Vec::new(), vendor_dir: PathBuf::from("target/preview-vendor") }
    }
}
