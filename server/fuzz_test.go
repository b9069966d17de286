package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// FuzzLedgerBody: whatever POST /v1/ledger is sent, it answers 200 (and
// then appended as many records as the body holds) or a 4xx naming a
// field; never a 5xx, never a body that appends part of itself.
func FuzzLedgerBody(f *testing.F) {
	for _, seed := range []string{
		`{"records":[{"account":"b","workload":"w1","gpus":8,"nodes":["gpu001"],"start":"2000-01-01T00:00:00Z"}]}`,
		`{"Records":[{"Account":"b","workload":"w1","gpus":8,"start":"2000-01-01T00:00:00Z"}]}`,
		`{"records":[{"account":"b","account":"c","workload":"w2","gpus":8,"start":"2000-01-01T00:00:00Z"}]}`,
		`{"records":[{"account":"b","workload":"w3","gpus":16,"nodes":["gpu[003-004]"],"start":"2000-01-01T00:00:00Z","minRuntime":"4h"}]}`,
		`{"records":[{"account":"b","workload":"w4","gpus":9223372036854775807,"start":"2000-01-01T00:00:00Z"}]}`,
		`{"records":[],"records":null}`,
		`{"records":[{"minRuntime":"4 hours"}]}`,
		`[]`, `null`, `{"records":{}}`,
	} {
		f.Add(seed)
	}
	s := newStack(f, stackOpts{})
	s.discover()
	f.Fuzz(func(t *testing.T, body string) {
		st := *s
		st.t = t // f's methods may not be called inside the fuzz target
		w := st.do(http.MethodPost, "/v1/ledger", body)
		switch {
		case w.Code == http.StatusOK:
			var in struct {
				Records []json.RawMessage `json:"records"`
			}
			var out struct {
				Appended int `json:"appended"`
			}
			if err := json.Unmarshal([]byte(body), &in); err != nil {
				t.Fatalf("accepted a body encoding/json refuses: %q: %v", body, err)
			}
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.Appended != len(in.Records) {
				t.Fatalf("%q: appended %s, want %d", body, w.Body, len(in.Records))
			}
		case w.Code >= 500:
			t.Fatalf("%q: %d %s", body, w.Code, w.Body)
		default:
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%q: %d with a malformed error body %s", body, w.Code, w.Body)
			}
		}
	})
}
