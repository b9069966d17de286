package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/internal/config"
)

// Scope is what a token may do.
type Scope int

// Scopes; write includes read.
const (
	ScopeNone Scope = iota
	ScopeRead
	ScopeWrite
)

// minTokenLen is the shortest token accepted in a token file.
const minTokenLen = 16

// Tokens are the accepted bearer tokens. Only their SHA-256 sums are
// kept, and a check compares against every one in constant time.
type Tokens struct {
	entries []tokenEntry
	// agentKey derives the agents' per-node tokens; nil when none are
	// accepted.
	agentKey []byte
}

type tokenEntry struct {
	sum   [sha256.Size]byte
	scope Scope
}

// ParseTokens reads token entries ("read:TOKEN" or "write:TOKEN",
// separated by new lines, commas or spaces; # starts a comment line).
// source names where they came from in errors, which never quote a token.
func ParseTokens(text, source string) (*Tokens, error) {
	t := &Tokens{}
	var errs []error
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, entry := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			n++
			scopeName, token, ok := strings.Cut(entry, ":")
			var scope Scope
			switch scopeName {
			case "read":
				scope = ScopeRead
			case "write":
				scope = ScopeWrite
			}
			switch {
			case !ok || scope == ScopeNone:
				errs = append(errs, fmt.Errorf("%s: entry %d: want read:TOKEN or write:TOKEN", source, n))
			case len(token) < minTokenLen:
				errs = append(errs, fmt.Errorf("%s: entry %d: token shorter than %d characters", source, n, minTokenLen))
			default:
				t.entries = append(t.entries, tokenEntry{sum: sha256.Sum256([]byte(token)), scope: scope})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(t.entries) == 0 {
		return nil, fmt.Errorf("%s: no tokens", source)
	}
	return t, nil
}

// LoadTokens loads the tokens the configuration names, from its file and
// its environment variable; nil when it names none (anonymous access).
func LoadTokens(cfg config.Auth, getenv func(string) string) (*Tokens, error) {
	if !cfg.Configured() {
		return nil, nil
	}
	all := &Tokens{}
	if cfg.TokensFile != "" {
		data, err := os.ReadFile(cfg.TokensFile)
		if err != nil {
			return nil, config.Errorf("server.auth.tokensFile", "%w", err)
		}
		t, err := ParseTokens(string(data), cfg.TokensFile)
		if err != nil {
			return nil, config.Errorf("server.auth.tokensFile", "%w", err)
		}
		all.entries = append(all.entries, t.entries...)
	}
	if cfg.TokensEnv != "" {
		t, err := ParseTokens(getenv(cfg.TokensEnv), "$"+cfg.TokensEnv)
		if err != nil {
			return nil, config.Errorf("server.auth.tokensEnv", "%w", err)
		}
		all.entries = append(all.entries, t.entries...)
	}
	if err := all.loadAgentSecret(cfg); err != nil {
		return nil, err
	}
	return all, nil
}

// Check returns the scope of token; ScopeNone if it is not accepted. It
// takes the same time whichever entry, if any, matches.
func (t *Tokens) Check(token string) Scope {
	sum := sha256.Sum256([]byte(token))
	best := ScopeNone
	for _, e := range t.entries {
		eq := subtle.ConstantTimeCompare(sum[:], e.sum[:])
		best = Scope(subtle.ConstantTimeSelect(eq&boolInt(e.scope > best), int(e.scope), int(best)))
	}
	return best
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// require lets a request through when its bearer token has the scope.
// With no tokens configured every read is let through, and a write only
// when the service listens on loopback alone.
func (h *handlers) require(scope Scope) gin.HandlerFunc {
	return func(c *gin.Context) {
		tokens := h.creds.Tokens()
		if tokens == nil {
			if scope >= ScopeWrite && !loopbackOnly(h.Config.Listen) {
				h.fail(c, errWritesLocal)
			}
			return
		}
		auth := c.GetHeader("Authorization")
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || token == "" {
			h.fail(c, errUnauthorized)
			return
		}
		got := tokens.Check(token)
		switch {
		case got == ScopeNone:
			h.fail(c, errUnauthorized)
		case got < scope:
			h.fail(c, errForbidden)
		}
	}
}
