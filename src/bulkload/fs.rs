//! Where an `hfile:` directory lives: a local folder, or a folder in HDFS
//! (`hfile:hdfs://NAMENODE:PORT/PATH`), written through HDFS's own protocols (the
//! `hdfs-native` client: NameNode RPC and DataNode data transfer, no JVM) so that the region
//! servers read the files where they were written and HBase's bulk load renames them.
//!
//! Paths inside a [`Dir`] are relative, `/`-separated. A file is written under a temporary
//! name beginning `_` (which HBase's bulk-load tool and tallrow skip) and renamed to its own
//! name when closed; one that fails or is dropped unclosed is deleted, so no half-written
//! file is ever visible under its name.
//!
//! HDFS takes its user from `HADOOP_USER_NAME` (else the login name) with simple
//! authentication, or from the Kerberos ticket cache where the cluster's configuration
//! (`HADOOP_CONF_DIR`) says `hadoop.security.authentication=kerberos`.

use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A location as given: a local path or an `hdfs://` URL (nothing is opened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local directory.
    Local(PathBuf),
    /// `hdfs://AUTHORITY/PATH`.
    Hdfs {
        /// `hdfs://host:port` (or a name service).
        authority: String,
        /// Absolute path in HDFS, without a trailing `/`.
        path: String,
    },
}

impl Location {
    /// Reads `s`: `hdfs://NAMENODE[:PORT]/PATH`, or anything else as a local path.
    pub fn parse(s: &str) -> Result<Location, String> {
        let Some(rest) = s.strip_prefix("hdfs://") else {
            if s.contains("://") {
                return Err(format!(
                    "{s}: an hfile: directory is a local path or hdfs://NAMENODE:PORT/PATH"
                ));
            }
            return Ok(Location::Local(PathBuf::from(s)));
        };
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        if host.is_empty() {
            return Err(format!("{s}: no NameNode: expected hdfs://NAMENODE:PORT/PATH"));
        }
        let path = path.trim_end_matches('/');
        if path.is_empty() {
            return Err(format!(
                "{s}: no directory: expected hdfs://NAMENODE:PORT/PATH (not the file system's root)"
            ));
        }
        if path.split('/').any(|p| p.is_empty() || p == "." || p == "..") {
            return Err(format!("{s}: the path must be plain, without //, . or .."));
        }
        Ok(Location::Hdfs {
            authority: format!("hdfs://{host}"),
            path: format!("/{path}"),
        })
    }

    /// As the user wrote it (an HDFS location in full).
    pub fn display(&self) -> String {
        match self {
            Location::Local(p) => p.display().to_string(),
            Location::Hdfs { authority, path } => format!("{authority}{path}"),
        }
    }

    /// Connects (HDFS) or takes the folder as it is (local).
    pub fn open(&self) -> io::Result<Dir> {
        Ok(match self {
            Location::Local(p) => Dir::Local(p.clone()),
            Location::Hdfs { authority, path } => {
                let client = hdfs_native::sync::ClientBuilder::new()
                    .with_url(authority.as_str())
                    .build()
                    .map_err(|e| hdfs_error(&self.display(), e))?;
                Dir::Hdfs(Arc::new(Hdfs {
                    client,
                    authority: authority.clone(),
                    path: path.clone(),
                }))
            }
        })
    }
}

/// An open HDFS folder.
pub struct Hdfs {
    client: hdfs_native::sync::Client,
    authority: String,
    path: String,
}

impl std::fmt::Debug for Hdfs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.authority, self.path)
    }
}

impl Hdfs {
    fn abs(&self, rel: &str) -> String {
        if rel.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{rel}", self.path)
        }
    }
}

impl Hdfs {
    /// A delegation token from this folder's NameNode, renewable by `renewer`, with its
    /// service named as Hadoop's client names it (`ip:port`, as
    /// `hadoop.security.token.service.use_ip` has it by default; `ha-hdfs:NAME` for a name
    /// service): `None` where the NameNode issues none (its security is off).
    pub fn delegation_token(&self, renewer: &str) -> io::Result<Option<hdfs_native::client::DelegationToken>> {
        let at = format!("{}{}", self.authority, self.path);
        let Some(mut token) = self
            .client
            .get_delegation_token(&self.path, renewer)
            .map_err(|e| hdfs_error(&at, e))?
        else {
            return Ok(None);
        };
        let host = self.authority.trim_start_matches("hdfs://");
        token.service = if host.contains(':') {
            use std::net::ToSocketAddrs;
            match host.to_socket_addrs()?.next() {
                Some(addr) => addr.to_string(),
                None => host.to_string(),
            }
        } else {
            format!("ha-hdfs:{host}")
        };
        Ok(Some(token))
    }
}

