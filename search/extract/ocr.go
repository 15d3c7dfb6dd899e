package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// ocrMissing is the warning for images when tesseract is not installed.
const ocrMissing = "OCR not available: install tesseract-ocr (and tesseract-ocr-jpn)"

// ocr reads the text of a PNG or JPEG image with the tesseract binary,
// English and Japanese, fed through stdin so nothing is written to disk.
// A missing binary or language pack, or a failed run, is a warning, not an
// error: one photo must not fail a whole archive. Only a cancelled ctx is
// an error. bin is the tesseract binary; "" looks it up in PATH.
func ocr(ctx context.Context, bin string, data []byte, timeout time.Duration) (text, warning string, err error) {
	if bin == "" {
		var lookErr error
		if bin, lookErr = exec.LookPath("tesseract"); lookErr != nil {
			return "", ocrMissing, nil
		}
	}
	text, stderr, runErr := runTesseract(ctx, bin, data, "eng+jpn", timeout)
	if runErr != nil && ctx.Err() == nil && strings.Contains(stderr, "jpn") {
		// The Japanese language pack is missing: English is better than nothing.
		text, stderr, runErr = runTesseract(ctx, bin, data, "eng", timeout)
		if runErr == nil {
			warning = "OCR ran in English only: install tesseract-ocr-jpn for Japanese"
		}
	}
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	if runErr != nil {
		return "", fmt.Sprintf("OCR failed: %v: %s", runErr, firstLine(stderr)), nil
	}
	return text, warning, nil
}

func runTesseract(ctx context.Context, bin string, data []byte, langs string, timeout time.Duration) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "stdin", "stdout", "-l", langs)
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s (OCRTimeout)", timeout)
	}
	return stdout.String(), stderr.String(), err
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if l, _, ok := strings.Cut(s, "\n"); ok {
		return l
	}
	return s
}
