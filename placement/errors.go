package placement

import "errors"

// ErrInvalid is wrapped by every invalid budget, ledger, request or
// configuration error.
var ErrInvalid = errors.New("invalid placement input")

// ErrUnknownAccount is wrapped when an account is not in the budget tree.
var ErrUnknownAccount = errors.New("unknown account")

// ErrNoCandidate is wrapped when no node set can hold a request.
var ErrNoCandidate = errors.New("no candidate placement")