/// One HDFS error in one line: the Java exception's class name and the first line of its
/// message, after the path it concerns.
fn hdfs_error(at: &str, e: hdfs_native::HdfsError) -> io::Error {
    use hdfs_native::HdfsError as H;
    let kind = match &e {
        H::FileNotFound(_) => io::ErrorKind::NotFound,
        H::AlreadyExists(_) => io::ErrorKind::AlreadyExists,
        H::RPCError(class, _) if class.ends_with("AccessControlException") => io::ErrorKind::PermissionDenied,
        _ => io::ErrorKind::Other,
    };
    let text = match &e {
        H::RPCError(class, msg) | H::FatalRPCError(class, msg) => {
            let class = class.rsplit('.').next().unwrap_or(class);
            format!("{class}: {}", msg.lines().next().unwrap_or(""))
        }
        other => other.to_string().lines().next().unwrap_or("").to_string(),
    };
    io::Error::new(kind, format!("{at}: {text}"))
}

/// A directory holding HFiles and their manifests, local or in HDFS. Cheap to clone.
#[derive(Debug, Clone)]
pub enum Dir {
    /// A local folder.
    Local(PathBuf),
    /// A folder in HDFS.
    Hdfs(Arc<Hdfs>),
}

/// What a directory entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Whether it is a directory.
    pub dir: bool,
}

/// Random access to one file.
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

impl Dir {
    /// The local folder, where it is one.
    pub fn local(&self) -> Option<&Path> {
        match self {
            Dir::Local(p) => Some(p),
            Dir::Hdfs(_) => None,
        }
    }

    /// `rel` inside the directory, as HBase's tools and the user name it: a local path, or
    /// `hdfs://NAMENODE/PATH/rel`.
    pub fn at(&self, rel: &str) -> String {
        match self {
            Dir::Local(p) if rel.is_empty() => p.display().to_string(),
            Dir::Local(p) => p.join(rel).display().to_string(),
            Dir::Hdfs(h) => format!("{}{}", h.authority, h.abs(rel)),
        }
    }

    /// `rel` as a URL a server of the cluster resolves to this file: `file:` and the
    /// absolute path for a local one, which a server resolves against its own default
    /// file system otherwise.
    pub fn url(&self, rel: &str) -> io::Result<String> {
        match self {
            Dir::Local(p) => {
                let abs = std::path::absolute(if rel.is_empty() { p.clone() } else { p.join(rel) })?;
                Ok(format!("file:{}", abs.display()))
            }
            Dir::Hdfs(_) => Ok(self.at(rel)),
        }
    }

    /// The directory itself, as [`Dir::at`] names it.
    pub fn display(&self) -> String {
        self.at("")
    }

    /// Whether `rel` exists, and is a directory: `None` when it does not exist.
    pub fn kind(&self, rel: &str) -> io::Result<Option<bool>> {
        match self {
            Dir::Local(p) => match std::fs::metadata(if rel.is_empty() { p.clone() } else { p.join(rel) }) {
                Ok(m) => Ok(Some(m.is_dir())),
                // Below a file: not there (creating it says why it cannot be).
                Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => Ok(None),
                Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", self.at(rel)))),
            },
            Dir::Hdfs(h) => match h.client.get_file_info(&h.abs(rel)) {
                Ok(s) => Ok(Some(s.isdir)),
                Err(hdfs_native::HdfsError::FileNotFound(_)) => Ok(None),
                Err(e) => Err(hdfs_error(&self.at(rel), e)),
            },
        }
    }

    /// Creates `rel` and its parents.
    pub fn create_dir_all(&self, rel: &str) -> io::Result<()> {
        match self {
            Dir::Local(p) => std::fs::create_dir_all(p.join(rel))
                .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", self.at(rel)))),
            Dir::Hdfs(h) => h
                .client
                .mkdirs(&h.abs(rel), 0o755, true)
                .map_err(|e| hdfs_error(&format!("cannot create {}", self.at(rel)), e)),
        }
    }

