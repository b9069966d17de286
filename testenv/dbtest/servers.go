package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // the "mysql" driver of wait and Exec
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of wait and Exec
)

// newDir makes the server's folder, outside the test's own (which only
// its owner may enter), owned by cred's user when there is one; it is
// removed with the test, after the server stops.
func (s *Server) newDir(t testing.TB, prefix string) error {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return fmt.Errorf("dbtest: %w", err)
	}
	s.dir, s.log = dir, filepath.Join(dir, "server.log")
	t.Cleanup(func() {
		s.Stop()
		_ = os.RemoveAll(dir)
	})
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("dbtest: %w", err)
		}
	}
	return nil
}

// postgresUser is the credential PostgreSQL runs with: the package's
// postgres user when this process is root (the server refuses root).
func postgresUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("dbtest: PostgreSQL refuses to run as root and there is no postgres user (%w); %s", err, installHint)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (s *Server) initPostgres(ctx context.Context, t testing.TB, o Options) error {
	cred, err := postgresUser()
	if err != nil {
		return err
	}
	s.cred = cred
	if err := s.newDir(t, "dbtest-pg-"); err != nil {
		return err
	}
	pw := filepath.Join(s.dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o600); err != nil {
		return fmt.Errorf("dbtest: %w", err)
	}
	if cred != nil {
		if err := os.Chown(pw, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("dbtest: %w", err)
		}
	}
	data := filepath.Join(s.dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(pgBin(), "initdb"), "-D", data, "-U", "toposcope", "--pwfile="+pw,
		"--auth=scram-sha-256", "-E", "UTF8", "--no-sync")
	initdb.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("dbtest: initdb: %w\n%s", err, out)
	}
	if s.port, err = freePort(); err != nil {
		return err
	}
	// fsync off: a killed server keeps what it committed (the kernel
	// holds it); only a machine's crash would lose it, which no test makes.
	s.argv = []string{filepath.Join(pgBin(), "postgres"), "-D", data, "-k", s.dir, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"}
	admin := strings.Replace(s.DSN(), "/toposcope?", "/postgres?", 1)
	if o.TLS {
		if s.tls, err = s.writeTLS(s.dir); err != nil {
			return err
		}
		s.argv = append(s.argv, "-c", "ssl=on", "-c", "ssl_cert_file="+s.tls.cert, "-c", "ssl_key_file="+s.tls.key)
		// Only TLS connections over TCP; the superuser keeps the socket.
		hba := "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n"
		if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
			return fmt.Errorf("dbtest: %w", err)
		}
		if cred != nil {
			if err := os.Chown(filepath.Join(data, "pg_hba.conf"), int(cred.Uid), int(cred.Gid)); err != nil {
				return fmt.Errorf("dbtest: %w", err)
			}
		}
		admin = strings.Replace(admin, "sslmode=disable", "sslmode=require", 1)
	}
	if err := s.run(); err != nil {
		return err
	}
	if err := s.wait(ctx, admin); err != nil {
		return err
	}
	db, err := openAdmin(admin)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE toposcope"); err != nil {
		return fmt.Errorf("dbtest: create database: %w", err)
	}
	if o.TLS {
		return s.wait(ctx, strings.Replace(s.DSN(), "sslmode=disable", "sslmode=require", 1))
	}
	return s.wait(ctx, s.DSN())
}

func (s *Server) initMariaDB(ctx context.Context, t testing.TB, o Options) error {
	if err := s.newDir(t, "dbtest-maria-"); err != nil {
		return err
	}
	data := filepath.Join(s.dir, "data")
	user := "--user=" + currentUser()
	// A tmpdir of its own: servers bootstrapping side by side in /tmp
	// trip over each other's temporary tables.
	tmp := filepath.Join(s.dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("dbtest: %w", err)
	}
	if out, err := exec.CommandContext(ctx, "/usr/bin/mariadb-install-db", "--no-defaults", "--datadir="+data, user,
		"--auth-root-authentication-method=socket", "--skip-test-db", "--tmpdir="+tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("dbtest: mariadb-install-db: %w\n%s", err, out)
	}
	var err error
	if s.port, err = freePort(); err != nil {
		return err
	}
	s.argv = []string{"/usr/sbin/mariadbd", "--no-defaults", "--datadir=" + data, "--socket=" + s.socket(),
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", s.port), user, "--pid-file=" + filepath.Join(s.dir, "mariadb.pid"),
		"--max-allowed-packet=64M", "--innodb-flush-log-at-trx-commit=2", "--skip-name-resolve", "--tmpdir=" + tmp}
	require := ""
	if o.TLS {
		if s.tls, err = s.writeTLS(s.dir); err != nil {
			return err
		}
		s.argv = append(s.argv, "--ssl-ca="+s.tls.ca, "--ssl-cert="+s.tls.cert, "--ssl-key="+s.tls.key)
		require = " REQUIRE SSL"
	}
	if err := s.run(); err != nil {
		return err
	}
	grant := fmt.Sprintf("CREATE DATABASE toposcope; CREATE USER 'toposcope'@'127.0.0.1' IDENTIFIED BY '%s'%s; GRANT ALL ON toposcope.* TO 'toposcope'@'127.0.0.1'", Password, require)
	for {
		err := s.Exec(ctx, grant)
		if err == nil {
			break
		}
		select {
		case <-s.done:
			return fmt.Errorf("dbtest: mariadbd exited\n%s", s.tail())
		case <-ctx.Done():
			return fmt.Errorf("%w\n%s", err, s.tail())
		default:
		}
		if !strings.Contains(err.Error(), "Can't connect") && !strings.Contains(err.Error(), "No such file") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	if o.TLS {
		return s.wait(ctx, s.DSN()+"?tls=skip-verify")
	}
	return s.wait(ctx, s.DSN())
}

// currentUser is this process's user name, which mariadbd runs as.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// openAdmin opens the PostgreSQL superuser's connection pool.
func openAdmin(dsn string) (*sql.DB, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("dbtest: %w", err)
	}
	return db, nil
}
