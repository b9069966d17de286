package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service"
)

// errBodyMemory refuses a body that does not fit in what is left of
// server.maxBodyMemory: 429 with Retry-After.
var errBodyMemory = fmt.Errorf("%w: server.maxBodyMemory is held by the request bodies being read and decoded", service.ErrBusy)

// errBodySlow is a body that did not arrive within
// server.bodyReadTimeout: 408.
var errBodySlow = errors.New("the body did not arrive within server.bodyReadTimeout")

// bodyChunk is how much a body's buffer grows by at least, when the
// bytes come faster than it holds.
const bodyChunk = 32 << 10

// body is a request body read whole, and the part of
// server.maxBodyMemory it holds until release.
type body struct {
	data []byte
	mem  *readSlots
	held int
}

// release gives back the memory the body held; safe to call twice.
func (b *body) release() {
	if b != nil && b.held > 0 {
		b.mem.release(b.held)
		b.held = 0
	}
}

// readBody reads the whole body of the request (none is empty data), at most limit bytes,
// within server.bodyReadTimeout of now. Its memory is charged against
// server.maxBodyMemory (config.BodyMemoryFactor per byte) as the bytes
// arrive, so a caller that sends slowly holds only what it sent, and a
// body that does not fit is refused with errBodyMemory at once. The
// caller must release the body when it has answered.
func (h *handlers) readBody(c *gin.Context, limit int64) (*body, error) {
	r := c.Request
	if r.Body == nil || r.Body == http.NoBody {
		return &body{mem: h.bodyMemory}, nil // the decoder says what is missing
	}
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	// The deadline is the connection's: a recorder in tests has none.
	_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(h.Config.BodyReadTimeout))
	src := http.MaxBytesReader(c.Writer, r.Body, limit)
	// The bytes are read straight into the body's buffer: at first the
	// announced length (one byte more, to see the end) when it is below
	// a chunk, so that a small body takes no more, and a claimed length
	// beyond a chunk buys no memory before its bytes come.
	first := bodyChunk
	if r.ContentLength >= 0 && r.ContentLength < bodyChunk {
		first = int(r.ContentLength) + 1
	}
	b := &body{mem: h.bodyMemory, data: make([]byte, 0, first)}
	for {
		if len(b.data) == cap(b.data) {
			b.data = slices.Grow(b.data, bodyChunk)
		}
		n, err := src.Read(b.data[len(b.data):min(cap(b.data), len(b.data)+bodyChunk)]) // at most a chunk before it is charged
		if n > 0 {
			got, ok := b.mem.tryAcquire(n * config.BodyMemoryFactor)
			if !ok {
				b.release()
				return nil, errBodyMemory
			}
			b.held += got
			b.data = b.data[:len(b.data)+n]
		}
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			b.release()
			return nil, bodyError(err)
		}
	}
}

// decodeBody reads the request's body (readBody, at most limit bytes) and
// decodes it strictly into v (decodeStrict). On error it answers with
// the error and returns false; else the caller releases the body's memory
// (release) once it has answered.
func (h *handlers) decodeBody(c *gin.Context, limit int64, v any) (release func(), ok bool) {
	b, err := h.readBody(c, limit)
	if err != nil {
		h.fail(c, err)
		return nil, false
	}
	if err := decodeStrict(b.data, v); err != nil {
		b.release()
		h.fail(c, err)
		return nil, false
	}
	return b.release, true
}

// bodyError names what went wrong while a body was read.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &service.RequestError{Field: "body", Err: errBodySlow}
	}
	return &service.RequestError{Field: "body", Err: fmt.Errorf("read: %w", err)}
}
