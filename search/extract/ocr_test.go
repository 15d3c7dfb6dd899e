package extract

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImageWithoutOCR(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	d := extractOne(t, "scan.png", pngBytes(t), nil)
	if d.MediaType != "image/png" || d.Text != "" || len(d.Warnings) != 1 || d.Warnings[0] != ocrMissing {
		t.Errorf("got %+v", d)
	}
	// Inside an archive, the image is reported and the rest still extracted.
	docs, err := Extract(context.Background(), "a.zip", bytes.NewReader(zipOf(t, map[string][]byte{
		"photo.jpg": {0xff, 0xd8, 0xff, 0xe0}, "b.txt": []byte("text"),
	})), nil)
	if err != nil || len(docs) != 2 || docs[1].Warnings[0] != ocrMissing || docs[0].Text != "text" {
		t.Errorf("zip with image: %+v, %v", docs, err)
	}
}

// fakeTesseract installs a script named tesseract that prints its
// arguments' language and a fixed text, or fails for "jpn" when noJPN.
func fakeTesseract(t *testing.T, script string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell script stand-in")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tesseract"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestImageOCR(t *testing.T) {
	fakeTesseract(t, `cat >/dev/null; [ "$1 $2 $3 $4" = "stdin stdout -l eng+jpn" ] || exit 9; echo "請求書 Invoice 42"`)
	d := extractOne(t, "invoice.png", pngBytes(t), nil)
	if d.Text != "請求書 Invoice 42" || len(d.Warnings) != 0 {
		t.Errorf("got text %q warnings %q", d.Text, d.Warnings)
	}
}

func TestImageOCRWithoutJapanese(t *testing.T) {
	fakeTesseract(t, `cat >/dev/null; if [ "$4" = "eng+jpn" ]; then echo "Failed loading language 'jpn'" >&2; exit 1; fi; echo "Invoice"`)
	d := extractOne(t, "invoice.jpg", []byte{0xff, 0xd8, 0xff, 0xe0}, nil)
	if d.Text != "Invoice" || len(d.Warnings) != 1 {
		t.Errorf("got text %q warnings %q", d.Text, d.Warnings)
	}
}

func TestImageOCRTimeout(t *testing.T) {
	fakeTesseract(t, `exec sleep 10`)
	d := extractOne(t, "slow.png", pngBytes(t), &Limits{OCRTimeout: 100 * 1e6})
	if d.Text != "" || len(d.Warnings) != 1 || !bytes.Contains([]byte(d.Warnings[0]), []byte("OCRTimeout")) {
		t.Errorf("got text %q warnings %q", d.Text, d.Warnings)
	}
}
