package testdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Server is a database server of the test's own, on a free loopback port,
// that the test can stop and start again: for outage and recovery tests.
//
// Which server it is comes from WPSIDECAR_TEST_SERVER:
//
//   - "" (the default): the machine's mariadbd;
//   - "mariadb": the MariaDB (11.8) scripts/stacks.sh unpacked into its
//     Debian sid chroot;
//   - "mysql": the MySQL (9.7) installed in that chroot.
//
// The chroot is WPSIDECAR_STACKS/sid (default .cache/stacks/sid in the
// repository); a server from it runs chrooted, as root, its data in the
// chroot's /tmp, and answers on loopback like the machine's: the chroot
// shares the machine's network.
type Server struct {
	Port   int
	opts   ServerOptions
	flavor string // "mariadb" or "mysql"
	root   string // the chroot the server runs in; "" for the machine
	bin    string // the server binary, as the server sees it
	dir    string // its directory, as the host sees it
	cmd    *exec.Cmd
	exited chan struct{}
	t      testing.TB
	// started is whether the server ever answered: a first start may move
	// to another port, a restart keeps its own.
	started bool
}

// How a server gets its port. MariaDB and MySQL take no port 0 (0 means
// their default, 3306), so the harness cannot ask one to pick a free port
// and report it. MariaDB (10.6 and later, built with systemd, as Debian's
// are) takes its listening socket from its parent instead, as from
// systemd's socket activation (LISTEN_FDS): the harness binds 127.0.0.1:0
// itself and hands the bound socket over, so no other process can take
// the port between the pick and the bind, and the port is the one bound.
// MySQL has no socket activation: it is given a port that was free a
// moment before (freePort) and Start moves to another when its error log
// says the port was taken meanwhile. A restart (outage tests) binds the
// port the server had again, waiting for it to be free, so clients keep
// their address; while the server is stopped nothing listens there, so
// they are refused, as by a server that is down.
func (s *Server) socketActivated() bool { return s.flavor == "mariadb" }

// ServerOptions adjust a private server (StartServerWith).
type ServerOptions struct {
	// Binlog turns the binary log on, row-based with full row images and
	// GTIDs (MySQL: gtid_mode ON), server id 1: what a change feed follows.
	Binlog bool
	// ServerID is the server id when not 0 (default 1).
	ServerID int
	// Files are written into the server's directory before it first
	// starts: certificates, keys. Args name them through DirVar.
	Files map[string][]byte
	// Args are more server options, after the harness's own (the server
	// takes the last of an option given twice). DirVar in them stands for
	// the server's directory as the server sees it (Server.ServerDir), e.g.
	// "--ssl-ca=" + testdb.DirVar + "/ca.pem".
	Args []string

	replica bool // a replica's GTID settings without a binary log (StartReplica)
}

// DirVar in ServerOptions.Args is replaced by the server's directory.
const DirVar = "{dir}"

// StartServer initialises a data directory and starts a server on it
// (WPSIDECAR_TEST_SERVER's flavor). The server is stopped and its files
// removed when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	return StartServerWith(t, ServerOptions{})
}

// StartBinlogServer is StartServer with the binary log on, row-based with
// full row images and GTIDs, server id 1: what a change feed follows.
func StartBinlogServer(t testing.TB) *Server {
	t.Helper()
	return StartServerWith(t, ServerOptions{Binlog: true})
}

// StartServerWith is StartServer with options: the binary log, files in
// the server's directory, more server arguments.
func StartServerWith(t testing.TB, o ServerOptions) *Server {
	t.Helper()
	SkipShort(t)
	flavor, root, err := serverStack()
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	if o.ServerID == 0 {
		o.ServerID = 1
	}
	s := &Server{opts: o, flavor: flavor, root: root, t: t}
	if root == "" {
		s.bin, s.dir = hostMariadbd(), t.TempDir()
		install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+filepath.Join(s.dir, "data"),
			"--user="+currentUser(), "--auth-root-authentication-method=normal", "--skip-test-db",
			// Its own temporary files: two servers initialising at once in
			// a shared /tmp trip over each other's.
			"--tmpdir="+s.dir)
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("testdb: mariadb-install-db: %v\n%s", err, out)
		}
	} else {
		s.bin = chrootBinary[flavor]
		if os.Geteuid() != 0 {
			t.Fatalf("testdb: WPSIDECAR_TEST_SERVER=%s runs the server in a chroot, which needs root", flavor)
		}
		tmpl, err := template(flavor, root)
		if err != nil {
			t.Fatalf("testdb: %v", err)
		}
		if s.dir, err = os.MkdirTemp(filepath.Join(root, "tmp"), "wpsidecar-testdb-"); err != nil {
			t.Fatalf("testdb: %v", err)
		}
		// Registered first, so it runs after Stop.
		t.Cleanup(func() { os.RemoveAll(s.dir) })
		// A copy of a data directory initialised once: MySQL takes seconds
		// to initialise one, a copy a fraction of that. A copy's server
		// UUID (auto.cnf) is left out: MySQL makes a new one, and a
		// replica's must differ from its primary's.
		if err := copyTree(tmpl, filepath.Join(s.dir, "data"), "auto.cnf"); err != nil {
			t.Fatalf("testdb: copy the initialised data directory: %v", err)
		}
	}
	for name, b := range o.Files {
		if err := os.WriteFile(filepath.Join(s.dir, name), b, 0o600); err != nil {
			t.Fatalf("testdb: %v", err)
		}
	}
	if !s.socketActivated() {
		s.Port = freePort(t)
	}
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// ServerFlavor is the flavor of the servers StartServer starts:
// "mariadb" or "mysql" (WPSIDECAR_TEST_SERVER).
func ServerFlavor() string {
	if os.Getenv("WPSIDECAR_TEST_SERVER") == "mysql" {
		return "mysql"
	}
	return "mariadb"
}

