//! Archives on object storage (issue 37): `--archive s3://bucket/prefix`,
//! `gs://bucket/prefix` (Google Cloud Storage) or `az://container/prefix`
//! (Azure Blob Storage), all through the `object_store` crate.
//!
//! Ingest reads a local folder and nothing else (`crate::ingest`); an
//! archive on object storage is brought to a **local copy** first
//! ([`mirror`]): the bucket prefix is listed (one listing per run prefix,
//! in parallel), each object's identity from the listing (ETag and size
//! where the listing gives an ETag, else size and last-modified time) is
//! compared with the identity of the copy made of it last time, and only
//! objects that are new or changed are fetched. A file of the copy is
//! rewritten only when its object changed, so its `stat` — which the
//! build cache keys runs by — changes exactly when the object does: a warm
//! build over an unchanged bucket lists and fetches nothing else and reads
//! every run from the cache.
//!
//! `record` writes a run with conditional puts only ([`publish`]): a
//! claim object first (`If-None-Match: *`, so a second `record` of the same
//! run id is refused), then every file, then a completion marker. A run
//! prefix with a claim and no marker is being written (or its writer
//! died) and is left out of every listing, so a build never reads half a
//! run.
//!
//! The object store client is async; it runs on a small tokio runtime
//! owned by [`Remote`] and nothing else in perfdash knows it.

pub mod mirror;
pub mod publish;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::{ClientOptions, ObjectStore};

use crate::error::Error;

/// The object `record` writes first into a run prefix: the run id is
/// taken. Never part of the local copy.
pub const CLAIM_OBJECT: &str = ".perfdash-record";
/// The object `record` writes last: the run is complete. Never part of
/// the local copy.
pub const COMPLETE_OBJECT: &str = ".perfdash-complete";

/// Where an archive lives: a local folder or a prefix in a bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveLocation {
    /// A folder on this machine.
    Local(PathBuf),
    /// `s3://bucket/prefix`.
    Remote(RemoteUrl),
}

impl FromStr for ArchiveLocation {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.split_once("://") {
            Some((scheme, rest)) if Scheme::of(scheme).is_some() => {
                let scheme = Scheme::of(scheme).expect("matched");
                RemoteUrl::parse(scheme, rest).map(ArchiveLocation::Remote)
            }
            Some((scheme, _))
                if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric()) =>
            {
                Err(format!(
                    "{scheme}:// archives are not supported: give a folder, s3://bucket/prefix, \
                     gs://bucket/prefix or az://container/prefix"
                ))
            }
            _ if text.is_empty() => Err("an empty archive path".into()),
            _ => Ok(ArchiveLocation::Local(PathBuf::from(text))),
        }
    }
}

impl fmt::Display for ArchiveLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveLocation::Local(dir) => write!(f, "{}", dir.display()),
            ArchiveLocation::Remote(url) => write!(f, "{url}"),
        }
    }
}

/// Which object store a [`RemoteUrl`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `s3://`: Amazon S3 and S3-compatible stores (MinIO, Ceph, R2, s3s-fs…).
    S3,
    /// `gs://`: Google Cloud Storage.
    Gcs,
    /// `az://`: Azure Blob Storage (the "bucket" is a container).
    Azure,
}

impl Scheme {
    fn of(name: &str) -> Option<Scheme> {
        match name {
            "s3" => Some(Scheme::S3),
            "gs" => Some(Scheme::Gcs),
            "az" => Some(Scheme::Azure),
            _ => None,
        }
    }

