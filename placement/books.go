package placement

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Books hold the service's budgets and ledger in memory and, with a
// Persister, writes every change through before it takes effect. The
// ledger has two parts: stored records (REST ingest, and work a source
// has seen finish), kept for good, and each source's live records
// (running work), replaced at every sync. It is safe for concurrent use.
type Books struct {
	mu      sync.RWMutex
	budgets *Budgets // nil: equal shares for every account seen
	stored  bag
	live    map[string][]Record // per source
	all     bag                 // stored and live; shares stored's arrays when nothing is live
	synced  map[string]map[string]bool
	names   []string         // interned account names
	ids     map[string]int32 // name → index in names
	persist Persister
	shared  Versioned // persist, when other replicas write it too; nil otherwise
	version uint64    // shared's version that stored and budgets hold
}

// bag is a ledger's records and each one's interned account. Readers
// get a length-capped view, so appends never change what they see.
type bag struct {
	recs []Record
	acct []int32
}

// Persister keeps the budgets and the ledger across restarts.
type Persister interface {
	// SavePlacementBudgets replaces the stored budgets.
	SavePlacementBudgets(ctx context.Context, b *Budgets) error
	// AppendPlacementRecords adds records to the stored ledger, all or
	// none.
	AppendPlacementRecords(ctx context.Context, recs []Record) error
	// LoadPlacement returns the stored budgets (nil when none were set)
	// and records, in the order appended.
	LoadPlacement(ctx context.Context) (*Budgets, []Record, error)
	// DeletePlacementRecords removes the stored records of the workloads,
	// all or none, and returns how many it removed.
	DeletePlacementRecords(ctx context.Context, workloads []string) (int, error)
}

// Versioned is a Persister that several replicas share. Its version
// grows with every change that any of them makes, so that books see
// another replica's change at their next read.
type Versioned interface {
	PlacementVersion(ctx context.Context) (uint64, error)
	// Shared reports whether other replicas write it too; a persister of
	// one process needs no version read.
	Shared() bool
}

// NewBooks returns empty books kept in memory only: equal shares, no
// records.
func NewBooks() *Books {
	return &Books{live: map[string][]Record{}, synced: map[string]map[string]bool{}, ids: map[string]int32{}}
}

