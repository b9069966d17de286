package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/strictjson"
	"github.com/toposcope/toposcope/service"
)

// decodeStrict decodes one JSON value from raw (a body read by
// readBody) into v: a key v does not have (keys are case-sensitive), a
// key repeated in one object, a nesting deeper than strictjson.MaxDepth,
// a value of the wrong type or size, and data after the value are each a
// RequestError naming the field ("body" for the whole). Nothing is
// changed by a body that fails: callers act only on success. Every
// request body is decoded by it (decodeWithDurations calls it).
func decodeStrict(raw []byte, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return badParam("body", "is required")
	}
	if err := checkKeys(raw, v, ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonFieldError(err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return badParam("body", "trailing data after the JSON value")
	}
	return nil
}

// checkKeys refuses the keys of raw that v does not have exactly, and
// repeated keys (strictjson.Check), naming the field after prefix.
func checkKeys(raw []byte, v any, prefix string) error {
	err := strictjson.Check(raw, reflect.TypeOf(v))
	var ke *strictjson.Error
	if errors.As(err, &ke) {
		return &service.RequestError{Field: prefix + ke.Field, Err: fmt.Errorf("%w: %s", strictjson.ErrKey, ke.Msg)}
	}
	return err
}

// jsonFieldError names the field of a decoding error.
func jsonFieldError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return &service.RequestError{Field: "body", Err: err}
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return &service.RequestError{Field: typeErr.Field, Err: fmt.Errorf("want %s, got JSON %s", typeErr.Type, typeErr.Value)}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &service.RequestError{Field: strings.Trim(name, `"`), Err: errors.New("unknown field")}
	}
	return &service.RequestError{Field: "body", Err: err}
}

// decodeWithDurations is decodeStrict for a JSON object some of whose
// keys are durations: each of those keys may hold nanoseconds (a number,
// as time.Duration encodes) or a Go duration string ("90m", "1h30m").
// A string that is not a duration is a RequestError naming prefix+key.
func decodeWithDurations(raw []byte, v any, prefix string, keys ...string) error {
	if err := checkKeys(raw, v, prefix); err != nil { // before the keys are read into a map
		return err
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil { // not an object: decodeStrict says what is wrong
		changed := false
		for _, k := range keys {
			var s string
			if json.Unmarshal(obj[k], &s) != nil {
				continue // absent, or not a string
			}
			d, err := time.ParseDuration(s)
			if err != nil {
				return &service.RequestError{Field: prefix + k, Err: fmt.Errorf("want nanoseconds or a duration such as \"1h30m\", got %q", s)}
			}
			obj[k] = strconv.AppendInt(nil, int64(d), 10)
			changed = true
		}
		if changed {
			var err error
			if raw, err = json.Marshal(obj); err != nil {
				return &service.RequestError{Field: "body", Err: err}
			}
		}
	}
	err := decodeStrict(raw, v)
	var re *service.RequestError
	if prefix != "" && errors.As(err, &re) && re.Field != "body" {
		re.Field = prefix + re.Field
	}
	return err
}
