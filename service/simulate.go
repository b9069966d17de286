package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Simulation is the answer a request for Topograph's test provider asks
// for, so that a client can test how it handles a failing service: the
// status of POST /v1/generate (202, or 400-599 answered at once) and of
// GET /v1/topology (200 runs the request; 202 keeps it pending; 400-599
// fails it), with Message as the answer's text. It is the request's
// data: it makes only that request fail.
type Simulation struct {
	Generate int    `json:"generate"`
	Topology int    `json:"topology"`
	Message  string `json:"message,omitempty"`
}

// SimulatedError is a Simulation's answer: HTTP status Code with Message.
type SimulatedError struct {
	Code    int
	Message string
}

// Error returns the message the request asked for.
func (e *SimulatedError) Error() string { return e.Message }

// kindSimulated prefixes the stored kind of a simulated failure, followed
// by its status.
const kindSimulated = "simulated-"

// maxSimulatedMessage bounds errorMessage.
const maxSimulatedMessage = 1024

// takeSimulation moves the Topograph test provider's answer parameters
// (generateResponseCode, topologyResponseCode, errorMessage) out of
// req's provider parameters into req.Simulate, checked as Topograph
// checks them; testcaseName and description, which only label the
// request, are dropped. Nothing is simulated when the codes are the
// normal ones (202, 200).
func takeSimulation(req *GenerateRequest) error {
	params, err := takeParams(&req.Provider, "generateResponseCode", "topologyResponseCode", "errorMessage", "testcaseName", "description")
	if err != nil {
		return err
	}
	s := Simulation{Generate: 202, Topology: 200}
	codes := []struct {
		key   string
		dst   *int
		valid func(int) bool
		want  string
	}{
		{"generateResponseCode", &s.Generate, func(c int) bool { return c == 202 || c >= 400 && c <= 599 }, "202 or 400-599"},
		{"topologyResponseCode", &s.Topology, func(c int) bool { return c == 200 || c == 202 || c >= 400 && c <= 599 }, "200, 202 or 400-599"},
	}
	for _, c := range codes {
		raw, ok := params[c.key]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.Trim(string(raw), `"`)) // Topograph also takes "500"
		if err != nil || !c.valid(n) {
			return badRequest("provider.params."+c.key, "unsupported response code %s: want %s", raw, c.want)
		}
		*c.dst = n
	}
	if raw, ok := params["errorMessage"]; ok {
		if err := json.Unmarshal(raw, &s.Message); err != nil || len(s.Message) > maxSimulatedMessage {
			return badRequest("provider.params.errorMessage", "must be a string of at most %d bytes", maxSimulatedMessage)
		}
	}
	if s.Generate != 202 || s.Topology != 200 {
		req.Simulate = &s
	}
	return nil
}

// simulatedKind is the stored kind of err when it is a SimulatedError.
func simulatedKind(err error) (string, bool) {
	var se *SimulatedError
	if !errors.As(err, &se) {
		return "", false
	}
	return kindSimulated + strconv.Itoa(se.Code), true
}

// simulatedResult rebuilds a stored simulated failure.
func simulatedResult(kind, msg string) (*SimulatedError, bool) {
	code, ok := strings.CutPrefix(kind, kindSimulated)
	if !ok {
		return nil, false
	}
	n, err := strconv.Atoi(code)
	if err != nil {
		return nil, false
	}
	return &SimulatedError{Code: n, Message: msg}, true
}

// simulated returns the answer of j's simulation to GET /v1/topology, or
// nil when it runs as any request.
func (j *job) simulated() error {
	if j.simulate == nil || j.simulate.Topology == 200 {
		return nil
	}
	return &SimulatedError{Code: j.simulate.Topology, Message: j.simulate.Message}
}

// String describes the simulation for logs.
func (s *Simulation) String() string {
	return fmt.Sprintf("generate %d, topology %d", s.Generate, s.Topology)
}