// OpenBooks returns books holding what p kept, writing every change
// to p.
func OpenBooks(ctx context.Context, p Persister) (*Books, error) {
	s := NewBooks()
	s.persist = p
	if v, ok := p.(Versioned); ok && v.Shared() {
		s.shared = v
	}
	if err := s.reload(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// reload replaces the stored records and the budgets with the
// persister's, keeping the live records; the version is read first, so
// that a change made meanwhile is loaded again at the next read, never
// missed.
func (s *Books) reload(ctx context.Context) error {
	var version uint64
	if s.shared != nil {
		var err error
		if version, err = s.shared.PlacementVersion(ctx); err != nil {
			return fmt.Errorf("load budgets and ledger: %w", err)
		}
	}
	b, recs, err := s.persist.LoadPlacement(ctx)
	if err != nil {
		return fmt.Errorf("load budgets and ledger: %w", err)
	}
	if b != nil {
		defaultShares(b.Accounts)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if version < s.version {
		return nil // a reload that read later has applied already
	}
	s.budgets, s.stored, s.version = b, bag{}, version
	for src := range s.synced {
		delete(s.synced, src)
	}
	s.add(recs)
	s.rebuild()
	return nil
}

// Refresh loads the budgets and the ledger again when another replica
// changed them (a shared persister's version moved); it costs one read of
// the version otherwise, and nothing with a persister of one process.
func (s *Books) Refresh(ctx context.Context) error {
	if s.shared == nil {
		return nil
	}
	version, err := s.shared.PlacementVersion(ctx)
	if err != nil {
		return fmt.Errorf("placement version: %w", err)
	}
	s.mu.RLock()
	same := version == s.version
	s.mu.RUnlock()
	if same {
		return nil
	}
	return s.reload(ctx)
}

// wrote notes, after this replica's own write (s.mu held), that the
// persister's version moved by one: when nothing else wrote meanwhile,
// the books are current at the new version and need no reload.
func (s *Books) wrote(ctx context.Context) {
	if s.shared == nil {
		return
	}
	if version, err := s.shared.PlacementVersion(ctx); err == nil && version == s.version+1 {
		s.version = version
	}
}

// SetBudgets validates and replaces the budgets.
func (s *Books) SetBudgets(ctx context.Context, b *Budgets) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	defaultShares(b.Accounts)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.persist != nil {
		if err := s.persist.SavePlacementBudgets(ctx, b); err != nil {
			return fmt.Errorf("save budgets: %w", err)
		}
		s.wrote(ctx)
	}
	s.budgets = b
	return nil
}

// Budgets returns the budgets in force, nil when none were set (the
// standings then give every account an equal share). The value is never
// changed once set (SetBudgets replaces it): callers must not change it.
func (s *Books) Budgets() *Budgets {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.budgets
}

// Append validates and adds records; it adds none if one is invalid.
func (s *Books) Append(ctx context.Context, recs []Record) error {
	l := Ledger{Records: recs}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(ctx, recs)
}

func (s *Books) appendLocked(ctx context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	if s.persist != nil {
		if err := s.persist.AppendPlacementRecords(ctx, recs); err != nil {
			return fmt.Errorf("save ledger records: %w", err)
		}
		s.wrote(ctx)
	}
	s.add(recs)
	return nil
}

// add puts recs into the stored part (and so into all).
func (s *Books) add(recs []Record) {
	from := len(s.stored.recs)
	for i := range recs {
		s.stored.recs = append(s.stored.recs, recs[i])
		s.stored.acct = append(s.stored.acct, s.intern(recs[i].Account))
		if src := recs[i].Source; src != "" {
			if s.synced[src] == nil {
				s.synced[src] = map[string]bool{}
			}
			s.synced[src][recs[i].Workload] = true
		}
	}
	if len(s.live) == 0 {
		s.all = s.stored
		return
	}
	s.all.recs = append(s.all.recs, s.stored.recs[from:]...)
	s.all.acct = append(s.all.acct, s.stored.acct[from:]...)
}

func (s *Books) intern(name string) int32 {
	id, ok := s.ids[name]
	if !ok {
		id = int32(len(s.names))
		s.ids[name] = id
		s.names = append(s.names, name)
	}
	return id
}

// Sync replaces source's live records with what it reports now. Records
// with an End are finished: each is stored once (a source may report it
// again), with the allocation it was last seen live with. A live record
// that is no longer reported is stored as ended at now. Records are validated first; on error nothing changes. Each
// record's Source is set to source, and its Workload must identify it
// within the source.
func (s *Books) Sync(ctx context.Context, source string, recs []Record, now time.Time) error {
	if source == "" {
		return fmt.Errorf("%w: sync: source name is empty", ErrInvalid)
	}
	if err := (&Ledger{Records: recs}).Validate(); err != nil {
		return fmt.Errorf("%w: source %s: %w", ErrInvalid, source, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]bool, len(recs))
	before := make(map[string]*Record, len(s.live[source]))
	for i := range s.live[source] {
		before[s.live[source][i].Workload] = &s.live[source][i]
	}
	var live, done []Record
	for _, r := range recs {
		r.Source = source
		if r.Workload == "" {
			return fmt.Errorf("%w: source %s: a record of account %q has no workload", ErrInvalid, source, r.Account)
		}
		seen[r.Workload] = true
		switch {
		case r.End.IsZero() || r.End.After(now):
			r.End = time.Time{}
			live = append(live, r)
		case !s.synced[source][r.Workload]:
			if was := before[r.Workload]; was != nil {
				// What was seen running is the allocation; a finishing job may
				// report only the nodes it has not released yet.
				end := r.End
				r = *was
				r.End = end
			}
			done = append(done, r)
		}
	}
	for _, r := range s.live[source] {
		if !seen[r.Workload] && !s.synced[source][r.Workload] {
			r.End = now
			done = append(done, r)
		}
	}
	if err := s.appendLocked(ctx, done); err != nil {
		return err
	}
	if len(live) == 0 {
		delete(s.live, source)
	} else {
		s.live[source] = live
	}
	s.rebuild()
	return nil
}

// ErrNoRecord is wrapped when Delete finds no stored record of a
// workload.
var ErrNoRecord = errors.New("no such ledger record")

// Delete removes the stored records of workload (REST ingest, and work a
// source reported finished), from the persister first. Live records of a
// source are the source's: they go when it stops reporting them.
func (s *Books) Delete(ctx context.Context, workload string) (int, error) {
	if err := s.Refresh(ctx); err != nil { // another replica may have stored the workload's records
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := bag{recs: make([]Record, 0, len(s.stored.recs)), acct: make([]int32, 0, len(s.stored.acct))}
	for i := range s.stored.recs {
		if s.stored.recs[i].Workload != workload {
			keep.recs = append(keep.recs, s.stored.recs[i])
			keep.acct = append(keep.acct, s.stored.acct[i])
		}
	}
	n := len(s.stored.recs) - len(keep.recs)
	if n == 0 {
		return 0, fmt.Errorf("workload %q: %w", workload, ErrNoRecord)
	}
	if s.persist != nil {
		if _, err := s.persist.DeletePlacementRecords(ctx, []string{workload}); err != nil {
			return 0, fmt.Errorf("delete ledger records: %w", err)
		}
		s.wrote(ctx)
	}
	s.stored = keep
	for _, set := range s.synced {
		delete(set, workload)
	}
	s.rebuild()
	return n, nil
}

// rebuild makes all = stored + live in new arrays, so that views taken
// before keep theirs.
func (s *Books) rebuild() {
	if len(s.live) == 0 {
		s.all = s.stored
		return
	}
	n := len(s.stored.recs)
	for _, l := range s.live {
		n += len(l)
	}
	all := bag{recs: make([]Record, 0, n), acct: make([]int32, 0, n)}
	all.recs = append(all.recs, s.stored.recs...)
	all.acct = append(all.acct, s.stored.acct...)
	for _, l := range s.live {
		for i := range l {
			all.recs = append(all.recs, l[i])
			all.acct = append(all.acct, s.intern(l[i].Account))
		}
	}
	s.all = all
}

// View is a consistent read of the store: the account tree, every record
// (stored and live, in no promised order) and each record's account
// index in the tree (-1: not in it). Records are shared: do not modify
// them.
type View struct {
	Tree    *Tree
	Records []Record
	Index   []int32
}

// View returns the tree (equal shares over the recorded accounts and
// extra when no budgets are set) and the records with their indexes,
// refreshed first from a shared persister.
func (s *Books) View(ctx context.Context, extra ...string) (View, error) {
	if err := s.Refresh(ctx); err != nil {
		return View{}, err
	}
	s.mu.RLock()
	n := len(s.all.recs)
	recs, acct := s.all.recs[:n:n], s.all.acct[:n:n]
	names := s.names[:len(s.names):len(s.names)]
	budgets := s.budgets
	s.mu.RUnlock()
	var t *Tree
	if budgets == nil {
		t = EqualTree(append(append([]string(nil), names...), extra...))
	} else {
		var err error
		if t, err = NewTree(budgets); err != nil {
			return View{}, err
		}
	}
	table := make([]int32, len(names))
	for i, name := range names {
		table[i] = -1
		if j, ok := t.index[name]; ok {
			table[i] = int32(j)
		}
	}
	idx := make([]int32, n)
	for i, a := range acct {
		idx[i] = table[a]
	}
	return View{Tree: t, Records: recs, Index: idx}, nil
}
