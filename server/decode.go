package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toposcope/toposcope/service"
)

// decodeStrict decodes one JSON value from body into v: a field v does
// not have, a value of the wrong type or size, and data after the value
// are each a RequestError naming the field ("body" for the whole). Nothing
// is changed by a body that fails: callers act only on success.
func decodeStrict(body io.Reader, v any) error {
	if body == nil {
		return badParam("body", "is required")
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonFieldError(err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &service.RequestError{Field: "body", Err: err}
		}
		return badParam("body", "trailing data after the JSON value")
	}
	return nil
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
