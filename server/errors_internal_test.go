package server

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

// TestStoreFullStatus: a store write that found no space is 507
// store_full, not 500 internal.
func TestStoreFullStatus(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("append ledger: %w", fmt.Errorf("%w: /x/toposcope.db: %w", store.ErrFull, &os.PathError{Op: "write", Path: "/x/toposcope.db", Err: syscall.ENOSPC}))
	if status, code := statusOf(err); status != http.StatusInsufficientStorage || code != "store_full" {
		t.Errorf("statusOf = %d %s, want 507 store_full", status, code)
	}
}

// httpKinds are the kinds of the HTTP layer's own errors.
var httpKinds = []string{kindBodyTooLarge, kindBodySlow, kindUnauthorized, kindForbidden, kindMediaType, kindExtenderOff, kindNoRoute, kindNoMethod}

// TestEveryKindHasAStatus: every kind the service or the HTTP layer gives
// has an answer, and the table answers no other kind; only the internal
// kind is a 500.
func TestEveryKindHasAStatus(t *testing.T) {
	t.Parallel()
	kinds := append(service.Kinds(), httpKinds...)
	table := answers()
	for _, k := range kinds {
		a, ok := table[k]
		switch {
		case !ok:
			t.Errorf("kind %s has no status", k)
		case (a.status == http.StatusInternalServerError) != (k == service.KindInternal):
			t.Errorf("kind %s answers %d %s", k, a.status, a.code)
		}
	}
	for k := range table {
		if !slices.Contains(kinds, k) {
			t.Errorf("the table answers %s, which no error has", k)
		}
	}
}

// sentinelPackages are the packages whose errors reach the API, read from
// source: every error variable they declare (only the exported ones
// outside this package) must be listed in sentinels.
var sentinelPackages = map[string]string{
	"service": "../service", "store": "../service/store", "placement": "../placement", "providers": "../providers",
	"engines": "../engines", "config": "../internal/config", "plugins": "../plugins", "server": ".",
}

