package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/toposcope/toposcope/internal/httpretry"
)

// ErrAuth is wrapped when a provider's source refused its credentials or
// their permission. A caller fixes it by changing credentials, not by
// retrying; the server answers it as 403 provider_auth naming the provider.
var ErrAuth = errors.New("the source refused the credentials")

// ErrNoCredentials is wrapped when a provider that needs credentials was
// given none (neither configured nor in the request).
var ErrNoCredentials = errors.New("no credentials")

// Answer is what a source's failed call said, as the provider's client
// reads it from its SDK or HTTP status.
type Answer int

// Answers, for Classify.
const (
	// NoAnswer is a call that got no answer (connection refused, reset,
	// timed out): the source is unavailable.
	NoAnswer Answer = iota
	// AuthRefused is an answer that refuses the credentials (401, 403 or
	// the SDK's equivalent code).
	AuthRefused
	// Retryable is a throttling or server-side failure (429, 5xx): the
	// source is unavailable for now.
	Retryable
	// Definite is any other answer (400, 404, a bad reply): it is
	// passed on as it is.
	Definite
)

// Classify wraps err by what the source answered: ErrAuth for refused
// credentials, ErrUnavailable for no answer or a retryable one. A
// definite answer and a cancelled context are returned as they are.
func Classify(err error, a Answer) error {
	switch {
	case err == nil:
		return nil
	case a == AuthRefused:
		return fmt.Errorf("%w: %w", ErrAuth, err)
	case a == Definite, errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// ClassifyHTTP is Classify for the errors of an httpretry client: the
// answer is read from its *httpretry.StatusError (401 and 403 refuse the
// credentials, 429 and 5xx are retryable, any other status is definite);
// an error with no status had no answer.
func ClassifyHTTP(err error) error {
	var se *httpretry.StatusError
	switch {
	case !errors.As(err, &se):
		return Classify(err, NoAnswer)
	case se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden:
		return Classify(err, AuthRefused)
	case se.Retryable():
		return Classify(err, Retryable)
	}
	return Classify(err, Definite)
}

// ClassifyKube is Classify for the errors of a Kubernetes client: an
// apiserver that refuses the credentials (401) or their permission (403)
// is ErrAuth; anything else that failed the call leaves the source
// unavailable (ErrUnavailable).
func ClassifyKube(err error) error {
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return Classify(err, AuthRefused)
	}
	return Classify(err, NoAnswer)
}
