package extract

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// textPNG renders s in a bitmap font, scaled up so OCR can read it.
func textPNG(t *testing.T, s string) []byte {
	t.Helper()
	const scale = 4
	small := image.NewGray(image.Rect(0, 0, 8*len(s)+16, 24))
	draw.Draw(small, small.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13, Dot: fixed.P(8, 17)}
	d.DrawString(s)
	big := image.NewGray(image.Rect(0, 0, small.Bounds().Dx()*scale, small.Bounds().Dy()*scale))
	for y := range big.Bounds().Dy() {
		for x := range big.Bounds().Dx() {
			big.SetGray(x, y, small.GrayAt(x/scale, y/scale))
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, big); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestIsolatedOCR: the real tesseract runs inside the sandboxed child (no
// file writes, address-space limit, no network) and reads what it reads in
// process.
func TestIsolatedOCR(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed")
	}
	img := textPNG(t, "INVOICE 42")
	want, err := Extract(context.Background(), "scan.png", bytes.NewReader(img), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Isolated(context.Background(), "scan.png", bytes.NewReader(img), nil)
	if err != nil {
		t.Fatalf("Isolated: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OCR in the sandbox differs from in process (-want +got):\n%s", diff)
	}
	if len(got) > 0 {
		t.Logf("OCR read %q (warnings %q)", got[0].Text, got[0].Warnings)
	}
}