// Flavor is "mariadb" or "mysql".
func (s *Server) Flavor() string { return s.flavor }

// Dir is the server's directory as the test sees it: its data directory
// (data/), error log (error.log) and ServerOptions.Files are there.
func (s *Server) Dir() string { return s.dir }

// ServerDir is the same directory as the server sees it: inside its
// chroot, when it runs in one.
func (s *Server) ServerDir() string { return s.inRoot(s.dir) }

// DataDir is the server's data directory as the test sees it. MySQL keeps
// the certificates it made there (ca.pem, server-cert.pem …).
func (s *Server) DataDir() string { return filepath.Join(s.dir, "data") }

func (s *Server) inRoot(p string) string {
	if s.root == "" {
		return p
	}
	return "/" + strings.TrimPrefix(strings.TrimPrefix(p, s.root), "/")
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

func hostMariadbd() string {
	if bin, err := exec.LookPath("mariadbd"); err == nil {
		return bin
	}
	return "/usr/sbin/mariadbd"
}

// chrootBinary is each flavor's server inside the chroot; mariadbPrefix
// where scripts/stacks.sh unpacked MariaDB's packages.
var chrootBinary = map[string]string{"mysql": "/usr/sbin/mysqld", "mariadb": mariadbPrefix + "/sbin/mariadbd"}

const mariadbPrefix = "/opt/mariadb/usr"

// serverStack reads WPSIDECAR_TEST_SERVER: the flavor and the chroot the
// server runs in ("" for the machine's mariadbd).
func serverStack() (flavor, root string, err error) {
	switch v := os.Getenv("WPSIDECAR_TEST_SERVER"); v {
	case "":
		return "mariadb", "", nil
	case "mariadb", "mysql":
		root = filepath.Join(StacksDir(), "sid")
		bin := filepath.Join(root, chrootBinary[v])
		if _, err := os.Stat(bin); err != nil {
			return "", "", fmt.Errorf("WPSIDECAR_TEST_SERVER=%s: %s is missing: run scripts/stacks.sh build (WPSIDECAR_STACKS names where it builds)", v, bin)
		}
		return v, root, nil
	default:
		return "", "", fmt.Errorf("WPSIDECAR_TEST_SERVER=%q: want empty (the machine's mariadbd), mariadb or mysql", v)
	}
}

// StacksDir is where scripts/stacks.sh builds the newer stacks:
// WPSIDECAR_STACKS, else .cache/stacks in the repository.
func StacksDir() string {
	if d := os.Getenv("WPSIDECAR_STACKS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ".cache/stacks"
	}
	// Tests run in their package's folder; the repository holds go.mod.
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".cache", "stacks")
		}
	}
	return filepath.Join(dir, ".cache", "stacks")
}

