package strictjson

import (
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

type inner struct {
	Account string `json:"account"`
	Hours   int    `json:"hours,omitempty"`
}

type outer struct {
	Records []inner           `json:"records"`
	Labels  map[string]string `json:"labels"`
	Any     any               `json:"any"`
	Skipped string            `json:"-"`
	Plain   string
}

// nest is a document of depth objects, each the value of key, around a
// null.
func nest(depth int, key string) string {
	var b strings.Builder
	for range depth {
		b.WriteString(`{"` + key + `":`)
	}
	b.WriteString("null")
	b.WriteString(strings.Repeat("}", depth))
	return b.String()
}

func TestCheck(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", 100)
	tests := []struct {
		name      string
		doc       string
		typ       reflect.Type
		wantField string
		wantMsg   string
	}{
		{name: "known keys", doc: `{"records":[{"account":"a","hours":2}],"labels":{"x":"y"},"Plain":"p"}`, typ: reflect.TypeFor[*outer]()},
		{name: "unknown key in an element", doc: `{"records":[{"account":"a"},{"acount":"b"}]}`, typ: reflect.TypeFor[outer](),
			wantField: "records[1].acount", wantMsg: "unknown field"},
		{name: "case differs", doc: `{"Records":[]}`, typ: reflect.TypeFor[outer](),
			wantField: "Records", wantMsg: `did you mean "records"?`},
		{name: "skipped field is unknown", doc: `{"Skipped":"x"}`, typ: reflect.TypeFor[outer](), wantField: "Skipped", wantMsg: "unknown field"},
		{name: "repeated key", doc: `{"records":[],"records":[]}`, typ: reflect.TypeFor[outer](), wantField: "records", wantMsg: "appears twice"},
		{name: "repeated key in a map", doc: `{"labels":{"a":"1","a":"2"}}`, typ: reflect.TypeFor[outer](), wantField: "labels.a", wantMsg: "appears twice"},
		{name: "any keys are free", doc: `{"any":{"whatever":{"deep":[1,{"x":2}]}}}`, typ: reflect.TypeFor[outer]()},
		{name: "repeated key inside any", doc: `{"any":[{"x":1,"x":2}]}`, typ: reflect.TypeFor[outer](), wantField: "any[0].x", wantMsg: "appears twice"},
		{name: "untyped repeated key", doc: `[[{"a":{"b":1,"b":1}}]]`, wantField: "[0][0].a.b", wantMsg: "appears twice"},
		{name: "malformed is the decoder's", doc: `{"records":[`, typ: reflect.TypeFor[outer]()},
		{name: "at the depth limit", doc: nest(MaxDepth, "a")},
		{name: "one level too deep", doc: nest(MaxDepth+1, "a"), wantField: "a.a.a.a.a.a.a.a...", wantMsg: "nested more than 256 levels deep"},
		{name: "too deep names the start with keys cut", doc: nest(MaxDepth+1, long),
			wantField: strings.Repeat(long[:keyStart]+"....", pathStart-1) + long[:keyStart] + "......", wantMsg: "levels deep"},
		{name: "arrays too deep", doc: strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
			wantField: "[0][0][0][0][0][0][0][0]...", wantMsg: "levels deep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Check([]byte(tc.doc), tc.typ)
			if tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrKey) {
				t.Fatalf("Check = %v, want an *Error wrapping ErrKey", err)
			}
			if e.Field != tc.wantField || !strings.Contains(e.Msg, tc.wantMsg) {
				t.Fatalf("Check = field %q msg %q, want field %q msg containing %q", e.Field, e.Msg, tc.wantField, tc.wantMsg)
			}
		})
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestMemoryIsLinear: the bytes Check allocates stay within a fixed
// multiple of the body's size however the body is shaped: deep with long
// keys (the shape whose paths once grew with the square of the depth),
// too deep, and wide. The paths of the deep bodies alone, built at each
// level as before, would be depth²/2 × key bytes (3.3 MB for the first,
// 150 times its size).
func TestMemoryIsLinear(t *testing.T) {
	key := strings.Repeat("k", 100)
	wide := make([]string, 5000)
	for i := range wide {
		wide[i] = `"` + key + strconv.Itoa(i) + `":{"a":[1,2,3]}`
	}
	for _, tc := range []struct {
		name string
		doc  string
	}{
		{"deep, long keys", nest(MaxDepth, key)},
		{"too deep, long keys", nest(100*MaxDepth, key)},
		{"wide", "{" + strings.Join(wide, ",") + "}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.doc)
			got := allocated(func() { _ = Check(data, nil) })
			if limit := uint64(40 * len(data)); got > limit {
				t.Fatalf("Check of %d bytes allocated %d bytes, more than %d", len(data), got, limit)
			}
		})
	}
}

func BenchmarkCheck(b *testing.B) {
	key := strings.Repeat("k", 100)
	wide := make([]string, 2000)
	for i := range wide {
		wide[i] = `{"account":"a` + strconv.Itoa(i) + `","hours":` + strconv.Itoa(i) + `}`
	}
	for _, bc := range []struct {
		name string
		doc  string
		typ  reflect.Type
	}{
		{"deep256-key100", nest(MaxDepth, key), nil},
		{"deep5000-key100-refused", nest(5000, key), nil},
		{"wide2000-typed", `{"records":[` + strings.Join(wide, ",") + `]}`, reflect.TypeFor[outer]()},
		{"names100000", `{"Pod":null,"NodeNames":[` + strings.Repeat(`"gpu000001",`, 99999) + `"gpu100000"]}`, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := []byte(bc.doc)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				_ = Check(data, bc.typ)
			}
		})
	}
}