    /// The entries of folder `rel`, sorted by name; none where it does not exist.
    pub fn list(&self, rel: &str) -> io::Result<Vec<Entry>> {
        let mut out = match self {
            Dir::Local(p) => match std::fs::read_dir(p.join(rel)) {
                Ok(entries) => entries
                    .filter_map(|e| e.ok())
                    .map(|e| Entry {
                        name: e.file_name().to_string_lossy().into_owned(),
                        dir: e.file_type().is_ok_and(|t| t.is_dir()),
                    })
                    .collect(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", self.at(rel)))),
            },
            Dir::Hdfs(h) => match h.client.list_status(&h.abs(rel), false) {
                Ok(entries) => entries
                    .into_iter()
                    .map(|s| Entry {
                        name: s.path.rsplit('/').next().unwrap_or(&s.path).to_string(),
                        dir: s.isdir,
                    })
                    .collect(),
                Err(hdfs_native::HdfsError::FileNotFound(_)) => Vec::new(),
                Err(e) => return Err(hdfs_error(&self.at(rel), e)),
            },
        };
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The length of file `rel`.
    pub fn len(&self, rel: &str) -> io::Result<u64> {
        match self {
            Dir::Local(p) => std::fs::metadata(p.join(rel))
                .map(|m| m.len())
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.at(rel)))),
            Dir::Hdfs(h) => h
                .client
                .get_file_info(&h.abs(rel))
                .map(|s| s.length as u64)
                .map_err(|e| hdfs_error(&self.at(rel), e)),
        }
    }

    /// File `rel`, whole.
    pub fn read(&self, rel: &str) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        self.open(rel)?
            .read_to_end(&mut out)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.at(rel))))?;
        Ok(out)
    }

    /// File `rel`, to read anywhere in.
    pub fn open(&self, rel: &str) -> io::Result<Box<dyn ReadSeek>> {
        match self {
            Dir::Local(p) => std::fs::File::open(p.join(rel))
                .map(|f| Box::new(f) as Box<dyn ReadSeek>)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.at(rel)))),
            Dir::Hdfs(h) => h
                .client
                .read(&h.abs(rel))
                .map(|f| Box::new(f) as Box<dyn ReadSeek>)
                .map_err(|e| hdfs_error(&self.at(rel), e)),
        }
    }

    /// Removes file `rel`.
    pub fn remove(&self, rel: &str) -> io::Result<()> {
        match self {
            Dir::Local(p) => std::fs::remove_file(p.join(rel))
                .map_err(|e| io::Error::new(e.kind(), format!("cannot remove {}: {e}", self.at(rel)))),
            Dir::Hdfs(h) => match h.client.delete(&h.abs(rel), false) {
                Ok(_) => Ok(()),
                Err(e) => Err(hdfs_error(&format!("cannot remove {}", self.at(rel)), e)),
            },
        }
    }

    /// A new file `rel` (its folder created), written under a temporary name until
    /// [`NewFile::commit`].
    pub fn create(&self, rel: &str) -> io::Result<NewFile> {
        let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        let tmp = if folder.is_empty() {
            format!("_{name}.tmp")
        } else {
            format!("{folder}/_{name}.tmp")
        };
        let out = match self {
            Dir::Local(p) => {
                self.create_dir_all(folder)?;
                let f = std::fs::File::create(p.join(&tmp))
                    .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", self.at(rel))))?;
                Out::Local(f)
            }
            Dir::Hdfs(h) => {
                // A temporary file left by a writer that died is overwritten.
                let opts = hdfs_native::WriteOptions {
                    overwrite: true,
                    ..Default::default()
                };
                let w = h
                    .client
                    .create(&h.abs(&tmp), opts)
                    .map_err(|e| hdfs_error(&format!("cannot create {}", self.at(rel)), e))?;
                Out::Hdfs(Box::new(w))
            }
        };
        Ok(NewFile {
            dir: self.clone(),
            tmp,
            rel: rel.to_string(),
            out: Some(out),
        })
    }

    /// Writes file `rel` whole, replacing what it held only once all of it is written.
    pub fn write_whole(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let mut f = self.create(rel)?;
        f.write_all(bytes)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", self.at(rel))))?;
        f.commit()
    }
}

enum Out {
    Local(std::fs::File),
    Hdfs(Box<hdfs_native::sync::FileWriter>),
}

/// A file being written: under its temporary name until [`NewFile::commit`]; removed when
/// dropped without it.
pub struct NewFile {
    dir: Dir,
    tmp: String,
    rel: String,
    out: Option<Out>,
}

