package service_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

// TestKindOf: each sentinel, wrapped, has its kind; an error wrapping
// several takes the first in the table's order; an unknown error is
// internal.
func TestKindOf(t *testing.T) {
	t.Parallel()
	field := func(err error) error { return &config.FieldError{Field: "plugin", Err: err} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"request field", &service.RequestError{Field: "f", Err: errors.New("x")}, service.KindInvalid},
		{"configuration field", config.Errorf("k", "bad"), service.KindInvalid},
		{"placement input", fmt.Errorf("w: %w", placement.ErrInvalid), service.KindInvalid},
		{"operator key", field(config.ErrOperatorOnly), service.KindOperatorOnly},
		{"not configured", fmt.Errorf("%w: p", service.ErrNotConfigured), service.KindOperatorOnly},
		{"unknown plugin", field(plugins.ErrUnknownPlugin), service.KindUnknownPlugin},
		{"inexpressible setting", field(fmt.Errorf("needs 23.11: %w", engines.ErrInexpressible)), service.KindInexpressible},
		{"credentials file", field(fmt.Errorf("%w: gone", providers.ErrNoCredentials)), service.KindInvalid},
		{"no credentials", fmt.Errorf("discover: %w", providers.ErrNoCredentials), service.KindNoCredentials},
		{"refused credentials", providers.ErrAuth, service.KindAuth},
		{"upstream", fmt.Errorf("%w: %w", providers.ErrUnavailable, context.DeadlineExceeded), service.KindUnavailable},
		{"timeout", fmt.Errorf("discover: %w", context.DeadlineExceeded), service.KindTimeout},
		{"canceled", context.Canceled, service.KindCanceled},
		{"closed", service.ErrClosed, service.KindCanceled},
		{"shrink", fmt.Errorf("publish: %w", service.ErrShrinkRefused), service.KindShrinkRefused},
		{"store full", fmt.Errorf("append: %w", store.ErrFull), service.KindStoreFull},
		{"store not found", store.ErrNotFound, service.KindNotFound},
		{"ledger record", placement.ErrNoRecord, service.KindNotFound},
		{"account", placement.ErrUnknownAccount, service.KindUnknownAccount},
		{"busy", fmt.Errorf("%w: reads", service.ErrBusy), service.KindBusy},
		{"no topology", service.ErrNoTopology, service.KindNoTopology},
		{"simulated", &service.SimulatedError{Code: 503, Message: "m"}, "simulated-503"},
		{"unknown", errors.New("boom"), service.KindInternal},
	}
	for _, tt := range tests {
		if got := service.KindOf(tt.err); got != tt.want {
			t.Errorf("%s: KindOf(%v) = %s, want %s", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestKindsKeepStoredNames: the kinds stored by earlier builds are still
// kinds, and a kind this build does not know is rebuilt as internal.
func TestKindsKeepStoredNames(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"invalid", "no-credentials", "auth", "shrink-refused", "inexpressible", "unavailable", "timeout", "canceled", "interrupted", "internal"} {
		if !slices.Contains(service.Kinds(), kind) {
			t.Errorf("stored kind %q is gone", kind)
		}
	}
	err := service.ResultError(&store.Result{ErrKind: "no-such-kind", ErrMessage: "m"})
	if !errors.Is(err, service.ErrInternal) || err.Error() != "m" {
		t.Errorf("unknown kind rebuilt as %v", err)
	}
}
