package a2a_test

import (
	"io"
	"net/http"
)

func readAll(r *http.Request) ([]byte, error) { return io.ReadAll(r.Body) }

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}
