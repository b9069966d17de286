package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// DefaultListen is the address `toposcope serve` listens on by default
// (Topograph's port, on loopback only).
const DefaultListen = "127.0.0.1:49021"

// Server configures the REST service's listener (the `server` section).
type Server struct {
	// Listen is the host:port to listen on (default DefaultListen).
	Listen string `yaml:"listen"`
	// TLS enables HTTPS and, with ClientCA, mutual TLS.
	TLS TLS `yaml:"tls"`
	// Auth configures bearer tokens.
	Auth Auth `yaml:"auth"`
	// MaxBodyBytes caps request bodies (default 8 MiB).
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
	// ReadHeaderTimeout bounds reading request headers (default 5s).
	ReadHeaderTimeout time.Duration `yaml:"readHeaderTimeout"`
	// ReadTimeout bounds reading a whole request (default 30s).
	ReadTimeout time.Duration `yaml:"readTimeout"`
	// BodyReadTimeout bounds reading the body of a request that the
	// service decodes (the extender's calls, placements, agent reports,
	// every JSON body), from the end of its headers (default 10s): a
	// caller that sends its body slowly is cut off then, and holds no
	// extender slot meanwhile.
	BodyReadTimeout time.Duration `yaml:"bodyReadTimeout"`
	// MaxBodyMemory bounds the memory of the request bodies being read
	// and decoded at once; each is charged BodyMemoryFactor times its
	// bytes as they arrive. Past it, 429 with Retry-After (default
	// 64 MiB; at least BodyMemoryFactor × maxBodyBytes).
	MaxBodyMemory int64 `yaml:"maxBodyMemory"`
	// WriteTimeout bounds writing a response; a streamed response gets
	// it again after each chunk it manages to write (default 60s).
	WriteTimeout time.Duration `yaml:"writeTimeout"`
	// IdleTimeout bounds keep-alive connections between requests
	// (default 120s).
	IdleTimeout time.Duration `yaml:"idleTimeout"`
	// ShutdownTimeout bounds graceful shutdown (default 15s).
	ShutdownTimeout time.Duration `yaml:"shutdownTimeout"`
	// MaxConcurrentDiscoveries bounds the API requests' discoveries
	// running at once (default 2); the discovery loop has a slot of its
	// own beside them, so queued requests never delay it.
	MaxConcurrentDiscoveries int `yaml:"maxConcurrentDiscoveries"`
	// MaxQueuedRequests bounds POST /v1/generate requests accepted but
	// not finished; beyond it the API answers 429 (default 64).
	MaxQueuedRequests int `yaml:"maxQueuedRequests"`
	// RequestTimeout bounds one API-submitted discovery and render
	// (default 5m).
	RequestTimeout time.Duration `yaml:"requestTimeout"`
	// MaxSnapshotReads bounds the older snapshots' graphs that reads
	// (GET /v1/graph?snapshot=, a computed /v1/diff) hold in memory at
	// once; beyond, 429 with Retry-After (default 4).
	MaxSnapshotReads int `yaml:"maxSnapshotReads"`
	// Publish lets POST /v1/generate publish through its engine (write
	// files, run reconfigure commands) instead of only rendering. It
	// gives every write-token holder that power; default false.
	Publish bool `yaml:"publish"`
}

