package server

import (
	"sync/atomic"

	"github.com/toposcope/toposcope/internal/config"
)

// Credentials are the bearer tokens and the agent secret the service
// accepts, loaded from the files and environment variable that
// server.auth names and loaded again by Reload (on SIGHUP), so that a
// rotated token file or agent secret takes effect without a restart.
type Credentials struct {
	cfg    config.Auth
	getenv func(string) string
	cur    atomic.Pointer[Tokens]
}

// LoadCredentials loads the credentials cfg names; with none named every
// request is anonymous (Tokens returns nil).
func LoadCredentials(cfg config.Auth, getenv func(string) string) (*Credentials, error) {
	c := &Credentials{cfg: cfg, getenv: getenv}
	t, err := LoadTokens(cfg, getenv)
	if err != nil {
		return nil, err
	}
	c.cur.Store(t)
	return c, nil
}

// StaticCredentials are t, never reloaded (Reload keeps them).
func StaticCredentials(t *Tokens) *Credentials {
	c := &Credentials{}
	c.cur.Store(t)
	return c
}

// Tokens returns the credentials in force; nil when every request is
// anonymous.
func (c *Credentials) Tokens() *Tokens {
	if c == nil {
		return nil
	}
	return c.cur.Load()
}

// Reload reads the token file, the token variable and the agent secret
// file again. When any of them cannot be used, the credentials in force
// stay and the error says which key is at fault (never quoting a token
// or secret).
func (c *Credentials) Reload() error {
	if c.getenv == nil || !c.cfg.Configured() {
		return nil // nothing to read: anonymous or static
	}
	t, err := LoadTokens(c.cfg, c.getenv)
	if err != nil {
		return err
	}
	c.cur.Store(t)
	return nil
}
