package store

import (
	"context"
	"crypto/tls"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	mysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// dialect is what differs between PostgreSQL and MariaDB.
type dialect struct {
	name string
	q    queries
	// open makes the pool from a DSN and returns the database's address
	// without the password.
	open func(dsn string, tlsConfig *tls.Config) (*sql.DB, string, error)
	// addSeq adds n to a bucket's sequence and returns the new value.
	addSeq func(ctx context.Context, tx *sql.Tx, bucket string, n uint64) (uint64, error)
	// conflict says the transaction lost to another one and may be run
	// again.
	conflict func(error) bool
	// missingTable says the error is of a table that does not exist.
	missingTable func(error) bool
	// kind returns ErrFull, ErrReadOnly or ErrUnavailable for an error
	// of that kind, nil otherwise.
	kind func(error) error
	// migrations are the schema's steps; migration i+1 brings the
	// schema to version i+1.
	migrations [][]string
	// lock and unlock take and give back a named lock on one
	// connection; tryLock does not wait.
	lock, tryLock, unlock string
	// keepalive are statements run on a lock's connection so that the
	// server frees the lock soon after the holder vanishes.
	keepalive []string
}

// queries are the statements of a txn, with the dialect's placeholders.
type queries struct {
	get, put, del, count, seq, setSeq string
	scanFwd, scanFwdPast              string
	scanRev, scanRevPast              string
}

// dialects are the supported database drivers.
var dialects = map[string]dialect{"postgres": postgres, "mysql": mariadb}

// Dialects returns the names store.database.driver takes.
func Dialects() []string { return []string{"postgres", "mysql"} }

func (d dialect) scanQuery(bucket string, sp span) (string, []any) {
	q, args := d.q.scanFwd, []any{bucket}
	switch {
	case sp.reverse && sp.past != nil:
		q, args = d.q.scanRevPast, append(args, sp.past)
	case sp.reverse:
		q = d.q.scanRev
	case sp.past != nil:
		q, args = d.q.scanFwdPast, append(args, sp.past)
	}
	if sp.limit > 0 {
		q += " LIMIT " + strconv.Itoa(sp.limit)
	}
	return q, args
}

// putRows is an INSERT of n rows that replaces the values of keys
// already there.
func (d dialect) putRows(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO toposcope_kv (bucket, k, v) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		if d.name == "postgres" {
			fmt.Fprintf(&b, "($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3)
		} else {
			b.WriteString("(?, ?, ?)")
		}
	}
	if d.name == "postgres" {
		b.WriteString(" ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v")
	} else {
		b.WriteString(" ON DUPLICATE KEY UPDATE v = VALUES(v)")
	}
	return b.String()
}

func kvQueries(p func(int) string) queries {
	sel := "SELECT k, v FROM toposcope_kv WHERE bucket = " + p(1)
	return queries{
		get:         "SELECT v FROM toposcope_kv WHERE bucket = " + p(1) + " AND k = " + p(2),
		del:         "DELETE FROM toposcope_kv WHERE bucket = " + p(1) + " AND k = " + p(2),
		count:       "SELECT COUNT(*) FROM toposcope_kv WHERE bucket = " + p(1),
		seq:         "SELECT n FROM toposcope_seq WHERE bucket = " + p(1),
		scanFwd:     sel + " ORDER BY k",
		scanFwdPast: sel + " AND k > " + p(2) + " ORDER BY k",
		scanRev:     sel + " ORDER BY k DESC",
		scanRevPast: sel + " AND k < " + p(2) + " ORDER BY k DESC",
	}
}

// lockKey names the lock of migrations; election locks take their own
// name.
const lockKey = "toposcope-migrate"

var postgres = func() dialect {
	q := kvQueries(func(i int) string { return "$" + strconv.Itoa(i) })
	q.put = "INSERT INTO toposcope_kv (bucket, k, v) VALUES ($1, $2, $3) ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v"
	q.setSeq = "INSERT INTO toposcope_seq (bucket, n) VALUES ($1, $2) ON CONFLICT (bucket) DO UPDATE SET n = EXCLUDED.n"
	return dialect{
		name: "postgres",
		q:    q,
		open: openPostgres,
		addSeq: func(ctx context.Context, tx *sql.Tx, bucket string, n uint64) (uint64, error) {
			var v uint64
			err := tx.QueryRowContext(ctx, "INSERT INTO toposcope_seq (bucket, n) VALUES ($1, $2) ON CONFLICT (bucket) DO UPDATE SET n = toposcope_seq.n + EXCLUDED.n RETURNING n", bucket, n).Scan(&v)
			return v, err
		},
		conflict: func(err error) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
		},
		kind: postgresKind,
		missingTable: func(err error) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == "42P01"
		},
		migrations: [][]string{{
			"CREATE TABLE IF NOT EXISTS toposcope_kv (bucket TEXT NOT NULL, k BYTEA NOT NULL, v BYTEA NOT NULL, PRIMARY KEY (bucket, k))",
			"CREATE TABLE IF NOT EXISTS toposcope_seq (bucket TEXT PRIMARY KEY, n BIGINT NOT NULL)",
		}},
		lock:    "SELECT pg_advisory_lock(hashtext($1))",
		tryLock: "SELECT pg_try_advisory_lock(hashtext($1))",
		unlock:  "SELECT pg_advisory_unlock(hashtext($1))",
		// The server notices a vanished holder in about 5+3×2 s.
		keepalive: []string{"SET tcp_keepalives_idle = 5", "SET tcp_keepalives_interval = 2", "SET tcp_keepalives_count = 3"},
	}
}()

