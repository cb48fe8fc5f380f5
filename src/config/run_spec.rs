//! How a run is named on the command line and in `[compare] pairs`: the
//! parsed form is a setting; finding the run it names is
//! `analyse::compare::resolve_run`.

/// How a run is named on the command line or in `perfdash.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSpec {
    /// `latest` (0) or `latest~N` (N runs before the latest).
    Latest(usize),
    /// `release:<name>`: the latest run whose run.toml says `release = "<name>"`.
    Release(String),
    /// An exact run id or a unique prefix of one.
    Id(String),
}

impl RunSpec {
    /// Parses a run name; the message says what is accepted.
    pub fn parse(spec: &str) -> Result<RunSpec, String> {
        const FORMS: &str = "a run id or unique prefix, `latest`, `latest~N` or `release:<name>`";
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(format!("empty run name: expected {FORMS}"));
        }
        if spec == "latest" {
            return Ok(RunSpec::Latest(0));
        }
        if let Some(n) = spec.strip_prefix("latest~") {
            return n.parse::<usize>().map(RunSpec::Latest).map_err(|_| {
                format!("`{spec}`: the N in `latest~N` must be a whole number (e.g. latest~1)")
            });
        }
        if let Some(name) = spec.strip_prefix("release:") {
            if name.is_empty() {
                return Err(format!("`{spec}`: name the release, e.g. release:1.4.0"));
            }
            return Ok(RunSpec::Release(name.to_string()));
        }
        Ok(RunSpec::Id(spec.to_string()))
    }
}