// args are the server's options for a start on s.Port.
func (s *Server) args() []string {
	dir := s.inRoot(s.dir)
	// With socket activation MariaDB ignores --port, --bind-address and
	// --socket: it listens on the socket handed over, and nowhere else.
	a := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"),
		"--port=" + strconv.Itoa(s.Port), "--bind-address=127.0.0.1", "--socket=" + filepath.Join(dir, "sock"),
		"--pid-file=" + filepath.Join(dir, "pid"), "--log-error=" + filepath.Join(dir, "error.log"),
		"--innodb-buffer-pool-size=16M", "--skip-name-resolve"}
	o := s.opts
	id := "--server-id=" + strconv.Itoa(o.ServerID)
	switch {
	case s.flavor == "mysql":
		// mysqlx would take 33060 in every server; secure_file_priv's
		// default folder does not exist in the chroot.
		a = append(a, "--user=root", "--mysqlx=OFF", "--secure-file-priv=", "--innodb-redo-log-capacity=16M", id)
		if o.Binlog {
			a = append(a, "--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-image=FULL")
		} else {
			a = append(a, "--disable-log-bin")
		}
		if o.Binlog || o.replica {
			a = append(a, "--gtid-mode=ON", "--enforce-gtid-consistency=ON")
		}
	default:
		if s.root == "" {
			a = append(a, "--user="+currentUser())
		} else {
			a = append(a, "--user=root", "--basedir="+mariadbPrefix, "--lc-messages-dir="+mariadbPrefix+"/share/mariadb",
				"--plugin-dir="+mariadbPrefix+"/lib/mysql/plugin", "--innodb-log-file-size=16M")
		}
		switch {
		case o.Binlog:
			a = append(a, "--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-image=FULL", id)
		case o.replica:
			a = append(a, id) // MariaDB's binary log is off unless asked for
		default:
			a = append(a, "--skip-log-bin")
		}
	}
	for _, x := range o.Args {
		a = append(a, strings.ReplaceAll(x, DirVar, dir))
	}
	return a
}

// Start starts the server (again) and waits until it answers. A first
// start whose port was taken in the meantime (it was free when picked)
// moves to another; a restart keeps its port, waiting for it to be free.
func (s *Server) Start() {
	s.t.Helper()
	if s.socketActivated() {
		if err := s.start(); err != nil {
			s.t.Fatalf("testdb: private %s server: %v", s.flavor, err)
		}
		s.started = true
		return
	}
	for attempt := 1; ; attempt++ {
		err := s.start()
		if err == nil {
			s.started = true
			return
		}
		if !errors.Is(err, errPortInUse) || attempt == 5 {
			s.t.Fatalf("testdb: private %s server: %v", s.flavor, err)
		}
		if !s.started {
			s.Port = freePort(s.t)
		} else {
			waitPortFree(s.Port, 10*time.Second)
		}
	}
}

var errPortInUse = errors.New("port in use")

