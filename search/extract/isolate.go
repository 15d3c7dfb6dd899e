package extract

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// ErrTimeout means extraction ran past Limits.Timeout and was stopped.
var ErrTimeout = errors.New("extraction time limit exceeded")

// isolateGrace is how long after Limits.Timeout the child is killed: time
// for its start and for its own, cleaner, stop between files.
const isolateGrace = 500 * time.Millisecond

// job is the sandbox kind that extracts files; runJob is its child side.
var job = sandbox.Register("extract", runJob)

// jobRequest is what Isolated sends the child, as gob.
type jobRequest struct {
	Name      string
	Data      []byte
	Limits    Limits
	Tesseract string // found by the parent: the child's PATH is empty
}

// jobResponse is what the child sends back, as gob.
type jobResponse struct {
	Docs    []Document
	Error   string
	ErrKind string
}

// Error kinds in jobResponse.ErrKind.
const (
	kindUnsupported = "unsupported"
	kindTooLarge    = "too_large"
	kindZipBomb     = "zip_bomb"
	kindTimeout     = "timeout"
	kindOther       = "other"
)

// Isolated is Extract run in a child process (package internal/sandbox)
// that is killed at Limits.Timeout, under an address-space and memory cap
// of Limits.MaxMemory, without network, environment or file writes. It
// is the entry for files from outside: a parser that loops or allocates
// without bound on a hostile file ends with ErrTimeout or ErrTooLarge
// instead of holding a core or the server's memory. The program must call
// sandbox.Main first in main (and in TestMain).
//
// Errors are those of Extract, with the same sentinels, plus ErrTimeout.
func Isolated(ctx context.Context, name string, r io.Reader, lim *Limits) ([]Document, error) {
	l := lim.withDefaults()
	data, err := readFile(name, r, l)
	if err != nil {
		return nil, err
	}
	req := jobRequest{Name: name, Data: data, Limits: l}
	if bin, err := exec.LookPath("tesseract"); err == nil {
		req.Tesseract = bin
	}
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(req); err != nil {
		return nil, fmt.Errorf("extract %s: encode job: %w", name, err)
	}
	out, err := sandbox.Run(ctx, job, in.Bytes(), &sandbox.Limits{
		Timeout:   l.Timeout + isolateGrace,
		MaxMemory: l.MaxMemory,
		// Gob holds each text twice: in Document.Text and its Sections.
		MaxOutputBytes: 2*l.MaxExtractedBytes + 16<<20,
	})
	switch {
	case err == nil:
	case errors.Is(err, sandbox.ErrTimeout):
		return nil, fmt.Errorf("extract %s: took longer than %v (Limits.Timeout): %w", name, l.Timeout, ErrTimeout)
	case errors.Is(err, sandbox.ErrMemory):
		return nil, fmt.Errorf("extract %s: %w: used more than %d MiB of memory (Limits.MaxMemory)", name, ErrTooLarge, l.MaxMemory>>20)
	default: // ctx's error, a crash
		return nil, fmt.Errorf("extract %s: %w", name, err)
	}
	var resp jobResponse
	if err := gob.NewDecoder(bytes.NewReader(out)).Decode(&resp); err != nil {
		return nil, fmt.Errorf("extract %s: decode job result: %w", name, err)
	}
	if resp.ErrKind != "" {
		return nil, rebuildError(resp.ErrKind, resp.Error)
	}
	return resp.Docs, nil
}

// runJob is the child side of Isolated.
func runJob(ctx context.Context, in []byte) ([]byte, error) {
	var req jobRequest
	if err := gob.NewDecoder(bytes.NewReader(in)).Decode(&req); err != nil {
		return nil, fmt.Errorf("decode extract job: %w", err)
	}
	docs, err := extractData(ctx, req.Name, req.Data, req.Limits, req.Tesseract)
	resp := jobResponse{Docs: docs}
	if err != nil {
		resp = jobResponse{Error: err.Error(), ErrKind: errorKind(err)}
	}
	var out bytes.Buffer
	if err := gob.NewEncoder(&out).Encode(resp); err != nil {
		return nil, fmt.Errorf("encode extract result: %w", err)
	}
	return out.Bytes(), nil
}

func errorKind(err error) string {
	switch {
	case errors.Is(err, ErrUnsupported):
		return kindUnsupported
	case errors.Is(err, ErrZipBomb):
		return kindZipBomb
	case errors.Is(err, ErrTooLarge):
		return kindTooLarge
	case errors.Is(err, context.DeadlineExceeded):
		// The child's context ends at Limits.Timeout.
		return kindTimeout
	}
	return kindOther
}

func rebuildError(kind, msg string) error {
	switch kind {
	case kindUnsupported:
		return sandbox.Carried(msg, ErrUnsupported)
	case kindZipBomb:
		return sandbox.Carried(msg, ErrZipBomb)
	case kindTooLarge:
		return sandbox.Carried(msg, ErrTooLarge)
	case kindTimeout:
		return sandbox.Carried(msg+" (Limits.Timeout)", ErrTimeout)
	}
	return errors.New(msg)
}
