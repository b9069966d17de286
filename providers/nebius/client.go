package nebius

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/providers"
)

// ListMethod is the gRPC method the provider calls.
const ListMethod = "/nebius.compute.v1.InstanceService/List"

// grpcClient calls InstanceService/List over grpc-go: TLS (or plaintext
// with allowHTTP), the IAM token as "authorization: Bearer", every call
// observed, RESOURCE_EXHAUSTED and UNAVAILABLE retried with capped,
// jittered exponential backoff, or after the server's RetryInfo delay
// when it gives a longer one. Each discovery opens its own connection
// (session) and closes it.
type grpcClient struct {
	target string
	opts   []grpc.DialOption
	// timeout bounds one call (Connection.Timeout).
	timeout time.Duration
	policy  httpretry.Policy
	sleep   func(ctx context.Context, d time.Duration) error
}

// session is one connection of a discovery.
type session struct {
	*grpcClient
	conn *grpc.ClientConn
}

// newClient builds the client of cfg's url, checking its TLS settings.
func newClient(cfg Config, log *slog.Logger, obs providers.Observer) (*grpcClient, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "443")
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "http" && log != nil {
		log.Warn("plain http URL: credentials travel in clear text (allowHTTP)", "url", httpretry.Redact(u))
	}
	if u.Scheme == "https" {
		tlsCfg, err := httpretry.TLSOptions{CAFile: cfg.CAFile, InsecureSkipVerify: cfg.InsecureSkipVerify}.TLSConfig(log)
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(tlsCfg)
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = httpretry.DefaultTimeout
	}
	return &grpcClient{target: target, timeout: timeout, policy: cfg.Retry.WithDefaults(), sleep: httpretry.SleepContext, opts: []grpc.DialOption{grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})), grpc.WithUnaryInterceptor(observe(obs))}}, nil
}

// open starts a session; it connects on its first call.
func (c *grpcClient) open() (*session, error) {
	conn, err := grpc.NewClient(c.target, c.opts...)
	if err != nil {
		return nil, fmt.Errorf("grpc client: %w", err)
	}
	return &session{grpcClient: c, conn: conn}, nil
}

// invoke makes one call, bounded by the client's timeout.
func (s *session) invoke(ctx context.Context, method string, req, resp any) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.conn.Invoke(ctx, method, req, resp)
}

// Close closes the session's connection.
func (s *session) Close() error { return s.conn.Close() }

func (s *session) list(ctx context.Context, token string, req *listRequest) (*listResponse, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	for attempt := 1; ; attempt++ {
		var resp listResponse
		err := s.invoke(ctx, ListMethod, req, &resp)
		if err == nil {
			return &resp, nil
		}
		st := status.Convert(err)
		if (st.Code() != codes.ResourceExhausted && st.Code() != codes.Unavailable) || attempt >= s.policy.MaxAttempts || ctx.Err() != nil {
			return nil, classify(st)
		}
		if err := s.sleep(ctx, s.wait(attempt, st)); err != nil {
			return nil, classify(st)
		}
	}
}

// wait is the backoff before attempt+1: BaseDelay·2^(attempt-1) capped
// at MaxDelay and jittered, or the server's RetryInfo delay (capped at
// MaxDelay) when longer.
func (c *grpcClient) wait(attempt int, st *status.Status) time.Duration {
	d := httpretry.EqualJitter(c.policy.Delay(attempt))
	for _, det := range st.Details() {
		if ri, ok := det.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			d = max(d, min(ri.GetRetryDelay().AsDuration(), c.policy.MaxDelay))
		}
	}
	return d
}

// classifyErr is classify for an error of a call.
func classifyErr(err error) error { return classify(status.Convert(err)) }

// classify wraps a gRPC status with the shared sentinels.
func classify(st *status.Status) error {
	err := fmt.Errorf("%s: %s", st.Code(), st.Message())
	switch st.Code() {
	case codes.Unauthenticated, codes.PermissionDenied:
		return providers.Classify(err, providers.AuthRefused)
	case codes.ResourceExhausted, codes.Unavailable, codes.Internal, codes.DeadlineExceeded, codes.Aborted:
		return providers.Classify(err, providers.Retryable)
	}
	return providers.Classify(err, providers.Definite)
}

// observe records every call with the HTTP status its gRPC code maps to
// (google.rpc.Code), as the REST providers record theirs.
func observe(obs providers.Observer) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		code := status.Code(err)
		obs.APICall(Name, httpStatus(code), time.Since(start), code == codes.ResourceExhausted || code == codes.Unavailable)
		return err
	}
}

// httpStatus maps a gRPC code to its HTTP equivalent.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return 200
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return 400
	case codes.Unauthenticated:
		return 401
	case codes.PermissionDenied:
		return 403
	case codes.NotFound:
		return 404
	case codes.AlreadyExists, codes.Aborted:
		return 409
	case codes.ResourceExhausted:
		return 429
	case codes.Canceled:
		return 499
	case codes.Unimplemented:
		return 501
	case codes.Unavailable:
		return 503
	case codes.DeadlineExceeded:
		return 504
	}
	return 500
}
