package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestRequestErrorsNameNoLine: a request whose parameters, laid over the
// operator's, make a key of the operator's file invalid is refused naming
// that key, with no line: the line would point into a file the client
// never sent.
func TestRequestErrorsNameNoLine(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{engines: "- name: slurm\n  params:\n    plugin: topology/block\n    blockSizes: [4, 8]\n"})
	w := s.do(http.MethodPost, "/v1/generate", `{"provider":{"name":"sim"},"engine":{"name":"slurm","params":{"plugin":"topology/tree"}}}`)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("POST /v1/generate = %d %s, want 400", w.Code, w.Body)
	}
	e := errorOf(t, w)
	if e.Field != "engine.params.blockSizes" || !strings.Contains(e.Message, "blockSizes: is only used with plugin topology/block") {
		t.Errorf("error %+v, want one on engine.params.blockSizes", e)
	}
	if strings.Contains(e.Message, "line") {
		t.Errorf("message %q names a line", e.Message)
	}
}