    /// `s3`, `gs` or `az`, as URLs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::S3 => "s3",
            Scheme::Gcs => "gs",
            Scheme::Azure => "az",
        }
    }

    /// The prefix of the variables the client reads (`AWS_`, `GOOGLE_`,
    /// `AZURE_`).
    pub fn variables(self) -> &'static str {
        match self {
            Scheme::S3 => "AWS_",
            Scheme::Gcs => "GOOGLE_",
            Scheme::Azure => "AZURE_",
        }
    }

    /// The endpoint set instead of the cloud's own, if any (for Azure's
    /// emulator, the emulator's address): what the plain-http rule and
    /// the local copy's name read.
    fn endpoint(self) -> Option<String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        match self {
            Scheme::S3 => var("AWS_ENDPOINT_URL").or_else(|| var("AWS_ENDPOINT")),
            Scheme::Gcs => var("GOOGLE_BASE_URL"),
            Scheme::Azure => var("AZURE_STORAGE_ENDPOINT")
                .or_else(|| var("AZURE_ENDPOINT"))
                .or_else(|| {
                    let emulator = var("AZURE_STORAGE_USE_EMULATOR")
                        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
                    let host = var("AZURITE_BLOB_STORAGE_URL")
                        .unwrap_or_else(|| "http://127.0.0.1:10000".into());
                    emulator.then_some(host)
                }),
        }
    }
}

/// `s3://bucket/prefix` (or `gs://…`, `az://container/…`): the prefix
/// without leading or trailing `/` (empty: the whole bucket).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    pub scheme: Scheme,
    pub bucket: String,
    pub prefix: String,
}

impl RemoteUrl {
    /// Parses what follows `<scheme>://`.
    fn parse(scheme: Scheme, rest: &str) -> Result<RemoteUrl, String> {
        let s = scheme.name();
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let bucket_ok = !bucket.is_empty()
            && bucket
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
        if !bucket_ok {
            let what = if scheme == Scheme::Azure {
                "container"
            } else {
                "bucket"
            };
            return Err(format!(
                "{s}://{rest}: '{bucket}' is not a {what} name (lowercase letters, digits, '-', '.')"
            ));
        }
        let prefix = prefix.trim_matches('/');
        if let Some(bad) = prefix
            .split('/')
            .find(|p| !prefix.is_empty() && !safe_segment(p))
        {
            return Err(format!(
                "{s}://{rest}: the prefix may not hold '{bad}' (no empty, '.', '..' or hidden parts)"
            ));
        }
        Ok(RemoteUrl {
            scheme,
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// The full key of `relative` (a `/`-separated path inside the archive).
    pub fn key(&self, relative: &str) -> String {
        match (self.prefix.is_empty(), relative.is_empty()) {
            (true, _) => relative.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}/{relative}", self.prefix),
        }
    }

    /// `s3://bucket/<key of relative>`, as messages name an object.
    pub fn show(&self, relative: &str) -> String {
        format!(
            "{}://{}/{}",
            self.scheme.name(),
            self.bucket,
            self.key(relative)
        )
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.show(""))
    }
}

/// True for a part of a key that maps to a plain file or folder name:
/// not empty, not `.` or `..`, not hidden, no `\` or NUL (the prefix
/// and the copy never reach outside their folder).
fn safe_segment(part: &str) -> bool {
    !part.is_empty() && !part.starts_with('.') && !part.contains(['\\', '\0']) && part.len() <= 255
}

/// Requests made to the store, counted (shown by `build --verbose`, and
/// what the tests check a warm build by).
#[derive(Debug, Default)]
pub struct RequestCounts {
    pub lists: AtomicU64,
    pub gets: AtomicU64,
    pub puts: AtomicU64,
    pub bytes_fetched: AtomicU64,
}

/// A plain copy of [`RequestCounts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requests {
    pub lists: u64,
    pub gets: u64,
    pub puts: u64,
    pub bytes_fetched: u64,
}

impl RequestCounts {
    pub fn snapshot(&self) -> Requests {
        Requests {
            lists: self.lists.load(Ordering::Relaxed),
            gets: self.gets.load(Ordering::Relaxed),
            puts: self.puts.load(Ordering::Relaxed),
            bytes_fetched: self.bytes_fetched.load(Ordering::Relaxed),
        }
    }

    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// A connection to one bucket prefix: the client, its runtime and the
/// request counts.
pub struct Remote {
    pub url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
    pub counts: Arc<RequestCounts>,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).finish()
    }
}

