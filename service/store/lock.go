package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Lock is a named lock in the shared database, held on a connection of
// its own (PostgreSQL's session advisory lock, MariaDB's GET_LOCK): the
// database frees it when the connection ends, so a holder that dies or
// is cut off loses it. On a bbolt store, which one process holds, every
// TryLock succeeds.
type Lock struct {
	name string
	conn *sql.Conn
	b    *sqlBackend
}

// TryLock takes the lock name if no one holds it; it returns nil, nil
// when another connection holds it.
func (s *Store) TryLock(ctx context.Context, name string) (*Lock, error) {
	b, ok := s.b.(*sqlBackend)
	if !ok {
		return &Lock{name: name}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.opTimeout)
	defer cancel()
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return nil, b.classify(ctx, err)
	}
	for _, q := range b.d.keepalive {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			_ = conn.Close()
			return nil, b.classify(ctx, fmt.Errorf("lock %s: %w", name, err))
		}
	}
	var got any
	if err := conn.QueryRowContext(ctx, b.d.tryLock, name).Scan(&got); err != nil {
		_ = conn.Close()
		return nil, b.classify(ctx, fmt.Errorf("lock %s: %w", name, err))
	}
	if !truthy(got) {
		_ = conn.Close()
		return nil, nil
	}
	return &Lock{name: name, conn: conn, b: b}, nil
}

// truthy reads a lock function's answer: PostgreSQL's boolean, MariaDB's
// 1 (0 or NULL: not taken).
func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int64:
		return x == 1
	case []byte:
		return string(x) == "1" || string(x) == "t"
	}
	return false
}

// Hold keeps the lock until ctx ends, checking its connection every
// period; it returns the error that shows the lock lost (the connection
// broke or did not answer within the period), or ctx's error.
func (l *Lock) Hold(ctx context.Context, period time.Duration) error {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if l.conn == nil {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, period)
		err := l.conn.PingContext(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			return l.b.classify(pctx, fmt.Errorf("lock %s: %w", l.name, err))
		}
	}
}

// Release gives the lock back and closes its connection. ErrUnavailable
// means the connection had already broken, which freed the lock.
func (l *Lock) Release(ctx context.Context) error {
	if l.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.b.opTimeout)
	defer cancel()
	_, err := l.conn.ExecContext(ctx, l.b.d.unlock, l.name)
	if cerr := l.conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return l.b.classify(ctx, fmt.Errorf("release lock %s: %w", l.name, err))
	}
	return nil
}
