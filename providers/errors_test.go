package providers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
)

func TestClassifyHTTP(t *testing.T) {
	t.Parallel()
	status := func(code int) error {
		return fmt.Errorf("page 1: %w", &httpretry.StatusError{Method: "GET", URL: "https://api.example/x", StatusCode: code})
	}
	tests := []struct {
		name              string
		err               error
		auth, unavailable bool
	}{
		{"401", status(401), true, false},
		{"403", status(403), true, false},
		{"429", status(429), false, true},
		{"503", status(503), false, true},
		{"404 is definite", status(404), false, false},
		{"no answer", errors.New("connection refused"), false, true},
		{"cancelled", fmt.Errorf("page 2: %w", context.Canceled), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := providers.ClassifyHTTP(tt.err)
			if errors.Is(got, providers.ErrAuth) != tt.auth || errors.Is(got, providers.ErrUnavailable) != tt.unavailable {
				t.Errorf("ClassifyHTTP(%v) = %v: auth %v, unavailable %v; want %v, %v", tt.err, got,
					errors.Is(got, providers.ErrAuth), errors.Is(got, providers.ErrUnavailable), tt.auth, tt.unavailable)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("ClassifyHTTP lost the cause: %v", got)
			}
		})
	}
	if providers.Classify(nil, providers.AuthRefused) != nil {
		t.Error("Classify(nil) is not nil")
	}
}

func TestClassifyKube(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Resource: "nodes"}
	for _, tc := range []struct {
		name              string
		err               error
		auth, unavailable bool
	}{
		{"401", apierrors.NewUnauthorized("bad token"), true, false},
		{"403", apierrors.NewForbidden(gr, "", errors.New("no list")), true, false},
		{"503", apierrors.NewServiceUnavailable("down"), false, true},
		{"no answer", errors.New("dial tcp: connection refused"), false, true},
	} {
		err := providers.ClassifyKube(tc.err)
		if errors.Is(err, providers.ErrAuth) != tc.auth || errors.Is(err, providers.ErrUnavailable) != tc.unavailable || !errors.Is(err, tc.err) {
			t.Errorf("%s: ClassifyKube = %v", tc.name, err)
		}
	}
}