// TLS configures HTTPS.
type TLS struct {
	// Cert and Key are PEM files of the server certificate and its key.
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// ClientCA is a PEM bundle; when set, every client must present a
	// certificate that it signed (mutual TLS).
	ClientCA string `yaml:"clientCA"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.Cert != "" || t.Key != "" }

// Auth configures bearer tokens. Each entry is "read:TOKEN" or
// "write:TOKEN" (write implies read); entries are separated by new lines,
// commas or spaces, and lines starting with # are comments.
type Auth struct {
	// TokensFile is a file of token entries.
	TokensFile string `yaml:"tokensFile"`
	// TokensEnv names an environment variable holding token entries.
	TokensEnv string `yaml:"tokensEnv"`
	// Anonymous allows requests without a token when no token is
	// configured and the listener is not on loopback. On loopback they
	// are always allowed when no token is configured.
	Anonymous bool `yaml:"anonymous"`
	// AgentSecretFile is a file holding the secret (at least 32
	// characters) node agents' tokens are derived from: the token of
	// node N is the hex HMAC-SHA256 of "toposcope-agent:N" under the
	// secret. Such a token may only PUT /v1/agents/N. Needs a token
	// source (tokensFile or tokensEnv).
	AgentSecretFile string `yaml:"agentSecretFile"`
	// AllowedHosts are host names, besides the listen address and the
	// loopback names, that a write may name in its Host header (the
	// names clients reach the service by); a write naming another host
	// is refused (DNS rebinding).
	AllowedHosts []string `yaml:"allowedHosts"`
}

// Configured reports whether a token source is set.
func (a Auth) Configured() bool { return a.TokensFile != "" || a.TokensEnv != "" }

// MaxBodyBytesLimit is the largest server.maxBodyBytes: a body is read
// into memory whole.
const MaxBodyBytesLimit = 1 << 30

// BodyMemoryFactor is what a decoded body is charged against
// server.maxBodyMemory, per byte: the body itself, the buffer's growth
// and what decoding it holds (docs/performance.md has the measurement).
const BodyMemoryFactor = 8

// DefaultServer returns the server defaults.
func DefaultServer() Server {
	return Server{
		Listen:                   DefaultListen,
		MaxBodyBytes:             8 << 20,
		ReadHeaderTimeout:        5 * time.Second,
		ReadTimeout:              30 * time.Second,
		BodyReadTimeout:          10 * time.Second,
		MaxBodyMemory:            64 << 20,
		WriteTimeout:             60 * time.Second,
		IdleTimeout:              120 * time.Second,
		ShutdownTimeout:          15 * time.Second,
		MaxConcurrentDiscoveries: 2,
		MaxQueuedRequests:        64,
		MaxSnapshotReads:         4,
		RequestTimeout:           5 * time.Minute,
	}
}

// Validate reports every invalid key of the section (keys relative to it).
func (s *Server) Validate() error {
	var errs []error
	host, port, err := net.SplitHostPort(s.Listen)
	if err != nil {
		errs = append(errs, Errorf("listen", "want host:port, got %q", s.Listen))
	} else if port == "" {
		errs = append(errs, Errorf("listen", "port is missing in %q", s.Listen))
	} else if _, perr := strconv.ParseUint(port, 10, 16); perr != nil {
		errs = append(errs, Errorf("listen", "port %q is not a number from 0 to 65535", port))
	}
	positive := []struct {
		key string
		v   time.Duration
	}{
		{"readHeaderTimeout", s.ReadHeaderTimeout}, {"readTimeout", s.ReadTimeout}, {"bodyReadTimeout", s.BodyReadTimeout},
		{"writeTimeout", s.WriteTimeout}, {"idleTimeout", s.IdleTimeout},
		{"shutdownTimeout", s.ShutdownTimeout}, {"requestTimeout", s.RequestTimeout},
	}
	for _, p := range positive {
		if p.v <= 0 {
			errs = append(errs, Errorf(p.key, "must be a positive duration, got %s", p.v))
		}
	}
	if s.MaxBodyBytes < 1024 || s.MaxBodyBytes > MaxBodyBytesLimit {
		errs = append(errs, Errorf("maxBodyBytes", "must be at least 1024 and at most %d (1 GiB), got %d", int64(MaxBodyBytesLimit), s.MaxBodyBytes))
	}
	if s.MaxBodyBytes >= 1024 && s.MaxBodyBytes <= MaxBodyBytesLimit && (s.MaxBodyMemory < BodyMemoryFactor*s.MaxBodyBytes || s.MaxBodyMemory > BodyMemoryFactor*MaxBodyBytesLimit) {
		errs = append(errs, Errorf("maxBodyMemory", "must be at least %d × maxBodyBytes (%d) and at most %d, got %d: a body of maxBodyBytes is charged %d times its size",
			BodyMemoryFactor, BodyMemoryFactor*s.MaxBodyBytes, int64(BodyMemoryFactor*MaxBodyBytesLimit), s.MaxBodyMemory, BodyMemoryFactor))
	}
	if s.MaxConcurrentDiscoveries < 1 || s.MaxConcurrentDiscoveries > 64 {
		errs = append(errs, Errorf("maxConcurrentDiscoveries", "must be between 1 and 64, got %d", s.MaxConcurrentDiscoveries))
	}
	if s.MaxQueuedRequests < 1 || s.MaxQueuedRequests > 100000 {
		errs = append(errs, Errorf("maxQueuedRequests", "must be between 1 and 100000, got %d", s.MaxQueuedRequests))
	}
	if s.MaxSnapshotReads < 1 || s.MaxSnapshotReads > 256 {
		errs = append(errs, Errorf("maxSnapshotReads", "must be between 1 and 256, got %d", s.MaxSnapshotReads))
	}
	if s.TLS.Enabled() && (s.TLS.Cert == "" || s.TLS.Key == "") {
		errs = append(errs, Errorf("tls", "cert and key must be set together"))
	}
	if s.TLS.ClientCA != "" && !s.TLS.Enabled() {
		errs = append(errs, Errorf("tls.clientCA", "needs tls.cert and tls.key"))
	}
	if s.Auth.TokensEnv != "" && strings.ContainsAny(s.Auth.TokensEnv, "= \t") {
		errs = append(errs, Errorf("auth.tokensEnv", "must be an environment variable name, got %q", s.Auth.TokensEnv))
	}
	if s.Auth.AgentSecretFile != "" && !s.Auth.Configured() {
		errs = append(errs, Errorf("auth.agentSecretFile", "needs auth.tokensFile or auth.tokensEnv"))
	}
	for i, h := range s.Auth.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ \t@") || strings.Contains(h, "://") {
			errs = append(errs, Errorf(fmt.Sprintf("auth.allowedHosts[%d]", i), "want a host name (with an optional :port), got %q", h))
		}
	}
	if err == nil && !s.Auth.Configured() && !s.Auth.Anonymous && !IsLoopback(host) {
		errs = append(errs, Errorf("auth", "listen %q is not a loopback address: set auth.tokensFile or auth.tokensEnv, or auth.anonymous: true", s.Listen))
	}
	return errors.Join(errs...)
}

// IsLoopback reports whether host (from host:port) names only the
// loopback interface.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Discovery configures the discovery loop (the `discovery` section).
type Discovery struct {
	// Interval is the time between periodic discoveries (default 5m);
	// 0 turns periodic discovery off.
	Interval time.Duration `yaml:"interval"`
	// Timeout bounds one discovery and its publishing (default 2m).
	Timeout time.Duration `yaml:"timeout"`
	// ShrinkGuard is the largest fraction of nodes or switches a
	// discovery may lose against the last accepted snapshot before it is
	// refused pending an operator's accept (default 0.1); 1 disables it.
	ShrinkGuard float64 `yaml:"shrinkGuard"`
	// ShrinkWindow is how far back the shrink guard looks: a discovery
	// is compared with the largest topology accepted within it, so that
	// losses spread over several discoveries add up (default 24h; 0
	// compares with the current snapshot only).
	ShrinkWindow time.Duration `yaml:"shrinkWindow"`
	// Triggers configures what else starts a discovery.
	Triggers Triggers `yaml:"triggers"`
	// UnreadyAfter is how many discoveries in a row may fail before
	// /readyz answers 503, although an older topology is still served
	// (default 3; 0 never).
	UnreadyAfter int `yaml:"unreadyAfter"`
}

// Triggers configures what starts a discovery besides the interval.
type Triggers struct {
	// Startup discovers as soon as the service starts (default true).
	Startup bool `yaml:"startup"`
	// SIGHUP discovers when the process receives SIGHUP (default true).
	SIGHUP bool `yaml:"sighup"`
	// API lets POST /v1/discover start a discovery (default true).
	API bool `yaml:"api"`
	// WatchFiles are files (for example the sim model, or slurm.conf)
	// whose change of size or modification time starts a discovery.
	WatchFiles []string `yaml:"watchFiles"`
	// WatchInterval is how often WatchFiles are checked (default 10s).
	WatchInterval time.Duration `yaml:"watchInterval"`
	// Debounce delays a discovery asked for by the API or SIGHUP by this
	// long, merging the requests that arrive meanwhile, so that a burst
	// (a rack going down, each node firing Slurm's trigger) is one
	// discovery (default 0: at once).
	Debounce time.Duration `yaml:"debounce"`
}

// DefaultDiscovery returns the discovery defaults.
func DefaultDiscovery() Discovery {
	return Discovery{
		Interval:     5 * time.Minute,
		Timeout:      2 * time.Minute,
		ShrinkGuard:  0.1,
		ShrinkWindow: 24 * time.Hour,
		Triggers:     Triggers{Startup: true, SIGHUP: true, API: true, WatchInterval: 10 * time.Second},
		UnreadyAfter: 3,
	}
}

// Validate reports every invalid key of the section.
func (d *Discovery) Validate() error {
	var errs []error
	if d.Interval < 0 || (d.Interval > 0 && d.Interval < time.Second) {
		errs = append(errs, Errorf("interval", "must be 0 (off) or at least 1s, got %s", d.Interval))
	}
	if d.Timeout <= 0 {
		errs = append(errs, Errorf("timeout", "must be a positive duration, got %s", d.Timeout))
	}
	if d.ShrinkGuard < 0 || d.ShrinkGuard > 1 {
		errs = append(errs, Errorf("shrinkGuard", "must be a fraction between 0 and 1, got %g", d.ShrinkGuard))
	}
	if d.UnreadyAfter < 0 {
		errs = append(errs, Errorf("unreadyAfter", "must not be negative, got %d", d.UnreadyAfter))
	}
	if d.ShrinkWindow < 0 {
		errs = append(errs, Errorf("shrinkWindow", "must not be negative, got %s", d.ShrinkWindow))
	}
	if d.Triggers.Debounce < 0 || d.Triggers.Debounce > time.Hour {
		errs = append(errs, Errorf("triggers.debounce", "must be between 0 and 1h, got %s", d.Triggers.Debounce))
	}
	if d.Triggers.WatchInterval < 100*time.Millisecond {
		errs = append(errs, Errorf("triggers.watchInterval", "must be at least 100ms, got %s", d.Triggers.WatchInterval))
	}
	for i, f := range d.Triggers.WatchFiles {
		if strings.TrimSpace(f) == "" {
			errs = append(errs, Errorf(fmt.Sprintf("triggers.watchFiles[%d]", i), "must not be empty"))
		}
	}
	return errors.Join(errs...)
}

// Store configures the embedded store (the `store` section).
type Store struct {
	// Path is the bbolt file; empty means toposcope.db under
	// $XDG_STATE_HOME/toposcope (or ~/.local/state/toposcope).
	Path string `yaml:"path"`
	// LockTimeout bounds waiting for another process's lock on the file
	// (default 10s).
	LockTimeout time.Duration `yaml:"lockTimeout"`
	// Retention limits what the store keeps.
	Retention Retention `yaml:"retention"`
	// Database, when its driver is set, keeps the store in a shared
	// PostgreSQL or MariaDB database instead of the file at path, so that
	// several replicas serve, and take over, with one history.
	Database Database `yaml:"database"`
}

// Retention limits history by count and age. The current and the
// pending snapshot are always kept.
type Retention struct {
	// Snapshots is the most snapshots kept (default 100).
	Snapshots int `yaml:"snapshots"`
	// SnapshotAge drops older snapshots (default 720h; 0 keeps all).
	SnapshotAge time.Duration `yaml:"snapshotAge"`
	// Results is the most finished API request results kept (default 1000).
	Results int `yaml:"results"`
	// ResultAge drops older finished results (default 24h; 0 keeps all).
	ResultAge time.Duration `yaml:"resultAge"`
	// ResultBytes bounds the bytes of the finished results kept, their
	// requests and bodies together: the oldest go first (default 256 MiB;
	// 0 keeps all).
	ResultBytes int64 `yaml:"resultBytes"`
	// Runs is the most discovery-run records kept (default 1000).
	Runs int `yaml:"runs"`
}

// DefaultStore returns the store defaults.
func DefaultStore() Store {
	return Store{
		LockTimeout: 10 * time.Second,
		Database:    DefaultDatabase(),
		Retention: Retention{
			Snapshots: 100, SnapshotAge: 720 * time.Hour,
			Results: 1000, ResultAge: 24 * time.Hour, ResultBytes: 256 << 20, Runs: 1000,
		},
	}
}

// Validate reports every invalid key of the section.
func (s *Store) Validate() error {
	var errs []error
	if s.LockTimeout <= 0 {
		errs = append(errs, Errorf("lockTimeout", "must be a positive duration, got %s", s.LockTimeout))
	}
	counts := []struct {
		key string
		v   int
	}{{"retention.snapshots", s.Retention.Snapshots}, {"retention.results", s.Retention.Results}, {"retention.runs", s.Retention.Runs}}
	for _, c := range counts {
		if c.v < 1 {
			errs = append(errs, Errorf(c.key, "must be at least 1, got %d", c.v))
		}
	}
	if s.Retention.SnapshotAge < 0 {
		errs = append(errs, Errorf("retention.snapshotAge", "must not be negative"))
	}
	if s.Retention.ResultAge < 0 {
		errs = append(errs, Errorf("retention.resultAge", "must not be negative"))
	}
	errs = append(errs, PrefixFields("database", s.Database.Validate()))
	return errors.Join(errs...)
}