func openPostgres(dsn string, tlsConfig *tls.Config) (*sql.DB, string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("the DSN does not parse (%s)", redactDSN(err, dsn))
	}
	if tlsConfig != nil {
		c := tlsConfig.Clone()
		if c.ServerName == "" {
			c.ServerName = cfg.Host
		}
		cfg.TLSConfig, cfg.Fallbacks = c, nil
	}
	addr := fmt.Sprintf("postgres://%s@%s/%s", cfg.User, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), cfg.Database)
	return stdlib.OpenDB(*cfg), addr, nil
}

// postgresKind sorts PostgreSQL's SQLSTATE classes.
func postgresKind(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "53100" || pe.Code == "54000":
			return ErrFull
		case pe.Code == "25006":
			return ErrReadOnly
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"), pe.Code == "53300",
			pe.Code == "40001", pe.Code == "40P01":
			return ErrUnavailable
		}
		return nil
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) {
		return ErrUnavailable
	}
	return connectionKind(err)
}

// connectionKind is ErrUnavailable for an error of the connection
// itself, whatever the driver.
func connectionKind(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, sql.ErrConnDone), errors.As(err, &ne):
		return ErrUnavailable
	}
	if strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "unexpected EOF") {
		return ErrUnavailable
	}
	return nil
}

var mariadb = func() dialect {
	q := kvQueries(func(int) string { return "?" })
	q.put = "INSERT INTO toposcope_kv (bucket, k, v) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)"
	q.setSeq = "INSERT INTO toposcope_seq (bucket, n) VALUES (?, ?) ON DUPLICATE KEY UPDATE n = VALUES(n)"
	return dialect{
		name: "mysql",
		q:    q,
		open: openMariaDB,
		addSeq: func(ctx context.Context, tx *sql.Tx, bucket string, n uint64) (uint64, error) {
			if _, err := tx.ExecContext(ctx, "INSERT INTO toposcope_seq (bucket, n) VALUES (?, ?) ON DUPLICATE KEY UPDATE n = n + VALUES(n)", bucket, n); err != nil {
				return 0, err
			}
			var v uint64
			err := tx.QueryRowContext(ctx, "SELECT n FROM toposcope_seq WHERE bucket = ?", bucket).Scan(&v)
			return v, err
		},
		conflict: func(err error) bool {
			var me *mysql.MySQLError
			return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
		},
		kind: mariadbKind,
		missingTable: func(err error) bool {
			var me *mysql.MySQLError
			return errors.As(err, &me) && me.Number == 1146
		},
		migrations: [][]string{{
			"CREATE TABLE IF NOT EXISTS toposcope_kv (bucket VARCHAR(32) NOT NULL, k VARBINARY(1024) NOT NULL, v LONGBLOB NOT NULL, PRIMARY KEY (bucket, k)) ENGINE=InnoDB",
			"CREATE TABLE IF NOT EXISTS toposcope_seq (bucket VARCHAR(32) NOT NULL PRIMARY KEY, n BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB",
		}},
		lock:    "SELECT GET_LOCK(?, -1)",
		tryLock: "SELECT GET_LOCK(?, 0)",
		unlock:  "SELECT RELEASE_LOCK(?)",
		// An idle holder's connection ends after 20 s; the holder pings
		// more often than that.
		keepalive: []string{"SET SESSION wait_timeout = 20"},
	}
}()

func openMariaDB(dsn string, tlsConfig *tls.Config) (*sql.DB, string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("the DSN does not parse (%s)", redactDSN(err, dsn))
	}
	if tlsConfig != nil {
		c := tlsConfig.Clone()
		if c.ServerName == "" {
			c.ServerName, _, _ = net.SplitHostPort(cfg.Addr)
		}
		cfg.TLS = c
	}
	cfg.Logger = quietLogger{} // a dropped connection is the caller's error, not a line on stderr
	cfg.MaxAllowedPacket = 0   // take the server's, so that a large graph fits what the server takes
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("the DSN is refused (%s)", redactDSN(err, dsn))
	}
	addr := fmt.Sprintf("mysql://%s@%s/%s", cfg.User, cfg.Addr, cfg.DBName)
	return sql.OpenDB(conn), addr, nil
}

// mariadbKind sorts MariaDB's error numbers.
func mariadbKind(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1021, 1114, 3:
			return ErrFull
		case 1290, 1836, 1792:
			return ErrReadOnly
		case 1040, 1053, 1205, 1213, 2002, 2003, 2006, 2013, 1927:
			return ErrUnavailable
		}
		return nil
	}
	if errors.Is(err, mysql.ErrInvalidConn) {
		return ErrUnavailable
	}
	return connectionKind(err)
}

// redactDSN is a parse error's text with the DSN's password taken out
// (drivers quote the DSN they could not parse).
func redactDSN(err error, dsn string) string {
	msg := err.Error()
	if dsn != "" {
		msg = strings.ReplaceAll(msg, dsn, "<DSN>")
	}
	for _, part := range []string{passwordOf(dsn)} {
		if len(part) >= 3 {
			msg = strings.ReplaceAll(msg, part, "<password>")
		}
	}
	return msg
}

// passwordOf guesses the password in a DSN of either form, for
// redaction only.
func passwordOf(dsn string) string {
	if at := strings.LastIndex(dsn, "@"); at > 0 {
		head := dsn[:at]
		head = head[strings.LastIndex(head, "/")+1:]
		if _, pw, ok := strings.Cut(head, ":"); ok {
			return pw
		}
	}
	if i := strings.Index(dsn, "password="); i >= 0 {
		pw, _, _ := strings.Cut(dsn[i+len("password="):], " ")
		return pw
	}
	return ""
}

// quietLogger drops the MySQL driver's own log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}