impl Remote {
    /// Connects with the standard variables of the store: for `s3://`
    /// `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_REGION`, …; for `gs://` `GOOGLE_SERVICE_ACCOUNT`,
    /// `GOOGLE_APPLICATION_CREDENTIALS`, `GOOGLE_BASE_URL`, …; for `az://`
    /// `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`,
    /// `AZURE_STORAGE_USE_EMULATOR`, … (docs/archive.md). Plain `http://`
    /// is allowed only for a loopback endpoint or with
    /// `<AWS|GOOGLE|AZURE>_ALLOW_HTTP=true`.
    pub fn connect(url: &RemoteUrl) -> Result<Remote, Error> {
        let allow_http = match url.scheme.endpoint() {
            Some(endpoint) if endpoint.starts_with("http://") => {
                let variable = format!("{}ALLOW_HTTP", url.scheme.variables());
                let explicit = std::env::var(&variable).is_ok_and(|v| v == "true");
                if !explicit && !is_loopback(&endpoint) {
                    return Err(Error::Usage(format!(
                        "{url}: the endpoint {endpoint} is plain http and not on this machine: \
                         use https, or set {variable}=true to send credentials and data \
                         unencrypted"
                    )));
                }
                true
            }
            _ => false,
        };
        let built: object_store::Result<Arc<dyn ObjectStore>> = match url.scheme {
            Scheme::S3 => AmazonS3Builder::from_env()
                .with_bucket_name(&url.bucket)
                .with_allow_http(allow_http)
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
            Scheme::Gcs => GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(&url.bucket)
                .with_client_options(ClientOptions::new().with_allow_http(allow_http))
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
            Scheme::Azure => MicrosoftAzureBuilder::from_env()
                .with_container_name(&url.bucket)
                .with_allow_http(allow_http)
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
        };
        let store = built.map_err(|e| {
            Error::Usage(format!(
                "{url}: {}",
                setting_failed(url.scheme, &e.to_string())
            ))
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("perfdash-s3")
            .enable_all()
            .build()
            .map_err(|e| {
                Error::Internal(format!("could not start the object store client: {e}"))
            })?;
        Ok(Remote {
            url: url.clone(),
            store,
            runtime,
            counts: Arc::default(),
        })
    }

    /// An error about the object at `relative`, naming its URL.
    fn error(&self, relative: &str, message: impl fmt::Display) -> Error {
        Error::at(
            Path::new(&self.url.show(relative)),
            None,
            message.to_string(),
        )
    }
}

/// "could not list: …", with a hint when the store found no credentials:
/// without its key variables the client asks the cloud's instance
/// metadata service, and its refusal alone ("GET http://169.254.169.254/…")
/// does not say that the variables were missing.
fn listing_failed(scheme: Scheme, e: &object_store::Error) -> String {
    let text = e.to_string();
    let (keys, missing) = match scheme {
        Scheme::S3 => (
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are",
            std::env::var_os("AWS_ACCESS_KEY_ID").is_none(),
        ),
        Scheme::Gcs => (
            "GOOGLE_SERVICE_ACCOUNT, GOOGLE_SERVICE_ACCOUNT_KEY and GOOGLE_APPLICATION_CREDENTIALS \
             are",
            [
                "GOOGLE_SERVICE_ACCOUNT",
                "GOOGLE_SERVICE_ACCOUNT_KEY",
                "GOOGLE_APPLICATION_CREDENTIALS",
            ]
            .iter()
            .all(|v| std::env::var_os(v).is_none()),
        ),
        Scheme::Azure => (
            "AZURE_STORAGE_ACCOUNT_KEY (or another Azure credential) is",
            std::env::var_os("AZURE_STORAGE_ACCOUNT_KEY").is_none(),
        ),
    };
    if missing && text.contains("169.254.169.254") {
        format!(
            "could not list: no credentials: {keys} not set and the instance metadata service \
             gave none ({text})"
        )
    } else {
        format!("could not list: {text}")
    }
}

/// A setting the client could not take, with the `AWS_*` (`GOOGLE_*`,
/// `AZURE_*`) variable it came from: the client's own message quotes the
/// value ("failed to parse \"banana\" as Duration") but not the variable
/// (`AWS_TIMEOUT`); or, for a setting that is missing, where settings
/// come from.
fn setting_failed(scheme: Scheme, message: &str) -> String {
    let from: Vec<String> = std::env::vars()
        .filter(|(key, value)| {
            key.starts_with(scheme.variables())
                && !value.is_empty()
                && message.contains(&format!("\"{value}\""))
        })
        .map(|(key, _)| key)
        .collect();
    if scheme == Scheme::Azure && message.contains("Account must be specified") {
        // The one setting Azure cannot do without, and its message does
        // not name the variable.
        format!("{message}: set AZURE_STORAGE_ACCOUNT_NAME to the storage account's name")
    } else if from.is_empty() {
        // Another setting that is missing: say where settings come from.
        format!(
            "{message} (the store's settings are read from the {}* variables: docs/archive.md, \
             \"Archives on object storage\")",
            scheme.variables()
        )
    } else {
        format!("{message} (set by {})", from.join(", "))
    }
}

/// True when `endpoint` (`http://host[:port][/…]`) names this machine.
fn is_loopback(endpoint: &str) -> bool {
    let rest = endpoint.trim_start_matches("http://");
    let authority = rest.split('/').next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The store as a trait object, for the async helpers.
fn dyn_store(remote: &Remote) -> Arc<dyn ObjectStore> {
    remote.store.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse() {
        assert_eq!(
            "archive".parse::<ArchiveLocation>().unwrap(),
            ArchiveLocation::Local(PathBuf::from("archive"))
        );
        assert_eq!(
            "s3://perf-data/team/a/".parse::<ArchiveLocation>().unwrap(),
            ArchiveLocation::Remote(RemoteUrl {
                scheme: Scheme::S3,
                bucket: "perf-data".into(),
                prefix: "team/a".into()
            })
        );
        let url = RemoteUrl::parse(Scheme::S3, "b").unwrap();
        assert_eq!(url.key("runs/x"), "runs/x");
        assert_eq!(url.to_string(), "s3://b/");
        for (text, scheme) in [("gs://b/p", Scheme::Gcs), ("az://b/p", Scheme::Azure)] {
            let ArchiveLocation::Remote(url) = text.parse::<ArchiveLocation>().unwrap() else {
                panic!("{text}")
            };
            assert_eq!(
                (url.scheme, url.show("runs/x")),
                (scheme, format!("{text}/runs/x"))
            );
        }
        for bad in [
            "s3://",
            "s3://B/x",
            "s3://b/../x",
            "s3://b/a//c",
            "s3://b/.git",
            "gs://b/../x",
            "az://Container/x",
            "ftp://b/x",
        ] {
            assert!(bad.parse::<ArchiveLocation>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_loopback_endpoints_are_loopback() {
        for yes in [
            "http://127.0.0.1:9000",
            "http://localhost",
            "http://[::1]:80/x",
        ] {
            assert!(is_loopback(yes), "{yes}");
        }
        for no in [
            "http://10.0.0.1:9000",
            "http://minio.internal",
            "http://127.0.0.1.nip.io",
        ] {
            assert!(!is_loopback(no), "{no}");
        }
    }

    #[test]
    fn a_missing_azure_account_names_its_variable() {
        let said = setting_failed(
            Scheme::Azure,
            "Generic MicrosoftAzure error: Account must be specified",
        );
        assert!(said.ends_with("set AZURE_STORAGE_ACCOUNT_NAME to the storage account's name"));
        let other = setting_failed(Scheme::Gcs, "Generic GCS error: no bucket");
        assert!(other.contains("GOOGLE_* variables"), "{other}");
    }
}