// TestEverySentinelHasAKind: every error variable of the packages whose
// errors reach the API answers the status of its own kind, not the
// internal 500 of an error nothing classified; the few that never reach a
// handler say why.
func TestEverySentinelHasAKind(t *testing.T) {
	t.Parallel()
	sentinels := map[string]error{
		"service.ErrBadRequest": service.ErrBadRequest, "service.ErrBusy": service.ErrBusy, "service.ErrInterrupted": service.ErrInterrupted,
		"service.ErrDiscoveryFailing": service.ErrDiscoveryFailing, "service.ErrNoTopology": service.ErrNoTopology, "service.ErrDisabled": service.ErrDisabled,
		"service.ErrNotConfigured": service.ErrNotConfigured, "service.ErrShrinkRefused": service.ErrShrinkRefused, "service.ErrClosed": service.ErrClosed,
		"store.ErrNotFound": store.ErrNotFound, "store.ErrNotPending": store.ErrNotPending, "store.ErrFull": store.ErrFull,
		"store.ErrReadOnly": store.ErrReadOnly, "store.ErrUnavailable": store.ErrUnavailable,
		"placement.ErrNoRecord": placement.ErrNoRecord, "placement.ErrInvalid": placement.ErrInvalid,
		"placement.ErrUnknownAccount": placement.ErrUnknownAccount, "placement.ErrNoCandidate": placement.ErrNoCandidate,
		"providers.ErrAuth": providers.ErrAuth, "providers.ErrNoCredentials": providers.ErrNoCredentials, "providers.ErrUnavailable": providers.ErrUnavailable,
		"engines.ErrInexpressible": engines.ErrInexpressible,
		"config.ErrInvalid":        config.ErrInvalid, "config.ErrOperatorOnly": config.ErrOperatorOnly,
		"plugins.ErrUnknownPlugin": plugins.ErrUnknownPlugin,
		"server.errBodyMemory":     errBodyMemory, "server.errBodySlow": errBodySlow, "server.errCrossSite": errCrossSite,
		"server.errMediaType": errMediaType, "server.errWritesLocal": errWritesLocal, "server.errHost": errHost,
		"server.errUnauthorized": errUnauthorized, "server.errForbidden": errForbidden, "server.errNoRoute": errNoRoute,
		"server.errNoMethod": errNoMethod, "server.errExtenderOff": errExtenderOff, "server.errExtenderBusy": errExtenderBusy,
		"server.errSnapshotReads": errSnapshotReads,
	}
	internal := map[string]string{
		"service.ErrInternal":        "a stored error of no known kind: internal by definition",
		"service.ErrNotLeading":      "ends the replica's term; no handler returns it",
		"server.errPanic":            "a handler panicked: internal by definition",
		"server.ErrAgentSecret":      "refuses to start the server",
		"store.ErrNotEmpty":          "store migration (CLI)",
		"store.ErrMigrate":           "opening the store at start",
		"store.ErrSchema":            "opening the store at start",
		"store.ErrInUse":             "opening the store at start",
		"store.ErrCorrupt":           "opening the store at start",
		"engines.ErrNoBudgets":       "the budgets engines' own Publish, never called by a handler",
		"config.ErrShellSyntax":      "wrapped in a FieldError (invalid)",
		"config.ErrOutsideRoots":     "wrapped in a FieldError (invalid)",
		"config.ErrNoFile":           "reading the configuration file at start",
		"plugins.ErrDuplicatePlugin": "building the registry at start",
	}
	for _, name := range declaredErrors(t) {
		err, listed := sentinels[name]
		_, why := internal[name]
		switch {
		case listed && why, !listed && !why:
			t.Errorf("%s: list it once, in sentinels (with a kind in service or server) or in internal (with why it never reaches a handler)", name)
		case listed:
			if status, code := statusOf(fmt.Errorf("wrapped: %w", err)); status == http.StatusInternalServerError {
				t.Errorf("%s answers %d %s: give it a kind", name, status, code)
			}
		}
	}
}

// declaredErrors lists the error variables declared in sentinelPackages
// (package-qualified), read from their source.
func declaredErrors(t *testing.T) []string {
	t.Helper()
	var out []string
	for pkg, dir := range sentinelPackages {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, spec := range gd.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						exported := strings.HasPrefix(n.Name, "Err")
						if exported || pkg == "server" && strings.HasPrefix(n.Name, "err") {
							out = append(out, pkg+"."+n.Name)
						}
					}
				}
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d error variables, want the packages' dozens: %v", len(out), out)
	}
	return out
}

// TestStatusPrecedence: an error that wraps several sentinels answers
// the status of the first in the table's order.
func TestStatusPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{&config.FieldError{Field: "plugin", Err: fmt.Errorf("needs 23.11: %w", engines.ErrInexpressible)}, http.StatusUnprocessableEntity, "inexpressible"},
		{&config.FieldError{Field: "mode", Err: config.ErrOperatorOnly}, http.StatusForbidden, "operator_only"},
		{&config.FieldError{Field: "credentialsFile", Err: fmt.Errorf("%w: gone", providers.ErrNoCredentials)}, http.StatusBadRequest, "invalid_request"},
		{fmt.Errorf("%w: %w", providers.ErrUnavailable, errors.New("dial")), http.StatusBadGateway, "upstream_unavailable"},
		{fmt.Errorf("%w: read: %w", errBodySlow, service.ErrBusy), http.StatusRequestTimeout, "body_timeout"},
		{errBodyMemory, http.StatusTooManyRequests, "busy"},
		{&service.SimulatedError{Code: 418, Message: "m"}, 418, "simulated"},
		{errPanic, http.StatusInternalServerError, "internal"},
	}
	for _, tt := range tests {
		if status, code := statusOf(tt.err); status != tt.status || code != tt.code {
			t.Errorf("statusOf(%v) = %d %s, want %d %s", tt.err, status, code, tt.status, tt.code)
		}
	}
}
