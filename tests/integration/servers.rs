//! Servers on loopback that the remote tests talk to: `tests/support/catalog_server.py` (a
//! catalog server that injects failures and counts requests), `tests/support/hostile_server.py`
//! (redirects, endless bodies, a lying OCI registry), Debian's `docker-registry`, and a test CA
//! for HTTPS. Each is stopped when dropped.

use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::root;

/// A child process that is killed when the test lets go of it.
pub(crate) struct Process(Child);

impl Process {
    pub(crate) fn spawn(cmd: &mut Command) -> Self {
        Self(
            cmd.spawn()
                .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}")),
        )
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Wait (10 s at most) until `addr` accepts connections.
pub(crate) fn wait_for_port(addr: impl ToSocketAddrs + Copy, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A test CA and a server certificate for 127.0.0.1 and localhost.
pub(crate) struct Tls {
    _dir: tempfile::TempDir,
    pub(crate) ca: PathBuf,
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
}

pub(crate) fn tls() -> Tls {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let sh = format!(
        "set -e; cd {}; \
         openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=krm-catalog-test-ca 2>/dev/null; \
         openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null; \
         printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ext; \
         openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext 2>/dev/null",
        d.display()
    );
    let status = Command::new("sh")
        .arg("-c")
        .arg(sh)
        .status()
        .expect("openssl");
    assert!(status.success(), "creating the test CA failed");
    Tls {
        ca: d.join("ca.pem"),
        cert: d.join("server.pem"),
        key: d.join("server.key"),
        _dir: dir,
    }
}

/// One of the Python servers of `tests/support/` on a random port, serving the files of a
/// temporary directory.
pub(crate) struct Server {
    _process: Process,
    pub(crate) port: u16,
    scheme: &'static str,
    host: &'static str,
    log: PathBuf,
    root: tempfile::TempDir,
}

impl Server {
    /// `catalog_server.py`, over HTTPS with `tls`; with `proxy`, a proxy to that registry
    /// address that answers 503 to the first so many manifest requests.
    pub(crate) fn start(tls: Option<&Tls>, proxy: Option<(&str, usize)>) -> Self {
        let extra = proxy.map_or_else(Vec::new, |(to, failures)| {
            vec![
                "--proxy".to_owned(),
                to.to_owned(),
                "--fail-manifests".to_owned(),
                failures.to_string(),
            ]
        });
        Self::spawn("catalog_server.py", tls, "127.0.0.1", true, &extra)
    }

    /// `git_http_server.py`: smart HTTP Git (`git http-backend`) for the repositories under
    /// [`Server::root`].
    pub(crate) fn git_http(tls: Option<&Tls>) -> Self {
        Self::spawn("git_http_server.py", tls, "127.0.0.1", true, &[])
    }

    /// `hostile_server.py`; over HTTPS its URLs name `localhost`.
    pub(crate) fn hostile(tls: Option<&Tls>) -> Self {
        let host = if tls.is_some() {
            "localhost"
        } else {
            "127.0.0.1"
        };
        Self::spawn("hostile_server.py", tls, host, false, &[])
    }

    fn spawn(
        script: &str,
        tls: Option<&Tls>,
        host: &'static str,
        log_requests: bool,
        extra: &[String],
    ) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("requests.log");
        let mut cmd = Command::new("python3");
        // -B: the servers import a module beside them; leave no `__pycache__` behind.
        cmd.arg("-B")
            .arg(root().join("tests/support").join(script))
            .arg(dir.path());
        if log_requests {
            fs_err::write(&log, "").expect("log");
            cmd.arg(&log);
        }
        if let Some(t) = tls {
            cmd.arg("--cert").arg(&t.cert).arg("--key").arg(&t.key);
        }
        let mut process =
            Process::spawn(cmd.args(extra).stdout(Stdio::piped()).stderr(Stdio::null()));
        // The server prints the port it listens on.
        let mut line = String::new();
        {
            use std::io::BufRead as _;
            let out = process.0.stdout.take().expect("stdout");
            std::io::BufReader::new(out)
                .read_line(&mut line)
                .expect("port");
        }
        Self {
            _process: process,
            port: line.trim().parse().expect("port number"),
            scheme: if tls.is_some() { "https" } else { "http" },
            host,
            log,
            root: dir,
        }
    }

    /// The directory the server serves.
    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }

    pub(crate) fn put(&self, name: &str, bytes: &[u8]) {
        fs_err::write(self.root().join(name), bytes).expect("write");
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}://{}:{}/{path}", self.scheme, self.host, self.port)
    }

    /// The registry address (`host:port`) for `oci://` references.
    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The request log of `catalog_server.py`, a line a request.
    pub(crate) fn log(&self) -> String {
        fs_err::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) fn requests(&self) -> usize {
        self.log().lines().count()
    }
}

/// `git daemon` (git://) serving the repositories under a directory on a free loopback port.
pub(crate) struct GitDaemon {
    _process: Process,
    pub(crate) port: u16,
}

impl GitDaemon {
    pub(crate) fn start(base: &Path) -> Self {
        let port = free_port();
        // `git daemon` runs `git-daemon` as its child, which would outlive a kill of `git`:
        // start the daemon itself.
        let exec_path = crate::util::succeed(Command::new("git").arg("--exec-path"));
        let process = Process::spawn(
            Command::new(Path::new(exec_path.trim()).join("git-daemon"))
                .args(["--reuseaddr", "--export-all", "--listen=127.0.0.1"])
                .arg(format!("--port={port}"))
                .arg(format!("--base-path={}", base.display()))
                .arg(base)
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        );
        wait_for_port(("127.0.0.1", port), "git daemon");
        Self {
            _process: process,
            port,
        }
    }

    /// The git:// URL of a repository under the base directory.
    pub(crate) fn url(&self, repo: &str) -> String {
        format!("git://127.0.0.1:{}/{repo}", self.port)
    }
}

/// Debian's docker-registry on a random port with a temp store.
pub(crate) struct Registry {
    _process: Process,
    pub(crate) addr: String,
    _dir: tempfile::TempDir,
}

impl Registry {
    pub(crate) fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let addr = format!("127.0.0.1:{}", free_port());
        let config = dir.path().join("config.yml");
        fs_err::write(
            &config,
            format!("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n", dir.path().join("store").display()),
        )
        .expect("config");
        let process = Process::spawn(
            Command::new("docker-registry")
                .arg("serve")
                .arg(&config)
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        );
        wait_for_port(addr.as_str(), "docker-registry");
        Self {
            _process: process,
            addr,
            _dir: dir,
        }
    }
}
