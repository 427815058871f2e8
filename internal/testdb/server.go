package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Server is a MariaDB server of the test's own, on a free loopback port,
// that the test can stop and start again: for outage and recovery tests.
type Server struct {
	Port    int
	logBin  []string // the binary log's settings; none: --skip-log-bin
	dir     string
	cmd     *exec.Cmd
	exited  chan struct{}
	t       testing.TB
	mariadb string
}

// StartServer initialises a data directory and starts mariadbd on it. The
// server is stopped when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	return startServer(t, nil)
}

// StartBinlogServer is StartServer with the binary log on, row-based with
// full row images and GTIDs, server id 1: what a change feed follows.
func StartBinlogServer(t testing.TB) *Server {
	t.Helper()
	return startServer(t, []string{"--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-image=FULL", "--server-id=1"})
}

func startServer(t testing.TB, logBin []string) *Server {
	t.Helper()
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		bin = "/usr/sbin/mariadbd"
	}
	dir := t.TempDir()
	install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+filepath.Join(dir, "data"),
		"--user="+currentUser(), "--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("testdb: mariadb-install-db: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Port: port, dir: dir, t: t, mariadb: bin, logBin: logBin}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// Start starts the server (again) and waits until it answers.
func (s *Server) Start() {
	s.t.Helper()
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(s.dir, "data"), "--user=" + currentUser(),
		"--port=" + strconv.Itoa(s.Port), "--bind-address=127.0.0.1", "--socket=" + filepath.Join(s.dir, "sock"),
		"--pid-file=" + filepath.Join(s.dir, "pid"), "--log-error=" + filepath.Join(s.dir, "error.log"),
		"--innodb-buffer-pool-size=16M", "--skip-name-resolve"}
	if s.logBin == nil {
		args = append(args, "--skip-log-bin")
	}
	cmd := exec.Command(s.mariadb, append(args, s.logBin...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("testdb: start mariadbd: %v", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.exited) }()
	db, _ := sql.Open("mysql", s.Config().FormatDSN())
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			s.t.Fatalf("testdb: private mariadbd did not answer: %v\n%s", err, log)
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
	r := startServer(t, []string{"--server-id=2"})
	db, err := sql.Open("mysql", r.Config().FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1", primary.Port),
		"START SLAVE",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("testdb: replica: %s: %v", q, err)
		}
	}
	return r
}
