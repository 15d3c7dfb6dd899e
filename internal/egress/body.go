package egress

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrTooLarge is wrapped by the error of reading a response body past its
// limit.
var ErrTooLarge = errors.New("response body too large")

// ReadBody reads and closes resp.Body, failing with an error wrapping
// ErrTooLarge if it holds more than max bytes. A truncated body is never
// returned as if it were whole.
func ReadBody(resp *http.Response, max int64) ([]byte, error) {
	defer resp.Body.Close()
	if max < 0 {
		max = 0
	}
	if resp.ContentLength > max {
		return nil, fmt.Errorf("egress: response body is %d bytes, over the limit of %d: %w", resp.ContentLength, max, ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("egress: read response body: %w", err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("egress: response body exceeds the limit of %d bytes: %w", max, ErrTooLarge)
	}
	return b, nil
}

// limitTransport makes every response body fail with ErrTooLarge past max
// bytes, so that a caller who forgets ReadBody still cannot be made to
// buffer an endless body.
type limitTransport struct {
	max  int64
	next http.RoundTripper
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// limitedBody reads up to max bytes from its body and fails after.
type limitedBody struct {
	io.ReadCloser
	left, max int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Tell an exactly-full body from an over-long one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n == 0 {
			return 0, err // io.EOF: the body was exactly max bytes
		}
		return 0, fmt.Errorf("egress: response body exceeds the limit of %d bytes: %w", b.max, ErrTooLarge)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
