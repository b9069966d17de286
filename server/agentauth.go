package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/internal/config"
)

// MinAgentSecretLen is the shortest agent secret accepted.
const MinAgentSecretLen = 32

// agentTokenPrefix is what an agent token is the HMAC of, before the
// node name: it keeps the HMAC from meaning anything elsewhere.
const agentTokenPrefix = "toposcope-agent:"

// ErrAgentSecret is wrapped when the agent secret cannot be used.
var ErrAgentSecret = errors.New("agent secret")

// AgentToken returns the bearer token of node's agent: the hex
// HMAC-SHA256 of "toposcope-agent:<node>" keyed with secret. The same
// token can be made with
//
//	printf 'toposcope-agent:%s' NODE | openssl dgst -sha256 -hmac "$(cat SECRETFILE)" -r | cut -d' ' -f1
//
// (SECRETFILE holding the secret on one line).
func AgentToken(secret []byte, node string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(agentTokenPrefix))
	m.Write([]byte(node))
	return hex.EncodeToString(m.Sum(nil))
}

// ParseAgentSecret checks a secret as read from its file (surrounding
// white space is not part of it) and returns it.
func ParseAgentSecret(text string) ([]byte, error) {
	s := strings.TrimSpace(text)
	if len(s) < MinAgentSecretLen {
		return nil, fmt.Errorf("%w: shorter than %d characters", ErrAgentSecret, MinAgentSecretLen)
	}
	return []byte(s), nil
}

// loadAgentSecret reads cfg.AgentSecretFile into t.
func (t *Tokens) loadAgentSecret(cfg config.Auth) error {
	if cfg.AgentSecretFile == "" {
		return nil
	}
	data, err := os.ReadFile(cfg.AgentSecretFile)
	if err != nil {
		return config.Errorf("server.auth.agentSecretFile", "%w", err)
	}
	if t.agentKey, err = ParseAgentSecret(string(data)); err != nil {
		return config.Errorf("server.auth.agentSecretFile", "%s: %w", cfg.AgentSecretFile, err)
	}
	return nil
}

// WithAgentSecret returns a copy of t that also accepts the agent
// tokens derived from secret (see AgentToken).
func (t *Tokens) WithAgentSecret(secret []byte) *Tokens {
	c := *t
	c.agentKey = secret
	return &c
}

// isAgent reports whether token is node's agent token.
func (t *Tokens) isAgent(node, token string) bool {
	if len(t.agentKey) == 0 || node == "" {
		return false
	}
	return hmac.Equal([]byte(AgentToken(t.agentKey, node)), []byte(token))
}

// requireAgent lets PUT /v1/agents/{node} through for a write token or
// the agent token of that node; an agent token is good for nothing
// else. Without tokens it is a write like any other.
func (h *handlers) requireAgent(c *gin.Context) {
	tokens := h.creds.Tokens()
	if tokens == nil {
		h.require(ScopeWrite)(c)
		return
	}
	token, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !ok || token == "" {
		h.fail(c, errUnauthorized)
		return
	}
	got := tokens.Check(token)
	switch {
	case got >= ScopeWrite, tokens.isAgent(c.Param("node"), token):
	case got == ScopeRead:
		h.fail(c, errForbidden)
	default:
		h.fail(c, errUnauthorized)
	}
}
