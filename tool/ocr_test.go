package tool

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

var errNoTesseract = errors.New("executable file not found in $PATH")

// renderText draws text in black on white with the 7x13 bitmap font,
// scaled up so that tesseract reads it reliably, and encodes it as PNG.
func renderText(t *testing.T, text string) []byte {
	t.Helper()
	const scale = 4
	small := image.NewGray(image.Rect(0, 0, 7*len(text)+20, 33))
	draw.Draw(small, small.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.Black, Face: basicfont.Face7x13, Dot: fixed.P(10, 22)}
	d.DrawString(text)
	big := image.NewGray(image.Rect(0, 0, small.Bounds().Dx()*scale, small.Bounds().Dy()*scale))
	for y := range big.Bounds().Dy() {
		for x := range big.Bounds().Dx() {
			big.SetGray(x, y, color.Gray{Y: small.GrayAt(x/scale, y/scale).Y})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, big); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOCRImageNotInstalled(t *testing.T) {
	o := OCRImage{LookPath: func(string) (string, error) { return "", errNoTesseract }}
	res := call(t, o, `{"image_base64":"`+base64.StdEncoding.EncodeToString(renderText(t, "HI"))+`"}`)
	if !res.IsError || res.Content != "tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-jpn)" {
		t.Errorf("ocr_image without tesseract = %+v", res)
	}
}

func TestOCRImage(t *testing.T) {
	img := renderText(t, "Total: 4711 yen")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scan.png"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "notes.txt", "not an image")
	files, err := NewFileTools(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := OCRImage{Files: files}
	b64 := base64.StdEncoding.EncodeToString(img)
	if _, err := exec.LookPath("tesseract"); err != nil {
		res := call(t, o, `{"image_base64":"`+b64+`"}`)
		if !res.IsError || !strings.Contains(res.Content, "tesseract is not installed") {
			t.Errorf("ocr_image without tesseract = %+v, want the plain message", res)
		}
		t.Skip("tesseract is not installed: only the message was checked")
	}
	for _, args := range []string{
		`{"image_base64":"` + b64 + `"}`,
		`{"image_base64":"data:image/png;base64,` + b64 + `"}`,
		`{"path":"scan.png"}`,
	} {
		res := call(t, o, args)
		if res.IsError || !strings.Contains(res.Content, "Total") || !strings.Contains(res.Content, "4711") {
			t.Errorf("ocr_image %.60s… = %+v, want the text Total: 4711 yen", args, res)
		}
	}
	rejects := []struct {
		tool OCRImage
		args string
		want string
	}{
		{o, `{"path":"notes.txt"}`, "not an image (detected text/plain"},
		{o, `{"path":"../scan.png"}`, "leaves the sandbox"},
		{o, `{"path":"missing.png"}`, "does not exist"},
		{o, `{"image_base64":"***"}`, "not valid base64"},
		{o, `{"image_base64":"` + b64 + `","path":"scan.png"}`, "not both"},
		{o, `{}`, "missing image"},
		{OCRImage{}, `{"path":"scan.png"}`, "no files directory is configured"},
		{OCRImage{MaxImageBytes: 100}, `{"image_base64":"` + b64 + `"}`, "more than 100 bytes"},
	}
	for _, tt := range rejects {
		res := call(t, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("ocr_image %.60s… = %+v, want error containing %q", tt.args, res, tt.want)
		}
	}
}
