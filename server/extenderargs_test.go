package server

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/extender"
)

// TestDecodeArgs: decodeArgs gives what decodeStrict gives, the same
// arguments or the same error, for bodies its fast path reads and for
// those it hands back.
func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	many := make([]string, 3000)
	for i := range many {
		many[i] = `"gpu` + strings.Repeat("0", i%5) + `"`
	}
	tests := []struct {
		name string
		body string
		fast bool // splitNames reads it (checkKeys may refuse it before)
	}{
		{"names", `{"NodeNames":["gpu001","gpu002"]}`, true},
		{"many names", `{"NodeNames":[` + strings.Join(many, ",") + `]}`, true},
		{"pod and names", `{"Pod":{"metadata":{"name":"p","annotations":{"a":"b"}}},"Nodes":null,"NodeNames":["a"]}`, true},
		{"names first", `{"NodeNames":["a","b"],"Pod":{"metadata":{"name":"p"}}}`, true},
		{"escaped names", `{"NodeNames":["a\"b","\u00e9\\", "tab\t", "\ud83d\ude00"]}`, true},
		{"empty names", `{"NodeNames":[]}`, true},
		{"null names", `{"NodeNames":null,"Pod":null}`, true},
		{"no names", `{"Pod":null}`, true},
		{"node objects", `{"Nodes":{"items":[]}}`, true},
		{"spaces", " \n{ \"NodeNames\" : [ \"a\" , \"b\" ] }\n ", true},
		{"invalid UTF-8", "{\"NodeNames\":[\"a\xffb\"]}", false},
		{"a number among the names", `{"NodeNames":["a",5]}`, false},
		{"names not an array", `{"NodeNames":"gpu001"}`, false},
		{"pod of the wrong type", `{"Pod":{"metadata":5},"NodeNames":[]}`, true},
		{"unknown key", `{"NodeNames":[],"Extra":1}`, true},
		{"key in another case", `{"nodenames":[]}`, true},
		{"repeated key", `{"NodeNames":["a"],"NodeNames":["b"]}`, false},
		{"trailing data", `{"NodeNames":["a"]} {}`, false},
		{"not an object", `["a"]`, false},
		{"truncated", `{"NodeNames":["a",`, false},
		{"empty body", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, _, ok := splitNames([]byte(tt.body)); ok != tt.fast {
				t.Errorf("read by the fast path: %v, want %v", ok, tt.fast)
			}
			var fast, slow extender.Args
			errFast := decodeArgs([]byte(tt.body), &fast)
			errSlow := decodeStrict([]byte(tt.body), &slow)
			if (errFast == nil) != (errSlow == nil) || (errFast != nil && errFast.Error() != errSlow.Error()) {
				t.Fatalf("decodeArgs: %v\ndecodeStrict: %v", errFast, errSlow)
			}
			if errFast != nil {
				var re *service.RequestError
				if !errors.As(errFast, &re) {
					t.Errorf("error %v is not a RequestError", errFast)
				}
				return
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Errorf("decodeArgs: %+v\ndecodeStrict: %+v", fast, slow)
			}
		})
	}
}