impl NewFile {
    /// Where the file will be, as [`Dir::at`] names it.
    pub fn name(&self) -> String {
        self.dir.at(&self.rel)
    }

    /// Makes the file durable (local: fsync; HDFS: every block acknowledged and the file
    /// closed) and gives it its name, replacing a file of that name.
    pub fn commit(mut self) -> io::Result<()> {
        let out = self.out.take().expect("not committed");
        let name = self.name();
        let failed = |e: io::Error, what: &str| io::Error::new(e.kind(), format!("cannot {what} {name}: {e}"));
        match out {
            Out::Local(f) => {
                f.sync_all().map_err(|e| failed(e, "write"))?;
                let p = self.dir.local().expect("a local folder");
                std::fs::rename(p.join(&self.tmp), p.join(&self.rel)).map_err(|e| failed(e, "rename"))?;
            }
            Out::Hdfs(mut w) => {
                let Dir::Hdfs(h) = &self.dir else {
                    unreachable!("an HDFS writer in an HDFS folder")
                };
                w.close().map_err(|e| hdfs_error(&format!("cannot write {name}"), e))?;
                h.client
                    .rename(&h.abs(&self.tmp), &h.abs(&self.rel), true)
                    .map_err(|e| hdfs_error(&format!("cannot rename into {name}"), e))?;
            }
        }
        Ok(())
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.out.as_mut().expect("not committed") {
            Out::Local(f) => f.write(buf),
            Out::Hdfs(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.out.as_mut().expect("not committed") {
            Out::Local(f) => f.flush(),
            Out::Hdfs(w) => w.flush(),
        }
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        let Some(out) = self.out.take() else { return };
        match (out, &self.dir) {
            (Out::Local(f), Dir::Local(p)) => {
                drop(f);
                let _ = std::fs::remove_file(p.join(&self.tmp));
            }
            (Out::Hdfs(mut w), Dir::Hdfs(h)) => {
                // Closed first so that no lease outlives the file.
                let _ = w.close();
                let _ = h.client.delete(&h.abs(&self.tmp), false);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_as_hdfs_urls_or_local_paths() {
        assert_eq!(
            Location::parse("hdfs://nn:8020/loads/a/").unwrap(),
            Location::Hdfs {
                authority: "hdfs://nn:8020".into(),
                path: "/loads/a".into()
            }
        );
        assert_eq!(
            Location::parse("hdfs://nn:8020/loads/a").unwrap().display(),
            "hdfs://nn:8020/loads/a"
        );
        assert_eq!(Location::parse("data/h").unwrap(), Location::Local("data/h".into()));
        for (bad, says) in [
            ("hdfs://nn:8020", "no directory"),
            ("hdfs://nn:8020/", "no directory"),
            ("hdfs:///x", "no NameNode"),
            ("hdfs://nn/a//b", "plain"),
            ("hdfs://nn/a/../b", "plain"),
            ("s3://bucket/x", "local path or hdfs://"),
        ] {
            let e = Location::parse(bad).unwrap_err();
            assert!(e.contains(says) && e.starts_with(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn a_new_file_has_its_name_only_once_committed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::Local(tmp.path().to_path_buf());
        let mut f = dir.create("ns/t/cf/region00000").unwrap();
        f.write_all(b"cells").unwrap();
        assert_eq!(dir.kind("ns/t/cf/region00000").unwrap(), None);
        let names: Vec<String> = dir.list("ns/t/cf").unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["_region00000.tmp"]);
        f.commit().unwrap();
        assert_eq!(dir.read("ns/t/cf/region00000").unwrap(), b"cells");
        let names: Vec<String> = dir.list("ns/t/cf").unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["region00000"]);

        let mut g = dir.create("ns/t/cf/region00001").unwrap();
        g.write_all(b"half").unwrap();
        drop(g);
        let names: Vec<String> = dir.list("ns/t/cf").unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["region00000"], "a file dropped unclosed is gone");

        dir.write_whole("bulkload.json", b"{}").unwrap();
        dir.write_whole("bulkload.json", b"{\"a\":1}").unwrap();
        assert_eq!(dir.read("bulkload.json").unwrap(), b"{\"a\":1}");
        assert_eq!(dir.len("bulkload.json").unwrap(), 7);
        assert_eq!(dir.kind("ns").unwrap(), Some(true));
        assert_eq!(dir.list("nothing").unwrap(), []);
    }
}
