package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrMigrate is wrapped when a database's schema is older than this
// toposcope's and migrating was not allowed.
var ErrMigrate = errors.New("store schema needs migrating")

// Migration says what Migrate did.
type Migration struct {
	// From and To are the schema versions before and after.
	From, To int
	// Where names the database.
	Where string
}

// Migrate brings the database's schema to this toposcope's version,
// under a lock in the database, so that replicas starting together
// migrate once.
func Migrate(ctx context.Context, cfg Database) (Migration, error) {
	b, err := connect(cfg)
	if err != nil {
		return Migration{}, err
	}
	defer func() { _ = b.db.Close() }()
	m, err := b.migrate(ctx, true)
	if err != nil {
		return m, fmt.Errorf("migrate store %s: %w", b.addr, err)
	}
	return m, nil
}

// ready checks the schema, migrating it when allowed.
func (b *sqlBackend) ready(ctx context.Context, allowMigrate bool) error {
	_, err := b.migrate(ctx, allowMigrate)
	return err
}

// migrate runs the missing migrations on one connection holding the
// migration lock.
func (b *sqlBackend) migrate(ctx context.Context, allow bool) (Migration, error) {
	m := Migration{Where: b.addr}
	ctx, cancel := context.WithTimeout(ctx, max(b.opTimeout, time.Minute))
	defer cancel()
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return m, b.classify(ctx, err)
	}
	defer func() { _ = conn.Close() }()
	want := len(b.d.migrations)
	// Read first, so that a replica on a read-only database (or a user
	// without DDL rights) opens a store that is already migrated.
	if m.From, err = b.schemaVersion(ctx, conn); err != nil {
		return m, err
	}
	m.To = m.From
	switch {
	case m.From == want:
		return m, nil
	case m.From > want:
		return m, fmt.Errorf("schema version %d, this toposcope reads up to %d: %w", m.From, want, ErrSchema)
	case !allow:
		return m, fmt.Errorf("schema version %d, this toposcope needs %d; run `toposcope store migrate`: %w", m.From, want, ErrMigrate)
	}
	if _, err := conn.ExecContext(ctx, b.d.lock, lockKey); err != nil {
		return m, b.classify(ctx, fmt.Errorf("take the migration lock: %w", err))
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), b.d.unlock, lockKey) }()
	if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS toposcope_schema (version INTEGER NOT NULL PRIMARY KEY, applied_at VARCHAR(40) NOT NULL)"); err != nil {
		return m, b.classify(ctx, fmt.Errorf("schema table: %w", err))
	}
	// Another replica may have migrated while this one waited.
	if m.From, err = b.schemaVersion(ctx, conn); err != nil {
		return m, err
	}
	m.To = m.From
	for v := m.From + 1; v <= want; v++ {
		for _, stmt := range b.d.migrations[v-1] {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return m, b.classify(ctx, fmt.Errorf("migration %d: %w", v, err))
			}
		}
		ins := "INSERT INTO toposcope_schema (version, applied_at) VALUES (" + b.d.placeholder(1) + ", " + b.d.placeholder(2) + ")"
		if _, err := conn.ExecContext(ctx, ins, v, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return m, b.classify(ctx, fmt.Errorf("migration %d: %w", v, err))
		}
		m.To = v
	}
	return m, nil
}

// schemaVersion reads the schema's version; 0 before the first
// migration.
func (b *sqlBackend) schemaVersion(ctx context.Context, conn *sql.Conn) (int, error) {
	var have sql.NullInt64
	err := conn.QueryRowContext(ctx, "SELECT MAX(version) FROM toposcope_schema").Scan(&have)
	if err != nil && b.d.missingTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, b.classify(ctx, fmt.Errorf("schema version: %w", err))
	}
	return int(have.Int64), nil
}

// placeholder is the dialect's i-th bind parameter.
func (d dialect) placeholder(i int) string {
	if d.name == "postgres" {
		return fmt.Sprintf("$%d", i)
	}
	return "?"
}
