package cloudsim

import (
	"sync"
	"time"
)

// Recorder is a providers.Observer that counts what it is told, by
// provider, so that tests can compare it with an emulator's Calls.
type Recorder struct {
	mu                  sync.Mutex
	calls, throttled    map[string]int
	omitted, noTopology map[string]int
	statuses            map[int]int
}

// APICall implements providers.Observer.
func (r *Recorder) APICall(provider string, status int, _ time.Duration, throttled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls, r.throttled, r.statuses = map[string]int{}, map[string]int{}, map[int]int{}
	}
	r.calls[provider]++
	r.statuses[status]++
	if throttled {
		r.throttled[provider]++
	}
}

// Unplaced implements providers.Observer.
func (r *Recorder) Unplaced(provider string, omitted, noTopology int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.omitted == nil {
		r.omitted, r.noTopology = map[string]int{}, map[string]int{}
	}
	r.omitted[provider], r.noTopology[provider] = omitted, noTopology
}

// Calls returns the calls and throttled calls recorded for provider.
func (r *Recorder) Calls(provider string) (calls, throttled int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[provider], r.throttled[provider]
}

// UnplacedOf returns the last unplaced counts recorded for provider.
func (r *Recorder) UnplacedOf(provider string) (omitted, noTopology int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.omitted[provider], r.noTopology[provider]
}