func (s *Server) start() error {
	logFile := filepath.Join(s.dir, "error.log")
	var from int64
	if fi, err := os.Stat(logFile); err == nil {
		from = fi.Size()
	}
	var cmd *exec.Cmd
	var sock *os.File
	if s.socketActivated() {
		var err error
		if sock, err = s.listen(); err != nil {
			return err
		}
		// sd_listen_fds wants LISTEN_PID to be the server's own pid, known
		// only once it runs: a shell sets it to its own and then becomes
		// the server (exec keeps the pid). The socket is descriptor 3.
		cmd = exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, s.bin}, s.args()...)...)
		cmd.Env = append(os.Environ(), "LISTEN_FDS=1", "LISTEN_FDNAMES=tcp")
		cmd.ExtraFiles = []*os.File{sock}
	} else {
		cmd = exec.Command(s.bin, s.args()...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.root != "" {
		cmd.SysProcAttr.Chroot, cmd.Dir = s.root, "/"
	}
	err := cmd.Start()
	if sock != nil {
		sock.Close() // the server's copy is the one that listens
	}
	if err != nil {
		return fmt.Errorf("start %s: %v", s.bin, err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.exited) }()
	db, _ := sql.Open("mysql", s.Config().FormatDSN())
	defer db.Close()
	// MySQL may take a while to start on a busy machine (crash recovery
	// after an outage test's kill, first certificates).
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		// An error of the server's own (insecure transport refused with
		// --require-secure-transport, say) is an answer too.
		var me *mysql.MySQLError
		if err == nil || errors.As(err, &me) {
			return nil
		}
		select {
		case <-s.exited:
			s.cmd = nil
			log := logSince(logFile, from)
			if bytes.Contains(bytes.ToLower(log), []byte("address already in use")) {
				return fmt.Errorf("%w: %d", errPortInUse, s.Port)
			}
			return fmt.Errorf("%s exited before answering (%v)\n%s", s.bin, cmd.ProcessState, log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("did not answer: %v\n%s", err, logSince(logFile, from))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func logSince(name string, off int64) []byte {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	f.Seek(off, io.SeekStart)
	b, _ := io.ReadAll(f)
	return b
}

// listen binds the server's listening socket: on a port of the system's
// choice the first time, on the server's own port again on a restart
// (waiting for it to be free: the old server's connections may hold it a
// moment). The file is a copy of the socket for the server to inherit.
func (s *Server) listen() (*os.File, error) {
	addr := "127.0.0.1:0"
	if s.started {
		addr = "127.0.0.1:" + strconv.Itoa(s.Port)
	}
	var l net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if l, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s for the server: %w", addr, err)
	}
	defer l.Close()
	s.Port = l.Addr().(*net.TCPAddr).Port
	return l.(*net.TCPListener).File()
}

// freePort is a loopback port free now. The server binds it a moment
// later; Start moves on if somebody took it in between.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPortFree(port int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			l.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// PID is the running server's process id: for measuring its CPU time.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Config is the root connection to the server.
func (s *Server) Config() *mysql.Config {
	c := mysql.NewConfig()
	c.Net, c.Addr, c.User = "tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), "root"
	c.Logger = &mysql.NopLogger{}
	return c
}

// StartReplica starts a server (id 2, no binary log of its own) that
// replicates primary, a StartBinlogServer, by GTID from its first
// transaction; stopped when the test ends.
func StartReplica(t testing.TB, primary *Server) *Server {
	t.Helper()
	r := StartServerWith(t, ServerOptions{ServerID: 2, replica: true})
	db, err := sql.Open("mysql", r.Config().FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	qs := []string{
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1", primary.Port),
		"START SLAVE",
	}
	if r.flavor == "mysql" {
		// MySQL 8.4 dropped CHANGE MASTER and START SLAVE. GTIDs with auto
		// positioning start from the primary's first transaction. Heartbeats
		// every half second: a primary stopped under its replica otherwise
		// waits some ten seconds for its dump thread to notice.
		qs = []string{
			fmt.Sprintf("CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=%d, SOURCE_USER='root', SOURCE_PASSWORD='', "+
				"SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=0.5", primary.Port),
			"START REPLICA",
		}
	}
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("testdb: replica: %s: %v", q, err)
		}
	}
	return r
}

// templates are the initialised data directories of this process, by
// flavor: each made once per machine and stack (or found made).
var templates struct {
	sync.Mutex
	dirs map[string]string
}

// template is a data directory initialised for flavor in root, kept in
// the chroot's /var/cache/wpsidecar/testdb under a name of the server
// binary's size and time, so that a rebuilt stack gets a new one. Test
// binaries of several packages may make it at once: each initialises a
// folder of its own and renames it into place; the first rename wins.
func template(flavor, root string) (string, error) {
	templates.Lock()
	defer templates.Unlock()
	if d := templates.dirs[flavor]; d != "" {
		return d, nil
	}
	fi, err := os.Stat(filepath.Join(root, chrootBinary[flavor]))
	if err != nil {
		return "", err
	}
	cache := filepath.Join(root, "var", "cache", "wpsidecar", "testdb")
	final := filepath.Join(cache, fmt.Sprintf("%s-%d-%d-v1", flavor, fi.Size(), fi.ModTime().Unix()))
	if _, err := os.Stat(filepath.Join(final, "data")); err != nil {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return "", err
		}
		// What a killed test binary was making; one takes seconds.
		old, _ := filepath.Glob(filepath.Join(cache, "*-making-*"))
		for _, d := range old {
			if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.RemoveAll(d)
			}
		}
		tmp, err := os.MkdirTemp(cache, flavor+"-making-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		in := "/" + strings.TrimPrefix(strings.TrimPrefix(tmp, root), "/")
		var cmd *exec.Cmd
		switch flavor {
		case "mysql":
			// root may connect over TCP without a password, as to the
			// machine's MariaDB; --initialize makes only root@localhost.
			init := "CREATE USER 'root'@'127.0.0.1' IDENTIFIED BY '';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n"
			if err := os.WriteFile(filepath.Join(tmp, "init.sql"), []byte(init), 0o644); err != nil {
				return "", err
			}
			cmd = exec.Command(chrootBinary[flavor], "--no-defaults", "--initialize-insecure", "--user=root",
				"--datadir="+in+"/data", "--init-file="+in+"/init.sql", "--log-error="+in+"/init.log",
				"--innodb-redo-log-capacity=16M")
		default:
			cmd = exec.Command(mariadbPrefix+"/bin/mariadb-install-db", "--no-defaults", "--basedir="+mariadbPrefix,
				"--datadir="+in+"/data", "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db",
				"--skip-name-resolve", "--innodb-log-file-size=16M")
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Pdeathsig: syscall.SIGKILL}
		cmd.Dir = "/"
		if out, err := cmd.CombinedOutput(); err != nil {
			log, _ := os.ReadFile(filepath.Join(tmp, "init.log"))
			return "", fmt.Errorf("initialise a %s data directory: %v\n%s%s", flavor, err, out, log)
		}
		if err := os.Rename(tmp, final); err != nil {
			if _, serr := os.Stat(filepath.Join(final, "data")); serr != nil {
				return "", err
			}
			// Another test binary was first; its directory is as good.
		}
	}
	if templates.dirs == nil {
		templates.dirs = map[string]string{}
	}
	templates.dirs[flavor] = filepath.Join(final, "data")
	return templates.dirs[flavor], nil
}

// copyTree copies the directory src to dst (regular files and folders,
// with their modes), leaving out the files named skip.
func copyTree(src, dst string, skip ...string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm())
		}
		for _, s := range skip {
			if rel == s {
				return nil
			}
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
