package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// expected is what Check(data, nil) must say of a valid document, found
// by another decoder (jsontext, which refuses repeated names itself):
// the first, in document order, of a repeated key and a container
// opened inside MaxDepth others; "" for neither.
func expected(data []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		switch {
		case errors.Is(err, jsontext.ErrDuplicateName):
			return "appears twice"
		case errors.Is(err, io.EOF):
			return ""
		case err != nil:
			return "other: " + err.Error()
		}
		if k := tok.Kind(); (k == '{' || k == '[') && dec.StackDepth() > MaxDepth {
			return "levels deep"
		}
	}
}

// FuzzCheck: Check never panics, and on a valid ungot document it
// refuses exactly what another decoder finds first: a repeated key or a
// nesting deeper than MaxDepth.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{"a":1}`, `{"a":1,"a":2}`, `[{"x":{"y":[1,2,{"y":1,"z":2}]}}]`, `{"a":"\u0061","\u0061":1}`,
		nest(MaxDepth, "k"), nest(MaxDepth+1, "k"), strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2),
		`{"records":[{"account":"a"}]`, `"plain"`, `{"a":{"b":1},"a":{"b":2}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := Check(data, nil) // must not panic on anything
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		want := expected(data)
		if strings.HasPrefix(want, "other") {
			return // jsontext refuses what encoding/json accepts: no oracle
		}
		var e *Error
		switch {
		case want == "" && got != nil:
			t.Fatalf("Check(%q) = %v, want nil", data, got)
		case want != "" && (!errors.As(got, &e) || !strings.Contains(e.Msg, want)):
			t.Fatalf("Check(%q) = %v, want an error saying %q", data, got, want)
		}
	})
}
