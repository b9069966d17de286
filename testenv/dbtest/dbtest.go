// Package dbtest starts real database servers for tests: PostgreSQL and
// MariaDB from Debian's packages, each with a data folder of its own on
// a free loopback port, stopped with the test. A server can be killed
// and started again on the same data, and its port held, to show what
// a store does while its database is away.
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Kind is a database server.
type Kind string

// The database servers this package starts.
const (
	Postgres Kind = "postgres"
	MariaDB  Kind = "mysql"
)

// Kinds are both, for a table of tests.
var Kinds = []Kind{Postgres, MariaDB}

// Password is the test user's password (user "toposcope", database
// "toposcope").
const Password = "s3cret-db-pass"

const installHint = "run hack/install-databases.sh (packages postgresql, mariadb-server)"

// Server is a running database server.
type Server struct {
	Kind Kind
	dir  string
	port int
	argv []string
	cred *syscall.Credential
	cmd  *exec.Cmd
	done chan struct{}
	log  string
	tls  tlsFiles
}

// Options tune Start.
type Options struct {
	// TLS serves only TLS connections to the test user, with a
	// certificate for 127.0.0.1 signed by CAFile's CA.
	TLS bool
}

// Require skips the test when the server's binaries are missing, or
// fails it when CI is "true".
func Require(t testing.TB, k Kind) {
	t.Helper()
	var missing []string
	for _, bin := range binaries(k) {
		if _, err := os.Stat(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("dbtest: %s missing; %s", strings.Join(missing, ", "), installHint)
	if os.Getenv("CI") != "true" {
		t.Skip(msg)
	}
	t.Fatal(msg + " (CI=true, so this is a failure, not a skip)")
}

func binaries(k Kind) []string {
	if k == Postgres {
		bin := pgBin()
		return []string{filepath.Join(bin, "initdb"), filepath.Join(bin, "postgres")}
	}
	return []string{"/usr/sbin/mariadbd", "/usr/bin/mariadb-install-db", "/usr/bin/mariadb"}
}

// pgBin is the newest PostgreSQL's bin folder.
func pgBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(dirs) == 0 {
		return "/usr/lib/postgresql/none/bin"
	}
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) < versionOf(dirs[j]) })
	return dirs[len(dirs)-1]
}

func versionOf(dir string) int {
	var v int
	_, _ = fmt.Sscanf(filepath.Base(filepath.Dir(dir)), "%d", &v)
	return v
}

// Start starts a server of kind k with database "toposcope" and user
// "toposcope" (password Password), and waits until it answers.
func Start(ctx context.Context, t testing.TB, k Kind) *Server {
	t.Helper()
	return StartWith(ctx, t, k, Options{})
}

// StartWith is Start with options.
func StartWith(ctx context.Context, t testing.TB, k Kind, o Options) *Server {
	t.Helper()
	Require(t, k)
	s := &Server{Kind: k}
	var err error
	if k == Postgres {
		err = s.initPostgres(ctx, t, o)
	} else {
		err = s.initMariaDB(ctx, t, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// DSN is the data source name of the test database, with the password.
func (s *Server) DSN() string {
	if s.Kind == Postgres {
		return fmt.Sprintf("postgres://toposcope:%s@127.0.0.1:%d/toposcope?sslmode=disable", Password, s.port)
	}
	return fmt.Sprintf("toposcope:%s@tcp(127.0.0.1:%d)/toposcope", Password, s.port)
}

// Driver is the store.database.driver of the server.
func (s *Server) Driver() string { return string(s.Kind) }

// Port is the server's loopback port.
func (s *Server) Port() int { return s.port }

// Kill ends the server and every process of it (PostgreSQL's backends,
// which make process groups of their own) with SIGKILL, as a crash of
// its machine does, and waits until they are gone.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP) // no new child meanwhile
	kids := childrenOf(pid)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	<-s.done
	s.cmd = nil
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		alive := false
		for _, k := range kids {
			if syscall.Kill(k, 0) == nil && !zombie(k) {
				alive = true
			}
		}
		if !alive {
			return
		}
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppidOf(n) == pid {
			out = append(out, n)
		}
	}
	return out
}

// ppidOf and zombie read /proc/PID/stat: "pid (comm) state ppid ...".
func ppidOf(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return -1
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func zombie(pid int) bool {
	f := statFields(pid)
	return len(f) < 1 || f[0] == "Z"
}

// statFields are the fields of /proc/PID/stat after the command name.
func statFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// Stop ends the server cleanly (PostgreSQL's fast shutdown, MariaDB's
// SIGTERM), and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	sig := syscall.SIGTERM
	if s.Kind == Postgres {
		sig = syscall.SIGINT // fast shutdown: clients still connected are disconnected, not waited for
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Restart starts the server again on its data and port, and waits until
// it answers.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.run(); err != nil {
		return err
	}
	return s.wait(ctx, s.DSN())
}

// Exec runs statements as the database's superuser (PostgreSQL's
// "postgres" role is the test user here; MariaDB's root over the socket).
func (s *Server) Exec(ctx context.Context, stmts ...string) error {
	if s.Kind == Postgres {
		dsn := s.DSN()
		if s.tls.ca != "" {
			dsn = strings.Replace(dsn, "sslmode=disable", "sslmode=require", 1)
		}
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return err
		}
		defer func() { _ = db.Close() }()
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("dbtest: %s: %w", q, err)
			}
		}
		return nil
	}
	out, err := exec.CommandContext(ctx, "/usr/bin/mariadb", "--no-defaults", "-S", s.socket(), "-u", "root", "-e", strings.Join(stmts, ";\n")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("dbtest: mariadb: %w\n%s", err, out)
	}
	return nil
}

func (s *Server) socket() string { return filepath.Join(s.dir, "mysql.sock") }

// run starts the server process.
func (s *Server) run() error {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}
	out, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("dbtest: %w", err)
	}
	defer func() { _ = out.Close() }()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("dbtest: start %s: %w", s.argv[0], err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(s.done)
	return nil
}

// wait polls until the server takes connections to dsn.
func (s *Server) wait(ctx context.Context, dsn string) error {
	driver := "pgx"
	if s.Kind == MariaDB {
		driver = "mysql"
	}
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-s.done:
			return fmt.Errorf("dbtest: %s exited\n%s", s.Kind, s.tail())
		default:
		}
		db, err := sql.Open(driver, dsn)
		if err == nil {
			err = db.PingContext(ctx)
			_ = db.Close()
		}
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("dbtest: %s did not answer: %w\n%s", s.Kind, last, s.tail())
}

// tail is the end of the server's log.
func (s *Server) tail() string {
	data, _ := os.ReadFile(s.log)
	if len(data) > 3000 {
		data = data[len(data)-3000:]
	}
	return string(data)
}

// freePort returns a loopback port free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("dbtest: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// SmallDisk mounts a tmpfs of size bytes on a new folder, owned by the
// server's user, unmounted with the test: a disk the test can fill. It
// needs root (mount); outside CI the test is skipped without it.
func (s *Server) SmallDisk(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "true" {
			t.Skip("dbtest: mounting a small disk needs root")
		}
		t.Fatal("dbtest: mounting a small disk needs root (CI=true, so this is a failure, not a skip)")
	}
	dir, err := os.MkdirTemp("", "dbtest-disk-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("dbtest: mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		s.Stop()
		_ = exec.Command("umount", "-l", dir).Run()
		_ = os.RemoveAll(dir)
	})
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
