package imagegen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits and defaults.
const (
	// MaxImages bounds Request.N: one call's spend and the memory its
	// answer takes (every picture is held while it is stored).
	MaxImages = 4
	// MaxPromptRunes bounds Request.Prompt and NegativePrompt, the
	// longest prompt the OpenAI images API takes (gpt-image-1).
	MaxPromptRunes = 32000
	// DefaultSize is the size of a ComfyUI request that names none.
	DefaultSize = "1024x1024"
	// MinSide and MaxSide bound each side of a Size.
	MinSide, MaxSide = 64, 4096
	// DefaultMaxImageBytes bounds one picture a back end returns.
	DefaultMaxImageBytes = 32 << 20
	// maxErrorBody bounds what is read of an error answer.
	maxErrorBody = 64 << 10
)

// Request is what to draw.
type Request struct {
	// Prompt describes the picture. Required; at most MaxPromptRunes
	// characters.
	Prompt string `json:"prompt"`
	// NegativePrompt describes what to keep out of the picture. ComfyUI
	// only (a {{negative_prompt}} placeholder); the openai back end
	// refuses it.
	NegativePrompt string `json:"negative_prompt,omitempty"`
	// Size is WIDTHxHEIGHT (each side MinSide to MaxSide), such as
	// 1024x1536, or "auto". Default ("" or "auto"): the back end's — the
	// model's for OpenAI, DefaultSize for ComfyUI.
	Size string `json:"size,omitempty"`
	// N is how many pictures; default 1, at most MaxImages.
	N int `json:"n,omitempty"`
	// Seed fixes the sampler's seed, to draw the same picture again.
	// ComfyUI only (a {{seed}} placeholder; nil: random); the openai back
	// end refuses it.
	Seed *int64 `json:"seed,omitempty"`
}

// Validate reports the first problem of r, naming the field and the fix.
func (r Request) Validate() error {
	switch {
	case strings.TrimSpace(r.Prompt) == "":
		return errors.New("prompt is empty: describe the picture to draw")
	case utf8.RuneCountInString(r.Prompt) > MaxPromptRunes:
		return fmt.Errorf("prompt is longer than %d characters: shorten it", MaxPromptRunes)
	case utf8.RuneCountInString(r.NegativePrompt) > MaxPromptRunes:
		return fmt.Errorf("negative_prompt is longer than %d characters: shorten it", MaxPromptRunes)
	case r.N < 0 || r.N > MaxImages:
		return fmt.Errorf("n is %d: ask for 1 to %d pictures", r.N, MaxImages)
	case r.Seed != nil && *r.Seed < 0:
		return fmt.Errorf("seed is %d: give a seed of 0 or more, or leave it out for a random one", *r.Seed)
	}
	if _, _, err := ParseSize(r.Size); err != nil {
		return err
	}
	return nil
}

// count is r.N with its default.
func (r Request) count() int { return max(r.N, 1) }

// ParseSize reads a Request.Size: width and height of "WIDTHxHEIGHT", or
// 0, 0 for "" and "auto" (the back end's default). Anything else is an
// error naming size.
func ParseSize(s string) (width, height int, err error) {
	if s == "" || s == "auto" {
		return 0, 0, nil
	}
	ws, hs, ok := strings.Cut(s, "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if !ok || errW != nil || errH != nil || ws[0] == '+' || hs[0] == '+' {
		return 0, 0, fmt.Errorf("size %q is not WIDTHxHEIGHT: write it like 1024x1024, or leave it out for the default", s)
	}
	if w < MinSide || w > MaxSide || h < MinSide || h > MaxSide {
		return 0, 0, fmt.Errorf("size %q: each side must be %d to %d pixels", s, MinSide, MaxSide)
	}
	return w, h, nil
}

// Image is one picture a back end drew.
type Image struct {
	// Data is the encoded picture (PNG, JPEG, WebP, GIF).
	Data []byte
	// MIME is its type, from its bytes: image/png, image/jpeg, …
	MIME string
	// Seed is the seed it was drawn with, when the back end knows it
	// (ComfyUI with a {{seed}} placeholder).
	Seed *int64
}

// Backend draws pictures. Implementations honour ctx and return at least
// one Image or an error.
type Backend interface {
	Generate(ctx context.Context, req Request) ([]Image, error)
}

// sniffImage returns the picture's MIME type from its bytes, or an error
// when they are not a picture (an HTML error page, a JSON error, a cut
// download): the server's Content-Type is never trusted for that.
func sniffImage(data []byte) (string, error) {
	if len(data) == 0 {
		return "", errors.New("the image is empty")
	}
	mime := http.DetectContentType(data)
	switch mime {
	case "image/png", "image/jpeg", "image/webp", "image/gif":
		return mime, nil
	}
	return "", fmt.Errorf("the answer is not an image (its bytes read as %s)", mime)
}

// readLimited reads at most limit bytes of r; more is an error rather than
// a silently cut picture or document.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("the answer is larger than %d bytes", limit)
	}
	return data, nil
}

// snippet is a short, printable excerpt of an unexpected body for an
// error message.
func snippet(b []byte) string {
	s := strings.ToValidUTF8(string(b), "?")
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:200]) + "…"
	}
	if s == "" {
		return "an empty body"
	}
	return strconv.Quote(s)
}
